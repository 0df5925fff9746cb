//! The HTTP front's `tools/call` lane against rmcp's own path: the probe server
//! (`support/rollout_probe.rs`) behind `McpLayer`, in this process, driven over raw TCP.
//! Each request of the corpus is sent twice on one session: as it is, and with an
//! `Origin` of a loopback page, which rmcp accepts (`loopback_config`) but which keeps a
//! request off the lane, so rmcp's path answers it. Both answers must agree (status, the
//! headers that matter, the JSON-RPC messages in order), and the front's count of calls
//! it answered by their keys shows which of the two took the lane: only a plain call with
//! clean headers for an open session does.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use contract_runtime::http::{HttpLimits, McpLayer, McpService};
use serde_json::{json, Value};

use crate::support::interop::{parse_http, HttpReply, HttpSession};
use crate::support::rollout_probe::{contracted, probe, RolloutProbe};

const DEADLINE: Duration = Duration::from_secs(30);
/// An `Origin` rmcp's loopback configuration allows: the request goes to rmcp's path.
const LOOPBACK_PAGE: (&str, &str) = ("Origin", "http://localhost:1");

type Front = McpService<contract_runtime::rmcp::ContractedServer<RolloutProbe>>;

/// The probe behind the front on its own thread and runtime: its address and the front.
fn start() -> (SocketAddr, Front) {
    let front = McpLayer::new(HttpLimits::default()).service(contracted(probe(), None));
    let addr = crate::support::http_front::serve_on_thread(front.clone(), HttpLimits::default());
    (addr, front)
}

/// A POST of `body` with exactly these headers (and `Host`, `Content-Length`,
/// `Connection: close`), read to the end.
fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &Value) -> HttpReply {
    let body = body.to_string();
    let mut head = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        let _ = write!(head, "{k}: {v}\r\n");
    }
    let _ = write!(head, "Content-Length: {}\r\n\r\n{body}", body.len());
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(DEADLINE)).expect("read timeout");
    stream.write_all(head.as_bytes()).expect("write");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read to the end");
    parse_http(&raw)
}

/// What must agree between the two paths: status, content type, caching headers, the
/// body (an SSE stream byte for byte but its event ids, which name the HTTP request and
/// so differ by design).
fn seen(reply: &HttpReply) -> (u16, Vec<(String, String)>, Value) {
    let headers = ["content-type", "cache-control", "x-accel-buffering", "mcp-session-id"]
        .iter()
        .filter_map(|name| reply.headers.get(*name).map(|v| ((*name).to_owned(), v.clone())))
        .collect();
    let body = if reply.body.trim().is_empty() {
        Value::Null
    } else if reply.headers.get("content-type").is_some_and(|v| v.starts_with("text/event-stream")) {
        // The stream byte for byte, but its event ids.
        let events: Vec<&str> = reply.body.lines().filter(|line| !line.starts_with("id:")).collect();
        json!([events.join("\n"), reply.messages()])
    } else {
        serde_json::from_str(&reply.body).unwrap_or_else(|_| Value::String(reply.body.clone()))
    };
    (reply.status, headers, body)
}

/// Sends `body` with `headers` through the lane's door and through rmcp's (with
/// [`LOOPBACK_PAGE`]); asserts the answers agree and returns the first, and how many
/// calls the lane took for it.
fn both(front: &Front, addr: SocketAddr, what: &str, headers: &[(&str, &str)], body: &Value) -> (HttpReply, u64) {
    let before = front.calls_by_keys();
    let lane = post(addr, headers, body);
    let taken = front.calls_by_keys() - before;
    let mut with_origin = headers.to_vec();
    with_origin.push(LOOPBACK_PAGE);
    let rmcp = post(addr, &with_origin, body);
    assert_eq!(front.calls_by_keys() - before, taken, "{what}: rmcp's door took the lane");
    assert_eq!(seen(&lane), seen(&rmcp), "{what}:\nlane {lane:?}\nrmcp {rmcp:?}");
    (lane, taken)
}

/// A request rmcp must judge: what it is, its headers, its body, the status it gets.
type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, Value, u16);

