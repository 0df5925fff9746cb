//! contract-proxy behind `--http` when a client disconnects before its answer: the call is
//! cancelled upstream (the server reads `notifications/cancelled` for it, and its handler
//! sees the cancellation), its late answer goes nowhere, the client's other requests are
//! served; an `initialize` whose client went away leaves no upstream process behind. The
//! client is a raw TcpStream that drops the connection; the upstream is the proxy fixture
//! (`proxy/server.mjs`), tapped on both sides, whose start is held back a second so that
//! an `initialize` is still unanswered when its client goes.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::proxy_lane::{answer, interop, scratch, tools_file, DEADLINE};
use crate::proxy_transparent::{http, messages_of, serve_http, teed, Group, Tap};

/// Waits until `what` holds, or fails naming `why`.
fn eventually(why: &str, what: impl Fn() -> bool) {
    let start = Instant::now();
    while !what() {
        assert!(start.elapsed() < DEADLINE, "{why}");
        thread::sleep(Duration::from_millis(50));
    }
}

/// The messages of a tap file written so far.
fn tapped(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap_or_default().lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

/// The processes whose parent is `pid` and that still run (zombies left out).
fn children(pid: u32) -> usize {
    let parent = pid.to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|entry| std::fs::read_to_string(entry.path().join("stat")).ok())
        .filter(|stat| {
            // `pid (comm) state ppid …`: the name may hold anything but its last `)`.
            let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
            fields.get(1) == Some(&parent.as_str()) && fields.first() != Some(&"Z")
        })
        .count()
}

/// A POST sent on a connection of its own, which stays open until dropped.
fn post_open(addr: &str, session: Option<&str>, body: &str) -> TcpStream {
    let mut stream = TcpStream::connect(addr).expect("connect");
    let session = session.map(|id| format!("Mcp-Session-Id: {id}\r\n")).unwrap_or_default();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{session}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    stream
}

fn call(id: u64, tool: &str) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": tool, "arguments": {} } })
        .to_string()
}

/// Whether the server read `notifications/cancelled` for request `id` because its client
/// went away.
fn cancelled_upstream(tap: &Tap, id: u64) -> bool {
    tapped(&tap.server_in).iter().any(|m| {
        m["method"] == "notifications/cancelled"
            && m["params"]["requestId"] == id
            && m["params"]["reason"] == "the client disconnected"
    })
}

/// Whether the fixture logged that its handler of `tool` saw the cancellation.
fn handler_cancelled(tap: &Tap, tool: &str) -> bool {
    tapped(&tap.server_out).iter().any(|m| m["params"]["data"] == format!("cancelled {tool}"))
}

#[test]
fn an_http_client_that_goes_away_mid_call_has_it_cancelled_upstream_and_leaves_nothing_behind() {
    let dir = scratch("disconnect");
    let tap = Tap::new(&dir, "disconnect");
    let input = json!({ "type": "object" });
    let log = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}"#;
    let tools = tools_file(
        &dir,
        &json!([
            { "tool": { "name": "wait", "inputSchema": input }, "answer": "cancellable" },
            { "tool": { "name": "noisy_wait", "inputSchema": input },
              "answer": { "write": format!("{log}\n"), "then": "cancellable" } },
            { "tool": { "name": "fast", "inputSchema": input }, "answer": answer(&json!({ "n": 1 })) }
        ]),
    );
    crate::support::bins::server_everything(); // installs the pinned SDK the fixture runs on
    let server = format!("sleep 1; exec node {} {}", interop("proxy/server.mjs").display(), tools.display());
    let upstream = teed(&tap.server_in, &tap.server_out, &["sh".to_owned(), "-c".to_owned(), server]);
    let (front, url) = serve_http(&upstream, &[]);
    let proxy = front.id();
    let _front = Group(front);
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();

    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw-http","version":"1.0.0"}}}"#;
    let (status, headers, _) = http(&addr, "POST", None, init);
    assert_eq!(status, 200);
    let session = headers.iter().find(|(k, _)| k == "mcp-session-id").map(|(_, v)| v.clone()).expect("a session");
    let session = Some(session.as_str());
    http(&addr, "POST", session, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert_eq!(children(proxy), 1, "one upstream process, the session's");

    // A call whose answer would be the response's one JSON body: the client goes while
    // the server works on it.
    let stream = post_open(&addr, session, &call(2, "wait"));
    eventually("the call reached the server", || tapped(&tap.server_in).iter().any(|m| m["id"] == 2));
    stream.shutdown(Shutdown::Both).unwrap();
    drop(stream);
    eventually("the server is told the call is cancelled", || cancelled_upstream(&tap, 2));
    eventually("the server's handler saw the cancellation", || handler_cancelled(&tap, "wait"));

    // A call whose response is an SSE stream already (a notification came first).
    let mut stream = post_open(&addr, session, &call(3, "noisy_wait"));
    stream.set_read_timeout(Some(DEADLINE)).unwrap();
    let mut read = Vec::new();
    let mut buffer = [0_u8; 4096];
    while !String::from_utf8_lossy(&read).contains("working") {
        let n = stream.read(&mut buffer).expect("the stream's first event");
        assert!(n > 0, "the response ended early: {}", String::from_utf8_lossy(&read));
        read.extend_from_slice(&buffer[..n]);
    }
    assert!(String::from_utf8_lossy(&read).contains("text/event-stream"), "{}", String::from_utf8_lossy(&read));
    stream.shutdown(Shutdown::Both).unwrap();
    drop(stream);
    eventually("the server is told the streamed call is cancelled", || cancelled_upstream(&tap, 3));
    eventually("the server's handler saw the cancellation", || handler_cancelled(&tap, "noisy_wait"));

    // Control: the session serves its next call, which is answered and not cancelled.
    let (status, headers, body) = http(&addr, "POST", session, &call(4, "fast"));
    assert_eq!(status, 200, "{body}");
    let answered: Value = serde_json::from_str(messages_of(&headers, &body).last().unwrap()).unwrap();
    assert_eq!(answered["result"]["structuredContent"], json!({ "n": 1 }), "{answered:#}");
    assert!(!cancelled_upstream(&tap, 4), "an answered call is not cancelled");
    // The cancelled calls' late answers reached no one: only the fast call's came back.
    assert_eq!(messages_of(&headers, &body).len(), 1, "{body}");

    // An `initialize` whose client goes before the answer: its process is ended.
    let stream = post_open(&addr, None, init);
    eventually("a second upstream process starts", || children(proxy) == 2);
    stream.shutdown(Shutdown::Both).unwrap();
    drop(stream);
    eventually("the abandoned session's process is ended", || children(proxy) == 1);
    // Control: the first session is still served.
    let (status, _, body) = http(&addr, "POST", session, r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""id":5"#), "{body}");
}
