//! The transparent relay in front of a streamable HTTP upstream (`--upstream-url`): the
//! client's own session with it, started by the client's own `initialize`.
//!
//! Every line for the server is POSTed as its body, in the order it came: the next POST
//! is sent once the previous one's response began, so the server has taken each message
//! before the next one reaches it (a server that holds a response's head until its answer
//! is ready takes this client's messages one at a time). The client's answers to the
//! server's requests go at once: the server waits for them, and asked after it took what
//! came before. The session id the server gives `initialize` and the protocol revision it
//! answers with go on every later POST. What comes back (a JSON body, or an SSE stream's
//! messages in order) is handed to the relay as the server's lines; after
//! `notifications/initialized`, the session's GET stream brings what the server sends
//! outside a request. A POST that fails (no connection, an HTTP error without a JSON-RPC
//! error) is answered with a JSON-RPC error for its request.

use std::sync::{Arc, Mutex, PoisonError};

use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};
use tokio_stream::StreamExt as _;

#[derive(Debug)]
pub(crate) struct HttpUp {
    tx: mpsc::UnboundedSender<Vec<u8>>,
    state: Arc<State>,
}

#[derive(Debug)]
struct State {
    client: reqwest::Client,
    url: String,
    session: Mutex<Option<String>>,
    version: Mutex<Option<String>>,
    /// The server's messages, in order, for the relay.
    to_relay: mpsc::UnboundedSender<Vec<u8>>,
}

#[derive(Deserialize)]
struct Top<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
}

impl HttpUp {
    /// The upstream at `url`, and the server's messages as they come, in order.
    pub(crate) fn new(url: &str) -> (Self, mpsc::UnboundedReceiver<Vec<u8>>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let (to_relay, from_server) = mpsc::unbounded_channel();
        let state = Arc::new(State {
            client: reqwest::Client::new(),
            url: url.to_owned(),
            session: Mutex::new(None),
            version: Mutex::new(None),
            to_relay,
        });
        tokio::spawn(Arc::clone(&state).send_all(rx));
        (Self { tx, state }, from_server)
    }

    pub(crate) fn push(&self, line: Vec<u8>) -> std::io::Result<()> {
        if serde_json::from_slice::<Top<'_>>(&line).is_ok_and(|top| top.id.is_some() && top.method.is_none()) {
            // An answer to the server's request waits for nothing the server may hold (and
            // a failure to deliver it is the proxy's to log: no request of the client's
            // waits for it).
            let (began, _) = oneshot::channel();
            tokio::spawn(Arc::clone(&self.state).post(line, None, None, began));
            return Ok(());
        }
        self.tx.send(line).map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the upstream is gone"))
    }

    /// Ends the upstream session (`DELETE`), when it has one.
    pub(crate) async fn close(&self) {
        let session = self.state.session.lock().unwrap_or_else(PoisonError::into_inner).clone();
        if let Some(session) = session {
            let _ = self.state.client.delete(&self.state.url).header("mcp-session-id", session).send().await;
        }
    }
}

