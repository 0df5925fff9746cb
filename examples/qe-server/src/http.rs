//! Streamable HTTP serving (feature `server`): rmcp's [`StreamableHttpService`] behind a
//! small front layer that bounds what one client can make the server hold.
//!
//! What the front layer answers before rmcp sees a request (every error body is a
//! JSON-RPC error object, `Content-Type: application/json`):
//!
//! | request | status | JSON-RPC code |
//! |---|---|---|
//! | body that is not JSON (or nested deeper than 128 levels) | 400 | -32700 parse error |
//! | batch array, non-object, `jsonrpc` other than `"2.0"`, `id` that is null, an object, an array, a boolean or a fraction, `method` that is not a string, `params` that is not an object or array | 400 | -32600 invalid request |
//! | positional (array) `params`, which no MCP method takes | 400 | -32602 invalid params |
//! | body over [`HttpLimits::max_body_bytes`] (chunked or not) | 413 | -32600 |
//! | body not received within [`HttpLimits::body_timeout`] | 408 | -32600 |
//! | `initialize` while [`HttpLimits::max_sessions`] sessions are open | 503 + `Retry-After` | -32000 |
//!
//! Everything else (header checks, `Host`/`Origin` validation, sessions, the protocol)
//! is rmcp's. On the way back, an SSE answer whose first message is the request's
//! response or error is sent as that one JSON object instead (see `answer::prefer_json`). Sessions idle for [`HttpLimits::session_idle`] are closed by rmcp's session
//! worker, which frees their slot under the cap.
//!
//! rmcp's `Host`/`Origin` check comes first all the same: before this layer answers with
//! one of the errors above, it asks rmcp about the request's headers, and a foreign or
//! malformed `Host` or `Origin` gets rmcp's 403/400 instead.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use contract_runtime::rmcp::ContractedServer;
use http_body_util::{BodyExt, Empty, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_LENGTH, CONTENT_TYPE, RETRY_AFTER};
use hyper::{Method, Request, Response, StatusCode};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, RequestId};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde::Deserialize as _;
use serde_json::{json, Value};
use tokio::sync::{Mutex, Semaphore};

use crate::server::QeServer;

mod answer;

use answer::prefer_json;

/// The response body type rmcp's service and this layer both answer with.
type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// JSON-RPC 2.0 "Parse error": the body is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC 2.0 "Invalid Request": JSON, but not a request object MCP accepts.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC 2.0 "Invalid params": a known method with parameters that do not fit it.
pub const INVALID_PARAMS: i64 = -32602;
/// The implementation-defined server error this layer uses for "too many sessions".
pub const SERVER_BUSY: i64 = -32000;

/// What one HTTP server lets its clients hold. Every limit has a default that suits a
/// local MCP server with a handful of clients; the `qe-server` flags set each one.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use qe_server::http::HttpLimits;
///
/// let limits = HttpLimits::default().with_max_sessions(8).with_session_idle(Duration::from_secs(60));
/// assert_eq!(limits.max_sessions, 8);
/// assert_eq!(limits.max_body_bytes, HttpLimits::DEFAULT_MAX_BODY_BYTES);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpLimits {
    /// Open (initialized, not yet closed or expired) sessions at most; one more
    /// `initialize` gets HTTP 503 with a JSON-RPC error until one closes. `--max-sessions`.
    pub max_sessions: usize,
    /// A session with no traffic for this long is closed and its slot freed.
    /// `--session-idle SECONDS`.
    pub session_idle: Duration,
    /// The largest request body read, whether sent with `Content-Length` or chunked.
    /// `--max-body BYTES`.
    pub max_body_bytes: usize,
    /// How long a client may take to send a request body once its headers arrived.
    pub body_timeout: Duration,
    /// How long a client may take to send a request's headers.
    pub header_timeout: Duration,
    /// Connections served at once; further clients wait in the listen backlog until one
    /// closes. `--max-connections`.
    pub max_connections: usize,
}

impl HttpLimits {
    /// Default of [`max_sessions`](Self::max_sessions): at rmcp's cost of about 56 KB per
    /// idle session this bounds sessions to about 15 MB.
    pub const DEFAULT_MAX_SESSIONS: usize = 256;
    /// Default of [`session_idle`](Self::session_idle), rmcp's own keep-alive (5 minutes).
    pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(300);
    /// Default of [`max_body_bytes`](Self::max_body_bytes): tool arguments here are a few
    /// hundred bytes; rmcp's default is 4 MiB.
    pub const DEFAULT_MAX_BODY_BYTES: usize = 256 * 1024;
    /// Default of [`body_timeout`](Self::body_timeout).
    pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(10);
    /// Default of [`header_timeout`](Self::header_timeout).
    pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
    /// Default of [`max_connections`](Self::max_connections).
    pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;

