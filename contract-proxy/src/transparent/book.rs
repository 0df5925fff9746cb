//! The book of the client's requests in flight: what the answer to each is judged with,
//! when each times out, the ids whose late answers are dropped, and the proxy's own
//! requests.

use std::collections::{HashMap, HashSet, VecDeque};

use foldhash::fast::RandomState;
use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::verdicts::Listing;

/// How many ids of requests whose answers are dropped (cancelled, timed out) are kept.
pub(super) const DROPPED_MEMORY: usize = 4096;

/// How many of the server's requests the client has not answered yet are kept (to be
/// cancelled when the server goes away).
pub(super) const ASKED_MEMORY: usize = 4096;

/// What the proxy does with the answer to a request of the client's.
#[derive(Debug)]
pub(super) enum Judge {
    /// Forwarded unread.
    Plain,
    /// `initialize` or `server/discover`: whether the server has tools is read.
    Start,
    /// A page of `tools/list`; `first` when the request named no cursor.
    List { first: bool },
    /// A `tools/call`, judged with the listing it was gated with; its arguments as
    /// written (they decode: the gate made sure).
    Call { tool: String, arguments: Box<str>, listing: Arc<Listing> },
    /// `tasks/get`: a completed task's `result` is judged.
    TaskGet,
    /// `tasks/result` (2025-11-25) of this task: the result is the tool's.
    TaskResult { task: String },
}

#[derive(Debug)]
pub(super) struct Pending {
    pub(super) method: String,
    pub(super) judge: Judge,
    /// Which deadline is its own (a client may use an id again).
    pub(super) seq: u64,
    /// How many of the server's lines had been dropped when it was sent.
    pub(super) unread_at: u64,
}

#[derive(Debug, Default)]
pub(super) struct Book {
    /// The client's requests in flight, by their id's JSON text.
    pub(super) pending: HashMap<String, Pending, RandomState>,
    /// When each request times out, oldest first (every request has the same timeout).
    pub(super) deadlines: VecDeque<(Instant, String, u64)>,
    /// The deadline the timer sleeps until (`None`: it waits to be woken).
    pub(super) armed: Option<Instant>,
    pub(super) seq: u64,
    /// Ids of requests whose late answers are dropped, oldest first.
    pub(super) dropped: HashSet<String, RandomState>,
    pub(super) dropped_order: VecDeque<String>,
    /// The server's requests forwarded to the client and not answered yet: their id's JSON
    /// text, oldest first (at most [`ASKED_MEMORY`]).
    pub(super) asked: VecDeque<String>,
    /// The proxy's own requests in flight, by id.
    pub(super) own: HashMap<String, oneshot::Sender<Result<Box<RawValue>, String>>, RandomState>,
    /// The tools of the pages of the client's current `tools/list`, in order.
    pub(super) pages: Vec<Value>,
}

impl Book {
    pub(super) fn take(&mut self, id: &str) -> Option<Pending> {
        let pending = self.pending.remove(id)?;
        while self.deadlines.front().is_some_and(|(_, key, seq)| self.pending.get(key).is_none_or(|p| p.seq != *seq)) {
            self.deadlines.pop_front();
        }
        Some(pending)
    }

    /// A request of the server's, forwarded to the client.
    pub(super) fn asked(&mut self, id: &str) {
        if self.asked.len() >= ASKED_MEMORY {
            self.asked.pop_front();
        }
        self.asked.push_back(id.to_owned());
    }

    /// The client answered the server's request `id`.
    pub(super) fn answered(&mut self, id: &str) {
        if let Some(at) = self.asked.iter().position(|asked| asked == id) {
            self.asked.remove(at);
        }
    }

    pub(super) fn drop_answer(&mut self, id: String) {
        if self.dropped.insert(id.clone()) {
            self.dropped_order.push_back(id);
        }
        while self.dropped_order.len() > DROPPED_MEMORY {
            if let Some(old) = self.dropped_order.pop_front() {
                self.dropped.remove(&old);
            }
        }
    }
}
