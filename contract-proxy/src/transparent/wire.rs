//! The relay's state for one client session ([`Wire`]): where its lines go each way
//! ([`Down`], [`Up`]) and what both directions share.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rmcp::model::ErrorData;
use serde_json::{Map, Value};
use tokio::sync::Notify;
use tokio::time::Instant;

use super::book::{Book, Judge, Pending};
use super::message::response_line;
use super::pipes::Outbox;
use super::routes::Routes;
use super::shared::Shared;
use super::upstream_http::HttpUp;

/// The least time the request that starts a session (`initialize`, `server/discover`) is
/// given: it waits for the server's process to start too.
pub(super) const START_TIMEOUT: Duration = Duration::from_secs(30);

/// The state both readers share.
#[derive(Debug)]
pub(crate) struct Wire {
    pub(super) shared: Arc<Shared>,
    pub(super) down: Down,
    pub(super) up: Up,
    pub(super) book: Mutex<Book>,
    /// The prefix of the proxy's own request ids.
    pub(super) prefix: String,
    pub(super) next: AtomicU64,
    /// Whether the server may have tools: `false` only once its `initialize` (or
    /// `server/discover`) answer declared none. Until an answer says so, a `tools/call`
    /// is gated and judged (a call sent before the session's first answer, or with no
    /// `initialize` at all, is never let through unjudged).
    pub(super) has_tools: AtomicBool,
    /// Set by `notifications/tools/list_changed`: the next call lists the tools afresh.
    pub(super) stale: AtomicBool,
    /// The `_meta` envelope of the client's latest request (a session without
    /// `initialize`, 2026-07-28): the proxy's own requests carry the same.
    pub(super) envelope: Mutex<Map<String, Value>>,
    /// The `_meta` text the envelope was read from (empty: none, or not known).
    pub(super) envelope_read: Mutex<String>,
    /// Refuse a client's `server/discover` (`--upstream-protocol 2025-11-25`).
    pub(super) legacy_only: bool,
    /// Whether the session is of the 2026-07-28 revision or newer: the results the proxy
    /// writes say `"resultType": "complete"`, as that revision's results do.
    pub(super) modern: AtomicBool,
    /// The server's lines dropped so far: not JSON, no JSON-RPC message, or an answer to
    /// no request in flight.
    pub(super) unread: AtomicU64,
    pub(super) wake: Notify,
    pub(super) settled: Notify,
}

impl Wire {
    /// The relay's state for one session, nothing in flight.
    pub(super) fn new(shared: Arc<Shared>, legacy_only: bool, down: Down, up: Up) -> Self {
        Self {
            shared,
            down,
            up,
            book: Mutex::new(Book::default()),
            prefix: format!("contract-proxy/{}/", std::process::id()),
            next: AtomicU64::new(1),
            has_tools: AtomicBool::new(true),
            stale: AtomicBool::new(true),
            envelope: Mutex::new(Map::new()),
            envelope_read: Mutex::new(String::new()),
            legacy_only,
            modern: AtomicBool::new(false),
            unread: AtomicU64::new(0),
            wake: Notify::new(),
            settled: Notify::new(),
        }
    }
    pub(super) fn book(&self) -> MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn send_down_result(&self, id: &str, result: &str) {
        let _ = self.down.push(response_line(id, "result", result));
    }

    pub(super) fn send_down_error(&self, id: &str, error: &ErrorData) {
        let body = serde_json::to_string(error).unwrap_or_else(|_| "{}".to_owned());
        let _ = self.down.push(response_line(id, "error", &body));
    }

    /// A result the proxy writes, in the session's revision.
    pub(super) fn written(&self, mut result: Value) -> String {
        if self.modern.load(Ordering::Acquire) {
            if let Value::Object(object) = &mut result {
                object.entry("resultType").or_insert_with(|| Value::String("complete".to_owned()));
            }
        }
        result.to_string()
    }

    pub(super) fn forward_up(&self, line: &[u8]) {
        let _ = self.up.push(owned_line(line));
    }

    pub(super) fn forward_down(&self, line: &[u8]) {
        let _ = self.down.push(owned_line(line));
    }

    /// Records a request of the client's in flight.
    pub(super) fn expect(&self, id: &str, method: &str, judge: Judge) {
        // The request that starts the session waits for the server to start as well.
        let timeout = match judge {
            Judge::Start => self.shared.timeout.max(START_TIMEOUT),
            _ => self.shared.timeout,
        };
        let mut book = self.book();
        let key = id.to_owned();
        let deadline = Instant::now() + timeout;
        // Deadlines stay in order: one earlier than the last is put in its place.
        let at = book.deadlines.iter().rposition(|(d, _, _)| *d <= deadline).map_or(0, |i| i + 1);
        // The timer is woken only for a deadline before the one it sleeps until (calls in
        // turn, each with the same timeout, wake it only when it sleeps for none).
        let first = book.armed.is_none_or(|armed| deadline < armed);
        book.seq += 1;
        let seq = book.seq;
        book.deadlines.insert(at, (deadline, key.clone(), seq));
        book.dropped.remove(&key);
        let unread_at = self.unread.load(Ordering::Acquire);
        book.pending.insert(key, Pending { method: method.to_owned(), judge, seq, unread_at });
        if first {
            self.wake.notify_one();
        }
    }
}

/// A copy of `line` with room for the line end the outbox adds (no second copy to grow it).
fn owned_line(line: &[u8]) -> Vec<u8> {
    let mut owned = Vec::with_capacity(line.len() + 1);
    owned.extend_from_slice(line);
    owned
}

/// Where the lines for the client go: the proxy's stdout, or the HTTP front's routing
/// of one session.
#[derive(Debug)]
pub(crate) enum Down {
    Pipe(Outbox),
    Http(Arc<Routes>),
}

impl Down {
    pub(super) fn push(&self, line: Vec<u8>) -> std::io::Result<()> {
        match self {
            Self::Pipe(outbox) => outbox.push(line),
            Self::Http(routes) => {
                routes.deliver(line);
                Ok(())
            }
        }
    }

    pub(super) async fn drained(&self) {
        if let Self::Pipe(outbox) = self {
            outbox.drained().await;
        }
    }
}

/// Where the lines for the server go: its process's stdin, or POSTs to its URL.
#[derive(Debug)]
pub(crate) enum Up {
    Pipe(Outbox),
    Http(HttpUp),
}

impl Up {
    pub(super) fn push(&self, line: Vec<u8>) -> std::io::Result<()> {
        match self {
            Self::Pipe(outbox) => outbox.push(line),
            Self::Http(http) => http.push(line),
        }
    }

    pub(super) fn push_json(&self, message: &impl serde::Serialize) -> std::io::Result<()> {
        self.push(serde_json::to_vec(message).map_err(std::io::Error::other)?)
    }

    pub(super) async fn drained(&self) {
        if let Self::Pipe(outbox) = self {
            outbox.drained().await;
        }
    }

    /// Ends an HTTP upstream's session.
    pub(super) async fn close(&self) {
        if let Self::Http(http) = self {
            http.close().await;
        }
    }
}