impl State {
    async fn send_all(self: Arc<Self>, mut rx: mpsc::UnboundedReceiver<Vec<u8>>) {
        while let Some(line) = rx.recv().await {
            let (id, method) = match serde_json::from_slice::<Top<'_>>(&line) {
                Ok(top) => (top.id.map(|id| id.get().to_owned()), top.method.map(std::borrow::Cow::into_owned)),
                Err(_) => (None, None),
            };
            let (began_tx, began) = oneshot::channel();
            let starts = method.as_deref() == Some("initialize") || method.as_deref() == Some("server/discover");
            let task = tokio::spawn(Arc::clone(&self).post(line, id, method.clone(), began_tx));
            if starts {
                // Nothing else goes before the session is known.
                let _ = task.await;
            } else {
                // The server took it: the next may go.
                let _ = began.await;
            }
            if method.as_deref() == Some("notifications/initialized") {
                tokio::spawn(Arc::clone(&self).listen());
            }
        }
    }

    fn request(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let mut builder = builder.header("accept", "application/json, text/event-stream");
        if let Some(session) = self.session.lock().unwrap_or_else(PoisonError::into_inner).clone() {
            builder = builder.header("mcp-session-id", session);
        }
        if let Some(version) = self.version.lock().unwrap_or_else(PoisonError::into_inner).clone() {
            builder = builder.header("mcp-protocol-version", version);
        }
        builder
    }

    /// POSTs one line and hands what comes back to the relay.
    async fn post(
        self: Arc<Self>,
        line: Vec<u8>,
        id: Option<String>,
        method: Option<String>,
        began: oneshot::Sender<()>,
    ) {
        let sent = self
            .request(self.client.post(&self.url))
            .header("content-type", "application/json")
            .body(line)
            .send()
            .await;
        let _ = began.send(());
        let response = match sent {
            Ok(response) => response,
            Err(err) => {
                return self.failed(
                    id.as_deref(),
                    method.as_deref(),
                    &format!("cannot reach the upstream server: {err}"),
                )
            }
        };
        if let Some(session) = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) {
            *self.session.lock().unwrap_or_else(PoisonError::into_inner) = Some(session.to_owned());
        }
        let status = response.status();
        let initialize = method.as_deref() == Some("initialize");
        if status == reqwest::StatusCode::ACCEPTED || (id.is_none() && status.is_success()) {
            return;
        }
        let sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if sse {
            let answered = self.read_events(response, initialize, id.as_deref()).await;
            if !answered && id.is_some() {
                // The stream ended (closed, cut off) before the answer: it is not resumed,
                // so the request is answered here rather than left to time out.
                self.failed(
                    id.as_deref(),
                    method.as_deref(),
                    "the upstream server's response stream ended without an answer",
                );
            }
            return;
        }
        match response.bytes().await {
            Ok(body) if serde_json::from_slice::<Top<'_>>(&body).is_ok_and(|top| top.id.is_some()) => {
                self.deliver(&body, initialize);
            }
            Ok(_) | Err(_) if id.is_some() => {
                self.failed(id.as_deref(), method.as_deref(), &format!("the upstream server answered HTTP {status}"));
            }
            _ => tracing::warn!(%status, "the upstream server refused a notification"),
        }
    }

    /// One message from the server, to the relay.
    fn deliver(&self, line: &[u8], initialize: bool) {
        if initialize {
            #[derive(Deserialize)]
            struct Init {
                #[serde(rename = "protocolVersion", default)]
                protocol_version: Option<String>,
            }
            let version = serde_json::from_slice::<Top<'_>>(line)
                .ok()
                .and_then(|top| top.result)
                .and_then(|result| serde_json::from_str::<Init>(result.get()).ok())
                .and_then(|init| init.protocol_version);
            if version.is_some() {
                *self.version.lock().unwrap_or_else(PoisonError::into_inner) = version;
            }
        }
        let _ = self.to_relay.send(line.to_vec());
    }

    /// An SSE stream's messages, in order; whether one was the answer to request `id`
    /// (JSON text).
    async fn read_events(&self, response: reqwest::Response, initialize: bool, id: Option<&str>) -> bool {
        let mut stream = response.bytes_stream();
        let mut buffer: Vec<u8> = Vec::new();
        let mut answered = false;
        while let Some(Ok(chunk)) = stream.next().await {
            buffer.extend_from_slice(&chunk);
            while let Some(end) = find_event_end(&buffer) {
                let event: Vec<u8> = buffer.drain(..end.0 + end.1).collect();
                let data = event_data(&event[..end.0]);
                if !data.is_empty() {
                    answered |= id.is_some_and(|id| answers(&data, id));
                    self.deliver(&data, initialize);
                }
            }
        }
        answered
    }

    /// The session's GET stream: what the server sends outside a request.
    async fn listen(self: Arc<Self>) {
        let Ok(response) = self.request(self.client.get(&self.url)).send().await else { return };
        if response.status().is_success() {
            self.read_events(response, false, None).await;
        }
    }

    fn failed(&self, id: Option<&str>, method: Option<&str>, message: &str) {
        tracing::warn!(method = method.unwrap_or("a message"), "{message}");
        let Some(id) = id else { return };
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32603,"message":{}}}}}"#,
            serde_json::to_string(message).unwrap_or_default()
        );
        let _ = self.to_relay.send(body.into_bytes());
    }
}

/// Whether `message` is the answer to request `id` (JSON text).
fn answers(message: &[u8], id: &str) -> bool {
    serde_json::from_slice::<Top<'_>>(message)
        .is_ok_and(|top| top.method.is_none() && top.id.is_some_and(|at| at.get() == id))
}

/// Where the first event in `buffer` ends: (its length, the blank line's length).
fn find_event_end(buffer: &[u8]) -> Option<(usize, usize)> {
    let lf = buffer.windows(2).position(|w| w == b"\n\n").map(|at| (at, 2));
    let crlf = buffer.windows(4).position(|w| w == b"\r\n\r\n").map(|at| (at, 4));
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

/// The data of one SSE event: its `data:` lines joined by newlines.
fn event_data(event: &[u8]) -> Vec<u8> {
    let mut data = Vec::new();
    for line in event.split(|b| *b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(rest) = line.strip_prefix(b"data:") {
            if !data.is_empty() {
                data.push(b'\n');
            }
            data.extend_from_slice(rest.strip_prefix(b" ").unwrap_or(rest));
        }
    }
    data
}

#[cfg(test)]
mod tests {
    use super::{event_data, find_event_end};

    #[test]
    fn sse_events_are_cut_at_blank_lines_and_their_data_joined() {
        let stream = b"id: 1\nevent: message\ndata: {\"a\":1}\n\ndata: x\r\ndata: y\r\n\r\n";
        let (end, blank) = find_event_end(stream).unwrap();
        assert_eq!(event_data(&stream[..end]), b"{\"a\":1}");
        let rest = &stream[end + blank..];
        let (end, _) = find_event_end(rest).unwrap();
        assert_eq!(event_data(&rest[..end]), b"x\ny");
        // Control: an event not yet ended is not cut.
        assert_eq!(find_event_end(b"data: {\"a\":"), None);
    }
}
