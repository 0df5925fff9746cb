//! `contract_runtime::http` as a user mounts it: `McpLayer::new(limits).service(server)`
//! nested at `/mcp` in an axum `Router`, served by `contract_runtime::http::serve` on
//! 127.0.0.1 with an ephemeral port, in this process, driven over raw TCP.
//!
//! The hostile input here is what http_hostile.rs (the same front, in the qe-server
//! binary) does not send: huge request heads, wrong content types and `Accept` headers,
//! a head that never ends, bodies over a small configured limit. Each refusal has a
//! clean neighbour that is served.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use contract_runtime::http::{HttpLimits, McpLayer};
use serde_json::{json, Value};

const IO_DEADLINE: Duration = Duration::from_secs(20);
const LEGACY: &str = "2025-11-25";
/// A body limit far below the default, so that the limit in force is the one configured.
const MAX_BODY: usize = 4096;
/// The header deadline the server runs with.
const HEADER_TIMEOUT: Duration = Duration::from_secs(1);

/// The demo server's contracted handler behind the library front, on its own thread and
/// runtime; it ends with the test process.
fn start() -> SocketAddr {
    let limits = HttpLimits::default().with_max_body_bytes(MAX_BODY).with_header_timeout(HEADER_TIMEOUT);
    let server = qe_server::server::contracted(false).expect("the demo contracts bind");
    crate::support::http_front::serve_on_thread(McpLayer::new(limits.clone()).service(server), limits)
}

#[derive(Debug)]
struct Reply {
    status: u16,
    head: String,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.head
            .lines()
            .filter_map(|l| l.split_once(':'))
            .find_map(|(k, v)| k.eq_ignore_ascii_case(name).then(|| v.trim()))
    }

    /// The body as one JSON-RPC message (the front answers with `Content-Length`).
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|_| panic!("not one JSON object: {self:?}"))
    }
}

/// Sends `raw` on a fresh connection and reads the reply until the server closes it.
fn exchange(addr: SocketAddr, raw: &[u8]) -> Reply {
    let mut stream = TcpStream::connect_timeout(&addr, IO_DEADLINE).expect("connect");
    stream.set_read_timeout(Some(IO_DEADLINE)).expect("read timeout");
    stream.write_all(raw).expect("write the request");
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("{text:?}"));
    Reply { status, head: head.to_owned(), body: body.to_owned() }
}

/// A POST of `body` to `/mcp` with `Connection: close` and `headers` (the default
/// `Content-Type` and `Accept` unless `headers` names them).
fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &[u8]) -> Reply {
    let mut head =
        format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    let named = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    if !named("content-type") {
        head.push_str("Content-Type: application/json\r\n");
    }
    if !named("accept") {
        head.push_str("Accept: application/json, text/event-stream\r\n");
    }
    for (k, v) in headers {
        if !v.is_empty() {
            let _ = write!(head, "{k}: {v}\r\n");
        }
    }
    head.push_str("\r\n");
    let mut raw = head.into_bytes();
    raw.extend_from_slice(body);
    exchange(addr, &raw)
}

fn initialize() -> Vec<u8> {
    json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": { "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": { "name": "front", "version": "1" } }
    })
    .to_string()
    .into_bytes()
}

fn assert_initialized(what: &str, reply: &Reply) {
    assert_eq!(reply.status, 200, "{what}: {reply:?}");
    assert_eq!(reply.header("content-type"), Some("application/json"), "{what}: {reply:?}");
    assert_eq!(reply.json()["result"]["protocolVersion"], LEGACY, "{what}: {reply:?}");
    assert!(reply.header("mcp-session-id").is_some(), "{what}: {reply:?}");
}

#[test]
fn huge_request_heads_get_431_and_a_normal_head_is_served() {
    let addr = start();
    let big = "x".repeat(500 * 1024);
    let huge_value = post(addr, &[("X-Padding", &big)], &initialize());
    assert_eq!(huge_value.status, 431, "{huge_value:?}");
    let names: Vec<String> = (0..150).map(|n| format!("X-Header-{n}")).collect();
    let many: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "1")).collect();
    let too_many = post(addr, &many, &initialize());
    assert_eq!(too_many.status, 431, "{too_many:?}");
    // The controls: a few extra headers of a few kilobytes pass.
    let padding = "x".repeat(4 * 1024);
    assert_initialized("a 4 KiB header", &post(addr, &[("X-Padding", &padding)], &initialize()));
    assert_initialized("ten extra headers", &post(addr, &many[..10], &initialize()));
}

