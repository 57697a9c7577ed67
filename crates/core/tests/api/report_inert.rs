//! The report carries what tenants wrote (names, reasons, nodes) into files, terminals, chat
//! and spreadsheets: each sink gets it inert.

use chrono::{DateTime, Utc};
use opc_core::config::{Secret, Sink};
use opc_core::report::{RestartReport, RestartRow, WorkloadGroup, render};
use serde_json::Value;

use crate::receiver;

/// Clears the screen and writes the clipboard, then forges a new line.
const ESCAPES: &str = "x\x1b[2J\x1b]52;c;Y3VybA==\x07\n| forged | row |";
const PING: &str = "<!channel> <@U024BE7LH> <http://evil.example|docs>";
const AT_ALL: &str = "<at id=all></at>[docs](http://evil.example)";
const FORMULA: &str = "=cmd|' /C calc'!A0";

fn at() -> DateTime<Utc> {
    "2026-11-20T12:00:00Z".parse().unwrap()
}

/// One group whose every tenant-written field holds `text`.
pub(crate) fn report_with(text: &str) -> RestartReport {
    let row = RestartRow {
        pod: format!("web-1{text}"),
        container: text.to_string(),
        restarts: 9,
        since_previous: None,
        last_reason: Some(text.to_string()),
        exit_code: Some(1),
        last_restart: Some(at()),
        node: Some(text.to_string()),
    };
    RestartReport {
        terms: None,
        title: "Restarts".into(),
        cluster: "prod".into(),
        generated: at(),
        groups: vec![WorkloadGroup {
            cluster: None,
            namespace: "shop".into(),
            workload: format!("Deployment/{text}"),
            rows: vec![row],
        }],
        clusters: Vec::new(),
    }
}

/// The body the server of the sink `sink` makes receives when `report` is delivered to it.
async fn delivered(sink: fn(Secret) -> Sink, report: &RestartReport) -> Value {
    let (body, _) = receiver::deliver(sink, "/hook", report, 200, "").await;
    serde_json::from_str(&body).unwrap()
}

fn slack(url: Secret) -> Sink {
    Sink::Slack { url }
}

fn feishu(url: Secret) -> Sink {
    Sink::Feishu { url, secret: None }
}

#[test]
fn markdown_shows_escapes_as_text_and_keeps_one_line_per_row() {
    let md = render::markdown(&report_with(ESCAPES));
    assert!(!md.contains('\x1b') && !md.contains('\x07'), "{md:?}");
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| ")).collect();
    assert_eq!(rows.len(), 2, "a heading and one row:\n{md}");
    assert_eq!(
        rows[1].matches(" | ").count(),
        7,
        "eight cells, no forged one: {md}"
    );
    assert!(
        md.contains(r"x\\e\[2J"),
        "shown, as Markdown renders it: {md}"
    );
}

#[test]
fn markdown_opens_no_tag_or_link() {
    let md = render::markdown(&report_with(AT_ALL));
    let bare = md
        .match_indices(['<', '['])
        .any(|(at, _)| !md[..at].ends_with('\\'));
    assert!(!bare, "{md}");
    assert!(md.contains(r"\<at id=all\>\</at\>\[docs\]"), "{md}");
}

#[tokio::test]
async fn slack_payload_cannot_ping_the_channel_or_link() {
    let body = delivered(slack, &report_with(PING)).await.to_string();
    for raw in ["<!channel>", "<@U024BE7LH>", "<http://"] {
        assert!(!body.contains(raw), "{raw} reached Slack: {body}");
    }
    assert!(body.contains("&lt;!channel&gt;"), "{body}");
}

#[tokio::test]
async fn lark_card_cannot_mention_everyone_or_link() {
    let card = delivered(feishu, &report_with(AT_ALL)).await;
    let content = card["card"]["elements"][0]["content"].as_str().unwrap();
    assert!(
        !content.contains("<at") && !content.contains("[docs]"),
        "{content}"
    );
    assert!(!content.contains('\x1b'), "{content}");
}

#[tokio::test]
async fn chat_texts_show_escapes_as_text() {
    let card = delivered(feishu, &report_with(ESCAPES)).await;
    let slack = delivered(slack, &report_with(ESCAPES)).await;
    for text in [
        card["card"]["elements"][0]["content"].as_str().unwrap(),
        slack["blocks"][2]["text"]["text"].as_str().unwrap(),
    ] {
        assert!(
            !text.contains('\x1b') && !text.contains("\n| forged"),
            "{text:?}"
        );
    }
}

#[test]
fn csv_cells_run_no_formula() {
    let csv = render::csv(&report_with(FORMULA));
    let row = csv.lines().nth(1).unwrap();
    assert!(
        row.starts_with("shop,Deployment/=cmd"),
        "not a formula there: {row}"
    );
    assert!(row.contains(r#","'=cmd|' /C calc'!A0","#), "{row}");
    assert!(!row.contains(",=cmd"), "{row}");
}
