//! Every path a tool result can take out of an rmcp server goes through the contract:
//! task-augmented calls (over stdio and streamable HTTP, against the real `qe-server`
//! process, whose long-running tools run as tasks for a 2026-07-28 client that declared
//! the tasks extension, and answer complete for a 2025-11-25 client whatever it declared,
//! while its other tools answer complete for everyone), non-finite floats, a wrong `Json`
//! import, typed error classification, cache hits served as tasks only for a tool the
//! handler answers with one on the client's protocol version, and parity with the
//! in-process pipeline. Each rejection has a clean control that must pass.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use contract_runtime::cache::InMemoryCache;
use contract_runtime::pipeline::{CallContext, Pipeline};
use contract_runtime::rmcp::{ContractedServer, Json};
use contract_runtime::wire::{result_meta, META_KEY};
use contract_runtime::{contracts, OutputContract, ToolError, ToolOutput};
use qe_server::contracts::{FleetStatus, SecurityScan};
use qe_server::tools::{self, BROKEN_TASK_TOOL, BROKEN_TOOL, BROKEN_TOOL_SECRET};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::{IntoCallToolResult, RequestState, ToolCallContext};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CreateTaskResult, GetTaskParams, GetTaskResult, InputRequiredResult,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader as AsyncBufReader};

#[allow(dead_code)] // Each test file uses part of the shared support.
#[path = "support/bins.rs"]
mod bins;

const WAIT: Duration = Duration::from_secs(20);
const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";
const TASKS: &str = "io.modelcontextprotocol/tasks";
const MARKERS: [&str; 2] = ["tool-contracts.dev/checked", "tool-contracts.dev/error"];

/// Client capabilities; `tasks` declares the tasks extension (SEP-2663).
fn capabilities(tasks: bool) -> Value {
    if tasks {
        json!({ "extensions": { TASKS: {} } })
    } else {
        json!({})
    }
}

/// `initialize` params of a 2025-11-25 client.
fn initialize_params(tasks: bool) -> Value {
    json!({
        "protocolVersion": LEGACY,
        "capabilities": capabilities(tasks),
        "clientInfo": { "name": "paths", "version": "1" }
    })
}

/// The request `_meta` of a 2026-07-28 client, which skips `initialize`: every request
/// carries its protocol version, capabilities and identity.
fn modern_meta(tasks: bool) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities(tasks),
        "io.modelcontextprotocol/clientInfo": { "name": "paths", "version": "1" }
    })
}

/// `params` with the request `_meta` of a 2026-07-28 client, when there is one.
fn with_meta(params: &Value, meta: Option<&Value>) -> Value {
    let mut params = params.clone();
    if let (Some(meta), Some(object)) = (meta, params.as_object_mut()) {
        object.insert("_meta".to_owned(), meta.clone());
    }
    params
}

/// Which client talks to the real server.
#[derive(Clone, Copy, Debug)]
enum Era {
    /// 2025-11-25: an `initialize` handshake; `tasks` declares the extension in it.
    Legacy { tasks: bool },
    /// 2026-07-28: no handshake; every request's `_meta` declares the tasks extension.
    Modern,
}

/// The `{"error": …}` body of an `isError` result, checked for the error shape.
fn error_body(result: &Value) -> Value {
    assert_eq!(result["isError"], true, "{result}");
    assert!(result.get("structuredContent").is_none(), "an error carries structuredContent: {result}");
    let text = result["content"][0]["text"].as_str().expect("a text block");
    serde_json::from_str::<Value>(text).expect("JSON error text")["error"].clone()
}

/// No adapter marker survives into a response.
fn assert_no_markers(result: &Value) {
    for marker in MARKERS {
        assert!(result["_meta"].get(marker).is_none(), "marker `{marker}` leaked: {result}");
    }
}

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

// ------------------------------------------------------------------ in process

/// A score whose floats the handler chooses.
#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Score {
    score: f64,
    confidence: Option<f64>,
}

#[derive(Deserialize, JsonSchema)]
struct Pick {
    /// Which field gets the float, `score` or `confidence`.
    field: String,
    /// `nan`, `inf`, `-inf`, or a finite number as text.
    value: String,
}