    /// Sets [`max_sessions`](Self::max_sessions).
    #[must_use]
    pub fn with_max_sessions(mut self, max_sessions: usize) -> Self {
        self.max_sessions = max_sessions;
        self
    }

    /// Sets [`session_idle`](Self::session_idle).
    #[must_use]
    pub fn with_session_idle(mut self, session_idle: Duration) -> Self {
        self.session_idle = session_idle;
        self
    }

    /// Sets [`max_body_bytes`](Self::max_body_bytes).
    #[must_use]
    pub fn with_max_body_bytes(mut self, max_body_bytes: usize) -> Self {
        self.max_body_bytes = max_body_bytes;
        self
    }

    /// Sets [`body_timeout`](Self::body_timeout).
    #[must_use]
    pub fn with_body_timeout(mut self, body_timeout: Duration) -> Self {
        self.body_timeout = body_timeout;
        self
    }

    /// Sets [`header_timeout`](Self::header_timeout).
    #[must_use]
    pub fn with_header_timeout(mut self, header_timeout: Duration) -> Self {
        self.header_timeout = header_timeout;
        self
    }

    /// Sets [`max_connections`](Self::max_connections).
    #[must_use]
    pub fn with_max_connections(mut self, max_connections: usize) -> Self {
        self.max_connections = max_connections;
        self
    }
}

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            max_sessions: Self::DEFAULT_MAX_SESSIONS,
            session_idle: Self::DEFAULT_SESSION_IDLE,
            max_body_bytes: Self::DEFAULT_MAX_BODY_BYTES,
            body_timeout: Self::DEFAULT_BODY_TIMEOUT,
            header_timeout: Self::DEFAULT_HEADER_TIMEOUT,
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
        }
    }
}

/// rmcp's streamable HTTP configuration for a local server: loopback `Host`s only, and
/// browser `Origin`s only from loopback pages (DNS-rebinding protection). The body limit
/// is the front layer's too, so a body rmcp reads again never exceeds what was checked.
#[must_use]
pub fn rmcp_config(limits: &HttpLimits) -> StreamableHttpServerConfig {
    StreamableHttpServerConfig::default()
        .with_allowed_hosts(["localhost", "127.0.0.1", "::1", "[::1]"])
        .with_allowed_origins(["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"])
        .enforce_origin_validation()
        .with_max_request_body_bytes(limits.max_body_bytes)
}

/// What every connection task shares.
struct Shared {
    service: StreamableHttpService<ContractedServer<QeServer>, LocalSessionManager>,
    sessions: Arc<LocalSessionManager>,
    /// Held from the session count to the end of a new session's `initialize`, so that
    /// concurrent handshakes cannot all pass the check and overshoot the cap.
    init_gate: Mutex<()>,
    limits: HttpLimits,
}

/// Binds `addr` for [`serve`].
///
/// # Errors
///
/// The address cannot be bound.
pub async fn bind(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(addr).await
}

