//! The `tools/call` lane: a POST whose body is a plain `tools/call` (read by its keys,
//! [`read_tools_call`](crate::rmcp::read_tools_call)) for an open session goes straight
//! to the session, when every check rmcp would make of it passes the same way; its
//! answer goes out as one JSON object, or as rmcp's SSE stream when something comes
//! before it.
//!
//! rmcp's own path reads the body again into its message type (untagged enums, about
//! six times the keyed reading), frames the answer as SSE, and the front then parses that
//! SSE back into the JSON it sends. The lane skips all three. It is taken only when the
//! request is one rmcp would hand to the same session unchanged, which this module
//! decides conservatively from the headers alone: `Host` exactly one and allowed by the
//! service's configuration, no `Origin`, `Accept` naming `application/json` and
//! `text/event-stream` without parameters, exactly one `Mcp-Session-Id` of an open
//! session, exactly one `MCP-Protocol-Version` naming a known revision with the
//! `initialize` handshake (so no standard-header or per-request `_meta` rule applies),
//! and no protocol version in the call's `_meta`. Anything else, or anything in doubt,
//! goes to rmcp as before, which answers it as it always did.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, StreamExt as _};
use http::header::{HeaderName, HeaderValue, ACCEPT, CACHE_CONTROL, CONTENT_TYPE, HOST, ORIGIN};
use http::{HeaderMap, Response};
use http_body::Frame;
use http_body_util::BodyExt as _;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, GetMeta as _, ProtocolVersion, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};
use rmcp::transport::StreamableHttpServerConfig;
use sse_stream::{KeepAlive, Sse, SseBody};

use super::check::full;
use super::Body;

/// The session header (named once, not parsed per request).
pub(super) const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
/// The protocol version header.
pub(super) const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");

/// What the lane needs of the service's configuration, read once: whether it serves
/// sessions, and the `Host`s it allows.
#[derive(Debug)]
pub(super) struct Door {
    sessions: bool,
    /// `None`: every host (rmcp's rule for an empty list).
    hosts: Option<Vec<(String, Option<u16>)>>,
}

impl Door {
    /// rmcp's reading of `allowed_hosts`: an entry that parses as an authority is its
    /// host (lowercase, without IPv6 brackets) and port; any other entry is its whole
    /// text as a host, any port.
    pub(super) fn new(config: &StreamableHttpServerConfig) -> Self {
        let normal = |host: &str| host.trim_matches(['[', ']']).to_ascii_lowercase();
        let hosts = (!config.allowed_hosts.is_empty()).then(|| {
            config
                .allowed_hosts
                .iter()
                .map(|entry| entry.trim())
                .filter(|entry| !entry.is_empty())
                .map(|entry| match http::uri::Authority::try_from(entry) {
                    Ok(authority) => (normal(authority.host()), authority.port_u16()),
                    Err(_) => (normal(entry), None),
                })
                .collect()
        });
        Self { sessions: config.legacy_session_mode, hosts }
    }

    /// The session a request may take the lane into, from its headers alone (whether
    /// that session is open is the caller's to ask): `None` when rmcp's path is to
    /// answer it.
    pub(super) fn session(&self, headers: &HeaderMap) -> Option<SessionId> {
        if !self.sessions || headers.contains_key(ORIGIN) || !self.host_allowed(headers) || !accepts_both(headers) {
            return None;
        }
        let version = single(headers, &PROTOCOL_VERSION)?;
        let known = ProtocolVersion::KNOWN_VERSIONS.iter().any(|known| known.as_str() == version);
        if !known
            || version >= ProtocolVersion::NO_INITIALIZE.as_str()
            || version >= ProtocolVersion::STANDARD_HEADERS.as_str()
        {
            return None;
        }
        single(headers, &SESSION_ID).map(SessionId::from)
    }

    /// The request's one `Host` is a plain `name[:port]` or `[v6][:port]` that the
    /// allowed hosts name (an entry with a port wants that port). Anything else is for
    /// rmcp to judge.
    pub(super) fn host_allowed(&self, headers: &HeaderMap) -> bool {
        let Some((host, port)) = single(headers, &HOST).and_then(host_and_port) else { return false };
        match &self.hosts {
            None => true,
            Some(hosts) => hosts.iter().any(|(name, wanted)| {
                name.eq_ignore_ascii_case(host) && wanted.is_none_or(|wanted| port == Some(wanted))
            }),
        }
    }
}

