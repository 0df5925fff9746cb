//! The transparent relay behind streamable HTTP (`--http` in front of a stdio upstream):
//! one upstream process per client session, started by the client's own `initialize`,
//! and the same relay as over stdio between the session's requests and the process's pipes.
//!
//! A POSTed request is handed to the relay as the body's bytes; what the relay sends the
//! client is routed by id: the answer to a POSTed request ends that POST's response (one
//! JSON body when it is the first thing to come, else an SSE stream of everything the
//! server sent meanwhile, in order, ending with the answer); what the server sends while
//! no POST waits goes on the session's GET stream. Loopback `Host` and `Origin` only, the
//! bodies, sessions and connections bounded by `HttpLimits`.
//!
//! A 2026-07-28 request without a session (its `_meta` names that revision or a newer one,
//! and carries the client's own info and capabilities) is stateless: it goes, as its bytes,
//! to the one upstream process that serves every stateless request, and its answer (with
//! what the server sent meanwhile) ends its POST. The server reads the client's own
//! envelope on each request, so it sees the capabilities of the client that asked; the
//! proxy's own `tools/list` carries the envelope of the latest request. Two stateless
//! requests under the same id are never in flight at once: the later waits for the
//! earlier's answer. What the server sends besides an answer goes to the one stateless
//! POST waiting, or to the one whose request named its progress token, else nowhere: one
//! client never reads what belongs to another.

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use contract_runtime::client::lock::ServerSource;
use contract_runtime::http::HttpLimits;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot, Notify};
use tokio::time::Instant;
use tokio_stream::wrappers::UnboundedReceiverStream;
use tokio_stream::StreamExt as _;

use super::routes::{progress_token, Routes};
use super::shared::Shared;
use super::wire::{Down, Wire};
use super::{relay_upstream, start, start_url, Target};
use crate::verdicts::Policy;

const SESSION_HEADER: &str = "mcp-session-id";

#[derive(Deserialize)]
struct Top<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<&'a RawValue>,
}

/// One client session: its relay, its routes and the switch that ends its process.
struct HttpSession {
    wire: Arc<Wire>,
    routes: Arc<Routes>,
    used: Mutex<Instant>,
    end: Mutex<Option<oneshot::Sender<()>>>,
}

impl HttpSession {
    fn touch(&self) {
        *self.used.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
    }

    fn end(&self) {
        if let Some(end) = self.end.lock().unwrap_or_else(PoisonError::into_inner).take() {
            let _ = end.send(());
        }
    }
}

/// The front: the sessions and what a new one is started with.
pub(crate) struct Front {
    sessions: Mutex<HashMap<String, Arc<HttpSession>>>,
    target: Target,
    source: ServerSource,
    policy: Arc<Policy>,
    timeout: Duration,
    legacy_only: bool,
    limits: HttpLimits,
    next: AtomicU64,
    /// The upstream that serves the stateless requests, once one came.
    stateless: Mutex<Option<Arc<HttpSession>>>,
    /// The ids (JSON text) of the stateless requests in flight, and the signal that one
    /// was answered.
    stateless_ids: Mutex<HashSet<String>>,
    stateless_done: Notify,
}

/// A stateless request's id in flight: released when its POST's response ends.
struct InFlight {
    front: Arc<Front>,
    id: String,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.front.stateless_ids.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.id);
        self.front.stateless_done.notify_waiters();
    }
}

/// A POSTed request whose answer the client still waits for: when its response goes
/// before the answer came (the client disconnected), the request is cancelled upstream
/// and its answer dropped; an `initialize` that opened a session ends that session, whose
/// id the client never read.
struct Waiting {
    session: Arc<HttpSession>,
    id: String,
    /// The front and the key of the session this request opened.
    opened: Option<(Arc<Front>, String)>,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.session.routes.forget(&self.id);
        if self.session.wire.abandoned(&self.id) {
            if let Some((front, key)) = self.opened.take() {
                front.sessions().remove(&key);
                self.session.end();
            }
        }
    }
}

impl Front {
    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<HttpSession>>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn session_id(&self) -> String {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        format!("{:x}-{:x}-{n}", std::process::id(), nanos)
    }

    /// The upstream of the stateless requests, started by the first.
    fn stateless_session(self: &Arc<Self>) -> Result<Arc<HttpSession>, String> {
        let mut slot = self.stateless.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(session) = slot.as_ref() {
            return Ok(Arc::clone(session));
        }
        let (_, session) = self.open(true)?;
        *slot = Some(Arc::clone(&session));
        Ok(session)
    }