/// Serves streamable HTTP at `http://{listener address}/mcp` until the process ends.
/// Each connection is its own task with `TCP_NODELAY` set (without it a small response
/// waits for the peer's delayed ACK, about 40 ms on Linux): a client that misbehaves or
/// vanishes affects no other.
///
/// # Errors
///
/// Accepting connections failed for good.
pub async fn serve(
    server: ContractedServer<QeServer>,
    listener: tokio::net::TcpListener,
    limits: HttpLimits,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(limits.session_idle);
    let sessions = Arc::new(manager);
    let service = StreamableHttpService::new(move || Ok(server.clone()), sessions.clone(), rmcp_config(&limits));
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let shared = Arc::new(Shared { service, sessions, init_gate: Mutex::new(()), limits });
    loop {
        // Waiting for a slot before accepting leaves further clients in the kernel's
        // backlog instead of holding a task and buffers for each.
        let slot = slots.clone().acquire_owned().await?;
        let (stream, _peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(err) => {
                // Out of descriptors and the like: wait and keep serving.
                eprintln!("qe-server: accept failed: {err}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        // Only fails on a socket that is already gone; the connection then ends by itself.
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        tokio::spawn(async move {
            let _slot = slot;
            let handler = hyper::service::service_fn(|request: Request<Incoming>| {
                let shared = shared.clone();
                async move { Ok::<_, Infallible>(shared.handle(request).await) }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(shared.limits.header_timeout)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), handler);
            // A client that disconnects mid-request ends only its own connection.
            let _ = connection.await;
        });
    }
}

/// A closed session as `204 No Content`: rmcp answers a `DELETE` it honoured with `202
/// Accepted`, which the Python SDK client logs as a failed termination (it takes 200 or
/// 204); the session is gone either way, so the body-less success says so.
fn no_content_when_accepted(mut response: Response<Body>) -> Response<Body> {
    if response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
        *response.body_mut() = full(Bytes::new());
        response.headers_mut().remove(CONTENT_LENGTH);
    }
    response
}

impl Shared {
    async fn handle(&self, request: Request<Incoming>) -> Response<Body> {
        if request.uri().path() != "/mcp" {
            let mut response = Response::new(full(Bytes::from_static(b"Not Found: the MCP endpoint is /mcp")));
            *response.status_mut() = StatusCode::NOT_FOUND;
            return response;
        }
        // GET and DELETE carry no body; a POST that is not JSON gets rmcp's 415 without
        // its body being read.
        if request.method() == Method::DELETE {
            return no_content_when_accepted(self.service.handle(request).await);
        }
        if request.method() != Method::POST || !is_json(request.headers().get(CONTENT_TYPE)) {
            return self.service.handle(request).await;
        }
        let (parts, body) = request.into_parts();
        let max = self.limits.max_body_bytes;
        let declared = parts.headers.get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if declared.is_some_and(|len| len > max as u64) {
            return self.refuse(&parts, too_large(max)).await;
        }
        let bytes = match tokio::time::timeout(self.limits.body_timeout, Limited::new(body, max).collect()).await {
            Ok(Ok(collected)) => collected.to_bytes(),
            Ok(Err(err)) if err.is::<http_body_util::LengthLimitError>() => {
                return self.refuse(&parts, too_large(max)).await;
            }
            // The client went away or broke the framing: nobody reads an answer, but
            // the connection still gets a well-formed one.
            Ok(Err(_)) => return rejection(StatusCode::BAD_REQUEST, INVALID_REQUEST, "unreadable request body", None),
            Err(_) => {
                let message = format!("request body not received within {:?}", self.limits.body_timeout);
                return self
                    .refuse(&parts, rejection(StatusCode::REQUEST_TIMEOUT, INVALID_REQUEST, &message, None))
                    .await;
            }
        };
        let value = match envelope(&bytes) {
            Ok(value) => value,
            Err(rejected) => return self.refuse(&parts, rejected.into_response()).await,
        };
        let answer = if let Some(id) = initialize_id(&value).filter(|_| !parts.headers.contains_key("mcp-session-id")) {
            let _gate = self.init_gate.lock().await;
            let open = self.sessions.sessions.read().await.len();
            if open >= self.limits.max_sessions {
                return self.refuse(&parts, self.busy(open, id)).await;
            }
            self.service.handle(Request::from_parts(parts, full(bytes))).await
        } else {
            self.service.handle(Request::from_parts(parts, full(bytes))).await
        };
        // On this path rmcp's only 415 is "could not read the body as a message" (the
        // content type was checked above, and its `Host`/`Origin` check came first):
        // the typed check names the JSON-RPC error instead of rmcp's plain text.
        if answer.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
            if let Err(rejected) = typed(&value) {
                return rejected.into_response();
            }
        }
        prefer_json(answer).await
    }

    /// `refusal`, unless rmcp refuses the request's headers first. rmcp's `Host`/`Origin`
    /// check is private, so it is asked with a copy of the headers and no body: it answers
    /// that copy from the headers alone, 403 or 400 for a foreign or malformed `Host` or
    /// `Origin`, and otherwise 406 or 415 (the copy names no content type), which mean
    /// the headers passed. A request from a foreign page thus gets rmcp's answer, never
    /// one of this layer's.
    async fn refuse(&self, parts: &hyper::http::request::Parts, refusal: Response<Body>) -> Response<Body> {
        let mut probe = Request::new(Empty::<Bytes>::new());
        *probe.method_mut() = Method::POST;
        *probe.uri_mut() = parts.uri.clone();
        *probe.headers_mut() = parts.headers.clone();
        probe.headers_mut().remove(CONTENT_TYPE);
        let answer = self.service.handle(probe).await;
        if matches!(answer.status(), StatusCode::NOT_ACCEPTABLE | StatusCode::UNSUPPORTED_MEDIA_TYPE) {
            refusal
        } else {
            answer
        }
    }

    fn busy(&self, open: usize, id: Value) -> Response<Body> {
        let max = self.limits.max_sessions;
        let idle = self.limits.session_idle.as_secs().max(1);
        let message = format!(
            "server busy: {open} sessions are open and the limit is {max}; close one (HTTP DELETE with its \
             Mcp-Session-Id) or retry after an idle one expires ({idle} s without traffic)"
        );
        let data = json!({ "maxSessions": max, "sessionIdleSeconds": idle });
        let mut response = error_response(StatusCode::SERVICE_UNAVAILABLE, SERVER_BUSY, &message, Some(id), Some(data));
        response.headers_mut().insert(RETRY_AFTER, HeaderValue::from(idle));
        response
    }
}

/// Whether a `Content-Type` names JSON (`application/json`, parameters allowed).
fn is_json(content_type: Option<&HeaderValue>) -> bool {
    content_type.and_then(|v| v.to_str().ok()).is_some_and(|v| {
        let essence = v.split_once(';').map_or(v, |(essence, _)| essence);
        essence.trim().eq_ignore_ascii_case("application/json")
    })
}

/// Why a body is refused, in JSON-RPC terms.
#[derive(Debug, PartialEq)]
pub(crate) struct Rejected {
    code: i64,
    message: String,
    /// The request's id when it had a usable one, so the client can match the error.
    id: Option<Value>,
}

impl Rejected {
    fn into_response(self) -> Response<Body> {
        error_response(StatusCode::BAD_REQUEST, self.code, &self.message, self.id, None)
    }
}

/// Checks one POST body as a JSON-RPC 2.0 message MCP accepts (no batches since
/// 2025-06-18): [`envelope`], then [`typed`]. Returns the id of an `initialize`
/// request, `None` for any other message. The server runs the two halves apart (see
/// [`Shared::handle`]); the tests check the whole.
#[cfg(test)]
pub(crate) fn check(bytes: &[u8]) -> Result<Option<Value>, Rejected> {
    typed(&envelope(bytes)?)
}

/// The checks of one body that need only its JSON: it parses, is one object, and its
/// `jsonrpc`, `id`, `method` and `params` have the types JSON-RPC 2.0 demands.
fn envelope(bytes: &[u8]) -> Result<Value, Rejected> {
    let reject = |code, message: String, id: Option<&Value>| Rejected { code, message, id: id.cloned() };
    // serde_json stops at 128 levels of nesting, so a deep body costs no stack.
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|err| reject(PARSE_ERROR, format!("Parse error: the body is not JSON ({err})"), None))?;
    let object = match &value {
        Value::Object(object) => object,
        Value::Array(_) => {
            let message = "Invalid Request: batch arrays are not supported (MCP removed JSON-RPC batching in \
                           2025-06-18); send one message per request";
            return Err(reject(INVALID_REQUEST, message.to_owned(), None));
        }
        _ => return Err(reject(INVALID_REQUEST, "Invalid Request: expected a JSON-RPC object".to_owned(), None)),
    };
    let id = object.get("id");
    if let Some(id) = id {
        if RequestId::deserialize(id).is_err() {
            let message = "Invalid Request: `id` must be a string or an integer (not null, a fraction, an object, \
                           an array or a boolean)";
            return Err(reject(INVALID_REQUEST, message.to_owned(), None));
        }
    }
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(reject(INVALID_REQUEST, "Invalid Request: `jsonrpc` must be \"2.0\"".to_owned(), id));
    }
    match object.get("method") {
        Some(Value::String(_)) => {}
        Some(_) => return Err(reject(INVALID_REQUEST, "Invalid Request: `method` must be a string".to_owned(), id)),
        None if id.is_some() && (object.contains_key("result") || object.contains_key("error")) => {}
        None => return Err(reject(INVALID_REQUEST, "Invalid Request: `method` is missing".to_owned(), id)),
    }
    if object.get("params").is_some_and(|p| !p.is_object() && !p.is_array()) {
        let message = "Invalid Request: `params` must be an object or an array".to_owned();
        return Err(reject(INVALID_REQUEST, message, id));
    }
    Ok(value)
}

