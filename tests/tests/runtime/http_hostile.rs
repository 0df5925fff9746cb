//! Streamable HTTP under hostile input: `contract_runtime::http`'s front mounted in axum,
//! as the qe-server binary serves it (its `http.rs` is only that mounting), a child
//! process on 127.0.0.1 with an ephemeral port, driven over raw TCP. http_front.rs
//! mounts the same front in process for the cases this file does not send.
//!
//! - Malformed JSON-RPC gets a JSON-RPC error body with the code JSON-RPC 2.0 assigns.
//! - 100k-deep nesting and 10 MB bodies (with `Content-Length` and chunked) are refused
//!   without the server's memory growing by what was sent.
//! - 1,000 connections that send nothing, half a header or half a body are dropped.
//! - A flood of sessions past `--max-sessions` gets 503 with a JSON-RPC error while the
//!   open sessions keep working; an idle session expires and frees its slot.
//!
//! After each, the server answers a normal `tools/call` and its stderr holds no panic.
//! Every wait has a deadline; nothing here asserts how fast anything is.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::bins;

/// How long any single socket read or the server's start may take.
const IO_DEADLINE: Duration = Duration::from_secs(20);
const LEGACY: &str = "2025-11-25";
/// The body limit the servers here run with (`--max-body`), so the tests do not depend
/// on the default.
const MAX_BODY: usize = 256 * 1024;
/// The growth of the server's peak resident set a test tolerates: far below what the hostile
/// input would cost if it were buffered or leaked (each test sends 50 MB or more).
const RSS_BOUND_KIB: u64 = 40 * 1024;

// ------------------------------------------------------------------ the server

/// `qe-server --http 127.0.0.1:0 --broken ARGS`, its stderr kept, killed on drop.
struct Server {
    child: Child,
    addr: SocketAddr,
    stderr: Arc<Mutex<String>>,
}

