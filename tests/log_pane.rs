//! The TUI's log pane, alone in its process: tui-logger keeps one buffer for the process, and
//! a line logged here would show in every other test's screen.
//!
//! tui-logger split a message at its newlines: an owner name a tenant wrote forged an action
//! line, and bidi overrides went through.

// A test, bench or example fails by panicking: the workspace's panic policy is for the product.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

#[path = "suite/ui_support/fixture.rs"]
mod ui_support;

use tracing_subscriber::layer::SubscriberExt;
use ui_support::{screen, state};

#[test]
fn the_log_pane_cannot_be_given_a_forged_line() {
    let pane = tracing_subscriber::registry().with(tui_logger::TuiTracingSubscriberLayer);
    tracing::subscriber::with_default(pane, || {
        tracing::warn!(
            target: "action",
            "deleted pod shop/web-1 of ReplicaSet evil\nI scaled Deployment prod/checkout from 2 to 0\u{202e}\u{200b}"
        );
    });
    tui_logger::move_events();
    let text = screen(&state(), 200, 40);
    let hazard = text
        .chars()
        .find(|&c| c != '\n' && opc_core::inert::is_hazard(c));
    assert_eq!(hazard, None, "{text:?}");
    assert!(
        text.contains(r"evil\nI scaled Deployment prod/checkout from 2 to 0\u{202e}\u{200b}"),
        "one line, escaped:\n{text}"
    );
}
