//! The pipes: a writer per pipe that writes at once what the pipe takes and leaves the
//! rest to a task of its own ([`Outbox`]), and a pipe read line by line ([`Lines`]).

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};
use tokio::sync::{mpsc, Notify};

/// The longest line read (one JSON-RPC message): longer lines are dropped and logged,
/// and the connection stays open.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// The read buffer of each pipe.
const READ_BUFFER: usize = 256 * 1024;

// ------------------------------------------------------------------ writing

/// The pipe an [`Outbox`] writes to, shared by the writer task and the callers.
type Pipe = Arc<Mutex<Pin<Box<dyn AsyncWrite + Send>>>>;

/// One pipe's writer: whole lines, in order. A line pushed while nothing waits is
/// written at once by the caller when the pipe takes all of it; the rest, and every line
/// behind one that waits, is written by a task of its own as the pipe drains.
#[derive(Clone)]
pub(crate) struct Outbox {
    tx: mpsc::UnboundedSender<Vec<u8>>,
    pipe: Pipe,
    /// Lines pushed to the task and not yet written.
    queued: Arc<AtomicUsize>,
    /// Signalled when nothing is queued any more, or the pipe failed.
    idle: Arc<Notify>,
    closed: Arc<AtomicBool>,
}

impl std::fmt::Debug for Outbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbox")
            .field("queued", &self.queued.load(Ordering::Relaxed))
            .field("closed", &self.closed.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// Writes all of `bytes` to the pipe, flushed.
async fn write_all(pipe: &Pipe, bytes: &[u8]) -> io::Result<()> {
    let mut written = 0;
    while written < bytes.len() {
        let n = std::future::poll_fn(|cx| lock(pipe).as_mut().poll_write(cx, &bytes[written..])).await?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        written += n;
    }
    std::future::poll_fn(|cx| lock(pipe).as_mut().poll_flush(cx)).await
}

fn lock(pipe: &Pipe) -> std::sync::MutexGuard<'_, Pin<Box<dyn AsyncWrite + Send>>> {
    pipe.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Outbox {
    /// Starts the task that writes to `writer`.
    pub(crate) fn spawn<W: AsyncWrite + Send + 'static>(writer: W) -> Self {
        let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let pipe: Pipe = Arc::new(Mutex::new(Box::pin(writer)));
        let queued = Arc::new(AtomicUsize::new(0));
        let idle = Arc::new(Notify::new());
        let closed = Arc::new(AtomicBool::new(false));
        let outbox = Self {
            tx,
            pipe: Arc::clone(&pipe),
            queued: Arc::clone(&queued),
            idle: Arc::clone(&idle),
            closed: Arc::clone(&closed),
        };
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
                if let Err(err) = write_all(&pipe, out).await {
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

    /// Writes one line (a newline is added): at once when nothing waits and the pipe
    /// takes it all, else through the task.
    pub(crate) fn push(&self, mut line: Vec<u8>) -> io::Result<()> {
        if self.closed.load(Ordering::Acquire) {
            return Err(io::Error::new(io::ErrorKind::BrokenPipe, "the pipe is closed"));
        }
        line.push(b'\n');
        if self.queued.load(Ordering::Acquire) == 0 {
            // Nothing ahead of it (the task writes nothing either): tried now, once. The
            // pipe's readiness is left for the task to wait on if it is full.
            let mut cx = Context::from_waker(Waker::noop());
            let mut pipe = lock(&self.pipe);
            match pipe.as_mut().poll_write(&mut cx, &line) {
                Poll::Ready(Ok(n)) if n == line.len() => {
                    if let Poll::Ready(Ok(())) = pipe.as_mut().poll_flush(&mut cx) {
                        return Ok(());
                    }
                    // Written, not flushed: the task flushes it behind an empty line.
                    line.clear();
                }
                Poll::Ready(Ok(n)) => {
                    line.drain(..n);
                }
                Poll::Ready(Err(err)) => {
                    tracing::debug!(error = %err, "a pipe the proxy writes to is closed");
                    self.closed.store(true, Ordering::Release);
                    return Err(err);
                }
                Poll::Pending => {}
            }
        }
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

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt as _;

    use super::Outbox;

    /// Lines pushed into a pipe that takes a few bytes at a time (written at once, in
    /// part, or left to the task) come out whole and in order, and `drained` waits for
    /// the last of them.
    #[tokio::test(flavor = "current_thread")]
    async fn lines_come_out_whole_and_in_order_whatever_the_pipe_takes() {
        // A writer that loses track of what waits never drains: a deadline, not a hang.
        let all = tokio::time::timeout(std::time::Duration::from_secs(60), every_capacity());
        all.await.expect("every line written and drained");
    }

    async fn every_capacity() {
        for capacity in [1, 7, 64, 4096] {
            let (writer, mut reader) = tokio::io::duplex(capacity);
            let outbox = Outbox::spawn(writer);
            let mut expected = Vec::new();
            let read = tokio::spawn(async move {
                let mut out = Vec::new();
                reader.read_to_end(&mut out).await.map(|_| out)
            });
            for i in 0..300_usize {
                let line = format!("{{\"n\":{i},\"pad\":\"{}\"}}", "x".repeat(i % 37));
                expected.extend_from_slice(line.as_bytes());
                expected.push(b'\n');
                outbox.push(line.into_bytes()).unwrap();
                if i % 50 == 0 {
                    tokio::task::yield_now().await;
                }
            }
            outbox.drained().await;
            assert_eq!(outbox.queued.load(std::sync::atomic::Ordering::Acquire), 0);
            drop(outbox);
            let out = read.await.unwrap().unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), String::from_utf8(expected).unwrap(), "capacity {capacity}");
        }
    }
}