/// A `Host` value split into its host (without IPv6 brackets) and port, when it is
/// plainly an authority: letters, digits, `.` and `-` (hex digits and `:` between
/// brackets), then an optional `:` and port number.
fn host_and_port(value: &str) -> Option<(&str, Option<u16>)> {
    let (host, rest) = if let Some(v6) = value.strip_prefix('[') {
        let (host, rest) = v6.split_once(']')?;
        let plain = !host.is_empty() && host.bytes().all(|b| b.is_ascii_hexdigit() || b == b':');
        (host, plain.then_some(rest)?)
    } else {
        let (host, rest) = value.split_at(value.find(':').unwrap_or(value.len()));
        let plain = !host.is_empty() && host.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-');
        (host, plain.then_some(rest)?)
    };
    let port = match rest.strip_prefix(':') {
        None if rest.is_empty() => None,
        Some(digits) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => Some(digits.parse().ok()?),
        _ => return None,
    };
    Some((host, port))
}

/// Whether a call read by its keys is one the lane takes: no protocol version in its
/// `_meta` (a per-request version brings rmcp's header-against-body checks).
pub(super) fn plain_call(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, ClientJsonRpcMessage::Request(request)
        if matches!(request.request, ClientRequest::CallToolRequest(_))
            && request.request.get_meta().protocol_version().is_none())
}

/// The one value of header `name`, as text; `None` if it is absent, repeated or not text.
pub(super) fn single<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Option<&'a str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    value.to_str().ok()
}

/// `Accept` lists `application/json` and `text/event-stream`, neither with parameters
/// (a quality weight is rmcp's to weigh), and nothing quoted.
pub(super) fn accepts_both(headers: &HeaderMap) -> bool {
    let (mut json, mut sse) = (false, false);
    for value in headers.get_all(ACCEPT) {
        let Ok(value) = value.to_str() else { return false };
        if value.contains('"') {
            return false;
        }
        for entry in value.split(',') {
            let entry = entry.trim();
            if entry.contains(';') {
                return false;
            }
            json |= entry.eq_ignore_ascii_case("application/json");
            sse |= entry.eq_ignore_ascii_case("text/event-stream");
        }
    }
    json && sse
}

/// The answer to a call handed to its session: the stream's first message as one JSON
/// object when it is the call's response or error, else the stream as rmcp frames it
/// (`text/event-stream`, every event in order, the keep-alive of `config`). A call that
/// runs past the keep-alive interval before its first message gets the stream, with the
/// keep-alive comment rmcp would have sent by then.
pub(super) async fn answer<S>(stream: S, config: &StreamableHttpServerConfig) -> Response<Body>
where
    S: Stream<Item = ServerSseMessage> + Send + Sync + 'static,
{
    let mut stream = Box::pin(stream);
    // Priming events, framed only if the answer turns out to be a stream.
    let mut read: Vec<ServerSseMessage> = Vec::new();
    let cancelled = config.cancellation_token.clone().cancelled_owned();
    let mut cancelled = std::pin::pin!(cancelled);
    loop {
        let next = async {
            match config.sse_keep_alive {
                Some(interval) => tokio::time::timeout(interval, stream.next()).await.ok(),
                None => Some(stream.next().await),
            }
        };
        let next = tokio::select! {
            biased;
            next = next => next,
            () = cancelled.as_mut() => return sse(read, None, full(Bytes::new())),
        };
        match next {
            Some(Some(event)) => match event.message.as_deref() {
                Some(message @ (ServerJsonRpcMessage::Response(_) | ServerJsonRpcMessage::Error(_))) => {
                    if let Ok(json) = serde_json::to_vec(message) {
                        let mut response = Response::new(full(Bytes::from(json)));
                        response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                        return response;
                    }
                    read.push(event);
                    return sse(read, None, rest(stream, config));
                }
                Some(_) => {
                    read.push(event);
                    return sse(read, None, rest(stream, config));
                }
                None => read.push(event),
            },
            Some(None) => return sse(read, None, full(Bytes::new())),
            // rmcp's stream would have sent its keep-alive comment by now.
            None => return sse(read, Some(Bytes::from_static(b":\n\n")), rest(stream, config)),
        }
    }
}

/// One stream event as rmcp writes it: the message's JSON as `data` (empty for a
/// priming event), its event id, its retry hint.
fn encode(event: ServerSseMessage) -> Bytes {
    event_of(event).into()
}

fn event_of(event: ServerSseMessage) -> Sse {
    let data =
        event.message.as_deref().map_or_else(String::new, |message| serde_json::to_string(message).unwrap_or_default());
    let mut sse = Sse::default().data(data);
    sse.id = event.event_id;
    if let Some(retry) = event.retry {
        sse.retry = Some(u64::try_from(retry.as_millis()).unwrap_or(u64::MAX));
    }
    sse
}

