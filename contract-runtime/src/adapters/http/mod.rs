//! Streamable HTTP with limits (cargo feature `http`): rmcp's [`StreamableHttpService`]
//! behind a front that bounds what one client can make the server hold, as a tower
//! service to mount in axum (or any tower-based server), and [`serve`] for the
//! connections.
//!
//! ```no_run
//! # async fn run<H: rmcp::ServerHandler + Clone + Send + Sync + 'static>(handler: H) -> Result<(), Box<dyn std::error::Error>> {
//! use contract_runtime::http::{HttpLimits, McpLayer};
//! use contract_runtime::rmcp::ContractedServer;
//!
//! let server = ContractedServer::new(handler, contract_runtime::ContractSet::new())?;
//! let limits = HttpLimits::default().with_max_sessions(64);
//! let app = axum::Router::new().nest_service("/mcp", McpLayer::new(limits.clone()).service(server));
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
//! contract_runtime::http::serve(listener, app, &limits).await;
//! # Ok(())
//! # }
//! ```
//!
//! What the front answers before rmcp sees a request (every error body is a JSON-RPC
//! error object, `Content-Type: application/json`):
//!
//! | request | status | JSON-RPC code |
//! |---|---|---|
//! | body that is not JSON (or nested deeper than 128 levels) | 400 | -32700 parse error |
//! | batch array, non-object, `jsonrpc` other than `"2.0"`, `id` that is null, an object, an array, a boolean or a fraction, `method` that is not a string, `params` that is not an object or array | 400 | -32600 invalid request |
//! | positional (array) `params`, which no MCP method takes | 400 | -32602 invalid params |
//! | body over [`HttpLimits::max_body_bytes`] (declared or chunked) | 413 | -32600 |
//! | body not received within [`HttpLimits::body_timeout`] | 408 | -32600 |
//! | `initialize` while [`HttpLimits::max_sessions`] sessions are open | 503 + `Retry-After` | -32000 |
//!
//! Who does what: tower-http's `RequestBodyLimit` bounds every body as it streams and
//! its `RequestBodyTimeout` bounds the wait between two body frames; this front turns
//! their refusals into the JSON-RPC answers above, bounds the whole body's arrival,
//! checks the message, caps the sessions, and answers JSON instead of SSE where it can.
//! rmcp does the rest: header checks, `Host`/`Origin` validation (loopback only with
//! [`loopback_config`]), sessions and the protocol. Sessions idle for
//! [`HttpLimits::session_idle`] are closed by rmcp's session worker (its `keep_alive`),
//! which frees their slot under the cap. rmcp's `Host`/`Origin` check comes first all
//! the same: a foreign or malformed `Host` or `Origin` gets rmcp's 403/400, never one of
//! the answers above.
//!
//! JSON instead of SSE: rmcp's own `json_response` (which [`loopback_config`] turns on)
//! applies only to stateless serving; with sessions every answer is an SSE stream, so a
//! stream whose first message is the request's response or error goes out as that one
//! JSON object (the transport lets the server choose; every client takes both). A stream
//! with anything before the answer (a notification, a request to the client, a
//! keep-alive) is passed on unchanged.
//!
//! The `tools/call` lane: a POST whose body is a plain `tools/call` (read by its keys,
//! [`read_tools_call`](crate::rmcp::read_tools_call), not parsed twice) for an open
//! session, with headers rmcp would pass unchanged (an allowed `Host`, no `Origin`,
//! `Accept` listing JSON and SSE, the session's id, a protocol version with the
//! `initialize` handshake), is handed to the session by the front itself and answered as
//! above, without rmcp's second reading of the body, its SSE framing or the front's
//! reading of that SSE. Any other request, or one in doubt, goes through rmcp's service
//! as before. [`McpService::calls_by_keys`] counts the calls the lane took.
//!
//! The stateless `tools/call` lane: a plain `tools/call` of protocol 2026-07-28 or later
//! (no session; its `_meta` carries the protocol version and client capabilities, its
//! headers `Mcp-Method` and `Mcp-Name`) whose headers and message rmcp would accept
//! unchanged, for a tool whose input schema promotes no argument to a header, is handed
//! by the front to a long-lived service of the handler for that protocol version, with
//! the peer and extensions rmcp's per-request service would give it; its answer is the
//! one rmcp's stateless path writes (the JSON object with rmcp's status, or its SSE
//! stream when the handler sends something first). This skips rmcp's second reading of
//! the body, its JSON copy of the message for the header check, and the service, transport
//! and task it starts per request. It needs the handler itself, so only a front built by
//! [`McpLayer::service`] has it. [`McpService::calls_by_keys`] counts these calls too. A
//! client that goes away before the answer is out has the call cancelled.
//!
//! A client that closes the connection of a session's request before its answer went out
//! (while the handler runs, or in the middle of the SSE stream) has the request cancelled:
//! the front hands rmcp a `notifications/cancelled` for it (reason "the client
//! disconnected"), so the handler's cancellation token fires; `initialize` is never
//! cancelled.
//!
//! [`serve`] accepts connections with `TCP_NODELAY` (without it a small response waits
//! for the peer's delayed ACK, about 40 ms on Linux), at most
//! [`HttpLimits::max_connections`] at once, each dropped if its request head does not
//! arrive within [`HttpLimits::header_timeout`]. Header size is hyper's to bound: a head
//! over its buffer (about 400 KiB) or with more than 100 headers gets `431`.

