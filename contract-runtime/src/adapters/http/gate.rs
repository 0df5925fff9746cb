//! The front itself: tower-http's body limit and body timeout around the gate that
//! reads, checks and forwards one request to rmcp.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{HeaderValue, CONTENT_LENGTH, CONTENT_TYPE, RETRY_AFTER};
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Empty};
use rmcp::model::{ClientJsonRpcMessage, GetExtensions as _};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{SessionId, SessionManager as _};
use rmcp::transport::StreamableHttpService;
use rmcp::ServerHandler;
use serde_json::{json, Value};
use tokio::sync::Mutex;
use tower_http::limit::RequestBodyLimit;
use tower_http::timeout::RequestBodyTimeout;
use tower_service::Service;

use super::answer::prefer_json;
use super::check::{envelope, error_response, full, initialize_id, is_json, rejection, too_large, typed};
use super::lane;
use super::stateless::Stateless;
use super::{Body, BoxError, HttpLimits, INVALID_REQUEST, SERVER_BUSY};
use crate::adapters::rmcp::read_tools_call;

type Future_ = Pin<Box<dyn Future<Output = Result<Response<Body>, std::convert::Infallible>> + Send>>;

/// rmcp's streamable HTTP service behind the front (see the module documentation): a
/// tower [`Service`] for any request body, cheap to clone, to mount with axum's
/// `nest_service`. Built by [`McpLayer`](super::McpLayer).
pub struct McpService<H> {
    shared: Arc<Shared<H>>,
    stack: RequestBodyLimit<RequestBodyTimeout<Gate<H>>>,
}

impl<H> Clone for McpService<H> {
    fn clone(&self) -> Self {
        Self { shared: self.shared.clone(), stack: self.stack.clone() }
    }
}

impl<H> std::fmt::Debug for McpService<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpService").field("limits", &self.shared.limits).finish_non_exhaustive()
    }
}

/// What every request shares.
struct Shared<H> {
    service: StreamableHttpService<H, LocalSessionManager>,
    sessions: Arc<LocalSessionManager>,
    /// Held from the session count to the end of a new session's `initialize`, so that
    /// concurrent handshakes cannot all pass the check and overshoot the cap.
    init_gate: Mutex<()>,
    limits: HttpLimits,
    /// What the lane reads of rmcp's configuration.
    door: lane::Door,
    /// The stateless lane, when the front knows how to make the handler.
    stateless: Option<Stateless<H>>,
    /// Calls answered by either lane ([`McpService::calls_by_keys`]).
    keyed: AtomicU64,
}

/// The innermost service: the body arrives limited and timed by tower-http.
struct Gate<H> {
    shared: Arc<Shared<H>>,
}

impl<H> Clone for Gate<H> {
    fn clone(&self) -> Self {
        Self { shared: self.shared.clone() }
    }
}

impl<H: ServerHandler + Send + 'static> McpService<H> {
    /// The front before `service`; `make` (the factory `service` was built with, when
    /// known) opens the stateless lane.
    pub(super) fn new(
        service: StreamableHttpService<H, LocalSessionManager>,
        sessions: Arc<LocalSessionManager>,
        limits: HttpLimits,
        make: Option<Box<dyn Fn() -> H + Send + Sync>>,
    ) -> Self {
        let (max, timeout) = (limits.max_body_bytes, limits.body_timeout);
        let door = lane::Door::new(&service.config);
        let event_store = sessions.event_store().is_some();
        let stateless = make.and_then(|make| Stateless::new(make, &service.config, event_store));
        let shared = Arc::new(Shared {
            service,
            sessions,
            init_gate: Mutex::new(()),
            limits,
            door,
            stateless,
            keyed: AtomicU64::new(0),
        });
        let gate = Gate { shared: shared.clone() };
        let stack = RequestBodyLimit::new(RequestBodyTimeout::new(gate, timeout), max);
        Self { shared, stack }
    }

    /// How many `tools/call` requests the front has answered itself, read by their keys,
    /// rather than through rmcp's service (the lanes of the module documentation): a
    /// plain call for an open session, or a plain stateless call (protocol 2026-07-28 and
    /// later), whose headers pass rmcp's checks.
    #[must_use]
    pub fn calls_by_keys(&self) -> u64 {
        self.shared.keyed.load(Ordering::Relaxed)
    }
}

/// Whether the front reads this request's body: a POST that names JSON. GET and DELETE
/// carry no body; a POST that is not JSON gets rmcp's 415 without its body being read.
fn reads_body<B>(request: &Request<B>) -> bool {
    request.method() == Method::POST && is_json(request.headers().get(CONTENT_TYPE))
}

impl<H, B> Service<Request<B>> for McpService<H>
where
    H: ServerHandler + Send + 'static,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<Body>;
    type Error = std::convert::Infallible;
    type Future = Future_;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let max = self.shared.limits.max_body_bytes;
        let declared = request.headers().get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if declared.is_some_and(|len| len > max as u64) {
            // tower-http would answer this one itself, in plain text: it is answered here
            // with the JSON-RPC error, after rmcp's header check, whatever the method or
            // content type.
            let shared = self.shared.clone();
            let (parts, _body) = request.into_parts();
            return Box::pin(async move { Ok(shared.refuse(&parts, too_large(max)).await) });
        }
        let future = self.stack.call(request);
        Box::pin(async move {
            let response = match future.await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            Ok(response.map(BodyExt::boxed))
        })
    }
}