fn float(text: &str) -> f64 {
    match text {
        "nan" => f64::NAN,
        "inf" => f64::INFINITY,
        "-inf" => f64::NEG_INFINITY,
        other => other.parse().expect("a number"),
    }
}

fn score_of(pick: &Pick) -> Score {
    if pick.field == "score" {
        Score { score: float(&pick.value), confidence: Some(0.5) }
    } else {
        Score { score: 1.0, confidence: Some(float(&pick.value)) }
    }
}

/// Rejects values over 10 while the schema says any integer: only deserialization
/// (rmcp's, not the inputSchema check) can refuse 11.
fn at_most_ten<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let n = u32::deserialize(d)?;
    if n > 10 {
        return Err(serde::de::Error::custom("more than ten"));
    }
    Ok(n)
}

#[derive(Deserialize, JsonSchema)]
struct Small {
    #[serde(deserialize_with = "at_most_ten")]
    n: u32,
}

#[derive(Clone)]
struct Probe {
    tool_router: ToolRouter<Self>,
    tasks: TaskManager,
    runs: Arc<AtomicU32>,
    /// The tools answered with a task for a client that declared tasks; `None`: every tool.
    task_tools: Option<&'static [&'static str]>,
    /// The first protocol version whose clients get tasks; `None`: every version.
    tasks_since: Option<&'static str>,
}

#[tool_router]
impl Probe {
    #[tool(description = "A score, through contract_runtime's Json.")]
    async fn score(&self, Parameters(pick): Parameters<Pick>) -> Result<Json<Score>, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Ok(Json(score_of(&pick)))
    }

    #[tool(description = "The same score through rmcp's own Json: the wrong import.")]
    async fn rmcp_score(&self, Parameters(pick): Parameters<Pick>) -> Result<rmcp::Json<Score>, ToolError> {
        Ok(rmcp::Json(score_of(&pick)))
    }

    #[tool(description = "A small number, checked only by deserialization.")]
    async fn small(&self, Parameters(s): Parameters<Small>) -> Result<Json<Score>, ToolError> {
        Ok(Json(Score { score: f64::from(s.n), confidence: None }))
    }

    #[tool(description = "Fails with a protocol error that says invalid params.")]
    async fn bad_params(&self) -> Result<Json<Score>, ErrorData> {
        Err(ErrorData::invalid_params("token=ghp_0123456789abcdefghijklmnopqrstuvwxyz is not accepted", None))
    }

    #[tool(description = "Asks for input first (MRTR), then returns the score.")]
    async fn confirm(
        &self,
        RequestState(state): RequestState,
        Parameters(pick): Parameters<Pick>,
    ) -> Result<CallToolResponse, ErrorData> {
        if state.as_deref() == Some("confirmed") {
            return Json(score_of(&pick)).into_call_tool_result();
        }
        Ok(InputRequiredResult::from_request_state("confirmed").into())
    }

    #[tool(description = "Fails with a typed, retryable error.")]
    async fn typed(&self) -> Result<Json<Score>, ToolError> {
        Err(ToolError::unavailable("the scorer is down"))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Probe {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tasks().build())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let as_task = self.task_tools.is_none_or(|tools| tools.contains(&request.name.as_ref()))
            && self.tasks_since.is_none_or(|since| context.protocol_version().is_some_and(|v| v.as_str() >= since));
        if !as_task || !context.client_capabilities().is_some_and(|caps| caps.supports_tasks()) {
            return self.tool_router.call(ToolCallContext::new(self, request, context)).await;
        }
        let probe = self.clone();
        let task = self.tasks.spawn(TaskOptions::new().with_poll_interval_ms(5), move |_| {
            Box::pin(async move {
                match probe.tool_router.call(ToolCallContext::new(&probe, request, context)).await {
                    Ok(CallToolResponse::Complete(result)) => Ok(result),
                    Ok(_) => Err(TaskExit::Error(ErrorData::internal_error("not complete", None))),
                    Err(err) => Err(TaskExit::Error(err)),
                }
            })
        });
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }
}

fn probe() -> Probe {
    Probe {
        tool_router: Probe::tool_router(),
        tasks: TaskManager::new(),
        runs: Arc::new(AtomicU32::new(0)),
        task_tools: None,
        tasks_since: None,
    }
}

