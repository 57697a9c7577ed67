//! What each chat sink receives: pure functions of the report (and the clock, for signing).

use base64::Engine;
use hmac::digest::InvalidLength;
use hmac::{Hmac, Mac};
use serde_json::{Map, Value, json};
use sha2::Sha256;

use super::RestartReport;
use super::render::{Chat, chat, headline, headline_and_terms};

/// Feishu cards and Slack sections reject long texts; keep well inside their limits.
const FEISHU_LIMIT: usize = 20_000;
const SLACK_LIMIT: usize = 2_900;

/// Feishu/Lark bot signature: HMAC-SHA256 keyed with `timestamp + "\n" + secret` over an empty
/// message, base64-encoded (as the Feishu bot documentation specifies). HMAC takes keys of
/// any length, but the `hmac` crate's API says the key may be refused: that is the error.
pub fn feishu_sign(secret: &str, timestamp: i64) -> Result<String, InvalidLength> {
    let key = format!("{timestamp}\n{secret}");
    let mac = Hmac::<Sha256>::new_from_slice(key.as_bytes())?.finalize();
    Ok(base64::engine::general_purpose::STANDARD.encode(mac.into_bytes()))
}

/// An interactive card; signed with `timestamp` (seconds) when a secret is set.
pub(crate) fn feishu(
    report: &RestartReport,
    secret: Option<&str>,
    timestamp: i64,
) -> Result<Value, InvalidLength> {
    let body = format!(
        "{}\n\n{}",
        headline_and_terms(report),
        chat(report, FEISHU_LIMIT, Chat::Lark)
    );
    let template = if report.groups.is_empty() {
        "green"
    } else {
        "red"
    };
    let mut payload = Map::new();
    payload.insert("msg_type".into(), json!("interactive"));
    payload.insert(
        "card".into(),
        json!({
            "config": {"wide_screen_mode": true},
            "header": {"title": {"tag": "plain_text", "content": report.title}, "template": template},
            "elements": [{"tag": "markdown", "content": body.trim_end()}],
        }),
    );
    if let Some(secret) = secret {
        payload.insert("timestamp".into(), json!(timestamp.to_string()));
        payload.insert("sign".into(), json!(feishu_sign(secret, timestamp)?));
    }
    Ok(Value::Object(payload))
}

pub(crate) fn slack(report: &RestartReport) -> Value {
    let text = chat(report, SLACK_LIMIT, Chat::Slack);
    let mut blocks = vec![
        json!({"type": "header", "text": {"type": "plain_text", "text": report.title}}),
        json!({"type": "context", "elements": [{"type": "mrkdwn", "text": headline_and_terms(report)}]}),
    ];
    if !text.is_empty() {
        blocks
            .push(json!({"type": "section", "text": {"type": "mrkdwn", "text": text.trim_end()}}));
    }
    json!({"text": format!("{}: {}", report.title, headline(report)), "blocks": blocks})
}

pub(crate) fn webhook(report: &RestartReport) -> Value {
    serde_json::to_value(report).unwrap_or(Value::Null)
}
