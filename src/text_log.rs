//! The text log on stderr (`--log-format json` is safe by its encoding). Lines name what a
//! tenant wrote: every field is made inert, so a newline cannot forge an action line, nor an
//! escape or a bidi override reach the terminal.

use std::fmt;
use std::io::IsTerminal;

use tracing::Subscriber;
use tracing::field::Field;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::field::MakeExt;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::format::{Writer, debug_fn};
use tracing_subscriber::util::SubscriberInitExt;

use opc_core::inert;

/// Install the text log on stderr, coloured when stderr is a terminal.
pub fn init(filter: EnvFilter) {
    subscriber(filter, std::io::stderr, std::io::stderr().is_terminal()).init();
}

/// The text log, written to `writer`.
pub fn subscriber<W>(filter: EnvFilter, writer: W, ansi: bool) -> impl Subscriber + Send + Sync
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    tracing_subscriber::fmt()
        .fmt_fields(debug_fn(inert_field).delimited(" "))
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(writer)
        .finish()
}

/// `message` as itself, any other field as `name=value`, the value made inert.
fn inert_field(w: &mut Writer<'_>, field: &Field, value: &dyn fmt::Debug) -> fmt::Result {
    let value = format!("{value:?}");
    match field.name() {
        "message" => write!(w, "{}", inert::terminal(&value)),
        name => write!(w, "{name}={}", inert::terminal(&value)),
    }
}