fn bound(probe: Probe, pipeline: Option<Pipeline>) -> ContractedServer<Probe> {
    let set = ["rmcp_score", "small", "bad_params", "typed", "confirm"]
        .into_iter()
        .fold(contracts![Score], contract_runtime::ContractSet::bind::<Score>);
    let server = ContractedServer::new(probe, set).expect("bindings");
    match pipeline {
        Some(pipeline) => server.with_pipeline(pipeline),
        None => server,
    }
}

/// A raw JSON-RPC client over an in-memory duplex (stdio framing: one JSON per line).
struct Wire {
    to_server: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    from_server: tokio::io::Lines<AsyncBufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    next: u64,
    /// The request `_meta` of a 2026-07-28 client, which skips `initialize`.
    meta: Option<Value>,
}

impl Wire {
    async fn connect(server: ContractedServer<Probe>, tasks: bool) -> Self {
        let mut wire = Self::open(server);
        wire.request("initialize", initialize_params(tasks)).await;
        wire.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await;
        wire
    }

    /// A 2026-07-28 client: no handshake, every request carries its `_meta`; `tasks`
    /// declares the tasks extension there.
    fn modern(server: ContractedServer<Probe>, tasks: bool) -> Self {
        let mut wire = Self::open(server);
        wire.meta = Some(modern_meta(tasks));
        wire
    }

