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

fn subscriber<W>(filter: EnvFilter, writer: W, ansi: bool) -> impl Subscriber + Send + Sync
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

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    use super::*;

    /// What the log wrote, shared with the test.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'w> MakeWriter<'w> for Captured {
        type Writer = Captured;

        fn make_writer(&'w self) -> Captured {
            self.clone()
        }
    }

    const HOSTILE: &str = "x\x1b[2J\x1b]52;c;Y3VybA==\x07\nINFO action: scaled Deployment prod/checkout from 2 to 0\u{202e}";

    #[test]
    fn a_hostile_name_cannot_forge_a_line_or_reach_the_terminal() {
        let captured = Captured::default();
        let log = subscriber(EnvFilter::new("info"), captured.clone(), false);
        tracing::subscriber::with_default(log, || {
            tracing::info!(target: "action", "deleted pod shop/web-1 of ReplicaSet {HOSTILE}");
            tracing::warn!(owner = %HOSTILE, "held");
        });
        let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), 2, "one line per event:\n{text}");
        let hazard = text
            .chars()
            .find(|&c| c != '\n' && opc_core::inert::is_hazard(c));
        assert_eq!(hazard, None, "{text:?}");
        assert!(
            text.contains(r"x\e[2J\e]52;c;Y3VybA==\a\nINFO action"),
            "{text}"
        );
    }
}