impl Server {
    fn start(extra: &[&str]) -> Self {
        let max_body = MAX_BODY.to_string();
        let mut child = Command::new(bins::qe_server())
            .args(["--http", "127.0.0.1:0", "--broken", "--max-body", &max_body])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn qe-server --http");
        let (tx, rx) = mpsc::channel();
        let stderr = Arc::new(Mutex::new(String::new()));
        let pipe = child.stderr.take().expect("piped stderr");
        let kept = stderr.clone();
        // Keep draining stderr for the server's life so it never blocks on a full pipe.
        thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("qe-server: listening on http://") {
                    let _ = tx.send(url.trim_end_matches("/mcp").to_owned());
                }
                let mut kept = kept.lock().expect("not poisoned");
                kept.push_str(&line);
                kept.push('\n');
            }
        });
        let addr = rx.recv_timeout(IO_DEADLINE).expect("the server announces its address");
        Self { child, addr: addr.parse().expect("a socket address"), stderr }
    }

    /// The peak of the server's resident set so far, in KiB (`VmHWM` in
    /// `/proc/<pid>/status`). The peak, not the current `VmRSS`: a body buffered whole
    /// and freed again leaves the current figure where it was, but not the peak.
    fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).expect("/proc status");
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("a VmHWM line");
        line.split_whitespace().nth(1).and_then(|kib| kib.parse().ok()).expect("VmHWM in kB")
    }

    /// The server still runs, serves a normal call on a fresh session, and never panicked.
    fn assert_healthy(&mut self) {
        assert!(self.child.try_wait().expect("try_wait").is_none(), "the HTTP server exited");
        let session = Session::open(self.addr);
        let reply = session.call(99, "fleet_status", &json!({}));
        assert_eq!(reply["result"]["isError"], false, "{reply}");
        assert!(reply["result"]["structuredContent"]["agents"].is_array(), "{reply}");
        let stderr = self.stderr.lock().expect("not poisoned");
        assert!(!stderr.contains("panicked"), "the server panicked:\n{stderr}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ------------------------------------------------------------------ raw HTTP

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

    /// The JSON-RPC messages in the body: plain JSON, or SSE `data:` lines.
    fn messages(&self) -> Vec<Value> {
        if let Ok(value) = serde_json::from_str::<Value>(&self.body) {
            return vec![value];
        }
        self.body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .collect()
    }

    /// The body as one JSON-RPC error object: its code and id. Panics otherwise.
    fn json_rpc_error(&self) -> (i64, Value) {
        assert_eq!(self.header("content-type"), Some("application/json"), "{self:?}");
        let body: Value = serde_json::from_str(&self.body).unwrap_or_else(|_| panic!("not a JSON body: {self:?}"));
        assert_eq!(body["jsonrpc"], "2.0", "{body}");
        assert!(body.get("result").is_none(), "{body}");
        assert!(body["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
        (body["error"]["code"].as_i64().unwrap_or_else(|| panic!("no error code: {body}")), body["id"].clone())
    }
}

fn parse_reply(raw: &[u8]) -> Reply {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or_else(|| panic!("not an HTTP response: {text:?}"));
    let status = head
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {head:?}"));
    let chunked = head.lines().any(|l| {
        l.split_once(':').is_some_and(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"))
    });
    let body = if chunked { dechunk(body) } else { body.to_owned() };
    Reply { status, head: head.to_owned(), body }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else { break };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect_timeout(&addr, IO_DEADLINE).expect("connect");
    stream.set_read_timeout(Some(IO_DEADLINE)).expect("read timeout");
    stream.set_write_timeout(Some(IO_DEADLINE)).expect("write timeout");
    stream
}

/// The request head of a JSON POST to /mcp; `length` is `None` for a chunked body.
/// `headers` may override `Host`.
fn head(addr: SocketAddr, method: &str, headers: &[(&str, &str)], length: Option<usize>) -> String {
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, \
         text/event-stream\r\nConnection: close\r\n"
    );
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        let _ = write!(head, "Host: {addr}\r\n");
    }
    for (k, v) in headers {
        let _ = write!(head, "{k}: {v}\r\n");
    }
    match length {
        Some(length) => {
            let _ = write!(head, "Content-Length: {length}\r\n\r\n");
        }
        None => head.push_str("Transfer-Encoding: chunked\r\n\r\n"),
    }
    head
}

/// One request on a fresh connection, read to the end. The body is written by another
/// thread while this one reads, so a server that answers early (413) and closes is read
/// before the rest of a large body could reset the connection.
fn send(addr: SocketAddr, method: &str, headers: &[(&str, &str)], body: Vec<u8>, chunked: bool) -> Reply {
    let mut stream = connect(addr);
    let mut writer = stream.try_clone().expect("clone the socket");
    let head = head(addr, method, headers, (!chunked).then_some(body.len()));
    let write = thread::spawn(move || {
        let _ = writer.write_all(head.as_bytes());
        if chunked {
            for chunk in body.chunks(64 * 1024) {
                if writer.write_all(format!("{:x}\r\n", chunk.len()).as_bytes()).is_err()
                    || writer.write_all(chunk).is_err()
                    || writer.write_all(b"\r\n").is_err()
                {
                    return;
                }
            }
            let _ = writer.write_all(b"0\r\n\r\n");
        } else {
            let _ = writer.write_all(&body);
        }
    });
    let mut raw = Vec::new();
    if let Err(err) = stream.read_to_end(&mut raw) {
        assert!(!raw.is_empty(), "reading the HTTP response failed: {err}");
    }
    let _ = stream.shutdown(Shutdown::Both);
    let _ = write.join();
    parse_reply(&raw)
}

fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &[u8]) -> Reply {
    send(addr, "POST", headers, body.to_vec(), false)
}

fn initialize(id: u64) -> Vec<u8> {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": { "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": { "name": "hostile", "version": "1" } }
    })
    .to_string()
    .into_bytes()
}

/// A 2025-era session: `initialize`, then `notifications/initialized`.
struct Session {
    addr: SocketAddr,
    id: String,
}

