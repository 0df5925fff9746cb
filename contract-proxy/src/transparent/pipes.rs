//! The pipes: one writer task per pipe ([`Outbox`]) and a pipe read line by line ([`Lines`]).

use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, Notify};

/// The longest line read (one JSON-RPC message): longer lines are dropped and logged,
/// and the connection stays open.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// The read buffer of each pipe.
const READ_BUFFER: usize = 256 * 1024;

// ------------------------------------------------------------------ writing

/// One pipe's writer: whole lines, written in order by a task of their own.
#[derive(Clone, Debug)]
pub(crate) struct Outbox {
    tx: mpsc::UnboundedSender<Vec<u8>>,
    /// Lines pushed and not yet written.
    queued: Arc<AtomicUsize>,
    /// Signalled when nothing is queued any more, or the pipe failed.
    idle: Arc<Notify>,
    closed: Arc<AtomicBool>,
}

impl Outbox {
    /// Starts the task that writes to `writer`.
    pub(crate) fn spawn<W: AsyncWrite + Unpin + Send + 'static>(mut writer: W) -> Self {
        let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let queued = Arc::new(AtomicUsize::new(0));
        let idle = Arc::new(Notify::new());
        let closed = Arc::new(AtomicBool::new(false));
        let outbox = Self { tx, queued: Arc::clone(&queued), idle: Arc::clone(&idle), closed: Arc::clone(&closed) };
        tokio::spawn(async move {
            let mut batch = Vec::new();
            while let Some(first) = rx.recv().await {
                let mut lines = 1;
                // What else is waiting goes in the same write; a line alone is written
                // as it is, not copied.
                let out = match rx.try_recv() {
                    Err(_) => &first,
                    Ok(second) => {
                        batch.clear();
                        batch.extend_from_slice(&first);
                        batch.extend_from_slice(&second);
                        lines += 1;
                        while let Ok(more) = rx.try_recv() {
                            batch.extend_from_slice(&more);
                            lines += 1;
                        }
                        &batch
                    }
                };
                let written = match writer.write_all(out).await {
                    Ok(()) => writer.flush().await,
                    Err(err) => Err(err),
                };
                if let Err(err) = written {
                    tracing::debug!(error = %err, "a pipe the proxy writes to is closed");
                    break;
                }
                if queued.fetch_sub(lines, Ordering::AcqRel) == lines {
                    idle.notify_waiters();
                }
            }
            closed.store(true, Ordering::Release);
            idle.notify_waiters();
        });
        outbox
    }

    /// Queues one line (a newline is added).
    pub(crate) fn push(&self, mut line: Vec<u8>) -> io::Result<()> {
        if self.closed.load(Ordering::Acquire) {
            return Err(io::Error::new(io::ErrorKind::BrokenPipe, "the pipe is closed"));
        }
        line.push(b'\n');
        self.queued.fetch_add(1, Ordering::AcqRel);
        self.tx.send(line).map_err(|_| {
            self.queued.fetch_sub(1, Ordering::AcqRel);
            io::Error::new(io::ErrorKind::BrokenPipe, "the pipe is closed")
        })
    }

    /// Waits until every line queued is written (or the pipe failed).
    pub(crate) async fn drained(&self) {
        loop {
            let idle = self.idle.notified();
            if self.queued.load(Ordering::Acquire) == 0 || self.closed.load(Ordering::Acquire) {
                return;
            }
            idle.await;
        }
    }
}

// ------------------------------------------------------------------ reading

/// A pipe read line by line. Cancel-safe: a line read in part stays for the next call.
#[derive(Debug)]
pub(crate) struct Lines<R> {
    read: BufReader<R>,
    pub(crate) line: Vec<u8>,
    /// Dropping the rest of a line longer than [`MAX_LINE`].
    discarding: bool,
}

impl<R: AsyncRead + Unpin> Lines<R> {
    pub(crate) fn new(read: R) -> Self {
        Self { read: BufReader::with_capacity(READ_BUFFER, read), line: Vec::new(), discarding: false }
    }

    /// Reads the next whole line into `self.line` (without its line end); `false` at the
    /// end of the stream or on a read error. The caller clears `self.line` once it is used.
    pub(crate) async fn next(&mut self) -> bool {
        loop {
            let (used, ended) = {
                let available = match self.read.fill_buf().await {
                    Ok(available) => available,
                    Err(err) => {
                        tracing::error!(error = %err, "reading a pipe failed");
                        return false;
                    }
                };
                if available.is_empty() {
                    if !self.line.is_empty() && !self.discarding {
                        tracing::warn!(bytes = self.line.len(), "a line cut off by the end of the stream is dropped");
                    }
                    return false;
                }
                let newline = memchr::memchr(b'\n', available);
                let piece = &available[..newline.unwrap_or(available.len())];
                if !self.discarding {
                    if self.line.len() + piece.len() > MAX_LINE {
                        tracing::error!(max_line_length = MAX_LINE, "a message longer than the limit is discarded");
                        self.line.clear();
                        self.discarding = true;
                    } else {
                        self.line.extend_from_slice(piece);
                    }
                }
                (newline.map_or(available.len(), |at| at + 1), newline.is_some())
            };
            self.read.consume(used);
            if ended {
                if self.discarding {
                    self.discarding = false;
                    continue;
                }
                if self.line.last() == Some(&b'\r') {
                    self.line.pop();
                }
                if self.line.is_empty() {
                    continue;
                }
                return true;
            }
        }
    }
}