impl<H, B> Service<Request<B>> for Gate<H>
where
    H: ServerHandler + Send + 'static,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<Body>;
    type Error = std::convert::Infallible;
    type Future = Future_;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let shared = self.shared.clone();
        Box::pin(async move { Ok(shared.handle(request).await) })
    }
}

/// Whether a response is an SSE stream still to be read.
fn is_stream(response: &Response<Body>) -> bool {
    response.status() == StatusCode::OK
        && response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// A request of a session whose answer has not reached the client yet. Dropped armed
/// (the client closed the connection while its handler ran, before or during the
/// response's stream), it tells rmcp the request is cancelled, as the client would have
/// with `notifications/cancelled`: the handler's cancellation token fires and its late
/// answer goes nowhere.
struct Abandon<H: ServerHandler + Send + 'static> {
    shared: Arc<Shared<H>>,
    uri: http::Uri,
    headers: http::HeaderMap,
    id: Value,
    armed: bool,
}

impl<H: ServerHandler + Send + 'static> Abandon<H> {
    /// For a request (`method` with an `id`; but `initialize`, which is never
    /// cancelled) in a session.
    fn of(shared: &Arc<Shared<H>>, parts: &http::request::Parts, method: &str, id: Option<Value>) -> Option<Self> {
        let id = id?;
        if method.is_empty() || method == "initialize" || !parts.headers.contains_key("mcp-session-id") {
            return None;
        }
        Some(Self { shared: shared.clone(), uri: parts.uri.clone(), headers: parts.headers.clone(), id, armed: true })
    }
}

impl<H: ServerHandler + Send + 'static> Drop for Abandon<H> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let notification = json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": { "requestId": self.id, "reason": "the client disconnected" },
        });
        let mut request = Request::new(full(Bytes::from(notification.to_string())));
        *request.method_mut() = Method::POST;
        *request.uri_mut() = self.uri.clone();
        *request.headers_mut() = std::mem::take(&mut self.headers);
        request.headers_mut().remove(CONTENT_LENGTH);
        let shared = self.shared.clone();
        runtime.spawn(async move {
            let _ = shared.service.handle(request).await;
        });
    }
}

/// A response's stream, which disarms its [`Abandon`] once read to its end.
struct Watched<H: ServerHandler + Send + 'static> {
    body: Body,
    abandon: Option<Abandon<H>>,
}

