//! Logs while the screen is up: `tracing` events go to the tui-logger pane, never to stderr
//! (which would scribble over the screen).

use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Log lines that may arrive between two draws (a second apart at most) before the oldest
/// are lost to the pane.
const HOT_LINES: usize = 5_000;

/// Install the subscriber for the TUI: `filter`, into tui-logger.
pub fn init_logging(filter: EnvFilter) {
    // Not `tui_logger::init_logger`: its thread wakes every 10 ms to move lines into the pane.
    // The screen moves them itself when it draws, at least once a second.
    tui_logger::set_default_level(tui_logger::LevelFilter::Info);
    tui_logger::set_hot_buffer_depth(HOT_LINES);
    tui_logger::move_events();
    let _ = tracing_subscriber::registry()
        .with(tui_logger::TuiTracingSubscriberLayer)
        .with(filter)
        .try_init();
}