/// The id of a body that [`envelope`] passed when it is an `initialize` request: the
/// one message that opens a session and so counts against the cap.
fn initialize_id(value: &Value) -> Option<Value> {
    if value.get("method").and_then(Value::as_str) == Some("initialize") {
        value.get("id").cloned()
    } else {
        None
    }
}

/// The rest of the check: the body read as rmcp reads it (`ClientJsonRpcMessage`).
/// That costs more than all of [`envelope`] and rmcp does it again, so the server runs
/// it only when rmcp could not read a body (its 415) to name the JSON-RPC error.
fn typed(value: &Value) -> Result<Option<Value>, Rejected> {
    let id = value.get("id");
    let reject = |code, message: String| Rejected { code, message, id: id.cloned() };
    match ClientJsonRpcMessage::deserialize(value) {
        Ok(JsonRpcMessage::Request(request)) if matches!(request.request, ClientRequest::InitializeRequest(_)) => {
            Ok(id.cloned())
        }
        Ok(_) => Ok(None),
        // rmcp reads an unknown method (and a known one whose parameters do not fit)
        // as a custom request and answers it itself; what fails here is positional
        // (array) parameters, which no MCP method takes, or a malformed response.
        Err(err) if value.get("method").is_some() => {
            Err(reject(INVALID_PARAMS, format!("Invalid params: MCP methods take named parameters ({err})")))
        }
        Err(err) => Err(reject(INVALID_REQUEST, format!("Invalid Request: {err}"))),
    }
}

