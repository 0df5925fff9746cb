//! Every path a tool result can take out of the real `qe-server` process goes through
//! the contract: task-augmented calls over stdio and streamable HTTP (its long-running
//! tools run as tasks for a 2026-07-28 client that declared the tasks extension, and
//! answer complete for a 2025-11-25 client whatever it declared, while its other tools
//! answer complete for everyone), with parity with the in-process pipeline. The same
//! paths in process, against a probe server, are `rmcp_adapter_probe.rs`. Each rejection
//! has a clean control that must pass.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use contract_runtime::pipeline::{CallContext, Pipeline};
use contract_runtime::wire::{result_meta, META_KEY};
use contract_runtime::{OutputContract, ToolOutput};
use qe_server::contracts::{FleetStatus, SecurityScan};
use qe_server::tools::{self, BROKEN_TASK_TOOL, BROKEN_TOOL, BROKEN_TOOL_SECRET};
use serde_json::{json, Value};

use crate::support::bins;
use crate::support::rmcp_paths;

use rmcp_paths::*;

// ------------------------------------------------------------------ the real server

/// A JSON-RPC peer: the real server over stdio or over streamable HTTP.
trait Peer {
    fn request(&mut self, id: u64, method: &str, params: &Value) -> Value;

    fn call(&mut self, id: u64, tool: &str, arguments: &Value) -> Value {
        let reply = self.request(id, "tools/call", &json!({ "name": tool, "arguments": arguments }));
        reply.get("result").cloned().unwrap_or_else(|| panic!("`{tool}` gave no result: {reply}"))
    }

    /// A call that must come back as a task, polled with `tasks/get` to its end: the
    /// terminal `tasks/get` result.
    fn call_as_task(&mut self, id: u64, tool: &str, arguments: &Value) -> Value {
        let created = self.call(id, tool, arguments);
        assert_eq!(created["resultType"], "task", "a task-capable client got no task: {created}");
        let task_id = created["taskId"].as_str().expect("a task id").to_owned();
        let deadline = Instant::now() + WAIT;
        let mut poll = id * 1000;
        loop {
            poll += 1;
            let reply = self.request(poll, "tasks/get", &json!({ "taskId": task_id }));
            let task = reply.get("result").cloned().unwrap_or_else(|| panic!("tasks/get failed: {reply}"));
            if ["completed", "failed", "cancelled"].contains(&task["status"].as_str().unwrap_or_default()) {
                return task;
            }
            assert!(Instant::now() < deadline, "task {task_id} did not finish: {task}");
            thread::sleep(Duration::from_millis(10));
        }
    }
}

struct StdioServer {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    /// The request `_meta` of a 2026-07-28 client.
    meta: Option<Value>,
}

impl StdioServer {
    fn start(era: Era) -> Self {
        let mut child = Command::new(bins::qe_server())
            .arg("--broken")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn qe-server");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take().expect("piped stdin");
        let mut server = Self { child, stdin, lines: rx, meta: None };
        match era {
            Era::Legacy { tasks } => {
                let init = server.request(0, "initialize", &initialize_params(tasks));
                assert_eq!(init["result"]["protocolVersion"], LEGACY, "{init}");
                server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
            }
            Era::Modern => server.meta = Some(modern_meta(true)),
        }
        server
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").expect("write");
        self.stdin.flush().expect("flush");
    }
}

