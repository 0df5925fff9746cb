//! A `tracing` subscriber that keeps every event and span it sees, with each field
//! written out as text: what an operator's log pipeline would receive.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};

/// One event (or span), its fields as text; the message is the field `message`.
#[derive(Clone, Debug)]
pub(crate) struct Captured {
    pub(crate) target: String,
    pub(crate) level: Level,
    pub(crate) fields: BTreeMap<String, String>,
    pub(crate) span: bool,
}

impl Captured {
    pub(crate) fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }

    pub(crate) fn message(&self) -> &str {
        self.field("message").unwrap_or_default()
    }

    /// Everything a log line would hold: target, message and every field.
    pub(crate) fn all_text(&self) -> String {
        let mut text = self.target.clone();
        for (name, value) in &self.fields {
            let _ = write!(text, " {name}={value}");
        }
        text
    }
}

#[derive(Clone, Default)]
pub(crate) struct Capture {
    seen: Arc<Mutex<Vec<Captured>>>,
    next_span: Arc<AtomicU64>,
}

impl Capture {
    /// Everything seen so far.
    pub(crate) fn all(&self) -> Vec<Captured> {
        self.seen.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The events of `contract_runtime`.
    pub(crate) fn ours(&self) -> Vec<Captured> {
        self.all().into_iter().filter(|c| !c.span && c.target == "contract_runtime").collect()
    }

    pub(crate) fn clear(&self) {
        self.seen.lock().unwrap_or_else(PoisonError::into_inner).clear();
    }

    fn keep(&self, captured: Captured) {
        self.seen.lock().unwrap_or_else(PoisonError::into_inner).push(captured);
    }
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl Subscriber for Capture {
    fn register_callsite(&self, _: &'static Metadata<'static>) -> Interest {
        Interest::always()
    }

    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut fields = BTreeMap::new();
        span.record(&mut Fields(&mut fields));
        let meta = span.metadata();
        self.keep(Captured { target: meta.target().to_owned(), level: *meta.level(), fields, span: true });
        Id::from_u64(self.next_span.fetch_add(1, Ordering::Relaxed) + 1)
    }

    fn record(&self, _: &Id, values: &Record<'_>) {
        let mut fields = BTreeMap::new();
        values.record(&mut Fields(&mut fields));
        self.keep(Captured { target: String::new(), level: Level::TRACE, fields, span: true });
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        let meta = event.metadata();
        self.keep(Captured { target: meta.target().to_owned(), level: *meta.level(), fields, span: false });
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}
