//! The library's streamable HTTP front served on a loopback port from a thread and
//! runtime of its own, for tests that drive it over real connections; and the raw POSTs
//! by which its lanes are held to rmcp's own path.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use contract_runtime::http::{HttpLimits, McpService};
use serde_json::{json, Value};

use crate::support::interop::{parse_http, HttpReply};

/// How long a raw POST waits for its answer.
pub(crate) const DEADLINE: Duration = Duration::from_secs(30);
/// An `Origin` rmcp's loopback configuration allows, which keeps a request off the
/// front's lanes: rmcp's path answers it.
pub(crate) const LOOPBACK_PAGE: (&str, &str) = ("Origin", "http://localhost:1");

/// Serves `front` at `/mcp` on a free loopback port until the test process ends; its
/// address.
pub(crate) fn serve_on_thread<H>(front: McpService<H>, limits: HttpLimits) -> SocketAddr
where
    H: rmcp::ServerHandler + Clone + Send + Sync + 'static,
{
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.set_nonblocking(true).expect("non-blocking listener");
    let addr = listener.local_addr().expect("local address");
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("a tokio listener");
            let app = axum::Router::new().nest_service("/mcp", front);
            contract_runtime::http::serve(listener, app, &limits).await;
        });
    });
    addr
}

/// The request of a POST of `body` with exactly these headers (and `Host`,
/// `Content-Length`, `Connection: close`).
pub(crate) fn request(addr: SocketAddr, headers: &[(&str, &str)], body: &Value) -> String {
    let body = body.to_string();
    let mut head = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        let _ = write!(head, "{k}: {v}\r\n");
    }
    let _ = write!(head, "Content-Length: {}\r\n\r\n{body}", body.len());
    head
}

/// The POST, read to the end.
pub(crate) fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &Value) -> HttpReply {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(DEADLINE)).expect("read timeout");
    stream.write_all(request(addr, headers, body).as_bytes()).expect("write");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read to the end");
    parse_http(&raw)
}

/// `headers` with `name` set to `value` (left out when `value` is empty).
pub(crate) fn replaced<'a>(headers: &[(&'a str, &'a str)], name: &'a str, value: &'a str) -> Vec<(&'a str, &'a str)> {
    let mut out: Vec<(&str, &str)> = headers.iter().copied().filter(|(k, _)| !k.eq_ignore_ascii_case(name)).collect();
    if !value.is_empty() {
        out.push((name, value));
    }
    out
}

/// Whether two answers' SSE event ids must agree: a session's stream names its HTTP
/// request in them, so they differ by design there.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventIds {
    Compared,
    Ignored,
}

/// What must agree between a lane and rmcp's path: status, content type, caching headers,
/// the body (the JSON, or the stream byte for byte, its event ids as `ids` says, and its
/// messages).
pub(crate) fn seen(reply: &HttpReply, ids: EventIds) -> (u16, Vec<(String, String)>, Value) {
    let headers = ["content-type", "cache-control", "x-accel-buffering", "mcp-session-id"]
        .iter()
        .filter_map(|name| reply.headers.get(*name).map(|v| ((*name).to_owned(), v.clone())))
        .collect();
    let body = if reply.body.trim().is_empty() {
        Value::Null
    } else if reply.headers.get("content-type").is_some_and(|v| v.starts_with("text/event-stream")) {
        let events: Vec<&str> =
            reply.body.lines().filter(|line| ids == EventIds::Compared || !line.starts_with("id:")).collect();
        json!([events.join("\n"), reply.messages()])
    } else {
        serde_json::from_str(&reply.body).unwrap_or_else(|_| Value::String(reply.body.clone()))
    };
    (reply.status, headers, body)
}

/// Sends `body` with `headers` through the lanes' door and through rmcp's (with
/// [`LOOPBACK_PAGE`]); asserts the answers agree and returns the first, and how many
/// calls the lanes took for it.
pub(crate) fn both<H>(
    front: &McpService<H>,
    addr: SocketAddr,
    ids: EventIds,
    what: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> (HttpReply, u64)
where
    H: rmcp::ServerHandler + Clone + Send + Sync + 'static,
{
    let before = front.calls_by_keys();
    let lane = post(addr, headers, body);
    let taken = front.calls_by_keys() - before;
    let mut with_origin = headers.to_vec();
    with_origin.push(LOOPBACK_PAGE);
    let rmcp = post(addr, &with_origin, body);
    assert_eq!(front.calls_by_keys() - before, taken, "{what}: rmcp's door took the lane");
    assert_eq!(seen(&lane, ids), seen(&rmcp, ids), "{what}:\nlane {lane:?}\nrmcp {rmcp:?}");
    (lane, taken)
}