impl Peer for StdioServer {
    fn request(&mut self, id: u64, method: &str, params: &Value) -> Value {
        let params = with_meta(params, self.meta.as_ref());
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let deadline = Instant::now() + WAIT;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            let Ok(line) = self.lines.recv_timeout(left) else { break };
            let message: Value = serde_json::from_str(&line).expect("the server writes JSON lines");
            if message["id"] == json!(id) {
                return message;
            }
        }
        panic!("no response to `{method}` (id {id})");
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct HttpServer {
    child: Child,
    addr: SocketAddr,
}

impl HttpServer {
    fn start() -> Self {
        let mut child = Command::new(bins::qe_server())
            .args(["--http", "127.0.0.1:0", "--broken"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn qe-server --http");
        let (tx, rx) = mpsc::channel();
        let stderr = child.stderr.take().expect("piped stderr");
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("qe-server: listening on http://") {
                    let _ = tx.send(url.trim_end_matches("/mcp").to_owned());
                }
            }
        });
        let addr = rx.recv_timeout(WAIT).expect("the server announces its address");
        Self { child, addr: addr.parse().expect("a socket address") }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One POST on a fresh connection with `headers`; the JSON-RPC messages of the body
/// (JSON or SSE) and the session id header, if any.
fn post(addr: SocketAddr, headers: &[(&str, &str)], message: &Value) -> (u16, Vec<Value>, Option<String>) {
    let mut stream = TcpStream::connect_timeout(&addr, WAIT).expect("connect");
    stream.set_read_timeout(Some(WAIT)).expect("read timeout");
    let body = message.to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        let _ = write!(head, "{name}: {value}\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(format!("{head}{body}").as_bytes()).expect("write");
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("an HTTP response");
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).expect("a status");
    let session = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("mcp-session-id"))
        .map(|(_, v)| v.trim().to_owned());
    // Chunked or not, every JSON-RPC message sits on one `data:` line or is the body.
    let messages = serde_json::from_str::<Value>(body).map_or_else(
        |_| {
            body.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
                .collect()
        },
        |v| vec![v],
    );
    (status, messages, session)
}

/// A client of the HTTP server: a 2025-11-25 session, or a 2026-07-28 client whose every
/// POST stands alone (its `_meta` and the standard `Mcp-*` headers, no session).
struct HttpSession {
    addr: SocketAddr,
    /// The session id of a 2025-11-25 client.
    id: Option<String>,
    /// The request `_meta` of a 2026-07-28 client.
    meta: Option<Value>,
}

impl HttpSession {
    fn open(server: &HttpServer, era: Era) -> Self {
        let Era::Legacy { tasks } = era else {
            return Self { addr: server.addr, id: None, meta: Some(modern_meta(true)) };
        };
        let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize_params(tasks) });
        let (status, _, id) = post(server.addr, &[], &init);
        assert_eq!(status, 200);
        let session = Self { addr: server.addr, id: Some(id.expect("a session id")), meta: None };
        let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
        let (status, _, _) = post(session.addr, &session.headers("notifications/initialized", None), &initialized);
        assert_eq!(status, 202);
        session
    }

    /// The headers of one request: the session's, or the 2026-07-28 standard ones.
    fn headers<'a>(&'a self, method: &'a str, name: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
        if let Some(id) = &self.id {
            return vec![("Mcp-Session-Id", id.as_str()), ("MCP-Protocol-Version", LEGACY)];
        }
        let mut headers = vec![("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)];
        headers.extend(name.map(|name| ("Mcp-Name", name)));
        headers
    }
}

impl Peer for HttpSession {
    fn request(&mut self, id: u64, method: &str, params: &Value) -> Value {
        let params = with_meta(params, self.meta.as_ref());
        let name = params.get("name").or_else(|| params.get("taskId")).and_then(Value::as_str);
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let (status, messages, _) = post(self.addr, &self.headers(method, name), &message);
        assert_eq!(status, 200, "{messages:?}");
        messages.into_iter().find(|m| m["id"] == json!(id)).expect("a response with the request's id")
    }
}

/// One client of `era` over stdio (its own server process) and one over `http`.
fn peers(http: &HttpServer, era: Era) -> Vec<(&'static str, Box<dyn Peer>)> {
    vec![("stdio", Box::new(StdioServer::start(era))), ("http", Box::new(HttpSession::open(http, era)))]
}

/// The in-process pipeline's result for the same handler, as the wire shows it.
fn in_process(tool: &str) -> Value {
    let pipeline = Pipeline::default();
    let ctx = CallContext::new(tool, json!({})).with_protocol(contract_runtime::wire::ProtocolVersion::new(LEGACY));
    let result = match tool {
        "fleet_status" => pipeline.call_sync(&ctx, tools::fleet_status),
        "security_scan" => pipeline.call_sync(&ctx, || tools::security_scan(&tools::SecurityScanArgs::default())),
        BROKEN_TOOL => pipeline.process_value(&ctx, FleetStatus::contract(), tools::broken_fleet_status()),
        BROKEN_TASK_TOOL => pipeline.process_value(&ctx, SecurityScan::contract(), tools::broken_security_scan()),
        other => panic!("no in-process twin for {other}"),
    };
    result.to_json()
}

/// What must agree between transports: the error or the value, and `_meta`.
fn essence(result: &Value) -> Value {
    json!({
        "isError": result["isError"],
        "structuredContent": result.get("structuredContent"),
        "error": if result["isError"] == true { error_body(result) } else { Value::Null },
        "meta": result["_meta"][META_KEY],
    })
}

fn check_broken_task(task: &Value, contract: &OutputContract) -> Value {
    assert_eq!(task["status"], "completed", "{task}");
    let result = &task["result"];
    let error = error_body(result);
    assert_eq!(error["code"], "output_contract_violation", "{result}");
    assert_eq!(result["_meta"][META_KEY], result_meta(contract), "{result}");
    let text = task.to_string();
    assert!(!text.contains("hunter2") && !text.contains("id_rsa"), "the secret leaked: {text}");
    assert!(!text.contains(BROKEN_TOOL_SECRET), "the secret leaked: {text}");
    assert!(!text.contains("10.20.0.7"), "the sensitive endpoint leaked: {text}");
    assert_no_markers(result);
    result.clone()
}

