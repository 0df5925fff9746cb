//! The stateless `tools/call` lane: a POST whose body is a plain `tools/call` (read by
//! its keys) carrying its own protocol version in `_meta` (2026-07-28 and later: no
//! session, no handshake) goes straight to a long-lived service of the handler, when
//! every check rmcp would make of it passes the same way.
//!
//! rmcp's own path reads the body again into its message type, builds a JSON value of
//! the whole message to compare the `Mcp-Method` / `Mcp-Name` headers with it, and
//! starts a service, a one-message transport and a task for each request. Every
//! stateless request gets the same peer from rmcp (default capabilities and client
//! information, the protocol version of its `MCP-Protocol-Version` header) and its HTTP
//! parts in its extensions, so a service started once per protocol version gives a
//! handler what rmcp's per-request service gives it. Each such service serves one call
//! at a time (an idle one is taken from a small pool, or one is started), so every
//! message it sends while it serves the call (a notification, the answer) belongs to that
//! call, and the handler sees the call's own id, as on rmcp's path. What differs, and
//! why it does not show: rmcp makes a fresh clone of the handler per request where a
//! service here keeps its clone for many calls (a `Clone + Sync` handler shares its state
//! across clones anyway); and a message a handler sends through its peer after its call
//! was answered (from a task it left running) is dropped by rmcp with the per-request
//! service, while here it is dropped when it comes before the service's next call and
//! goes out with that call otherwise (a handler that outlives its call is out of the
//! protocol either way).
//!
//! The lane takes a request only when rmcp would route it statelessly and accept it
//! unchanged, decided conservatively from the headers and the typed message: `Host`
//! exactly one and allowed, no `Origin`, `Accept` naming JSON and SSE without
//! parameters, no `Mcp-Session-Id`, exactly one `MCP-Protocol-Version` naming a known
//! revision without the handshake and equal to the call's `_meta` protocol version, the
//! `_meta` keys that revision requires, exactly one `Mcp-Method` of `tools/call` and
//! exactly one `Mcp-Name` equal to the tool's name (not Base64-wrapped), no `Mcp-Param-*`
//! header, and a tool whose input schema names no header (`x-mcp-header`). Anything else
//! goes to rmcp, which answers it as it always did.
//!
//! The answer is rmcp's: the call's response or error as one JSON object (status 400,
//! 404 or 200 by its error code, as rmcp maps it), or, when the handler sends something
//! first, rmcp's SSE stream of every message up to the answer. A client that goes away
//! before the answer is out has the call cancelled: its service is dropped, which fires
//! the handler's cancellation token, and the pool starts another when one is needed.

use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue, CONTENT_TYPE, ORIGIN};
use http::{HeaderMap, Response, StatusCode};
use rmcp::model::{
    ClientCapabilities, ClientJsonRpcMessage, ClientRequest, ErrorCode, GetExtensions as _, GetMeta as _,
    Implementation, InitializeRequestParams, JsonObject, ProtocolVersion, ServerJsonRpcMessage,
};
use rmcp::service::{serve_directly, RoleServer, RunningService};
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::{StreamableHttpServerConfig, Transport};
use rmcp::ServerHandler;
use serde_json::Value;
use tokio::sync::mpsc;

use super::check::full;
use super::lane::{self, Door, PROTOCOL_VERSION, SESSION_ID};
use super::Body;

const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");
/// The prefix of the headers that carry annotated arguments.
const MCP_PARAM: &str = "mcp-param-";
/// The start of a Base64-wrapped header value.
const BASE64_WRAPPED: &str = "=?";
/// The key of a schema annotation that promotes an argument to a header.
const HEADER_ANNOTATION: &str = "x-mcp-header";
/// Idle services kept per protocol version; one more returning is dropped.
const MAX_IDLE: usize = 64;
/// Messages a service may send ahead of the call reading them.
const CHANNEL: usize = 16;

/// The stateless lane of one front: the handler (one instance for its tool schemas,
/// a way to make more for the services) and a pool of services per protocol version.
pub(super) struct Stateless<H> {
    make: Box<dyn Fn() -> H + Send + Sync>,
    schemas: H,
    pools: Vec<Arc<Pool>>,
    max_body: usize,
}

/// The idle services of one protocol version, and the peer rmcp gives its requests.
struct Pool {
    version: ProtocolVersion,
    peer: InitializeRequestParams,
    idle: Mutex<Vec<Conn>>,
}

