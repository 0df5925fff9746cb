//! The lane's pipes: one writer task per pipe ([`Outbox`]), lines read and decoded as
//! rmcp's own stdio transport does, and the two `rmcp::transport::Transport`s
//! ([`Downstream`], [`Upstream`]) that show every line to the lane before rmcp sees it.

use super::{
    io, mpsc, Arc, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, AtomicBool, AtomicUsize, BufReader,
    ClientJsonRpcMessage, DeserializeOwned, ErrorData, Lane, Notify, Ordering, RoleClient, RoleServer, Serialize,
    ServerJsonRpcMessage, Transport, Value, MAX_LINE, READ_BUFFER,
};

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
                batch.clear();
                batch.extend_from_slice(&first);
                // What else is waiting goes in the same write.
                while let Ok(more) = rx.try_recv() {
                    batch.extend_from_slice(&more);
                    lines += 1;
                }
                let written = match writer.write_all(&batch).await {
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
    pub(super) fn push(&self, mut line: Vec<u8>) -> io::Result<()> {
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

    /// Queues a message as one line.
    pub(super) fn push_json(&self, message: &impl Serialize) -> io::Result<()> {
        self.push(serde_json::to_vec(message).map_err(io::Error::other)?)
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
struct Lines<R> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// Dropping the rest of a line longer than [`MAX_LINE`].
    discarding: bool,
}

impl<R: AsyncRead + Unpin> Lines<R> {
    fn new(read: R) -> Self {
        Self { read: BufReader::with_capacity(READ_BUFFER, read), line: Vec::new(), discarding: false }
    }

    /// Reads the next whole line into `self.line` (without its line end); `false` at the
    /// end of the stream or on a read error. The caller clears `self.line` once it is used.
    async fn next(&mut self) -> bool {
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
                    return false;
                }
                let newline = available.iter().position(|b| *b == b'\n');
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

/// What a line handed to rmcp decodes to.
enum Decoded<T> {
    Message(T),
    /// Not JSON, or a notification no MCP peer knows: dropped without a word.
    Skip,
    /// JSON that is no message: answered with an Invalid Request error.
    Invalid,
}

/// Decodes a line for rmcp as its own stdio transport does.
fn decode<T: DeserializeOwned>(line: &[u8]) -> Decoded<T> {
    let line = line.strip_prefix(b"\xEF\xBB\xBF".as_slice()).unwrap_or(line);
    let err = match serde_json::from_slice(line) {
        Ok(message) => return Decoded::Message(message),
        Err(err) => err,
    };
    if let Ok(value) = serde_json::from_slice::<Value>(line) {
        if let Some(method) = value.get("method").and_then(Value::as_str) {
            let notification = value.get("id").is_none();
            let standard_notification = STANDARD_NOTIFICATIONS.contains(&method);
            let standard = standard_notification || STANDARD_REQUESTS.contains(&method);
            if (notification && !standard) || (method.starts_with("notifications/") && !standard_notification) {
                return Decoded::Skip;
            }
        }
    }
    match err.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
            tracing::debug!(error = %err, "a line that is not JSON is ignored");
            Decoded::Skip
        }
        serde_json::error::Category::Data | serde_json::error::Category::Io => {
            tracing::debug!(error = %err, "a line that is no JSON-RPC message is answered with Invalid Request");
            Decoded::Invalid
        }
    }
}

/// The MCP request methods: a notification of any other method that does not decode is dropped.
const STANDARD_REQUESTS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/templates/list",
    "subscriptions/listen",
    "tools/call",
    "tools/list",
    "completion/complete",
    "elicitation/create",
    "logging/setLevel",
    "roots/list",
    "sampling/createMessage",
];

/// The MCP notifications: any other `notifications/…` that does not decode is dropped.
const STANDARD_NOTIFICATIONS: &[&str] = &[
    "notifications/cancelled",
    "notifications/initialized",
    "notifications/message",
    "notifications/progress",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
    "notifications/roots/list_changed",
    "notifications/subscriptions/acknowledged",
    "notifications/tools/list_changed",
];

/// Reads lines until one is for rmcp; `None` at the end of the stream.
async fn receive_for_rmcp<R, T, E>(
    lines: &mut Lines<R>,
    out: &Outbox,
    mut take: impl FnMut(&[u8]) -> bool,
    invalid: impl Fn() -> E,
) -> Option<T>
where
    R: AsyncRead + Unpin,
    T: DeserializeOwned,
    E: Serialize,
{
    loop {
        if !lines.next().await {
            return None;
        }
        // From here to the clear, nothing waits: a cancelled receive loses no line.
        let decoded = if take(&lines.line) { Decoded::Skip } else { decode::<T>(&lines.line) };
        lines.line.clear();
        match decoded {
            Decoded::Message(message) => return Some(message),
            Decoded::Skip => {}
            Decoded::Invalid => {
                if out.push_json(&invalid()).is_err() {
                    return None;
                }
            }
        }
    }
}

fn invalid_request() -> ErrorData {
    ErrorData::invalid_request("Invalid request", None)
}

// ------------------------------------------------------------------ the transports

/// The client's side: the proxy's stdin and stdout, for rmcp's server half.
#[derive(Debug)]
pub(crate) struct Downstream<R> {
    lines: Lines<R>,
    lane: Arc<Lane>,
}

impl<R: AsyncRead + Unpin + Send> Downstream<R> {
    pub(crate) fn new(read: R, lane: Arc<Lane>) -> Self {
        Self { lines: Lines::new(read), lane }
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> Transport<RoleServer> for Downstream<R> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        std::future::ready(self.lane.down.push_json(&item))
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        let lane = Arc::clone(&self.lane);
        let message = receive_for_rmcp(
            &mut self.lines,
            &lane.down,
            |line| lane.client_line(line),
            || ServerJsonRpcMessage::error(invalid_request(), None),
        )
        .await;
        if message.is_none() {
            // The client closed its end: the calls it is waiting for are still answered.
            lane.all_settled().await;
        }
        message
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// The upstream's side: its stdout and stdin, for rmcp's client half.
#[derive(Debug)]
pub(crate) struct Upstream<R> {
    lines: Lines<R>,
    lane: Arc<Lane>,
}

impl<R: AsyncRead + Unpin + Send> Upstream<R> {
    pub(crate) fn new(read: R, lane: Arc<Lane>) -> Self {
        Self { lines: Lines::new(read), lane }
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> Transport<RoleClient> for Upstream<R> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        std::future::ready(self.lane.up.push_json(&item))
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        let lane = Arc::clone(&self.lane);
        let message = receive_for_rmcp(
            &mut self.lines,
            &lane.up,
            |line| lane.server_line(line),
            || ClientJsonRpcMessage::error(invalid_request(), None),
        )
        .await;
        if message.is_none() {
            lane.upstream_closed();
        }
        message
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}