#[test]
fn wrong_content_types_and_accept_headers_are_refused_and_json_is_served() {
    let addr = start();
    for content_type in ["text/plain", "application/x-www-form-urlencoded", "application/jsonp", "application/json-seq"]
    {
        let reply = post(addr, &[("Content-Type", content_type)], &initialize());
        assert_eq!(reply.status, 415, "{content_type}: {reply:?}");
        assert!(reply.header("mcp-session-id").is_none(), "{content_type}: {reply:?}");
    }
    // No Content-Type at all (the header is left out).
    let raw = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\n\r\n",
        initialize().len()
    );
    let mut raw = raw.into_bytes();
    raw.extend_from_slice(&initialize());
    let untyped = exchange(addr, &raw);
    assert_eq!(untyped.status, 415, "{untyped:?}");
    // An Accept that leaves out SSE: streamable HTTP requires both.
    let accept = post(addr, &[("Accept", "application/json")], &initialize());
    assert_eq!(accept.status, 406, "{accept:?}");
    // The controls: JSON with parameters and in another case, and the usual Accept.
    assert_initialized("charset", &post(addr, &[("Content-Type", "application/json; charset=utf-8")], &initialize()));
    assert_initialized("upper case", &post(addr, &[("Content-Type", "Application/JSON")], &initialize()));
    // Another path is not the endpoint.
    let elsewhere =
        exchange(addr, format!("GET /other HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes());
    assert_eq!(elsewhere.status, 404, "{elsewhere:?}");
}

#[test]
fn the_configured_body_limit_answers_413_with_a_json_rpc_error() {
    let addr = start();
    let padded = |len: usize| {
        let mut body = initialize();
        let pad = len - body.len();
        // Whitespace after the object: the same message, `len` bytes long.
        body.extend(std::iter::repeat_n(b' ', pad));
        body
    };
    let over = post(addr, &[], &padded(MAX_BODY + 1));
    assert_eq!(over.status, 413, "{over:?}");
    assert_eq!(over.json()["error"]["code"], -32600, "{over:?}");
    // Chunked, with no length declared: refused as it streams.
    let body = padded(MAX_BODY + 1);
    let raw = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{}\r\n0\r\n\r\n",
        body.len(),
        String::from_utf8(body).expect("UTF-8")
    );
    let chunked = exchange(addr, raw.as_bytes());
    assert_eq!(chunked.status, 413, "{chunked:?}");
    assert_eq!(chunked.json()["error"]["code"], -32600, "{chunked:?}");
    // Whatever the content type: a declared length over the limit is refused unread.
    let plain = post(addr, &[("Content-Type", "text/plain")], &padded(MAX_BODY + 1));
    assert_eq!(plain.status, 413, "{plain:?}");
    assert_eq!(plain.json()["error"]["code"], -32600, "{plain:?}");
    // The control: exactly at the limit is served.
    assert_initialized("a body at the limit", &post(addr, &[], &padded(MAX_BODY)));
}

#[test]
fn a_head_that_never_ends_is_closed_after_the_header_timeout() {
    let addr = start();
    let mut stalled = TcpStream::connect_timeout(&addr, IO_DEADLINE).expect("connect");
    stalled.set_read_timeout(Some(IO_DEADLINE)).expect("read timeout");
    let started = Instant::now();
    stalled.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty").expect("write half a head");
    let mut rest = Vec::new();
    let read = stalled.read_to_end(&mut rest);
    let waited = started.elapsed();
    // Closed by the server (a 408 first or not), well before the read deadline here.
    assert!(read.is_ok() || read.as_ref().is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset), "{read:?}");
    assert!(rest.is_empty() || rest.starts_with(b"HTTP/1.1 408"), "{:?}", String::from_utf8_lossy(&rest));
    assert!(waited >= HEADER_TIMEOUT && waited < IO_DEADLINE, "closed after {waited:?}");
    // The control: a head sent in full on another connection is served.
    assert_initialized("a whole head", &post(addr, &[], &initialize()));
}