fn full(bytes: Bytes) -> Body {
    Full::new(bytes).boxed()
}

fn too_large(max: usize) -> Response<Body> {
    let message = format!("Invalid Request: the body exceeds {max} bytes");
    rejection(StatusCode::PAYLOAD_TOO_LARGE, INVALID_REQUEST, &message, None)
}

fn rejection(status: StatusCode, code: i64, message: &str, id: Option<Value>) -> Response<Body> {
    error_response(status, code, message, id, None)
}

/// A JSON-RPC error object as the whole HTTP response.
fn error_response(
    status: StatusCode,
    code: i64,
    message: &str,
    id: Option<Value>,
    data: Option<Value>,
) -> Response<Body> {
    let mut error = json!({ "code": code, "message": message });
    if let Some(data) = data {
        error["data"] = data;
    }
    let body = json!({ "jsonrpc": "2.0", "id": id.unwrap_or(Value::Null), "error": error });
    let mut response = Response::new(full(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(body: &str) -> Option<i64> {
        check(body.as_bytes()).err().map(|r| r.code)
    }

    #[test]
    fn well_formed_messages_pass_and_initialize_is_recognised() {
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        assert_eq!(check(init.as_bytes()), Ok(Some(json!(1))));
        let call = r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":{}}}"#;
        assert_eq!(check(call.as_bytes()), Ok(None));
        assert_eq!(check(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#), Ok(None));
        assert_eq!(check(br#"{"jsonrpc":"2.0","id":3,"method":"vendor/probe","params":{}}"#), Ok(None));
        // A known method with parameters that do not fit is rmcp's to answer.
        assert_eq!(check(br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":5}}"#), Ok(None));
        assert_eq!(check(br#"{"jsonrpc":"2.0","id":5,"result":{}}"#), Ok(None));
    }

    #[test]
    fn the_cheap_initialize_test_agrees_with_rmcps_reading() {
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        let others = [
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","method":"initialize"}"#,
            r#"{"jsonrpc":"2.0","id":5,"result":{}}"#,
        ];
        for body in std::iter::once(init).chain(others) {
            let value = envelope(body.as_bytes()).expect("well-formed");
            assert_eq!(initialize_id(&value), typed(&value).expect("rmcp reads it"), "{body}");
        }
        assert_eq!(initialize_id(&envelope(init.as_bytes()).expect("well-formed")), Some(json!(1)));
    }

    #[test]
    fn malformed_messages_get_the_json_rpc_code() {
        assert_eq!(code("{not json"), Some(PARSE_ERROR));
        assert_eq!(code(""), Some(PARSE_ERROR));
        assert_eq!(code(&format!("{}{}", "[".repeat(200), "]".repeat(200))), Some(PARSE_ERROR));
        assert_eq!(code(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#), Some(INVALID_REQUEST));
        assert_eq!(code("[]"), Some(INVALID_REQUEST));
        assert_eq!(code("42"), Some(INVALID_REQUEST));
        assert_eq!(code(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#), Some(INVALID_REQUEST));
        assert_eq!(code(r#"{"id":1,"method":"ping"}"#), Some(INVALID_REQUEST));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#), Some(INVALID_REQUEST));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#), Some(INVALID_REQUEST));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#), Some(INVALID_REQUEST));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1,"method":7}"#), Some(INVALID_REQUEST));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1}"#), Some(INVALID_REQUEST));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"oops"}"#), Some(INVALID_REQUEST));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}"#), Some(INVALID_PARAMS));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1,"error":"no"}"#), Some(INVALID_REQUEST));
    }

    #[test]
    fn the_id_is_echoed_only_when_it_is_usable() {
        let rejected = check(br#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#).unwrap_err();
        assert_eq!(rejected.id, Some(json!(9)));
        let rejected = check(br#"{"jsonrpc":"2.0","id":[9],"method":"ping"}"#).unwrap_err();
        assert_eq!(rejected.id, None);
    }
}
