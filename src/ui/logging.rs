//! Logs while the screen is up: `tracing` events go to the tui-logger pane, never to stderr
//! (which would scribble over the screen).

use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::Directive;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// The target the action log is written under; the pane shows it with the library's warnings.
pub(crate) const ACTION_TARGET: &str = "action";

/// Install the subscriber for the TUI: `filter` plus every action line, into tui-logger.
pub fn init_logging(filter: EnvFilter) {
    let _ = tui_logger::init_logger(tui_logger::LevelFilter::Info);
    tui_logger::set_default_level(tui_logger::LevelFilter::Info);
    // A constant that parses; were it ever refused, say so in the log pane once it is up.
    let (filter, refused) = match format!("{ACTION_TARGET}=info").parse::<Directive>() {
        Ok(actions) => (filter.add_directive(actions), None),
        Err(e) => (filter, Some(e)),
    };
    let _ = tracing_subscriber::registry()
        .with(tui_logger::TuiTracingSubscriberLayer)
        .with(filter)
        .try_init();
    if let Some(e) = refused {
        tracing::error!("the action log is not shown: \"{ACTION_TARGET}=info\" is refused: {e}");
    }
}