impl<H: ServerHandler + Send + 'static> http_body::Body for Watched<H> {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.body).poll_frame(cx);
        if let Poll::Ready(None) = polled
            && let Some(mut abandon) = this.abandon.take()
        {
            abandon.armed = false;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
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

impl<H: ServerHandler + Send + 'static> Shared<H> {
    async fn handle<B>(self: Arc<Self>, request: Request<B>) -> Response<Body>
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        if request.method() == Method::DELETE {
            let request = request.map(|body| body.map_err(Into::<BoxError>::into));
            return no_content_when_accepted(self.service.handle(request).await);
        }
        if !reads_body(&request) {
            let request = request.map(|body| body.map_err(Into::<BoxError>::into));
            return self.service.handle(request).await;
        }
        let (parts, body) = request.into_parts();
        let limits = &self.limits;
        let body = body.map_err(Into::<BoxError>::into);
        let bytes = match tokio::time::timeout(limits.body_timeout, body.collect()).await {
            Ok(Ok(collected)) => collected.to_bytes(),
            Ok(Err(err)) => {
                if err.is::<http_body_util::LengthLimitError>() {
                    return self.refuse(&parts, too_large(limits.max_body_bytes)).await;
                }
                if !err.is::<tower_http::timeout::TimeoutError>() {
                    // The client went away or broke the framing: nobody reads an answer,
                    // but the connection still gets a well-formed one.
                    return rejection(StatusCode::BAD_REQUEST, INVALID_REQUEST, "unreadable request body", None);
                }
                return self.refuse(&parts, self.too_slow()).await;
            }
            Err(_) => return self.refuse(&parts, self.too_slow()).await,
        };
        // A plain `tools/call` read by its keys is well formed as it is (the envelope
        // check would pass it); anything else gets the envelope check.
        let keyed = read_tools_call(&bytes);
        let value = match &keyed {
            Some(_) => None,
            None => match envelope(&bytes) {
                Ok(value) => Some(value),
                Err(rejected) => return self.refuse(&parts, rejected.into_response()).await,
            },
        };
        // Armed until the answer is out: dropped before (the client went away), it
        // cancels the request.
        let abandon = match (&keyed, &value) {
            (Some(ClientJsonRpcMessage::Request(call)), _) => {
                Abandon::of(&self, &parts, "tools/call", serde_json::to_value(&call.id).ok())
            }
            (_, Some(value)) => Abandon::of(
                &self,
                &parts,
                value.get("method").and_then(Value::as_str).unwrap_or_default(),
                value.get("id").cloned(),
            ),
            _ => None,
        };
        let answer = match keyed {
            Some(call) if lane::plain_call(&call) => match self.lane(&parts).await {
                Some(session) => self.by_keys(parts, session, call).await,
                None => self.forward(parts, bytes, value.as_ref()).await,
            },
            Some(call) => self.stateless(parts, bytes, call).await,
            None => self.forward(parts, bytes, value.as_ref()).await,
        };
        let answer = match answer {
            Ok(answer) => answer,
            Err(refused) => return refused,
        };
        match abandon {
            Some(abandon) if is_stream(&answer) => answer.map(|body| Watched { body, abandon: Some(abandon) }.boxed()),
            Some(mut abandon) => {
                abandon.armed = false;
                answer
            }
            None => answer,
        }
    }

    /// A call that is not for a session: answered by the stateless lane when it takes it
    /// ([`stateless`](super::stateless)), else by rmcp.
    async fn stateless(
        &self,
        parts: http::request::Parts,
        bytes: Bytes,
        call: ClientJsonRpcMessage,
    ) -> Result<Response<Body>, Response<Body>> {
        let Some(stateless) = &self.stateless else { return self.forward(parts, bytes, None).await };
        match stateless.take(&self.door, parts, call, bytes.len()).await {
            Ok(taken) => {
                self.keyed.fetch_add(1, Ordering::Relaxed);
                Ok(taken.answer(&self.service.config).await)
            }
            Err(parts) => self.forward(parts, bytes, None).await,
        }
    }

    /// The open session a call may be handed to directly ([`lane`]), if any.
    async fn lane(&self, parts: &http::request::Parts) -> Option<SessionId> {
        let session = self.door.session(&parts.headers)?;
        matches!(self.sessions.has_session(&session).await, Ok(true)).then_some(session)
    }

    /// A plain `tools/call` handed to its open session as rmcp would hand it (the
    /// request's parts in its extensions), answered by [`lane::answer`].
    async fn by_keys(
        &self,
        parts: http::request::Parts,
        session: SessionId,
        call: ClientJsonRpcMessage,
    ) -> Result<Response<Body>, Response<Body>> {
        let ClientJsonRpcMessage::Request(mut request) = call else {
            unreachable!("the lane takes requests only");
        };
        request.request.extensions_mut().insert(parts);
        let stream = match self.sessions.create_stream(&session, ClientJsonRpcMessage::Request(request)).await {
            Ok(stream) => stream,
            Err(err) => {
                // rmcp's own answer when the session cannot take the request.
                let mut response =
                    Response::new(full(Bytes::from(format!("Encounter an error when get session: {err}"))));
                *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
                return Ok(response);
            }
        };
        self.keyed.fetch_add(1, Ordering::Relaxed);
        Ok(lane::answer(stream, &self.service.config).await)
    }

    /// The request to rmcp's service, with its body, under the session cap; its answer
    /// as JSON where it can be ([`prefer_json`]). `Err`: the front's own refusal.
    async fn forward(
        &self,
        parts: http::request::Parts,
        bytes: Bytes,
        value: Option<&Value>,
    ) -> Result<Response<Body>, Response<Body>> {
        let limits = &self.limits;
        let answer =
            if let Some(id) = value.and_then(initialize_id).filter(|_| !parts.headers.contains_key("mcp-session-id")) {
                let _gate = self.init_gate.lock().await;
                let open = self.sessions.sessions.read().await.len();
                if open >= limits.max_sessions {
                    return Err(self.refuse(&parts, self.busy(open, id)).await);
                }
                self.service.handle(Request::from_parts(parts, full(bytes.clone()))).await
            } else {
                self.service.handle(Request::from_parts(parts, full(bytes.clone()))).await
            };
        // On this path rmcp's only 415 is "could not read the body as a message" (the
        // content type was checked above, and its `Host`/`Origin` check came first):
        // the typed check names the JSON-RPC error instead of rmcp's plain text.
        if answer.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
            let parsed = match value {
                Some(value) => Ok(value.clone()),
                None => envelope(&bytes),
            };
            if let Err(rejected) = parsed.and_then(|value| typed(&value)) {
                return Err(rejected.into_response());
            }
        }
        Ok(prefer_json(answer).await)
    }

    fn too_slow(&self) -> Response<Body> {
        let message = format!("request body not received within {:?}", self.limits.body_timeout);
        rejection(StatusCode::REQUEST_TIMEOUT, INVALID_REQUEST, &message, None)
    }

    /// `refusal`, unless rmcp refuses the request's headers first. rmcp's `Host`/`Origin`
    /// check is private, so it is asked with a copy of the headers and no body: it answers
    /// that copy from the headers alone, 403 or 400 for a foreign or malformed `Host` or
    /// `Origin`, and otherwise 406 or 415 (the copy names no content type), which mean
    /// the headers passed. A request from a foreign page thus gets rmcp's answer, never
    /// one of this front's.
    async fn refuse(&self, parts: &http::request::Parts, refusal: Response<Body>) -> Response<Body> {
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
