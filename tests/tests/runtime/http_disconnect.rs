//! The runtime's HTTP front when a client disconnects before its answer: the probe server
//! (`support/rollout_probe.rs`, its slow tool counting the cancellations its handler
//! sees) behind `McpLayer`, in this process, driven over raw TCP. A call whose client
//! closes the connection (before its one JSON answer, or in the middle of its SSE stream)
//! is cancelled: the handler's cancellation token fires; the session stays one session
//! and serves its next call. These calls take the front's `tools/call` lane (its count
//! says so); `http_lane.rs` holds the lane to rmcp's answers. Control: a slow call whose client waits gets its answer and
//! is not cancelled.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use contract_runtime::http::{HttpLimits, McpLayer, McpService};
use contract_runtime::rmcp::ContractedServer;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::{json, Value};

use crate::support::interop::HttpSession;
use crate::support::rollout_probe::{contracted, probe, RolloutProbe};

const DEADLINE: Duration = Duration::from_secs(30);

/// The probe behind the front on its own thread and runtime: its address, its
/// cancellation count, the front's session manager and the front.
fn start() -> (SocketAddr, Arc<AtomicU32>, Arc<LocalSessionManager>, McpService<ContractedServer<RolloutProbe>>) {
    let probe = probe();
    let cancelled = Arc::clone(&probe.cancelled);
    let layer = McpLayer::new(HttpLimits::default());
    let sessions = layer.session_manager();
    let front = layer.service(contracted(probe, None));
    let addr = crate::support::http_front::serve_on_thread(front.clone(), HttpLimits::default());
    (addr, cancelled, sessions, front)
}

fn eventually(why: &str, what: impl Fn() -> bool) {
    let start = Instant::now();
    while !what() {
        assert!(start.elapsed() < DEADLINE, "{why}");
        thread::sleep(Duration::from_millis(20));
    }
}

/// A call of `ratio_slow` POSTed on a connection of its own, left open.
fn slow_call(session: &HttpSession, id: u64, ms: u64, progress: bool) -> TcpStream {
    let mut params = json!({ "name": "ratio_slow", "arguments": { "ms": ms } });
    if progress {
        params["_meta"] = json!({ "progressToken": format!("p-{id}") });
    }
    let body = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params }).to_string();
    let mut stream = TcpStream::connect(session.addr).expect("connect");
    stream.set_read_timeout(Some(DEADLINE)).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: {}\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{body}",
        session.addr,
        session.id,
        body.len()
    )
    .unwrap();
    stream
}

/// Reads `stream` until what was read holds `needle`.
fn read_until(stream: &mut TcpStream, needle: &str) -> String {
    let mut read = Vec::new();
    let mut buffer = [0_u8; 4096];
    while !String::from_utf8_lossy(&read).contains(needle) {
        let n = stream.read(&mut buffer).unwrap_or_else(|err| panic!("{err}: {}", String::from_utf8_lossy(&read)));
        assert!(n > 0, "the connection closed before {needle:?}: {}", String::from_utf8_lossy(&read));
        read.extend_from_slice(&buffer[..n]);
    }
    String::from_utf8_lossy(&read).into_owned()
}

fn open_sessions(sessions: &LocalSessionManager) -> usize {
    sessions.sessions.blocking_read().len()
}

#[test]
fn an_http_client_that_goes_away_mid_call_has_the_handler_cancelled_and_the_session_serves_on() {
    let (addr, cancelled, sessions, front) = start();
    let session = HttpSession::open(addr);
    assert_eq!(open_sessions(&sessions), 1);

    // Control: a slow call whose client waits is answered, not cancelled.
    let answered = session.request(1, "tools/call", &json!({ "name": "ratio_slow", "arguments": { "ms": 200 } }));
    assert_eq!(answered["result"]["structuredContent"], json!({ "ratio": 0.5, "token": "slow" }), "{answered:#}");
    assert_eq!(cancelled.load(Ordering::SeqCst), 0);

    // The client goes while the handler works; its answer would have been one JSON body.
    let by_keys = front.calls_by_keys();
    let stream = slow_call(&session, 2, 60_000, false);
    thread::sleep(Duration::from_millis(300));
    stream.shutdown(Shutdown::Both).unwrap();
    drop(stream);
    eventually("the handler sees the cancellation", || cancelled.load(Ordering::SeqCst) == 1);

    // The client goes in the middle of the call's SSE stream (a progress event came first).
    let mut stream = slow_call(&session, 3, 60_000, true);
    let read = read_until(&mut stream, "notifications/progress");
    assert!(read.contains("text/event-stream"), "{read}");
    stream.shutdown(Shutdown::Both).unwrap();
    drop(stream);
    eventually("the streamed call's handler sees the cancellation", || cancelled.load(Ordering::SeqCst) == 2);
    // Both abandoned calls were plain calls of an open session: the front's lane took them.
    assert_eq!(front.calls_by_keys() - by_keys, 2, "the abandoned calls went by the lane");

    // The session is the one session, and serves its next call.
    assert_eq!(open_sessions(&sessions), 1, "no session left behind or opened");
    let next =
        session.request(4, "tools/call", &json!({ "name": "ratio", "arguments": { "ratio": 0.25, "token": "t" } }));
    assert_eq!(next["result"]["structuredContent"], json!({ "ratio": 0.25, "token": "t" }), "{next:#}");
    let ping: Value = session.request(5, "ping", &json!({}));
    assert!(ping.get("result").is_some(), "{ping:#}");
    assert_eq!(cancelled.load(Ordering::SeqCst), 2, "only the abandoned calls were cancelled");
}