fn check_clean_task(task: &Value, contract: &OutputContract) -> Value {
    assert_eq!(task["status"], "completed", "{task}");
    let result = &task["result"];
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["_meta"][META_KEY], result_meta(contract), "{result}");
    assert_no_markers(result);
    result.clone()
}

#[test]
fn a_task_of_the_broken_long_running_tool_is_a_violation_over_stdio_and_http_and_matches_the_pipeline() {
    let http = HttpServer::start();
    for (transport, mut peer) in peers(&http, Era::Modern) {
        let broken = check_broken_task(&peer.call_as_task(1, BROKEN_TASK_TOOL, &json!({})), SecurityScan::contract());
        let clean = check_clean_task(&peer.call_as_task(2, "security_scan", &json!({})), SecurityScan::contract());
        // The same handler in process, through the pipeline, says the same.
        assert_eq!(essence(&broken), essence(&in_process(BROKEN_TASK_TOOL)), "{transport}");
        assert_eq!(essence(&clean), essence(&in_process("security_scan")), "{transport}");
        // Polling again gives the same enforced result.
        let id = peer.call(3, BROKEN_TASK_TOOL, &json!({}))["taskId"].as_str().map(str::to_owned).expect("task");
        thread::sleep(Duration::from_millis(50));
        let first = peer.request(4, "tasks/get", &json!({ "taskId": id }));
        let again = peer.request(5, "tasks/get", &json!({ "taskId": id }));
        assert_eq!(first["result"]["result"], again["result"]["result"], "{transport}");
        assert_eq!(first["result"]["status"], "completed", "{transport}: {first}");
    }
}

#[test]
fn a_client_that_declared_tasks_gets_complete_results_from_the_tools_that_answer_completely() {
    let http = HttpServer::start();
    for (transport, mut peer) in peers(&http, Era::Modern) {
        // The broken quick tool: its violation comes back complete, not as a task.
        let broken = peer.call(1, BROKEN_TOOL, &json!({}));
        assert!(broken.get("taskId").is_none(), "{transport}: {broken}");
        assert_eq!(error_body(&broken)["code"], "output_contract_violation", "{transport}: {broken}");
        assert!(!broken.to_string().contains("hunter2"), "{transport}: {broken}");
        assert_eq!(essence(&broken), essence(&in_process(BROKEN_TOOL)), "{transport}");
        // The clean quick tool: complete, and what the pipeline says.
        let clean = peer.call(2, "fleet_status", &json!({}));
        assert!(clean.get("taskId").is_none(), "{transport}: {clean}");
        assert_eq!(clean["isError"], false, "{transport}: {clean}");
        assert_no_markers(&clean);
        let mut clean_essence = essence(&clean);
        let mut expected = essence(&in_process("fleet_status"));
        // `generated_at` is the only field that moves between two snapshots.
        for e in [&mut clean_essence, &mut expected] {
            e["structuredContent"]["generated_at"] = Value::Null;
        }
        assert_eq!(clean_essence, expected, "{transport}");
        // Control: on the same session, the long-running tool is a task.
        let task = peer.call(3, "security_scan", &json!({}));
        assert_eq!(task["resultType"], "task", "{transport}: {task}");
    }
}

#[test]
fn without_the_tasks_extension_the_broken_tool_is_a_complete_violation_over_stdio_and_http() {
    let http = HttpServer::start();
    for (transport, mut peer) in peers(&http, Era::Legacy { tasks: false }) {
        let broken = peer.call(1, BROKEN_TOOL, &json!({}));
        assert!(broken.get("taskId").is_none(), "{transport}: {broken}");
        let error = error_body(&broken);
        assert_eq!(error["code"], "output_contract_violation", "{transport}");
        assert!(!broken.to_string().contains("hunter2"), "{transport}: {broken}");
        assert_eq!(essence(&broken), essence(&in_process(BROKEN_TOOL)), "{transport}");
        // Control: the healthy tool passes.
        let clean = peer.call(2, "fleet_status", &json!({}));
        assert_eq!(clean["isError"], false, "{transport}: {clean}");
        assert_no_markers(&clean);
        // The long-running tools, clean and broken, answer complete too: this client
        // cannot take a task.
        let scan = peer.call(4, "security_scan", &json!({}));
        assert!(scan.get("taskId").is_none(), "{transport}: {scan}");
        assert_eq!(essence(&scan), essence(&in_process("security_scan")), "{transport}");
        let broken_scan = peer.call(5, BROKEN_TASK_TOOL, &json!({}));
        assert!(broken_scan.get("taskId").is_none(), "{transport}: {broken_scan}");
        assert_eq!(error_body(&broken_scan)["code"], "output_contract_violation", "{transport}");
        assert!(!broken_scan.to_string().contains("hunter2"), "{transport}: {broken_scan}");
        assert_eq!(essence(&broken_scan), essence(&in_process(BROKEN_TASK_TOOL)), "{transport}");
        // A task id nobody created is a JSON-RPC error, not a result.
        let unknown = peer.request(3, "tasks/get", &json!({ "taskId": "no-such-task" }));
        assert!(unknown.get("error").is_some(), "{transport}: {unknown}");
    }
}

