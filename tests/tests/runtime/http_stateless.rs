//! The HTTP front's stateless `tools/call` lane (protocol 2026-07-28: no session, each
//! call carrying its `_meta` and its `Mcp-Method` / `Mcp-Name` headers) against rmcp's own
//! stateless path: the probe server (`support/rollout_probe.rs`) behind `McpLayer`, in
//! this process, driven over raw TCP. Each request is sent twice: as it is, and with an
//! `Origin` of a loopback page, which rmcp accepts (`loopback_config`) but which keeps a
//! request off the lane, so rmcp's path answers it. Both answers must agree (status, the
//! headers that matter, the JSON-RPC messages in order), and the front's count of calls it
//! answered by their keys shows which of the two took the lane. A client that goes away
//! mid-call has its handler cancelled, on the lane as on rmcp's path.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use contract_runtime::http::{HttpLimits, McpLayer, McpService};
use serde_json::{json, Value};

use crate::support::http_front::{both, replaced, request, EventIds, DEADLINE};
use crate::support::interop::parse_http;
use crate::support::rollout_probe::{contracted, probe, RolloutProbe};

const ERA: &str = "2026-07-28";

type Front = McpService<contract_runtime::rmcp::ContractedServer<RolloutProbe>>;

/// The probe behind the front on its own thread and runtime: its address, its
/// cancellation count and the front.
fn start() -> (SocketAddr, Arc<AtomicU32>, Front) {
    let probe = probe();
    let cancelled = Arc::clone(&probe.cancelled);
    let front = McpLayer::new(HttpLimits::default()).service(contracted(probe, None));
    let addr = crate::support::http_front::serve_on_thread(front.clone(), HttpLimits::default());
    (addr, cancelled, front)
}

/// A request rmcp must judge: what it is, its headers, its body, the status it gets.
type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a Value, u16);

/// A stateless call of `name` with `id`, its `_meta` the era's.
fn call(id: &Value, name: &str, arguments: Value) -> Value {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": ERA,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "t", "version": "1" },
    });
    let mut body =
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": name, "_meta": meta } });
    body["params"]["arguments"] = arguments;
    body
}

/// The headers of a clean stateless call of `tool`.
fn clean(tool: &str) -> Vec<(&str, &str)> {
    vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", ERA),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", tool),
    ]
}

#[test]
fn the_stateless_lane_answers_as_rmcps_stateless_path_does_and_takes_only_plain_calls() {
    let (addr, _, front) = start();
    let ratio = |ratio: f64| json!({ "ratio": ratio, "token": "t" });

    // Calls the lane takes: each answered with the same JSON (or stream) as rmcp's.
    let (reply, taken) =
        both(&front, addr, EventIds::Compared, "a clean call", &clean("ratio"), &call(&json!(1), "ratio", ratio(0.25)));
    assert_eq!(taken, 1, "the clean call took the lane: {reply:?}");
    assert_eq!(reply.headers.get("content-type").map(String::as_str), Some("application/json"), "{reply:?}");
    assert_eq!(reply.response(1)["result"]["structuredContent"], ratio(0.25));
    let (reply, taken) = both(
        &front,
        addr,
        EventIds::Compared,
        "a string id",
        &clean("ratio"),
        &call(&json!("s-1"), "ratio", ratio(0.5)),
    );
    assert_eq!((taken, reply.messages()[0]["id"].clone()), (1, json!("s-1")), "{reply:?}");
    let taken_cases = [
        ("a contract refusal", "ratio", call(&json!(2), "ratio", ratio(2.0))),
        ("invalid arguments", "ratio", call(&json!(3), "ratio", json!({ "ratio": "no" }))),
        ("a handler error", "ratio_down", call(&json!(4), "ratio_down", json!({}))),
        ("an unknown tool", "no_such_tool", call(&json!(5), "no_such_tool", json!({}))),
    ];
    for (what, tool, body) in &taken_cases {
        let (reply, taken) = both(&front, addr, EventIds::Compared, what, &clean(tool), body);
        assert_eq!(taken, 1, "{what} took the lane: {reply:?}");
    }
    // A handler that sends progress first: the stream, the notification before the answer.
    let mut progress = call(&json!(6), "ratio_slow", json!({ "ms": 10 }));
    progress["params"]["_meta"]["progressToken"] = json!("p-6");
    let (reply, taken) = both(&front, addr, EventIds::Compared, "progress first", &clean("ratio_slow"), &progress);
    assert_eq!(taken, 1);
    assert_eq!(reply.headers.get("content-type").map(String::as_str), Some("text/event-stream"), "{reply:?}");
    let methods: Vec<Value> =
        reply.messages().iter().map(|m| m.get("method").cloned().unwrap_or(json!("answer"))).collect();
    assert_eq!(methods, [json!("notifications/progress"), json!("answer")], "{reply:?}");

    // Requests rmcp must judge: none takes the lane, each is answered as rmcp answers it.
    let plain = call(&json!(7), "ratio", ratio(0.5));
    let headers = clean("ratio");
    let with = |name, value| replaced(&headers, name, value);
    let mut no_capabilities = plain.clone();
    no_capabilities["params"]["_meta"]
        .as_object_mut()
        .map(|meta| meta.remove("io.modelcontextprotocol/clientCapabilities"));
    let mut other_era = plain.clone();
    other_era["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    let cases: [Case<'_>; 10] = [
        ("another Mcp-Method", with("Mcp-Method", "tools/list"), &plain, 400),
        ("no Mcp-Method", with("Mcp-Method", ""), &plain, 400),
        ("another Mcp-Name", with("Mcp-Name", "ratio_down"), &plain, 400),
        ("no Mcp-Name", with("Mcp-Name", ""), &plain, 400),
        ("no protocol version header", with("MCP-Protocol-Version", ""), &plain, 400),
        ("an odd protocol version header", with("MCP-Protocol-Version", "2099-01-01"), &plain, 400),
        ("a header of another era", with("MCP-Protocol-Version", "2025-11-25"), &plain, 400),
        ("an Mcp-Param header", with("Mcp-Param-Token", "t"), &plain, 200),
        ("_meta without clientCapabilities", headers.clone(), &no_capabilities, 400),
        ("_meta of another era", with("MCP-Protocol-Version", "2025-11-25"), &other_era, 200),
    ];
    for (what, headers, body, status) in cases {
        let (reply, taken) = both(&front, addr, EventIds::Compared, what, &headers, body);
        assert_eq!(taken, 0, "{what} took the lane: {reply:?}");
        assert_eq!(reply.status, status, "{what}: {reply:?}");
    }
    // The clean control again, after the odd ones: the lane still takes it.
    let (_, taken) = both(
        &front,
        addr,
        EventIds::Compared,
        "a clean call again",
        &clean("ratio"),
        &call(&json!(8), "ratio", ratio(0.75)),
    );
    assert_eq!(taken, 1);
}