/// One long-lived service and the two ends of its transport.
struct Conn {
    to_service: mpsc::Sender<ClientJsonRpcMessage>,
    from_service: mpsc::Receiver<ServerJsonRpcMessage>,
    /// The running service (rmcp's `RunningService`): dropped, it cancels the service
    /// and every handler it runs.
    _running: Box<dyn std::any::Any + Send + Sync>,
}

/// The service's side of the in-process transport.
struct Pipe {
    from_front: mpsc::Receiver<ClientJsonRpcMessage>,
    to_front: mpsc::Sender<ServerJsonRpcMessage>,
}

impl Transport<RoleServer> for Pipe {
    type Error = mpsc::error::SendError<ServerJsonRpcMessage>;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let to_front = self.to_front.clone();
        async move { to_front.send(item).await }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        self.from_front.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.from_front.close();
        Ok(())
    }
}

impl<H: ServerHandler> Stateless<H> {
    /// The lane for handlers made by `make`, under `config`; `None` when rmcp's stateless
    /// answers are not the plain ones this lane writes (an event store keeps them).
    pub(super) fn new(
        make: Box<dyn Fn() -> H + Send + Sync>,
        config: &StreamableHttpServerConfig,
        event_store: bool,
    ) -> Option<Self> {
        if event_store {
            return None;
        }
        let pools = ProtocolVersion::KNOWN_VERSIONS
            .iter()
            .filter(|version| {
                version.as_str() >= ProtocolVersion::NO_INITIALIZE.as_str()
                    && version.as_str() >= ProtocolVersion::STANDARD_HEADERS.as_str()
            })
            .map(|version| {
                let peer = InitializeRequestParams::new(ClientCapabilities::default(), Implementation::default())
                    .with_protocol_version(version.clone());
                Arc::new(Pool { version: version.clone(), peer, idle: Mutex::new(Vec::new()) })
            })
            .collect();
        let schemas = make();
        Some(Self { make, schemas, pools, max_body: config.max_request_body_bytes })
    }

    /// The pool a call may take the lane into (see the module documentation), if any.
    fn pool(&self, door: &Door, headers: &HeaderMap, call: &ClientJsonRpcMessage, len: usize) -> Option<&Arc<Pool>> {
        let ClientJsonRpcMessage::Request(request) = call else { return None };
        let ClientRequest::CallToolRequest(tool_call) = &request.request else { return None };
        if len > self.max_body
            || headers.contains_key(ORIGIN)
            || headers.contains_key(SESSION_ID)
            || !door.host_allowed(headers)
            || !lane::accepts_both(headers)
        {
            return None;
        }
        let version = lane::single(headers, &PROTOCOL_VERSION)?;
        let meta = request.request.get_meta();
        if meta.protocol_version().is_none_or(|meta| meta.as_str() != version)
            || !meta.missing_required_keys(&ProtocolVersion::V_2026_07_28).is_empty()
        {
            return None;
        }
        let pool = self.pools.iter().find(|pool| pool.version.as_str() == version)?;
        let name = tool_call.params.name.as_ref();
        if lane::single(headers, &MCP_METHOD) != Some("tools/call")
            || lane::single(headers, &MCP_NAME)
                .is_none_or(|header| header != name || header.starts_with(BASE64_WRAPPED))
            || headers.keys().any(|header| header.as_str().starts_with(MCP_PARAM))
        {
            return None;
        }
        if self.schemas.get_tool(name).is_some_and(|tool| names_a_header(&tool.input_schema)) {
            return None;
        }
        Some(pool)
    }

    /// The call handed to a service of its pool, if the lane takes it; `Err` gives the
    /// request's parts back for rmcp.
    pub(super) async fn take(
        &self,
        door: &Door,
        parts: http::request::Parts,
        call: ClientJsonRpcMessage,
        len: usize,
    ) -> Result<Taken, http::request::Parts> {
        let Some(pool) = self.pool(door, &parts.headers, &call, len) else { return Err(parts) };
        let ClientJsonRpcMessage::Request(mut request) = call else { return Err(parts) };
        request.request.extensions_mut().insert(parts);
        let conn = pool.take().unwrap_or_else(|| pool.start((self.make)()));
        let sent = conn.to_service.send(ClientJsonRpcMessage::Request(request)).await.is_ok();
        Ok(Taken { lease: Lease { pool: Arc::clone(pool), conn: Some(conn) }, sent })
    }
}

/// A call the lane took, its service at work on it.
pub(super) struct Taken {
    lease: Lease,
    sent: bool,
}

impl Taken {
    /// The call's answer as rmcp's stateless path gives it.
    pub(super) async fn answer(mut self, config: &StreamableHttpServerConfig) -> Response<Body> {
        self.lease.answer(self.sent, config).await
    }
}