    /// Waits until no stateless request under `id` is in flight, and takes it.
    async fn claim(self: &Arc<Self>, id: &str) -> InFlight {
        loop {
            let done = self.stateless_done.notified();
            if self.stateless_ids.lock().unwrap_or_else(PoisonError::into_inner).insert(id.to_owned()) {
                return InFlight { front: Arc::clone(self), id: id.to_owned() };
            }
            done.await;
        }
    }

    /// Forgets a session whose process ended.
    fn forget(&self, key: &str, stateless: bool) {
        self.sessions().remove(key);
        if stateless {
            *self.stateless.lock().unwrap_or_else(PoisonError::into_inner) = None;
        }
    }

    /// Starts the upstream process of a new session (`stateless`: the one that serves the
    /// stateless requests, kept apart from the sessions).
    fn open(self: &Arc<Self>, stateless: bool) -> Result<(String, Arc<HttpSession>), String> {
        let routes = Arc::new(if stateless { Routes::shared() } else { Routes::default() });
        let shared = Arc::new(Shared::fresh(Arc::clone(&self.policy), self.timeout));
        let down = Down::Http(Arc::clone(&routes));
        let id = self.session_id();
        let (end_tx, end_rx) = oneshot::channel();
        let front = Arc::clone(self);
        let key = id.clone();
        let wire = match &self.target {
            Target::Command(command) => {
                let session = start(command, &self.source, shared, self.legacy_only, down)?;
                let wire = Arc::clone(&session.wire);
                tokio::spawn(async move {
                    tokio::select! {
                        status = relay_upstream(Arc::clone(&session.wire), session.stdout, session.child) => {
                            tracing::warn!(session = %key, "the upstream process of an HTTP session ended{status}");
                        }
                        // Dropping the relay drops the process, which ends it.
                        _ = end_rx => {}
                    }
                    front.forget(&key, stateless);
                });
                wire
            }
            Target::Url(url) => {
                let wire = start_url(url, shared, self.legacy_only, down);
                let upstream = Arc::clone(&wire);
                tokio::spawn(async move {
                    let _ = end_rx.await;
                    upstream.up.close().await;
                    front.forget(&key, stateless);
                });
                wire
            }
        };
        let http =
            Arc::new(HttpSession { wire, routes, used: Mutex::new(Instant::now()), end: Mutex::new(Some(end_tx)) });
        if !stateless {
            self.sessions().insert(id.clone(), Arc::clone(&http));
        }
        Ok((id, http))
    }

    /// Ends the sessions idle longer than the limit.
    async fn reap(self: Arc<Self>) {
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let idle = self.limits.session_idle;
            let stale: Vec<Arc<HttpSession>> = self
                .sessions()
                .values()
                .filter(|s| s.used.lock().unwrap_or_else(PoisonError::into_inner).elapsed() > idle)
                .cloned()
                .collect();
            for session in stale {
                session.end();
            }
        }
    }
}

/// Whether a `Host` (or an `Origin`'s authority) names the loopback interface.
fn loopback(authority: &str) -> bool {
    let host = match authority.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => authority.rsplit_once(':').map_or(authority, |(host, _)| host),
    };
    matches!(host, "127.0.0.1" | "localhost" | "::1")
}

fn refused_origin(headers: &HeaderMap) -> bool {
    let host = headers.get("host").and_then(|v| v.to_str().ok());
    if !host.is_some_and(loopback) {
        return true;
    }
    match headers.get("origin").and_then(|v| v.to_str().ok()) {
        None => false,
        Some(origin) => {
            let authority = origin.split_once("://").map_or("", |(_, rest)| rest);
            !loopback(authority.trim_end_matches('/'))
        }
    }
}

fn error(status: StatusCode, code: i64, message: &str, id: Option<&RawValue>) -> Response {
    let id = id.map_or("null", RawValue::get);
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":{}}}}}"#,
        serde_json::to_string(message).unwrap_or_default()
    );
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert("content-type", HeaderValue::from_static("application/json"));
    response
}