impl Session {
    fn open(addr: SocketAddr) -> Self {
        let init = post(addr, &[], &initialize(0));
        assert_eq!(init.status, 200, "{init:?}");
        assert!(init.messages().iter().any(|m| m["id"] == 0 && m["result"]["protocolVersion"] == LEGACY), "{init:?}");
        let id = init.header("mcp-session-id").expect("a session id").to_owned();
        let session = Self { addr, id };
        let note = session.post(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        assert_eq!(note.status, 202, "{note:?}");
        session
    }

    fn post(&self, message: &Value) -> Reply {
        post(
            self.addr,
            &[("Mcp-Session-Id", &self.id), ("MCP-Protocol-Version", LEGACY)],
            message.to_string().as_bytes(),
        )
    }

    fn call(&self, id: u64, tool: &str, arguments: &Value) -> Value {
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": tool, "arguments": arguments } });
        let reply = self.post(&message);
        assert_eq!(reply.status, 200, "{reply:?}");
        reply.messages().into_iter().find(|m| m["id"] == id).unwrap_or_else(|| panic!("no response {id} in {reply:?}"))
    }
}

// ------------------------------------------------------------------ the tests

/// JSON-RPC 2.0 (section 5.1): -32700 when the body is not JSON, -32600 when it is not
/// a valid request object, -32602 for parameters the method cannot take. The table is
/// written from the specification, not from the server's code.
#[test]
fn malformed_json_rpc_gets_a_json_rpc_error_body_with_the_right_code() {
    let mut server = Server::start(&[]);
    let cases: &[(&str, &str, i64, Value)] = &[
        ("not JSON", "{not json", -32700, Value::Null),
        ("empty body", "", -32700, Value::Null),
        ("truncated", r#"{"jsonrpc":"2.0","id":1,"method":"ping""#, -32700, Value::Null),
        ("a batch", r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, -32600, Value::Null),
        ("an empty batch", "[]", -32600, Value::Null),
        ("a string", r#""ping""#, -32600, Value::Null),
        ("jsonrpc 1.0", r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#, -32600, json!(3)),
        ("no jsonrpc", r#"{"id":"x","method":"ping"}"#, -32600, json!("x")),
        ("a null id", r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, -32600, Value::Null),
        ("an object id", r#"{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}"#, -32600, Value::Null),
        ("an array id", r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#, -32600, Value::Null),
        ("a boolean id", r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#, -32600, Value::Null),
        ("a fractional id", r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, -32600, Value::Null),
        ("a numeric method", r#"{"jsonrpc":"2.0","id":4,"method":7}"#, -32600, json!(4)),
        ("no method", r#"{"jsonrpc":"2.0","id":5}"#, -32600, json!(5)),
        ("scalar params", r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":"oops"}"#, -32600, json!(6)),
        ("positional params", r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":[1]}"#, -32602, json!(7)),
    ];
    let rss_before = server.peak_rss_kib();
    for (what, body, code, id) in cases {
        let reply = post(server.addr, &[], body.as_bytes());
        assert_eq!(reply.status, 400, "{what}: {reply:?}");
        assert_eq!(reply.json_rpc_error(), (*code, id.clone()), "{what}: {reply:?}");
    }
    // Inside a session the same bodies get the same answers.
    let session = Session::open(server.addr);
    for (what, body, code, id) in cases {
        let reply =
            post(server.addr, &[("Mcp-Session-Id", &session.id), ("MCP-Protocol-Version", LEGACY)], body.as_bytes());
        assert_eq!(reply.status, 400, "{what} in a session: {reply:?}");
        assert_eq!(reply.json_rpc_error(), (*code, id.clone()), "{what} in a session: {reply:?}");
    }
    // The controls: the well-formed neighbours of the cases above are served.
    let ping = post(
        server.addr,
        &[("Mcp-Session-Id", &session.id), ("MCP-Protocol-Version", LEGACY)],
        br#"{"jsonrpc":"2.0","id":"x","method":"ping"}"#,
    );
    assert_eq!(ping.status, 200, "{ping:?}");
    assert!(ping.messages().iter().any(|m| m["id"] == "x" && m.get("result").is_some()), "{ping:?}");
    let called = session.call(7, "task_status", &json!({ "task_id": "T-1041" }));
    assert_eq!(called["result"]["isError"], false, "{called}");
    // A foreign Host or Origin (DNS rebinding) gets rmcp's refusal, with no JSON-RPC
    // body, before any of this layer's answers; the cases above are the controls.
    for foreign in [("Host", "evil.example.com"), ("Origin", "http://evil.example.com")] {
        for body in ["{not json", r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#] {
            let reply = post(server.addr, &[foreign], body.as_bytes());
            assert!((400..500).contains(&reply.status), "{foreign:?}: {reply:?}");
            assert!(reply.messages().is_empty(), "{foreign:?} was answered by the front layer: {reply:?}");
        }
        let big = vec![b' '; MAX_BODY + 1];
        let reply = post(server.addr, &[foreign], &big);
        assert!((400..500).contains(&reply.status) && reply.status != 413, "{foreign:?}: {reply:?}");
    }
    // A well-formed request the server does not serve without a session is rmcp's to
    // answer, as before: a 4xx without a result.
    let no_session = post(server.addr, &[], br#"{"jsonrpc":"2.0","id":8,"method":"tools/list"}"#);
    assert!((400..500).contains(&no_session.status), "{no_session:?}");
    assert!(no_session.messages().iter().all(|m| m.get("result").is_none()), "{no_session:?}");
    let rss_after = server.peak_rss_kib();
    eprintln!("malformed requests: peak RSS {rss_before} KiB -> {rss_after} KiB");
    assert!(rss_after < rss_before + RSS_BOUND_KIB, "the peak RSS grew from {rss_before} KiB to {rss_after} KiB");
    server.assert_healthy();
}

#[test]
fn deep_nesting_and_ten_megabyte_bodies_are_refused_with_bounded_memory() {
    let mut server = Server::start(&[]);
    let addr = server.addr;
    // Warm up the allocator and the session machinery before the baseline.
    server.assert_healthy();
    let rss_before = server.peak_rss_kib();

    // 100,000 levels of nesting (200 kB, under the body limit): a parse error, no stack
    // overflow, alone and as a tool's arguments.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let reply = post(addr, &[], deep.as_bytes());
    assert_eq!(reply.status, 400, "{reply:?}");
    assert_eq!(reply.json_rpc_error(), (-32700, Value::Null));
    let session = Session::open(addr);
    let nested_call = format!(
        r#"{{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{{"name":"search_tickets","arguments":{{"query":{deep}}}}}}}"#
    );
    let headers = [("Mcp-Session-Id", session.id.as_str()), ("MCP-Protocol-Version", LEGACY)];
    let reply = post(addr, &headers, nested_call.as_bytes());
    assert_eq!(reply.status, 400, "{reply:?}");
    assert_eq!(reply.json_rpc_error().0, -32700);
    // The control: the same call with shallow arguments is served.
    let shallow = session.call(12, "search_tickets", &json!({ "query": "bug" }));
    assert_eq!(shallow["result"]["isError"], false, "{shallow}");

    // 10 MB bodies, five each way, all at once: refused with 413 and a JSON-RPC error,
    // never buffered whole (that would be 100 MB at the same time).
    let big = Arc::new(
        format!(
            r#"{{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{{"name":"search_tickets","arguments":{{"query":"{}"}}}}}}"#,
            "a".repeat(10_000_000)
        )
        .into_bytes(),
    );
    let senders: Vec<_> = (0..10)
        .map(|n| {
            let (big, session) = (big.clone(), session.id.clone());
            let chunked = n % 2 == 1;
            thread::spawn(move || {
                let headers = [("Mcp-Session-Id", session.as_str()), ("MCP-Protocol-Version", LEGACY)];
                (chunked, send(addr, "POST", &headers, big.to_vec(), chunked))
            })
        })
        .collect();
    for sender in senders {
        let (chunked, reply) = sender.join().expect("the sender thread");
        assert_eq!(reply.status, 413, "chunked {chunked}: {reply:?}");
        assert_eq!(reply.json_rpc_error().0, -32600, "chunked {chunked}");
    }
    // The control: a chunked body under the limit is read and served.
    let small = json!({ "jsonrpc": "2.0", "id": 14, "method": "tools/call", "params": { "name": "search_tickets", "arguments": { "query": "bug" } } });
    let reply = send(addr, "POST", &headers, small.to_string().into_bytes(), true);
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.messages().iter().any(|m| m["id"] == 14 && m["result"]["isError"] == false), "{reply:?}");

    let rss_after = server.peak_rss_kib();
    eprintln!("deep and 10 MB bodies: peak RSS {rss_before} KiB -> {rss_after} KiB");
    assert!(
        rss_after < rss_before + RSS_BOUND_KIB,
        "the peak RSS grew from {rss_before} KiB to {rss_after} KiB on refused input"
    );
    server.assert_healthy();
}

#[test]
fn a_thousand_abandoned_connections_are_dropped_and_the_server_keeps_serving() {
    let mut server = Server::start(&[]);
    let addr = server.addr;
    server.assert_healthy();
    let rss_before = server.peak_rss_kib();
    let body = String::from_utf8(initialize(1)).expect("UTF-8");
    let mut abandoned = Vec::with_capacity(1_000);
    for n in 0..1_000 {
        let mut stream = connect(addr);
        match n % 3 {
            // Connects and says nothing.
            0 => {}
            // Half a request head.
            1 => stream.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty").expect("write"),
            // A whole head, then half the body it announced.
            _ => {
                let head = head(addr, "POST", &[], Some(body.len()));
                stream.write_all(head.as_bytes()).expect("write");
                stream.write_all(&body.as_bytes()[..body.len() / 2]).expect("write");
            }
        }
        abandoned.push(stream);
    }
    // While all of them hang, a normal client is served.
    server.assert_healthy();
    // The server closes them itself: a silent connection after the header timeout, a
    // half body with a 408 and a JSON-RPC error after the body timeout.
    let mut silent = abandoned.remove(0); // n = 0
    let mut half_body = abandoned.remove(1); // n = 2
    let mut rest = Vec::new();
    silent.set_read_timeout(Some(Duration::from_secs(60))).expect("read timeout");
    half_body.set_read_timeout(Some(Duration::from_secs(60))).expect("read timeout");
    let started = Instant::now();
    match silent.read_to_end(&mut rest) {
        Ok(_) => assert!(rest.is_empty() || rest.starts_with(b"HTTP/1.1 408"), "the silent connection got {rest:?}"),
        Err(err) => assert_eq!(err.kind(), std::io::ErrorKind::ConnectionReset, "after {:?}", started.elapsed()),
    }
    let mut raw = Vec::new();
    let _ = half_body.read_to_end(&mut raw);
    let reply = parse_reply(&raw);
    assert_eq!(reply.status, 408, "{reply:?} after {:?}", started.elapsed());
    assert_eq!(reply.json_rpc_error().0, -32600);
    drop(abandoned);

    let rss_after = server.peak_rss_kib();
    eprintln!("1,000 abandoned connections: peak RSS {rss_before} KiB -> {rss_after} KiB");
    // While they are all open each costs a task and hyper's buffers (about 20 KiB in a
    // debug build); 64 KiB each is the bound, a leak or a buffered body would pass it.
    assert!(rss_after < rss_before + 1_000 * 64, "the peak RSS grew from {rss_before} KiB to {rss_after} KiB");
    server.assert_healthy();
}

#[test]
fn a_session_flood_past_the_cap_gets_503_and_open_sessions_keep_working() {
    let mut server = Server::start(&["--max-sessions", "4"]);
    let addr = server.addr;
    let sessions: Vec<Session> = (0..4).map(|_| Session::open(addr)).collect();
    let rss_before = server.peak_rss_kib();
    for n in 0..200 {
        let reply = post(addr, &[], &initialize(1_000 + n));
        assert_eq!(reply.status, 503, "initialize {n} past the cap: {reply:?}");
        assert_eq!(reply.json_rpc_error(), (-32000, json!(1_000 + n)), "{reply:?}");
        assert!(reply.header("retry-after").is_some_and(|s| s.parse::<u64>().is_ok()), "{reply:?}");
        assert!(reply.header("mcp-session-id").is_none(), "{reply:?}");
    }
    // Past the cap a foreign Origin still gets rmcp's refusal, not the 503.
    let foreign = post(addr, &[("Origin", "http://evil.example.com")], &initialize(3));
    assert!((400..500).contains(&foreign.status), "{foreign:?}");
    assert!(foreign.messages().is_empty(), "{foreign:?}");
    // Every open session still works.
    for (n, session) in (0u64..).zip(&sessions) {
        let reply = session.call(20 + n, "security_scan", &json!({ "target": "agentic-qe@ffc0c6a" }));
        assert_eq!(reply["result"]["isError"], false, "{reply}");
    }
    // Closing one frees its slot: the next initialize is served (the control).
    let closed = send(
        addr,
        "DELETE",
        &[("Mcp-Session-Id", &sessions[0].id), ("MCP-Protocol-Version", LEGACY)],
        Vec::new(),
        false,
    );
    assert!((200..300).contains(&closed.status), "{closed:?}");
    let mut freed = None;
    let deadline = Instant::now() + IO_DEADLINE;
    while freed.is_none() && Instant::now() < deadline {
        let reply = post(addr, &[], &initialize(2));
        if reply.status == 200 {
            freed = Some(reply);
        } else {
            assert_eq!(reply.status, 503, "{reply:?}");
            thread::sleep(Duration::from_millis(20));
        }
    }
    let freed = freed.expect("a closed session frees its slot");
    assert!(freed.header("mcp-session-id").is_some(), "{freed:?}");
    let rss_after = server.peak_rss_kib();
    eprintln!("200 refused sessions: peak RSS {rss_before} KiB -> {rss_after} KiB");
    assert!(rss_after < rss_before + RSS_BOUND_KIB, "the peak RSS grew from {rss_before} KiB to {rss_after} KiB");
    // The cap is full again (three old sessions and the new one), so the health check's
    // own session would be refused: check the rest by hand.
    assert!(server.child.try_wait().expect("try_wait").is_none());
    let again = sessions[1].call(30, "fleet_status", &json!({}));
    assert_eq!(again["result"]["isError"], false, "{again}");
    assert!(!server.stderr.lock().expect("not poisoned").contains("panicked"));
}

#[test]
fn an_idle_session_expires_and_frees_its_slot() {
    let mut server = Server::start(&["--max-sessions", "1", "--session-idle", "1"]);
    let addr = server.addr;
    let first = Session::open(addr);
    // Traffic keeps it open: with the cap at one, a second client is refused meanwhile.
    let refused = post(addr, &[], &initialize(1));
    assert_eq!(refused.status, 503, "{refused:?}");
    // Once it has been idle for a second it is closed, and a new client gets the slot.
    let deadline = Instant::now() + IO_DEADLINE;
    let second = loop {
        thread::sleep(Duration::from_millis(250));
        let reply = post(addr, &[], &initialize(2));
        if reply.status == 200 {
            break reply;
        }
        assert_eq!(reply.status, 503, "{reply:?}");
        assert!(Instant::now() < deadline, "the idle session never expired");
    };
    assert!(second.header("mcp-session-id").is_some_and(|id| id != first.id), "{second:?}");
    // The expired session is gone: rmcp answers 404 for it (the MCP rule for an ended session).
    let gone = first.post(&json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/list" }));
    assert_eq!(gone.status, 404, "{gone:?}");
    assert!(server.child.try_wait().expect("try_wait").is_none());
    assert!(!server.stderr.lock().expect("not poisoned").contains("panicked"));
}

/// A request whose first message is its answer gets that answer as one JSON object
/// (`Content-Type: application/json`, a `Content-Length`, no SSE framing): the
/// handshake, a successful call, a tool error, a JSON-RPC error and a `ping`. The
/// transport lets the server choose JSON or SSE per request; the clients in
/// `interop.rs` take both. The control: a notification still gets 202 and no body.
#[test]
fn an_answer_that_is_the_first_message_comes_as_one_json_object() {
    let mut server = Server::start(&[]);
    let addr = server.addr;
    let assert_json = |what: &str, reply: &Reply, id: &Value| {
        assert_eq!(reply.status, 200, "{what}: {reply:?}");
        assert_eq!(reply.header("content-type"), Some("application/json"), "{what}: {reply:?}");
        assert!(reply.header("transfer-encoding").is_none(), "{what}: {reply:?}");
        assert_eq!(reply.header("content-length"), Some(reply.body.len().to_string().as_str()), "{what}: {reply:?}");
        let body: Value = serde_json::from_str(&reply.body).unwrap_or_else(|_| panic!("{what}: not one JSON object"));
        assert_eq!(&body["id"], id, "{what}: {body}");
        assert_eq!(body["jsonrpc"], "2.0", "{what}: {body}");
        body
    };
    let init = post(addr, &[], &initialize(0));
    let body = assert_json("initialize", &init, &json!(0));
    assert_eq!(body["result"]["protocolVersion"], LEGACY, "{body}");
    let session = Session { addr, id: init.header("mcp-session-id").expect("a session id").to_owned() };
    let note = session.post(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    assert_eq!(note.status, 202, "{note:?}");
    assert!(note.body.is_empty(), "{note:?}");

    let call = |id: u64, tool: &str, arguments: Value| {
        session.post(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": tool, "arguments": arguments } }))
    };
    let ok = assert_json("a call", &call(1, "fleet_status", json!({})), &json!(1));
    assert_eq!(ok["result"]["isError"], false, "{ok}");
    let violation = assert_json("the broken tool", &call(2, "broken_fleet_status", json!({})), &json!(2));
    assert_eq!(violation["result"]["isError"], true, "{violation}");
    assert!(violation["result"]["content"][0]["text"]
        .as_str()
        .is_some_and(|t| t.contains("output_contract_violation")));
    let unknown = assert_json("an unknown tool", &call(3, "no_such_tool", json!({})), &json!(3));
    assert!(unknown["error"]["code"].is_i64(), "{unknown}");
    let ping = session.post(&json!({ "jsonrpc": "2.0", "id": "p", "method": "ping" }));
    assert_json("ping", &ping, &json!("p"));
    server.assert_healthy();
}
