//! The text log on stderr: a tenant's text in a field cannot forge a line or reach the
//! terminal.

use crate::support::inert::assert_inert;
use crate::support::log::Captured;
use ops_pod_cleaner::text_log::subscriber;
use tracing_subscriber::EnvFilter;

const HOSTILE: &str = "x\x1b[2J\x1b]52;c;Y3VybA==\x07\nINFO action: scaled Deployment prod/checkout from 2 to 0\u{202e}";

#[test]
fn a_hostile_name_cannot_forge_a_line_or_reach_the_terminal() {
    let captured = Captured::default();
    let log = subscriber(EnvFilter::new("info"), captured.clone(), false);
    tracing::subscriber::with_default(log, || {
        tracing::info!(target: "action", "deleted pod shop/web-1 of ReplicaSet {HOSTILE}");
        tracing::warn!(owner = %HOSTILE, "held");
    });
    let text = captured.text();
    assert_eq!(text.lines().count(), 2, "one line per event:\n{text}");
    assert_inert(&text);
    assert!(
        text.contains(r"x\e[2J\e]52;c;Y3VybA==\a\nINFO action"),
        "{text}"
    );
}