fn with_session(mut response: Response, id: &str) -> Response {
    if let Ok(value) = HeaderValue::from_str(id) {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}

fn sse(first: Option<Vec<u8>>, rest: mpsc::UnboundedReceiver<Vec<u8>>, guard: impl Send + 'static) -> Response {
    let event = |line: Vec<u8>| {
        let mut event = Vec::with_capacity(line.len() + 22);
        event.extend_from_slice(b"event: message\ndata: ");
        event.extend_from_slice(&line);
        event.extend_from_slice(b"\n\n");
        Ok::<Bytes, Infallible>(Bytes::from(event))
    };
    let head = tokio_stream::iter(first.into_iter().map(event));
    // What the response holds is let go when its stream ends.
    let stream = head.chain(UnboundedReceiverStream::new(rest).map(event)).map(move |event| {
        let _ = &guard;
        event
    });
    let mut response = Response::new(Body::from_stream(stream));
    response.headers_mut().insert("content-type", HeaderValue::from_static("text/event-stream"));
    response.headers_mut().insert("cache-control", HeaderValue::from_static("no-cache"));
    response
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

impl Message<'_> {
    /// Whether the message names protocol 2026-07-28 or newer in its `_meta` envelope: a
    /// stateless request, which needs no session.
    fn stateless(&self) -> bool {
        #[derive(Deserialize)]
        struct Params {
            #[serde(rename = "_meta", default)]
            meta: Option<Meta>,
        }
        #[derive(Deserialize)]
        struct Meta {
            #[serde(rename = "io.modelcontextprotocol/protocolVersion", default)]
            version: Option<String>,
        }
        self.params
            .and_then(|params| serde_json::from_str::<Params>(params.get()).ok())
            .and_then(|params| params.meta?.version)
            .is_some_and(|version| super::message::modern(&version))
    }
}

/// A stateless request: its bytes to the stateless upstream, its answer (with what the
/// server sent meanwhile) as the POST's response.
async fn stateless(front: &Arc<Front>, body: &Bytes, id: Option<&RawValue>, params: Option<&RawValue>) -> Response {
    let session = match front.stateless_session() {
        Ok(session) => session,
        Err(err) => return error(StatusCode::INTERNAL_SERVER_ERROR, -32603, &err, id),
    };
    let Some(id) = id.map(|id| id.get().to_owned()) else {
        session.wire.client_line(body).await;
        let mut accepted = Response::new(Body::empty());
        *accepted.status_mut() = StatusCode::ACCEPTED;
        return accepted;
    };
    let in_flight = front.claim(&id).await;
    let token = progress_token(params);
    let answers = session.routes.wait_for(&id, token);
    // Dropped before `in_flight`: the id is released once its request is settled.
    let waiting = Waiting { session: Arc::clone(&session), id: id.clone(), opened: None };
    session.wire.client_line(body).await;
    respond(&id, answers, (waiting, in_flight)).await
}

/// The response to the POSTed request `id`: its answer alone as JSON when it comes first,
/// else an SSE stream of everything until its answer. `guard` lives as long as the response.
async fn respond(id: &str, mut answers: mpsc::UnboundedReceiver<Vec<u8>>, guard: impl Send + 'static) -> Response {
    let first = answers.recv().await;
    let is_answer = first.as_deref().is_some_and(|line| {
        serde_json::from_slice::<Top<'_>>(line)
            .is_ok_and(|top| top.method.is_none() && top.id.is_some_and(|answered| answered.get() == id))
    });
    match first {
        Some(line) if is_answer => {
            drop(guard);
            let mut response = Response::new(Body::from(line));
            response.headers_mut().insert("content-type", HeaderValue::from_static("application/json"));
            response
        }
        first => sse(first, answers, guard),
    }
}

async fn post(State(front): State<Arc<Front>>, headers: HeaderMap, body: Bytes) -> Response {
    if refused_origin(&headers) {
        return error(StatusCode::FORBIDDEN, -32600, "Forbidden: a loopback Host and Origin only", None);
    }
    let Ok(message) = serde_json::from_slice::<Message<'_>>(&body) else {
        let parses = serde_json::from_slice::<serde::de::IgnoredAny>(&body).is_ok();
        let (code, text) = if parses {
            (-32600, "Invalid Request: one JSON-RPC message object per POST")
        } else {
            (-32700, "Parse error: the body is not JSON")
        };
        return error(StatusCode::BAD_REQUEST, code, text, None);
    };
    if message.jsonrpc.as_deref() != Some("2.0") {
        return error(StatusCode::BAD_REQUEST, -32600, "Invalid Request: jsonrpc must be \"2.0\"", message.id);
    }
    let session_id = headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let (session_id, session, new) = match session_id {
        Some(id) => match front.sessions().get(&id).cloned() {
            Some(session) => (id, session, false),
            None => return error(StatusCode::NOT_FOUND, -32001, "Session not found", message.id),
        },
        None if message.method.as_deref() == Some("initialize") && message.id.is_some() => {
            if front.sessions().len() >= front.limits.max_sessions {
                let mut busy = error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    contract_runtime::http::SERVER_BUSY,
                    "Server busy: too many sessions; retry later",
                    message.id,
                );
                busy.headers_mut().insert("retry-after", HeaderValue::from_static("5"));
                return busy;
            }
            match front.open(false) {
                Ok((id, session)) => (id, session, true),
                Err(err) => return error(StatusCode::INTERNAL_SERVER_ERROR, -32603, &err, message.id),
            }
        }
        None if message.method.is_some() && message.stateless() => {
            return stateless(&front, &body, message.id, message.params).await;
        }
        None => {
            let text = "Bad Request: no Mcp-Session-Id; a session starts with initialize, or a request \
                        names protocol 2026-07-28 or newer in its _meta";
            return error(StatusCode::BAD_REQUEST, -32600, text, message.id);
        }
    };
    session.touch();
    let request_id = match (&message.method, message.id) {
        (Some(_), Some(id)) => Some(id.get().to_owned()),
        _ => None,
    };
    let Some(request_id) = request_id else {
        // A notification, or the client's answer to the server's request.
        session.wire.client_line(&body).await;
        let mut accepted = Response::new(Body::empty());
        *accepted.status_mut() = StatusCode::ACCEPTED;
        return accepted;
    };
    let answers = session.routes.wait_for(&request_id, None);
    let opened = new.then(|| (Arc::clone(&front), session_id.clone()));
    let waiting = Waiting { session: Arc::clone(&session), id: request_id.clone(), opened };
    session.wire.client_line(&body).await;
    let response = respond(&request_id, answers, waiting).await;
    if new {
        with_session(response, &session_id)
    } else {
        response
    }
}