/// `headers` with `name` set to `value` (left out when `value` is empty).
fn replaced<'a>(headers: &[(&'a str, &'a str)], name: &'a str, value: &'a str) -> Vec<(&'a str, &'a str)> {
    let mut out: Vec<(&str, &str)> = headers.iter().copied().filter(|(k, _)| !k.eq_ignore_ascii_case(name)).collect();
    if !value.is_empty() {
        out.push((name, value));
    }
    out
}

#[test]
fn the_lane_answers_every_request_as_rmcps_path_does_and_takes_only_plain_calls() {
    let (addr, front) = start();
    let session = HttpSession::open(addr);
    let clean = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Mcp-Session-Id", session.id.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let call = |id: u64, name: &str, arguments: Value| json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": name, "arguments": arguments } });
    let with = |name, value| replaced(&clean, name, value);

    // A plain call: the lane answers it with the same one JSON object.
    let (reply, taken) =
        both(&front, addr, "a plain call", &clean, &call(1, "ratio", json!({ "ratio": 0.25, "token": "t" })));
    assert_eq!(taken, 1, "the plain call took the lane: {reply:?}");
    assert_eq!(reply.headers.get("content-type").map(String::as_str), Some("application/json"), "{reply:?}");
    assert_eq!(reply.response(1)["result"]["structuredContent"], json!({ "ratio": 0.25, "token": "t" }));
    // A tool error and an unknown tool are answered alike too.
    let (_, taken) = both(&front, addr, "a failing tool", &clean, &call(2, "ratio_down", json!({})));
    assert_eq!(taken, 1);
    let (_, taken) = both(&front, addr, "an unknown tool", &clean, &call(3, "no_such_tool", json!({})));
    assert_eq!(taken, 1);

    // A handler that sends progress first: the stream, the notification before the answer.
    let mut progress = call(4, "ratio_slow", json!({ "ms": 10 }));
    progress["params"]["_meta"] = json!({ "progressToken": "p-4" });
    let (reply, taken) = both(&front, addr, "progress first", &clean, &progress);
    assert_eq!(taken, 1);
    assert_eq!(reply.headers.get("content-type").map(String::as_str), Some("text/event-stream"), "{reply:?}");
    let methods: Vec<Value> =
        reply.messages().iter().map(|m| m.get("method").cloned().unwrap_or(json!("answer"))).collect();
    assert_eq!(methods, [json!("notifications/progress"), json!("answer")], "{reply:?}");

    // Requests rmcp must judge: none takes the lane, each is answered as before.
    let unknown_session = with("Mcp-Session-Id", "no-such-session");
    let cases: [Case<'_>; 5] = [
        ("an unknown session", unknown_session, call(5, "ratio", json!({ "ratio": 0.5, "token": "u" })), 404),
        (
            "Accept without SSE",
            with("Accept", "application/json"),
            call(6, "ratio", json!({ "ratio": 0.5, "token": "a" })),
            406,
        ),
        (
            "an unsupported protocol version",
            with("MCP-Protocol-Version", "2099-01-01"),
            call(7, "ratio", json!({ "ratio": 0.5, "token": "v" })),
            400,
        ),
        ("no session id", with("Mcp-Session-Id", ""), call(8, "ratio", json!({ "ratio": 0.5, "token": "n" })), 400),
        (
            "a notification",
            clean.to_vec(),
            json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 99 } }),
            202,
        ),
    ];
    for (what, headers, body, status) in cases {
        let (reply, taken) = both(&front, addr, what, &headers, &body);
        assert_eq!(taken, 0, "{what} took the lane");
        assert_eq!(reply.status, status, "{what}: {reply:?}");
    }
    // A call that is not plain (a member the keyed reader does not know) is rmcp's.
    let mut extra = call(9, "ratio", json!({ "ratio": 0.5, "token": "x" }));
    extra["extra"] = json!(1);
    let (reply, taken) = both(&front, addr, "an unknown member", &clean, &extra);
    assert_eq!((taken, reply.status), (0, 200), "{reply:?}");
}
