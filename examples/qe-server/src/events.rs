//! The server's log: the runtime's operator events (target `contract_runtime`, `info`
//! and above) and everyone else's errors, one line each on stderr — stdout carries the
//! protocol over stdio. rmcp's `debug` and `trace` events, which hold whole requests and
//! results, are never written.

use std::fmt::{self, Write as _};
use std::io::Write as _;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};

/// Writes the events described above to stderr.
struct StderrLog;

/// Installs the log for the whole process.
pub(crate) fn install() {
    // Fails only when a subscriber is installed already, which then keeps logging.
    let _ = tracing::subscriber::set_global_default(StderrLog);
}

fn wanted(meta: &Metadata<'_>) -> bool {
    if meta.target().starts_with("contract_runtime") {
        *meta.level() <= Level::INFO
    } else {
        *meta.level() <= Level::ERROR
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
        if wanted(meta) {
            Interest::always()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, meta: &Metadata<'_>) -> bool {
        wanted(meta)
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
