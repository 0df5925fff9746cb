//! A tool's own `contentHash` (the draft SEP-3140), compared with the hash of its
//! declaration as listed ([`contract_runtime::client::lock::published_hash`]).
//!
//! rmcp's typed `Tool` keeps only the fields it models, so a top-level `contentHash` (and
//! `version`) never reaches the catalog. Over stdio the server's answers are read through
//! [`Tap`], which keeps each `tools/list` entry as the server wrote it; over HTTP only what
//! rmcp keeps is seen, so a hash there goes unchecked.

use std::collections::BTreeMap;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use contract_runtime::client::lock::{published_hash, PublishedHash};
use serde_json::Value;
use tokio::io::{AsyncRead, ReadBuf};

use crate::lint::{Finding, Level};

/// The longest line (one JSON-RPC message) the tap parses; a longer one is passed on
/// unread.
const MAX_LINE_BYTES: usize = 32 << 20;

/// Each tool as a `tools/list` answer carried it, by name (the first of a name).
#[derive(Clone, Debug, Default)]
pub(crate) struct Listings(Arc<Mutex<BTreeMap<String, Value>>>);

impl Listings {
    /// The declaration of `name` as the server wrote it, when the tap saw one.
    pub(crate) fn get(&self, name: &str) -> Option<Value> {
        self.0.lock().ok()?.get(name).cloned()
    }
}

/// The server's stdout, passed on to rmcp byte for byte, with each newline-delimited
/// `tools/list` result kept in [`Listings`].
pub(crate) struct Tap<R> {
    inner: R,
    line: Vec<u8>,
    overflow: bool,
    seen: Listings,
}

impl<R> Tap<R> {
    pub(crate) fn new(inner: R, seen: Listings) -> Self {
        Self { inner, line: Vec::new(), overflow: false, seen }
    }

    fn end_of_line(&mut self) {
        if !self.overflow {
            if let Ok(message) = serde_json::from_slice::<Value>(&self.line) {
                if let (Some(tools), Ok(mut seen)) = (message["result"]["tools"].as_array(), self.seen.0.lock()) {
                    for tool in tools {
                        if let Some(name) = tool["name"].as_str() {
                            seen.entry(name.to_owned()).or_insert_with(|| tool.clone());
                        }
                    }
                }
            }
        }
        self.line.clear();
        self.overflow = false;
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Tap<R> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let poll = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = poll {
            let mut rest = &buf.filled()[before..];
            while !rest.is_empty() {
                let end = rest.iter().position(|b| *b == b'\n');
                let part = &rest[..end.unwrap_or(rest.len())];
                if !this.overflow {
                    if this.line.len() + part.len() > MAX_LINE_BYTES {
                        this.overflow = true;
                        this.line = Vec::new();
                    } else {
                        this.line.extend_from_slice(part);
                    }
                }
                match end {
                    Some(end) => {
                        this.end_of_line();
                        rest = &rest[end + 1..];
                    }
                    None => rest = &[],
                }
            }
        }
        poll
    }
}

/// The finding for the hash a declaration publishes, when it publishes one that is not
/// its own.
pub(crate) fn finding(declaration: &Value) -> Option<Finding> {
    match published_hash(declaration)? {
        PublishedHash::Matches => None,
        PublishedHash::Mismatch { published, computed } => Some(Finding::new(
            Level::Error,
            "published-hash-mismatch",
            "declaration",
            "/contentHash",
            format!(
                "the tool publishes contentHash {published}; its declaration as listed hashes to {computed} \
                 (SHA-256 of its RFC 8785 JSON without contentHash)"
            ),
        )),
        PublishedHash::Unreadable { published, reason } => Some(Finding::new(
            Level::Warn,
            "published-hash-unreadable",
            "declaration",
            "/contentHash",
            format!("the tool publishes contentHash {published}: {reason}"),
        )),
    }
}
