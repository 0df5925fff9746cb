//! The HTTP front's `tools/call` lane against rmcp's own path: the probe server
//! (`support/rollout_probe.rs`) behind `McpLayer`, in this process, driven over raw TCP.
//! Each request of the corpus is sent twice on one session: as it is, and with an
//! `Origin` of a loopback page, which rmcp accepts (`loopback_config`) but which keeps a
//! request off the lane, so rmcp's path answers it. Both answers must agree (status, the
//! headers that matter, the JSON-RPC messages in order), and the front's count of calls
//! it answered by their keys shows which of the two took the lane: only a plain call with
//! clean headers for an open session does.

use std::net::SocketAddr;

use contract_runtime::http::{HttpLimits, McpLayer, McpService};
use serde_json::{json, Value};

use crate::support::http_front::{both, replaced, EventIds};
use crate::support::interop::HttpSession;
use crate::support::rollout_probe::{contracted, probe, RolloutProbe};

type Front = McpService<contract_runtime::rmcp::ContractedServer<RolloutProbe>>;

/// The probe behind the front on its own thread and runtime: its address and the front.
fn start() -> (SocketAddr, Front) {
    let front = McpLayer::new(HttpLimits::default()).service(contracted(probe(), None));
    let addr = crate::support::http_front::serve_on_thread(front.clone(), HttpLimits::default());
    (addr, front)
}

/// A request rmcp must judge: what it is, its headers, its body, the status it gets.
type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, Value, u16);

/// `headers` with `name` set to `value` (left out when `value` is empty).
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
    let (reply, taken) = both(
        &front,
        addr,
        EventIds::Ignored,
        "a plain call",
        &clean,
        &call(1, "ratio", json!({ "ratio": 0.25, "token": "t" })),
    );
    assert_eq!(taken, 1, "the plain call took the lane: {reply:?}");
    assert_eq!(reply.headers.get("content-type").map(String::as_str), Some("application/json"), "{reply:?}");
    assert_eq!(reply.response(1)["result"]["structuredContent"], json!({ "ratio": 0.25, "token": "t" }));
    // A tool error and an unknown tool are answered alike too.
    let (_, taken) = both(&front, addr, EventIds::Ignored, "a failing tool", &clean, &call(2, "ratio_down", json!({})));
    assert_eq!(taken, 1);
    let (_, taken) =
        both(&front, addr, EventIds::Ignored, "an unknown tool", &clean, &call(3, "no_such_tool", json!({})));
    assert_eq!(taken, 1);

    // A handler that sends progress first: the stream, the notification before the answer.
    let mut progress = call(4, "ratio_slow", json!({ "ms": 10 }));
    progress["params"]["_meta"] = json!({ "progressToken": "p-4" });
    let (reply, taken) = both(&front, addr, EventIds::Ignored, "progress first", &clean, &progress);
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
        let (reply, taken) = both(&front, addr, EventIds::Ignored, what, &headers, &body);
        assert_eq!(taken, 0, "{what} took the lane");
        assert_eq!(reply.status, status, "{what}: {reply:?}");
    }
    // A call that is not plain (a member the keyed reader does not know) is rmcp's.
    let mut extra = call(9, "ratio", json!({ "ratio": 0.5, "token": "x" }));
    extra["extra"] = json!(1);
    let (reply, taken) = both(&front, addr, EventIds::Ignored, "an unknown member", &clean, &extra);
    assert_eq!((taken, reply.status), (0, 200), "{reply:?}");
}