fn eventually(why: &str, what: impl Fn() -> bool) {
    let start = Instant::now();
    while !what() {
        assert!(start.elapsed() < DEADLINE, "{why}");
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_stateless_client_that_goes_away_mid_call_has_the_handler_cancelled() {
    let (addr, cancelled, front) = start();
    let slow = |id: u64, ms: u64, progress: bool| {
        let mut body = call(&json!(id), "ratio_slow", json!({ "ms": ms }));
        if progress {
            body["params"]["_meta"]["progressToken"] = json!(format!("p-{id}"));
        }
        let mut stream = TcpStream::connect(addr).expect("connect");
        stream.set_read_timeout(Some(DEADLINE)).unwrap();
        stream.write_all(request(addr, &clean("ratio_slow"), &body).as_bytes()).unwrap();
        stream
    };
    // Control: a slow call whose client waits is answered, not cancelled.
    let before = front.calls_by_keys();
    let mut raw = Vec::new();
    slow(1, 200, false).read_to_end(&mut raw).unwrap();
    let answered = parse_http(&raw);
    assert_eq!(answered.response(1)["result"]["structuredContent"], json!({ "ratio": 0.5, "token": "slow" }));
    assert_eq!(cancelled.load(Ordering::SeqCst), 0);

    // The client goes while the handler works; its answer would have been one JSON body.
    let stream = slow(2, 60_000, false);
    thread::sleep(Duration::from_millis(300));
    stream.shutdown(Shutdown::Both).unwrap();
    drop(stream);
    eventually("the handler sees the cancellation", || cancelled.load(Ordering::SeqCst) == 1);

    // The client goes in the middle of the call's SSE stream (a progress event came first).
    let mut stream = slow(3, 60_000, true);
    let mut read = Vec::new();
    let mut buffer = [0_u8; 4096];
    while !String::from_utf8_lossy(&read).contains("notifications/progress") {
        let n = stream.read(&mut buffer).unwrap();
        assert!(n > 0, "closed early: {}", String::from_utf8_lossy(&read));
        read.extend_from_slice(&buffer[..n]);
    }
    stream.shutdown(Shutdown::Both).unwrap();
    drop(stream);
    eventually("the streamed call's handler sees the cancellation", || cancelled.load(Ordering::SeqCst) == 2);
    assert_eq!(front.calls_by_keys() - before, 3, "the calls went by the lane");

    // Two slow calls at once, each with progress: each stream carries its own messages.
    let (mut a, mut b) = (slow(4, 300, true), slow(5, 300, true));
    let (mut raw_a, mut raw_b) = (Vec::new(), Vec::new());
    a.read_to_end(&mut raw_a).unwrap();
    b.read_to_end(&mut raw_b).unwrap();
    for (id, raw) in [(4, raw_a), (5, raw_b)] {
        let reply = parse_http(&raw);
        let messages = reply.messages();
        assert_eq!(messages.len(), 2, "{reply:?}");
        assert_eq!(messages[0]["params"]["progressToken"], json!(format!("p-{id}")), "{reply:?}");
        assert_eq!(messages[1]["id"], json!(id), "{reply:?}");
    }
    assert_eq!(cancelled.load(Ordering::SeqCst), 2, "only the abandoned calls were cancelled");
}
