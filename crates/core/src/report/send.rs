//! One try at one sink, and what its answer means: taken, worth trying again, or refused for good.

use chrono::{DateTime, Utc};
use reqwest::StatusCode;
use serde_json::Value;

use super::files::write_atomically;
use super::{RestartReport, payload, render};
use crate::config::{FileFormat, Secret, Sink, mask_url, scrub};

/// Why one try failed, and whether trying again can help.
#[derive(Debug)]
pub(super) enum Failure {
    /// 5xx, 408, 429, a rate limit, unreachable, a file not written: later may work.
    Transient(String),
    /// Any other 4xx, Feishu's `code != 0`: the same report will be refused again.
    Permanent(String),
}

/// The most of a message kept, in characters: a server's answer may be a whole web page.
const MESSAGE_CHARS: usize = 240;

impl Failure {
    /// Messages quote the server's answer whole, which may echo the URL or the token back:
    /// the secrets are scrubbed from all of it first, and only then is it cut to length, so a
    /// cut cannot split a token into a piece that no longer matches it.
    pub(super) fn scrub(self, sink: &Sink) -> Failure {
        let secrets = sink.secrets();
        let clean = |m: String| cut(scrub(&m, &secrets), MESSAGE_CHARS);
        match self {
            Failure::Transient(m) => Failure::Transient(clean(m)),
            Failure::Permanent(m) => Failure::Permanent(clean(m)),
        }
    }
}

fn cut(text: String, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}

/// Feishu's "frequency limited" code: the bot's rate limit, not a refusal of the message.
const FEISHU_RATE_LIMITED: i64 = 11232;

/// One try, at `now` (what a signed message is stamped with).
pub(super) async fn attempt(
    http: &reqwest::Client,
    sink: &Sink,
    report: &RestartReport,
    now: DateTime<Utc>,
) -> Result<(), Failure> {
    match sink {
        Sink::Feishu { url, secret } => {
            let secret = secret.as_ref().map(Secret::expose);
            let body = payload::feishu(report, secret, now.timestamp())
                .map_err(|e| Failure::Permanent(format!("could not be signed: {e}")))?;
            let (status, text) = post(http, url, &body).await?;
            feishu_answer(status, &text)
        }
        Sink::Slack { url } => {
            let (status, text) = post(http, url, &payload::slack(report)).await?;
            http_answer(status, &text)
        }
        Sink::Webhook { url } => {
            let (status, text) = post(http, url, &payload::webhook(report)).await?;
            http_answer(status, &text)
        }
        Sink::File { path, format } => write_file(path, *format, report),
    }
}

/// The status and body, or why nothing came back (always worth another try).
async fn post(
    http: &reqwest::Client,
    url: &Secret,
    body: &Value,
) -> Result<(StatusCode, String), Failure> {
    let response = http
        .post(url.expose())
        .json(body)
        .send()
        .await
        .map_err(|e| {
            let at = mask_url(url.expose());
            // Without the URL the error carries: it holds the token.
            let why = crate::cluster::causes(&e.without_url());
            Failure::Transient(format!("could not be reached at {at}: {why}"))
        })?;
    let status = response.status();
    Ok((status, response.text().await.unwrap_or_default()))
}

/// 2xx is taken; 408, 429 and 5xx are worth another try; any other 4xx is a refusal that
/// will not change by itself (a revoked hook, a bad payload). Anything else (a 3xx not
/// followed) is treated as transient: keeping a report is cheaper than losing it.
fn http_answer(status: StatusCode, text: &str) -> Result<(), Failure> {
    if status.is_success() {
        return Ok(());
    }
    // Whole: it is cut only once the secrets are scrubbed (`Failure::scrub`).
    let why = format!("answered {}: {text}", status.as_u16());
    let transient = matches!(
        status,
        StatusCode::REQUEST_TIMEOUT | StatusCode::TOO_MANY_REQUESTS
    );
    if status.is_client_error() && !transient {
        Err(Failure::Permanent(why))
    } else {
        Err(Failure::Transient(why))
    }
}

/// Feishu answers 200 even when it refuses a message; the body's `code` says so. Its rate
/// limit comes as a code too, with a 200 or a 400, and is worth another try.
fn feishu_answer(status: StatusCode, text: &str) -> Result<(), Failure> {
    let parsed: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    let code = parsed
        .get("code")
        .or_else(|| parsed.get("StatusCode"))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let msg = parsed.get("msg").and_then(Value::as_str).unwrap_or("");
    if code == FEISHU_RATE_LIMITED {
        return Err(Failure::Transient(format!(
            "is rate limited (code {code}: {msg})"
        )));
    }
    http_answer(status, text)?;
    if code == 0 {
        return Ok(());
    }
    Err(Failure::Permanent(format!(
        "refused the message (code {code}: {msg}); check the bot's secret and keyword settings"
    )))
}

fn write_file(
    path: &std::path::Path,
    format: FileFormat,
    report: &RestartReport,
) -> Result<(), Failure> {
    let path = dated_path(path, report.generated);
    let text = match format {
        FileFormat::Markdown => render::markdown(report),
        FileFormat::Json => render::json(report),
        FileFormat::Csv => render::csv(report),
    };
    write_atomically(&path, text.as_bytes()).map_err(|e| Failure::Transient(e.to_string()))
}

/// `reports/restarts-%Y-%m-%d.md` → `reports/restarts-2026-11-20.md`; a path with no valid
/// strftime fields stays as it is.
pub(crate) fn dated_path(path: &std::path::Path, at: DateTime<Utc>) -> std::path::PathBuf {
    use chrono::format::{Item, StrftimeItems};
    let text = path.to_string_lossy();
    if !text.contains('%') || StrftimeItems::new(&text).any(|i| matches!(i, Item::Error)) {
        return path.to_path_buf();
    }
    std::path::PathBuf::from(at.format(&text).to_string())
}
