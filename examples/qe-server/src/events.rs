//! The server's log on stderr, one line per event — stdout carries the protocol over
//! stdio. `QE_SERVER_LOG` chooses how much of the runtime's operator events (target
//! `contract_runtime`) is written: unset or `off`, none; `warn`, violations, report-only
//! findings, limit hits and cache outages; `info`, also refused arguments, tool failures
//! and cache recoveries. Everyone else's errors are always written; rmcp's `debug` and
//! `trace` events, which hold whole requests and results, never are. Off by default: an
//! MCP client that shows a stdio server's stderr (the Inspector does) would show a log
//! line for every refused result.

use std::fmt::{self, Write as _};
use std::io::Write as _;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};

/// Writes the events described above to stderr.
struct StderrLog {
    /// The least severe level of the runtime's events written; `None`: none.
    runtime: Option<Level>,
}

/// Installs the log for the whole process, as `QE_SERVER_LOG` says.
///
/// # Errors
///
/// A value of `QE_SERVER_LOG` other than `off`, `warn` or `info`.
pub(crate) fn install() -> Result<(), String> {
    let runtime = match std::env::var("QE_SERVER_LOG").ok().as_deref() {
        None | Some("" | "off") => None,
        Some("warn") => Some(Level::WARN),
        Some("info") => Some(Level::INFO),
        Some(other) => return Err(format!("QE_SERVER_LOG=`{other}`: expected `off`, `warn` or `info`")),
    };
    // Fails only when a subscriber is installed already, which then keeps logging.
    let _ = tracing::subscriber::set_global_default(StderrLog { runtime });
    Ok(())
}

impl StderrLog {
    fn wanted(&self, meta: &Metadata<'_>) -> bool {
        if meta.target().starts_with("contract_runtime") {
            self.runtime.is_some_and(|least| *meta.level() <= least)
        } else {
            *meta.level() <= Level::ERROR
        }
    }
}

/// `message` first, then `name=value` for every other field.
struct Line {
    message: String,
    fields: String,
}

impl Visit for Line {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            value.clone_into(&mut self.message);
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            self.message = format!("{value:?}");
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }
}

impl Subscriber for StderrLog {
    fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
        if self.wanted(meta) {
            Interest::always()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, meta: &Metadata<'_>) -> bool {
        self.wanted(meta)
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut line = Line { message: String::new(), fields: String::new() };
        event.record(&mut line);
        let meta = event.metadata();
        let text = format!("qe-server: {} {}: {}{}\n", meta.level(), meta.target(), line.message, line.fields);
        // A log line that cannot be written is dropped; the server keeps serving.
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}