impl Pool {
    /// An idle service, with anything sent since its last call dropped.
    fn take(&self) -> Option<Conn> {
        let mut conn = self.idle.lock().unwrap_or_else(PoisonError::into_inner).pop()?;
        while conn.from_service.try_recv().is_ok() {}
        Some(conn)
    }

    /// A new service of `handler` with rmcp's stateless peer of this version.
    fn start<H: ServerHandler>(&self, handler: H) -> Conn {
        let (to_service, from_front) = mpsc::channel(CHANNEL);
        let (to_front, from_service) = mpsc::channel(CHANNEL);
        let running: RunningService<RoleServer, H> =
            serve_directly(handler, Pipe { from_front, to_front }, Some(self.peer.clone()));
        Conn { to_service, from_service, _running: Box::new(running) }
    }

    /// A service whose call is over goes back to the pool.
    fn put(&self, conn: Conn) {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < MAX_IDLE {
            idle.push(conn);
        }
    }
}

/// A service lent to one call: back to its pool once the call's answer was read, dropped
/// (cancelling the handler) if the call is abandoned before.
struct Lease {
    pool: Arc<Pool>,
    conn: Option<Conn>,
}

impl Lease {
    /// The next message of the call; `None` when the service is gone.
    async fn next(&mut self) -> Option<ServerJsonRpcMessage> {
        let message = self.conn.as_mut()?.from_service.recv().await?;
        if matches!(message, ServerJsonRpcMessage::Response(_) | ServerJsonRpcMessage::Error(_))
            && let Some(conn) = self.conn.take()
        {
            self.pool.put(conn);
        }
        Some(message)
    }

    async fn answer(&mut self, sent: bool, config: &StreamableHttpServerConfig) -> Response<Body> {
        let cancelled = config.cancellation_token.child_token();
        let first = if sent {
            tokio::select! {
                first = self.next() => first,
                () = cancelled.cancelled() => None,
            }
        } else {
            None
        };
        let Some(first) = first else {
            // rmcp's answer when no message came.
            let mut response = Response::new(full(Bytes::from_static(
                b"Encounter an error when empty response: no response message received from handler",
            )));
            *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
            return response;
        };
        let status = match &first {
            ServerJsonRpcMessage::Error(error) => match error.error.code {
                ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
                | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
                | ErrorCode::HEADER_MISMATCH => Some(StatusCode::BAD_REQUEST),
                ErrorCode::METHOD_NOT_FOUND => Some(StatusCode::NOT_FOUND),
                _ => Some(StatusCode::OK),
            },
            ServerJsonRpcMessage::Response(_) => Some(StatusCode::OK),
            _ => None,
        };
        if let Some(status) = status
            && let Ok(json) = serde_json::to_vec(&first)
        {
            let mut response = Response::new(full(Bytes::from(json)));
            *response.status_mut() = status;
            response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            return response;
        }
        // Something before the answer: the stream of the call's messages to its answer.
        let done = status.is_some();
        let lease = Self { pool: Arc::clone(&self.pool), conn: self.conn.take() };
        let rest = futures_util::stream::unfold((lease, done), |(mut lease, done)| async move {
            if done {
                return None;
            }
            let message = lease.next().await?;
            let done = matches!(message, ServerJsonRpcMessage::Response(_) | ServerJsonRpcMessage::Error(_));
            Some((ServerSseMessage::from_message(message), (lease, done)))
        });
        let first = ServerSseMessage::from_message(first);
        lane::sse(vec![first], None, lane::rest(rest, config))
    }
}