mod answer;
mod check;
mod gate;
mod lane;
mod listen;
mod stateless;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServerHandler;

pub use gate::McpService;
pub use listen::serve;

/// The response body rmcp's service and this front both answer with.
type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// JSON-RPC 2.0 "Parse error": the body is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC 2.0 "Invalid Request": JSON, but not a request object MCP accepts.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC 2.0 "Invalid params": a known method with parameters that do not fit it.
pub const INVALID_PARAMS: i64 = -32602;
/// The implementation-defined server error this front uses for "too many sessions".
pub const SERVER_BUSY: i64 = -32000;

/// What one HTTP server lets its clients hold. Every limit has a default that suits a
/// local MCP server with a handful of clients.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use contract_runtime::http::HttpLimits;
///
/// let limits = HttpLimits::default().with_max_sessions(8).with_session_idle(Duration::from_secs(60));
/// assert_eq!(limits.max_sessions, 8);
/// assert_eq!(limits.max_body_bytes, HttpLimits::DEFAULT_MAX_BODY_BYTES);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpLimits {
    /// Open (initialized, not yet closed or expired) sessions at most; one more
    /// `initialize` gets HTTP 503 with a JSON-RPC error until one closes.
    pub max_sessions: usize,
    /// A session with no traffic for this long is closed and its slot freed.
    pub session_idle: Duration,
    /// The largest request body read, whether sent with `Content-Length` or chunked.
    pub max_body_bytes: usize,
    /// How long a client may take to send a request body once its headers arrived
    /// (the whole body, and so also the wait between two of its frames).
    pub body_timeout: Duration,
    /// How long a client may take to send a request's head ([`serve`]).
    pub header_timeout: Duration,
    /// Connections served at once ([`serve`]); further clients wait in the listen
    /// backlog until one closes.
    pub max_connections: usize,
}

impl HttpLimits {
    /// Default of [`max_sessions`](Self::max_sessions): at rmcp's cost of about 56 KB per
    /// idle session this bounds sessions to about 15 MB.
    pub const DEFAULT_MAX_SESSIONS: usize = 256;
    /// Default of [`session_idle`](Self::session_idle), rmcp's own keep-alive (5 minutes).
    pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(300);
    /// Default of [`max_body_bytes`](Self::max_body_bytes); rmcp's own default is 4 MiB.
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
/// browser `Origin`s only from loopback pages (DNS-rebinding protection), the body limit
/// of `limits`, so a body rmcp reads again never exceeds what was checked, and JSON
/// answers to stateless requests whose first message is their response (rmcp's
/// `json_response`; a stream otherwise, as with sessions). A
/// server reachable under other names starts from this and sets its own
/// `allowed_hosts` and `allowed_origins`.
#[must_use]
pub fn loopback_config(limits: &HttpLimits) -> StreamableHttpServerConfig {
    StreamableHttpServerConfig::default()
        .with_allowed_hosts(["localhost", "127.0.0.1", "::1", "[::1]"])
        .with_allowed_origins(["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"])
        .enforce_origin_validation()
        .with_max_request_body_bytes(limits.max_body_bytes)
        .with_json_response(true)
}

/// The tower [`Layer`](tower_layer::Layer) that puts the front before rmcp's
/// [`StreamableHttpService`]. It owns the session manager the session cap counts:
/// [`service`](Self::service) builds rmcp's service with it, and a service built by
/// hand must be given [`session_manager`](Self::session_manager). A front over a service
/// built by hand has no stateless `tools/call` lane (it cannot make the handler).
#[derive(Clone, Debug)]
pub struct McpLayer {
    limits: HttpLimits,
    sessions: Arc<LocalSessionManager>,
}

impl McpLayer {
    /// A layer with these limits and a fresh session manager whose idle sessions
    /// expire after [`HttpLimits::session_idle`].
    #[must_use]
    pub fn new(limits: HttpLimits) -> Self {
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = Some(limits.session_idle);
        Self { limits, sessions: Arc::new(manager) }
    }

    /// The session manager to build rmcp's [`StreamableHttpService`] with.
    #[must_use]
    pub fn session_manager(&self) -> Arc<LocalSessionManager> {
        self.sessions.clone()
    }

    /// rmcp's service for `server` with [`loopback_config`], behind the front: what
    /// axum's `nest_service` mounts.
    pub fn service<H>(&self, server: H) -> McpService<H>
    where
        H: ServerHandler + Clone + Send + Sync + 'static,
    {
        let make = server.clone();
        let rmcp = StreamableHttpService::new(
            move || Ok(server.clone()),
            self.session_manager(),
            loopback_config(&self.limits),
        );
        McpService::new(rmcp, self.sessions.clone(), self.limits.clone(), Some(Box::new(move || make.clone())))
    }
}

impl<H> tower_layer::Layer<StreamableHttpService<H, LocalSessionManager>> for McpLayer
where
    H: ServerHandler + Send + 'static,
{
    type Service = McpService<H>;

    fn layer(&self, rmcp: StreamableHttpService<H, LocalSessionManager>) -> McpService<H> {
        McpService::new(rmcp, self.sessions.clone(), self.limits.clone(), None)
    }
}