async fn get(State(front): State<Arc<Front>>, headers: HeaderMap) -> Response {
    if refused_origin(&headers) {
        return error(StatusCode::FORBIDDEN, -32600, "Forbidden: a loopback Host and Origin only", None);
    }
    let Some(session) =
        headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()).and_then(|id| front.sessions().get(id).cloned())
    else {
        return error(StatusCode::NOT_FOUND, -32001, "Session not found", None);
    };
    session.touch();
    let (tx, rx) = mpsc::unbounded_channel();
    session.routes.state().get = Some(tx);
    sse(None, rx, ())
}

async fn delete(State(front): State<Arc<Front>>, headers: HeaderMap) -> Response {
    if refused_origin(&headers) {
        return error(StatusCode::FORBIDDEN, -32600, "Forbidden: a loopback Host and Origin only", None);
    }
    let id = headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()).unwrap_or_default();
    match front.sessions().remove(id) {
        Some(session) => {
            session.end();
            Response::new(Body::empty())
        }
        None => error(StatusCode::NOT_FOUND, -32001, "Session not found", None),
    }
}

/// Serves the transparent relay over streamable HTTP at `/mcp` on `addr`, one upstream
/// process per client session.
pub(crate) async fn serve(
    addr: SocketAddr,
    target: Target,
    source: ServerSource,
    policy: Arc<Policy>,
    timeout: Duration,
    legacy_only: bool,
) -> Result<std::process::ExitCode, String> {
    let limits = HttpLimits::default();
    let front = Arc::new(Front {
        sessions: Mutex::new(HashMap::new()),
        target,
        source,
        policy,
        timeout,
        legacy_only,
        limits: limits.clone(),
        next: AtomicU64::new(1),
        stateless: Mutex::new(None),
        stateless_ids: Mutex::new(HashSet::new()),
        stateless_done: Notify::new(),
    });
    tokio::spawn(Arc::clone(&front).reap());
    let app = axum::Router::new()
        .route("/mcp", axum::routing::post(post).get(get).delete(delete))
        .layer(DefaultBodyLimit::max(limits.max_body_bytes))
        .with_state(front);
    let listener =
        tokio::net::TcpListener::bind(addr).await.map_err(|err| format!("cannot listen on {addr}: {err}"))?;
    let bound = listener.local_addr().map_err(|err| format!("cannot read the address bound: {err}"))?;
    eprintln!("contract-proxy: serving MCP on http://{bound}/mcp");
    contract_runtime::http::serve(listener, app, &limits).await;
    Ok(std::process::ExitCode::SUCCESS)
}