/// Whether an input schema carries a header annotation anywhere (rmcp checks
/// `Mcp-Param-*` headers against the annotated arguments; such a call is rmcp's).
fn names_a_header(schema: &JsonObject) -> bool {
    fn any(value: &Value) -> bool {
        match value {
            Value::Object(object) => names_a_header(object),
            Value::Array(items) => items.iter().any(any),
            _ => false,
        }
    }
    schema.iter().any(|(key, value)| key == HEADER_ANNOTATION || any(value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::rmcp::read_tools_call;
    use rmcp::model::Tool;
    use serde_json::json;

    /// A handler with one tool whose schema promotes an argument to a header and one
    /// whose schema does not.
    struct Tools;

    impl ServerHandler for Tools {
        fn get_tool(&self, name: &str) -> Option<Tool> {
            let q = match name {
                "tagged" => json!({ "type": "string", "x-mcp-header": "Q" }),
                "plain" => json!({ "type": "string" }),
                _ => return None,
            };
            let schema = json!({ "type": "object", "properties": { "q": q } });
            Some(Tool::new(name.to_owned(), "", schema.as_object().cloned().unwrap_or_default()))
        }
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(HeaderName::from_bytes(k.as_bytes()).unwrap(), HeaderValue::from_str(v).unwrap());
        }
        map
    }

    fn call(name: &str, meta: &Value) -> ClientJsonRpcMessage {
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": name, "arguments": { "q": "x" }, "_meta": meta } });
        read_tools_call(body.to_string().as_bytes()).expect("a plain call")
    }

    #[test]
    fn only_calls_rmcp_would_route_statelessly_and_accept_unchanged_take_the_lane() {
        let config = super::super::loopback_config(&super::super::HttpLimits::default());
        let door = Door::new(&config);
        let lane = Stateless::new(Box::new(|| Tools), &config, false).expect("no event store");
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        let clean = [
            ("host", "127.0.0.1:8000"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "plain"),
        ];
        let takes = |pairs: &[(&str, &str)], call: &ClientJsonRpcMessage| {
            lane.pool(&door, &headers(pairs), call, 100).is_some()
        };
        let plain = call("plain", &meta);
        assert!(takes(&clean, &plain));
        let with = |name: &str, value: &str| {
            let mut pairs: Vec<(&str, &str)> = clean.iter().copied().filter(|(k, _)| *k != name).collect();
            if !value.is_empty() {
                pairs.push((name, value));
            }
            takes(&pairs, &plain)
        };
        assert!(!with("mcp-method", "tools/list"));
        assert!(!with("mcp-method", ""));
        assert!(!with("mcp-name", "other"));
        assert!(!with("mcp-name", "=?base64?cGxhaW4=?="));
        assert!(!with("mcp-name", ""));
        assert!(!with("mcp-protocol-version", ""));
        assert!(!with("mcp-protocol-version", "2025-11-25"));
        assert!(!with("mcp-protocol-version", "2099-01-01"));
        assert!(!with("mcp-param-q", "x"));
        assert!(!with("mcp-session-id", "s-1"));
        assert!(!with("origin", "http://localhost:1"));
        assert!(!with("accept", "application/json"));
        assert!(!with("host", "example.com"));
        let mut twice = clean.to_vec();
        twice.push(("mcp-name", "plain"));
        assert!(!takes(&twice, &plain));
        // The tool's schema promotes an argument to a header: rmcp checks it.
        assert!(!takes(&with_name(&clean, "tagged"), &call("tagged", &meta)));
        // An unknown tool has no schema to check: the handler answers it.
        assert!(takes(&with_name(&clean, "nothing"), &call("nothing", &meta)));
        // `_meta` without the capabilities 2026-07-28 requires, or of another version.
        let mut bare = meta.clone();
        bare.as_object_mut().map(|meta| meta.remove("io.modelcontextprotocol/clientCapabilities"));
        assert!(!takes(&clean, &call("plain", &bare)));
        assert!(!takes(
            &clean,
            &call(
                "plain",
                &json!({ "io.modelcontextprotocol/protocolVersion": "2025-11-25", "io.modelcontextprotocol/clientCapabilities": {} })
            )
        ));
        assert!(!takes(&clean, &call("plain", &json!({}))));
        // A body over rmcp's limit is rmcp's to refuse.
        assert!(lane.pool(&door, &headers(&clean), &plain, config.max_request_body_bytes + 1).is_none());
        // A front whose sessions keep an event store has no stateless lane.
        assert!(Stateless::new(Box::new(|| Tools), &config, true).is_none());
    }

    fn with_name<'a>(pairs: &[(&'a str, &'a str)], name: &'a str) -> Vec<(&'a str, &'a str)> {
        pairs.iter().map(|&(k, v)| if k == "mcp-name" { (k, name) } else { (k, v) }).collect()
    }

    #[test]
    fn a_header_annotation_anywhere_in_the_schema_is_seen() {
        let plain = json!({ "type": "object", "properties": { "q": { "type": "string" } } });
        let annotated = json!({ "type": "object", "properties": { "q": { "type": "string", "x-mcp-header": "Q" } } });
        let deep = json!({ "type": "object", "anyOf": [{ "properties": { "a": { "properties": { "b": { "x-mcp-header": "B" } } } } }] });
        let object = |value: Value| value.as_object().cloned().unwrap_or_default();
        assert!(!names_a_header(&object(plain)));
        assert!(names_a_header(&object(annotated)));
        assert!(names_a_header(&object(deep)));
    }
}