    /// Must run inside the runtime: it spawns the server.
    fn open(server: ContractedServer<Probe>) -> Self {
        let (client, server_side) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(tokio::io::split(server_side)).await {
                let _ = running.waiting().await;
            }
        });
        let (read, write) = tokio::io::split(client);
        Self { to_server: write, from_server: AsyncBufReader::new(read).lines(), next: 0, meta: None }
    }

    async fn send(&mut self, message: &Value) {
        let line = format!("{message}\n");
        self.to_server.write_all(line.as_bytes()).await.expect("write");
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        let params = with_meta(&params, self.meta.as_ref());
        self.next += 1;
        let id = self.next;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).await;
        loop {
            let line = tokio::time::timeout(WAIT, self.from_server.next_line())
                .await
                .expect("an answer in time")
                .expect("read")
                .expect("open");
            let message: Value = serde_json::from_str(&line).expect("JSON");
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let reply = self.request("tools/call", json!({ "name": tool, "arguments": arguments })).await;
        reply.get("result").cloned().unwrap_or_else(|| panic!("`{tool}` gave no result: {reply}"))
    }

    /// The final result of a call, polled to its end when it comes back as a task.
    async fn outcome(&mut self, tool: &str, arguments: Value) -> Value {
        let first = self.call(tool, arguments).await;
        if first["resultType"] != "task" {
            return first;
        }
        let id = first["taskId"].clone();
        for _ in 0..2000 {
            let task = self.request("tasks/get", json!({ "taskId": id })).await["result"].clone();
            if task["status"] == "completed" {
                return task["result"].clone();
            }
            assert_eq!(task["status"], "working", "{task}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("the task did not complete");
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}

/// What the pipeline says for the same handler result.
fn pipeline_says(pick: &Pick) -> Value {
    let ctx = CallContext::new("score", json!({}));
    Pipeline::default().call_sync(&ctx, || Ok::<_, ToolError>(score_of(pick))).to_json()
}

#[test]
fn non_finite_floats_are_serialization_errors_with_the_pointer_as_in_the_pipeline_complete_or_task() {
    runtime().block_on(async {
        for tasks in [false, true] {
            let mut wire = Wire::connect(bound(probe(), None), tasks).await;
            for field in ["score", "confidence"] {
                for value in ["nan", "inf", "-inf"] {
                    let pick = Pick { field: field.to_owned(), value: value.to_owned() };
                    let result = wire.outcome("score", json!({ "field": field, "value": value })).await;
                    let error = error_body(&result);
                    assert_eq!(error["code"], "serialization_error", "{field}={value} tasks={tasks}: {result}");
                    let message = error["message"].as_str().expect("a message");
                    assert!(message.contains(&format!("`/{field}`")), "no pointer: {message}");
                    // Identical to the in-process pipeline on the same value.
                    let expected = pipeline_says(&pick);
                    assert_eq!(result["content"], expected["content"], "{field}={value} tasks={tasks}");
                    assert_eq!(result["_meta"], expected["_meta"], "{field}={value} tasks={tasks}");
                }
                // Control: a finite value passes, on the same path.
                let result = wire.outcome("score", json!({ "field": field, "value": "0.25" })).await;
                assert_eq!(result["isError"], false, "{result}");
                assert_no_markers(&result);
                let pick = Pick { field: field.to_owned(), value: "0.25".to_owned() };
                assert_eq!(result["structuredContent"], pipeline_says(&pick)["structuredContent"]);
            }
        }
    });
}

#[test]
fn rmcps_own_json_is_refused_loudly_not_trusted() {
    runtime().block_on(async {
        for tasks in [false, true] {
            let mut wire = Wire::connect(bound(probe(), None), tasks).await;
            // The dangerous case: NaN in an `Option<f64>` arrives as `null`, which the
            // contract would accept. It must not leave as a success.
            let nan = wire.outcome("rmcp_score", json!({ "field": "confidence", "value": "nan" })).await;
            let error = error_body(&nan);
            assert_eq!(error["code"], "serialization_error", "{nan}");
            assert!(error["message"].as_str().unwrap_or_default().contains("contract_runtime::rmcp::Json"), "{nan}");
            // Even a finite value is refused: the check did not run, so nothing is proven.
            let finite = wire.outcome("rmcp_score", json!({ "field": "confidence", "value": "0.5" })).await;
            assert_eq!(error_body(&finite)["code"], "serialization_error", "{finite}");
            // Control: the same value through our Json passes.
            let ours = wire.outcome("score", json!({ "field": "confidence", "value": "0.5" })).await;
            assert_eq!(ours["isError"], false, "{ours}");
        }
    });
}

#[test]
fn errors_are_classified_by_type_argument_failures_handler_errors_and_tool_errors() {
    runtime().block_on(async {
        for tasks in [false, true] {
            let mut wire = Wire::connect(bound(probe(), None), tasks).await;
            // rmcp's own argument deserialization refuses 11 (the inputSchema allows it).
            // Inside a task it settles the task as `failed`; the adapter shows it as the
            // same `isError` result a complete call gives.
            let refused = wire.outcome("small", json!({ "n": 11 })).await;
            assert_eq!(error_body(&refused)["code"], "invalid_arguments", "tasks={tasks}: {refused}");
            // Control: 3 passes both checks.
            let ok = wire.outcome("small", json!({ "n": 3 })).await;
            assert_eq!(ok["structuredContent"], json!({ "score": 3.0, "confidence": null }), "{ok}");

            let typed = wire.outcome("typed", json!({})).await;
            let error = error_body(&typed);
            assert_eq!(error["code"], "unavailable", "{typed}");
            assert_eq!(error["retryable"], true, "the flag survives: {typed}");
            assert_eq!(error["message"], "the scorer is down", "{typed}");
            assert_no_markers(&typed);
        }
        // A handler's own invalid-params protocol error is `invalid_arguments`, sanitized.
        let mut wire = Wire::connect(bound(probe(), None), false).await;
        let bad = wire.call("bad_params", json!({})).await;
        let error = error_body(&bad);
        assert_eq!(error["code"], "invalid_arguments", "{bad}");
        assert!(!bad.to_string().contains("ghp_0123456789"), "the token leaked: {bad}");
    });
}

#[test]
fn a_cache_hit_under_a_task_request_comes_back_as_a_task() {
    runtime().block_on(async {
        let cache = Arc::new(InMemoryCache::new());
        let probe = probe();
        let runs = Arc::clone(&probe.runs);
        let server = bound(probe, Some(Pipeline::builder().cache(cache.clone()).build()));
        let arguments = json!({ "field": "score", "value": "0.75" });

        let mut tasks = Wire::connect(server.clone(), true).await;
        let first = tasks.outcome("score", arguments.clone()).await;
        assert_eq!(first["isError"], false, "{first}");
        assert_eq!(runs.load(Ordering::SeqCst), 1);

        // The hit: a task again, whose result is the cached one; the handler does not run.
        let created = tasks.call("score", arguments.clone()).await;
        assert_eq!(created["resultType"], "task", "{created}");
        let hit = tasks.outcome("score", arguments.clone()).await;
        assert_eq!(hit["structuredContent"], first["structuredContent"], "{hit}");
        assert_eq!(runs.load(Ordering::SeqCst), 1, "a hit ran the handler");
        assert!(cache.stats().hits >= 2, "{:?}", cache.stats());

        // Control: a client without the tasks extension gets the hit as a complete result.
        let mut plain = Wire::connect(server, false).await;
        let complete = plain.call("score", arguments).await;
        assert!(complete.get("taskId").is_none(), "{complete}");
        assert_eq!(complete["structuredContent"], first["structuredContent"], "{complete}");
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn a_cache_hit_is_a_task_only_for_a_tool_the_handler_answers_with_a_task() {
    runtime().block_on(async {
        let cache = Arc::new(InMemoryCache::new());
        let mut probe = probe();
        // `score` is the long-running tool; `small` answers completely, whoever asks.
        probe.task_tools = Some(&["score"]);
        let runs = Arc::clone(&probe.runs);
        let server = bound(probe, Some(Pipeline::builder().cache(cache.clone()).build()));
        let mut tasks = Wire::connect(server.clone(), true).await;

        // A tool that answers completely: the call and its cache hit are both complete
        // for a client that declared tasks, on a server that offers tasks.
        let first = tasks.call("small", json!({ "n": 3 })).await;
        assert!(first.get("taskId").is_none(), "{first}");
        assert_eq!(first["structuredContent"], json!({ "score": 3.0, "confidence": null }), "{first}");
        let hits = cache.stats().hits;
        let hit = tasks.call("small", json!({ "n": 3 })).await;
        assert!(hit.get("taskId").is_none(), "a complete answer was turned into a task: {hit}");
        assert_ne!(hit["resultType"], "task", "{hit}");
        assert_eq!(hit["structuredContent"], first["structuredContent"], "{hit}");
        assert_eq!(cache.stats().hits, hits + 1, "served from the cache: {:?}", cache.stats());

        // The task tool: once the handler has answered it with a task, its hit is a task.
        let arguments = json!({ "field": "score", "value": "0.75" });
        let computed = tasks.outcome("score", arguments.clone()).await;
        let before = runs.load(Ordering::SeqCst);
        let created = tasks.call("score", arguments.clone()).await;
        assert_eq!(created["resultType"], "task", "{created}");
        let from_cache = tasks.outcome("score", arguments.clone()).await;
        assert_eq!(from_cache["structuredContent"], computed["structuredContent"], "{from_cache}");
        assert_eq!(runs.load(Ordering::SeqCst), before, "a hit ran the handler");

        // Control: a client without the extension gets both hits complete.
        let mut plain = Wire::connect(server, false).await;
        for (tool, args) in [("small", json!({ "n": 3 })), ("score", arguments)] {
            let complete = plain.call(tool, args).await;
            assert!(complete.get("taskId").is_none(), "{tool}: {complete}");
            assert_eq!(complete["isError"], false, "{tool}: {complete}");
        }
        assert_eq!(runs.load(Ordering::SeqCst), before, "a hit ran the handler");
    });
}

#[test]
fn a_cache_hit_is_a_task_only_for_a_protocol_version_the_handler_answers_with_a_task() {
    runtime().block_on(async {
        let cache = Arc::new(InMemoryCache::new());
        let mut probe = probe();
        // Tasks only for 2026-07-28 clients; a 2025-11-25 client gets complete results
        // even when it declared the extension.
        probe.tasks_since = Some(MODERN);
        let runs = Arc::clone(&probe.runs);
        let server = bound(probe, Some(Pipeline::builder().cache(cache.clone()).build()));
        let arguments = json!({ "field": "score", "value": "0.75" });

        let mut modern = Wire::modern(server.clone(), true);
        let created = modern.call("score", arguments.clone()).await;
        assert_eq!(created["resultType"], "task", "{created}");
        let computed = modern.outcome("score", arguments.clone()).await;
        assert_eq!(computed["isError"], false, "{computed}");
        let before = runs.load(Ordering::SeqCst);

        // The hit for a 2025-11-25 client that declared tasks: complete, as the handler
        // answers that client, and served from the cache.
        let hits = cache.stats().hits;
        let mut legacy = Wire::connect(server.clone(), true).await;
        let complete = legacy.call("score", arguments.clone()).await;
        assert!(complete.get("taskId").is_none(), "a legacy client got a task from the cache: {complete}");
        assert_ne!(complete["resultType"], "task", "{complete}");
        assert_eq!(complete["structuredContent"], computed["structuredContent"], "{complete}");
        assert_eq!(cache.stats().hits, hits + 1, "served from the cache: {:?}", cache.stats());
        assert_eq!(runs.load(Ordering::SeqCst), before, "a hit ran the handler");

        // Control: the hit for a 2026-07-28 client that declared tasks is a task.
        let again = modern.call("score", arguments.clone()).await;
        assert_eq!(again["resultType"], "task", "{again}");
        let from_cache = modern.outcome("score", arguments).await;
        assert_eq!(from_cache["structuredContent"], computed["structuredContent"], "{from_cache}");
        assert_eq!(runs.load(Ordering::SeqCst), before, "a hit ran the handler");
    });
}

#[test]
fn an_input_required_call_passes_and_its_retry_is_enforced_and_never_cached() {
    runtime().block_on(async {
        let cache = Arc::new(InMemoryCache::new());
        let server = bound(probe(), Some(Pipeline::builder().cache(cache.clone()).build()));
        let mut wire = Wire::modern(server, false);
        for value in ["nan", "0.5"] {
            let arguments = json!({ "field": "confidence", "value": value });
            // The first round asks for input: no output yet, nothing to enforce.
            let asked = wire.call("confirm", arguments.clone()).await;
            assert_eq!(asked["resultType"], "input_required", "{asked}");
            assert_eq!(asked["requestState"], "confirmed", "{asked}");
            assert_no_markers(&asked);
            // The retry completes, and is enforced like any call.
            let params =
                json!({ "name": "confirm", "arguments": arguments, "requestState": "confirmed", "inputResponses": {} });
            let done = wire.request("tools/call", params).await["result"].clone();
            assert_no_markers(&done);
            if value == "nan" {
                assert_eq!(error_body(&done)["code"], "serialization_error", "{done}");
            } else {
                assert_eq!(done["isError"], false, "{done}");
                assert_eq!(done["structuredContent"], json!({ "score": 1.0, "confidence": 0.5 }), "{done}");
            }
        }
        // A retried call depends on more than its arguments: it never enters the cache.
        assert_eq!(cache.len(), 0, "{:?}", cache.stats());
        // Control: a plain call on the same server is admitted.
        let plain = wire.call("score", json!({ "field": "confidence", "value": "0.5" })).await;
        assert_eq!(plain["isError"], false, "{plain}");
        assert_eq!(cache.len(), 1, "{:?}", cache.stats());
    });
}

#[test]
fn a_task_result_the_adapter_did_not_see_created_is_withheld() {
    runtime().block_on(async {
        let probe = probe();
        let store = probe.tasks.clone();
        let mut wire = Wire::connect(bound(probe, None), true).await;
        // A task made behind the adapter's back (not through tools/call), holding a
        // result that breaks every contract and names a secret.
        let smuggled = store.spawn(TaskOptions::new(), |_| {
            Box::pin(async { Ok(rmcp::model::CallToolResult::structured(json!({ "score": "password=hunter2" }))) })
        });
        let id = smuggled.task_id;
        let mut task = Value::Null;
        for _ in 0..2000 {
            task = wire.request("tasks/get", json!({ "taskId": id })).await["result"].clone();
            if task["status"] != "working" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(task["status"], "completed", "{task}");
        let error = error_body(&task["result"]);
        assert_eq!(error["code"], "output_contract_violation", "{task}");
        assert!(error["message"].as_str().unwrap_or_default().contains("withheld"), "{task}");
        assert!(!task.to_string().contains("hunter2"), "{task}");
        // Control: a task made through tools/call on the same store is served, enforced.
        let served = wire.outcome("score", json!({ "field": "score", "value": "2" })).await;
        assert_eq!(served["structuredContent"], json!({ "score": 2.0, "confidence": 0.5 }), "{served}");
    });
}