/// The rest of a stream as rmcp frames it: each event, until the service's
/// cancellation, with its keep-alive.
pub(super) fn rest<S>(stream: S, config: &StreamableHttpServerConfig) -> Body
where
    S: Stream<Item = ServerSseMessage> + Send + Sync + 'static,
{
    let cancelled = config.cancellation_token.clone().cancelled_owned();
    let events = stream.map(|event| Ok::<_, Infallible>(event_of(event))).take_until(cancelled);
    let body = SseBody::new(events);
    match config.sse_keep_alive {
        Some(interval) => body.with_keep_alive::<Tick>(KeepAlive::new().interval(interval)).boxed(),
        None => body.boxed(),
    }
}

/// The SSE response rmcp would have sent: the events already read, a keep-alive comment
/// if one is due, then `rest`.
pub(super) fn sse(read: Vec<ServerSseMessage>, keep_alive: Option<Bytes>, rest: Body) -> Response<Body> {
    let read = read.into_iter().map(encode).chain(keep_alive).collect();
    let mut response = Response::new(Read { read, rest }.boxed());
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// Frames already read, then the rest of the body.
struct Read {
    read: std::collections::VecDeque<Bytes>,
    rest: Body,
}

impl http_body::Body for Read {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if let Some(bytes) = self.read.pop_front() {
            return Poll::Ready(Some(Ok(Frame::data(bytes))));
        }
        Pin::new(&mut self.rest).poll_frame(cx)
    }
}

/// The keep-alive timer of the stream, on tokio's clock.
struct Tick(Pin<Box<tokio::time::Sleep>>);

impl std::future::Future for Tick {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.0.as_mut().poll(cx)
    }
}

impl sse_stream::Timer for Tick {
    fn from_duration(duration: Duration) -> Self {
        Self(Box::pin(tokio::time::sleep(duration)))
    }

    fn reset(mut self: Pin<&mut Self>, instant: std::time::Instant) {
        self.0.as_mut().reset(tokio::time::Instant::from_std(instant));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(http::header::HeaderName::from_bytes(k.as_bytes()).unwrap(), HeaderValue::from_str(v).unwrap());
        }
        map
    }

    const PLAIN: [(&str, &str); 4] = [
        ("host", "127.0.0.1:8000"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2025-11-25"),
        ("mcp-session-id", "s-1"),
    ];

    #[test]
    fn only_requests_rmcp_would_pass_to_the_session_unchanged_take_the_lane() {
        let door = Door::new(&super::super::loopback_config(&super::super::HttpLimits::default()));
        assert_eq!(door.session(&headers(&PLAIN)).as_deref(), Some("s-1"));
        let with = |name: &str, value: &str| {
            let mut pairs: Vec<(&str, &str)> = PLAIN.iter().copied().filter(|(k, _)| *k != name).collect();
            if !value.is_empty() {
                pairs.push((name, value));
            }
            door.session(&headers(&pairs))
        };
        assert!(with("host", "localhost").is_some());
        assert!(with("host", "LOCALHOST:80").is_some());
        assert!(with("host", "[::1]:9").is_some());
        assert!(with("host", "example.com").is_none());
        assert!(with("host", "localhost.example.com").is_none());
        assert!(with("host", "localhost:x").is_none());
        assert!(with("host", "user@localhost").is_none());
        assert!(with("host", "").is_none());
        assert!(with("accept", "text/event-stream, application/json").is_some());
        assert!(with("accept", "application/json").is_none());
        assert!(with("accept", "application/json;q=0, text/event-stream").is_none());
        assert!(with("mcp-protocol-version", "2025-06-18").is_some());
        assert!(with("mcp-protocol-version", "2026-07-28").is_none());
        assert!(with("mcp-protocol-version", "2099-01-01").is_none());
        assert!(with("mcp-protocol-version", "").is_none());
        assert!(with("mcp-session-id", "").is_none());
        let mut origin = headers(&PLAIN);
        origin.insert(ORIGIN, HeaderValue::from_static("http://localhost:3000"));
        assert!(door.session(&origin).is_none());
        let mut twice = headers(&PLAIN);
        twice.append("mcp-session-id", HeaderValue::from_static("s-2"));
        assert!(door.session(&twice).is_none());
        // A configuration without sessions, or with a host list of its own.
        let stateless = StreamableHttpServerConfig::default().with_legacy_session_mode(false);
        assert!(Door::new(&stateless).session(&headers(&PLAIN)).is_none());
        let named = StreamableHttpServerConfig::default().with_allowed_hosts(["mcp.example:8000"]);
        let mut host = headers(&PLAIN);
        host.insert(HOST, HeaderValue::from_static("MCP.example:8000"));
        assert!(Door::new(&named).session(&host).is_some());
        host.insert(HOST, HeaderValue::from_static("mcp.example:8001"));
        assert!(Door::new(&named).session(&host).is_none());
        let any = StreamableHttpServerConfig::default().disable_allowed_hosts();
        host.insert(HOST, HeaderValue::from_static("anything.example"));
        assert!(Door::new(&any).session(&host).is_some());
    }
}