#[test]
fn a_2025_11_25_client_that_declared_tasks_gets_the_long_running_tools_complete_over_stdio_and_http() {
    let http = HttpServer::start();
    for (transport, mut peer) in peers(&http, Era::Legacy { tasks: true }) {
        // The extension is declared, but not part of this client's protocol: complete.
        let scan = peer.call(1, "security_scan", &json!({}));
        assert!(scan.get("taskId").is_none(), "{transport}: {scan}");
        assert_ne!(scan["resultType"], "task", "{transport}: {scan}");
        assert_eq!(scan["isError"], false, "{transport}: {scan}");
        assert_no_markers(&scan);
        assert_eq!(essence(&scan), essence(&in_process("security_scan")), "{transport}");
        // The broken twin: a complete violation, the secret withheld.
        let broken = peer.call(2, BROKEN_TASK_TOOL, &json!({}));
        assert!(broken.get("taskId").is_none(), "{transport}: {broken}");
        assert_eq!(error_body(&broken)["code"], "output_contract_violation", "{transport}: {broken}");
        let text = broken.to_string();
        assert!(!text.contains("hunter2") && !text.contains(BROKEN_TOOL_SECRET), "{transport}: {text}");
        assert_no_markers(&broken);
        assert_eq!(essence(&broken), essence(&in_process(BROKEN_TASK_TOOL)), "{transport}");
    }
    // Control: a 2026-07-28 client that declared the extension gets both as tasks, on the
    // same HTTP server, with the same enforced results once they complete.
    for (transport, mut peer) in peers(&http, Era::Modern) {
        let scan = check_clean_task(&peer.call_as_task(1, "security_scan", &json!({})), SecurityScan::contract());
        assert_eq!(essence(&scan), essence(&in_process("security_scan")), "{transport}");
        let broken = check_broken_task(&peer.call_as_task(2, BROKEN_TASK_TOOL, &json!({})), SecurityScan::contract());
        assert_eq!(essence(&broken), essence(&in_process(BROKEN_TASK_TOOL)), "{transport}");
    }
}

/// Each era's `outputSchema` for `search_tickets` (an array root: wrapped for 2025-11-25
/// peers, natural for 2026-07-28 ones) from one running server, asked in turn.
#[test]
fn one_server_advertises_each_era_its_own_output_schema_however_the_requests_interleave() {
    use contract_runtime::wire::{advertised_output_schema, ProtocolVersion};
    use qe_server::contracts::SearchTickets;

    let contract = SearchTickets::contract();
    let expected = |era: &str| advertised_output_schema(contract, &ProtocolVersion::new(era));
    let (legacy, modern) = (expected(LEGACY), expected(MODERN));
    // Control: the two eras differ for this contract, so the assertions below can tell them apart.
    assert_ne!(legacy, modern);
    assert_eq!(legacy["properties"]["result"]["type"], "array", "{legacy}");

    let http = HttpServer::start();
    let mut old = HttpSession::open(&http, Era::Legacy { tasks: false });
    let mut new = HttpSession::open(&http, Era::Modern);
    let listed = |peer: &mut HttpSession, id: u64| {
        let reply = peer.request(id, "tools/list", &json!({}));
        let tools = reply["result"]["tools"].as_array().cloned().unwrap_or_else(|| panic!("{reply}"));
        tools.into_iter().find(|t| t["name"] == "search_tickets").expect("search_tickets is listed")["outputSchema"]
            .clone()
    };
    for round in 0..2 {
        assert_eq!(listed(&mut new, 10 + round), modern, "2026-07-28, round {round}");
        assert_eq!(listed(&mut old, 20 + round), legacy, "2025-11-25, round {round}");
        // A 2026-07-28 call makes rmcp ask the server for the tool (its header checks);
        // the result is still the natural one, validated.
        let call =
            new.request(30 + round, "tools/call", &json!({ "name": "search_tickets", "arguments": { "query": "a" } }));
        assert_ne!(call["result"]["isError"], true, "{call}");
        assert!(call["result"]["structuredContent"].is_array(), "{call}");
    }
}
