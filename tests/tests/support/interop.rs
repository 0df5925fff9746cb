//! What the interop tests share: the qe-server processes (stdio and streamable HTTP),
//! raw HTTP, the calls of `tests/interop/calls.json` with their in-process results, and
//! the official clients' summaries and their checks.

#![allow(dead_code, unused_imports, unreachable_pub)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{mpsc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use contract_runtime::pipeline::{CallContext, Pipeline};
use contract_runtime::wire::{
    advertised_output_schema, contract_meta, result_meta, unqualified_meta, ProtocolVersion, META_KEY,
};
use contract_runtime::{OutputContract, ToolOutput};
use qe_server::contracts::{FleetStatus, SecurityScan};
use qe_server::tools;
use serde_json::{json, Value};

use super::bins;

/// How long one client run (connect, list, 18 calls, close) may take.
pub(crate) const CLIENT_DEADLINE: Duration = Duration::from_secs(120);
/// How long one Inspector run (at most 18 Inspector processes, two at a time) may take on
/// a busy machine.
pub(crate) const INSPECTOR_DEADLINE: Duration = Duration::from_secs(300);
/// How long any single socket or pipe read may wait.
pub(crate) const IO_DEADLINE: Duration = Duration::from_secs(20);
/// The 2025 handshake revision every raw driver here speaks.
pub(crate) const LEGACY: &str = "2025-11-25";
pub(crate) const MODERN: &str = "2026-07-28";

// ------------------------------------------------------------------ processes

/// Installs the pinned clients once per test process (`tests/interop/install.sh`).
pub(crate) fn clients_installed() {
    pub(crate) static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let script = bins::root().join("tests/interop/install.sh");
        let out = bins::run_to_end(Command::new("bash").arg(script), Duration::from_secs(600));
        assert!(out.status.success(), "tests/interop/install.sh failed:\n{}", out.stderr);
    });
}

/// An HTTP server (`qe-server --http 127.0.0.1:0 --broken` unless spawned otherwise),
/// killed on drop.
pub(crate) struct HttpServer {
    pub(crate) child: Child,
    pub(crate) addr: SocketAddr,
}

impl HttpServer {
    pub(crate) fn start() -> Self {
        let mut cmd = Command::new(bins::qe_server());
        cmd.args(["--http", "127.0.0.1:0", "--broken"]);
        Self::spawn(&mut cmd, "qe-server: listening on http://")
    }

    /// Spawns `cmd`, an HTTP server that writes `{announce}HOST:PORT/mcp` on stderr once
    /// bound, and waits for that line.
    pub(crate) fn spawn(cmd: &mut Command, announce: &str) -> Self {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
        let (tx, rx) = mpsc::channel();
        let stderr = child.stderr.take().expect("piped stderr");
        let announce = announce.to_owned();
        // Keep draining stderr for the server's life so it never blocks on a full pipe.
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix(announce.as_str()) {
                    let _ = tx.send(url.trim_end_matches("/mcp").to_owned());
                }
            }
        });
        let Ok(addr) = rx.recv_timeout(IO_DEADLINE) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not announce its address within {IO_DEADLINE:?}");
        };
        Self { child, addr: addr.parse().expect("a socket address") }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    pub(crate) fn assert_alive(&mut self) {
        assert!(self.child.try_wait().expect("try_wait").is_none(), "the HTTP server exited");
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A stdio server (`qe-server --broken` unless spawned otherwise), driven line by line.
pub(crate) struct StdioServer {
    pub(crate) child: Child,
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) lines: mpsc::Receiver<String>,
}

impl StdioServer {
    pub(crate) fn start() -> Self {
        Self::spawn(Command::new(bins::qe_server()).arg("--broken"))
    }

    /// Spawns `cmd`, a stdio server, with its stdin and stdout piped.
    pub(crate) fn spawn(cmd: &mut Command) -> Self {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self { stdin: child.stdin.take(), child, lines: rx }
    }

    pub(crate) fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    }

    pub(crate) fn send(&mut self, message: &Value) {
        self.send_raw(&message.to_string());
    }

    /// The next message, or `None` after `wait` of silence or when stdout closed.
    pub(crate) fn recv(&self, wait: Duration) -> Option<Value> {
        let line = self.lines.recv_timeout(wait).ok()?;
        Some(serde_json::from_str(&line).unwrap_or_else(|_| panic!("the server wrote a line that is not JSON: {line}")))
    }

    /// Sends a request and waits for the response with its id.
    pub(crate) fn request(&mut self, id: u64, method: &str, params: &Value) -> Value {
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let deadline = Instant::now() + IO_DEADLINE;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.recv(left) {
                Some(msg) if msg["id"] == json!(id) => return msg,
                Some(_) => {}
                None => break,
            }
        }
        panic!("no response to `{method}` (id {id}) within {IO_DEADLINE:?}");
    }

    pub(crate) fn initialize(&mut self) {
        let reply = self.request(0, "initialize", &initialize_params());
        assert_eq!(reply["result"]["protocolVersion"], LEGACY, "{reply}");
        self.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    }

    /// Closes stdin (the client goes away) and waits for the process to end.
    pub(crate) fn hang_up(mut self, wait: Duration) -> ExitStatus {
        drop(self.stdin.take());
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            if start.elapsed() > wait {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("the stdio server did not exit within {wait:?} after its client hung up");
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn initialize_params() -> Value {
    json!({
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": { "name": "tool-contracts-raw", "version": "1.0.0" }
    })
}

// ------------------------------------------------------------------ raw HTTP

#[derive(Debug)]
pub(crate) struct HttpReply {
    pub(crate) status: u16,
    pub(crate) headers: BTreeMap<String, String>,
    pub(crate) body: String,
}

impl HttpReply {
    /// The JSON-RPC messages in the body: plain JSON, or SSE `data:` lines.
    pub(crate) fn messages(&self) -> Vec<Value> {
        if let Ok(value) = serde_json::from_str::<Value>(&self.body) {
            return vec![value];
        }
        self.body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .collect()
    }

    pub(crate) fn response(&self, id: u64) -> Value {
        self.messages()
            .into_iter()
            .find(|m| m["id"] == json!(id))
            .unwrap_or_else(|| panic!("no JSON-RPC response with id {id} in {self:?}"))
    }
}

/// One HTTP/1.1 request on a fresh connection (`Connection: close`), read to the end.
/// `headers` may override `Host`.
pub(crate) fn http(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> HttpReply {
    let mut stream = TcpStream::connect_timeout(&addr, IO_DEADLINE).expect("connect");
    stream.set_read_timeout(Some(IO_DEADLINE)).expect("read timeout");
    stream.set_write_timeout(Some(IO_DEADLINE)).expect("write timeout");
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        let _ = write!(head, "Host: {addr}\r\n");
    }
    for (k, v) in headers {
        let _ = write!(head, "{k}: {v}\r\n");
    }
    let _ = write!(
        head,
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    // One write, so a server that answers from the headers alone (403) has the small
    // body in its buffer already and closes without resetting the connection.
    let mut request = head.into_bytes();
    request.extend_from_slice(body);
    // A server may answer (413) and close before it has read a large body.
    let _ = stream.write_all(&request);
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    // Read until the server closes or the response is complete: a server may keep the
    // connection open despite `Connection: close` (the TypeScript SDK's transport answers
    // `Connection: keep-alive`).
    while !response_complete(&raw) {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(err) => {
                assert!(!raw.is_empty(), "reading the HTTP response failed: {err}");
                break;
            }
        }
    }
    parse_http(&raw)
}

/// Whether `raw` holds a whole HTTP response: its head, and the body its `Content-Length`
/// or its last chunk ends. A response framed by the close only is never complete here.
fn response_complete(raw: &[u8]) -> bool {
    let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else { return false };
    let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
    let body = &raw[end + 4..];
    let header = |name: &str| {
        head.lines()
            .skip(1)
            .find_map(|l| l.split_once(':').filter(|(k, _)| k.trim() == name).map(|(_, v)| v.trim().to_owned()))
    };
    if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        return body == b"0\r\n\r\n" || body.ends_with(b"\r\n0\r\n\r\n");
    }
    header("content-length").and_then(|v| v.parse::<usize>().ok()).is_some_and(|length| body.len() >= length)
}

pub(crate) fn parse_http(raw: &[u8]) -> HttpReply {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or_else(|| panic!("not an HTTP response: {text:?}"));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {head:?}"));
    let headers: BTreeMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let body = if headers.get("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        dechunk(body)
    } else {
        body.to_owned()
    };
    HttpReply { status, headers, body }
}

pub(crate) fn dechunk(mut body: &str) -> String {
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

pub(crate) fn post_json(addr: SocketAddr, headers: &[(&str, &str)], message: &Value) -> HttpReply {
    http(addr, "POST", "/mcp", headers, message.to_string().as_bytes())
}

/// A 2025-era streamable HTTP session: `initialize`, then `notifications/initialized`.
pub(crate) struct HttpSession {
    pub(crate) addr: SocketAddr,
    pub(crate) id: String,
}

impl HttpSession {
    pub(crate) fn open(addr: SocketAddr) -> Self {
        let init = post_json(
            addr,
            &[],
            &json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize_params() }),
        );
        assert_eq!(init.status, 200, "{init:?}");
        assert_eq!(init.response(0)["result"]["protocolVersion"], LEGACY);
        let id = init.headers.get("mcp-session-id").expect("a session id").clone();
        let session = Self { addr, id };
        let note = session.post(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        assert_eq!(note.status, 202, "{note:?}");
        session
    }

    pub(crate) fn post(&self, message: &Value) -> HttpReply {
        post_json(self.addr, &[("Mcp-Session-Id", &self.id), ("MCP-Protocol-Version", LEGACY)], message)
    }

    pub(crate) fn request(&self, id: u64, method: &str, params: &Value) -> Value {
        let reply = self.post(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        assert_eq!(reply.status, 200, "{reply:?}");
        reply.response(id)
    }
}

// ------------------------------------------------------------------ the calls

#[derive(Clone, Debug)]
pub(crate) struct Call {
    pub(crate) name: String,
    pub(crate) arguments: Value,
    pub(crate) expect: String,
}

pub(crate) fn calls() -> Vec<Call> {
    let text = std::fs::read_to_string(bins::root().join("tests/interop/calls.json")).expect("calls.json");
    let doc: Value = serde_json::from_str(&text).expect("calls.json is JSON");
    doc["calls"]
        .as_array()
        .expect("a `calls` array")
        .iter()
        .map(|c| Call {
            name: c["name"].as_str().expect("name").to_owned(),
            arguments: c["arguments"].clone(),
            expect: c["expect"].as_str().expect("expect").to_owned(),
        })
        .collect()
}

/// The contract each contracted tool is bound to.
pub(crate) fn contract_of(tool: &str) -> Option<&'static OutputContract> {
    if tool == tools::BROKEN_TOOL {
        return Some(FleetStatus::contract());
    }
    if tool == tools::BROKEN_TASK_TOOL {
        return Some(SecurityScan::contract());
    }
    qe_server::all_contracts().get(tool)
}

pub(crate) fn args<T: serde::de::DeserializeOwned>(value: &Value) -> T {
    serde_json::from_value(value.clone()).expect("valid arguments")
}

/// The result of `call` through the in-process pipeline, as the MCP `CallToolResult`
/// JSON, for a peer on `protocol`. The same tool functions the server runs.
pub(crate) fn in_process(call: &Call, protocol: &str) -> Value {
    let pipeline = Pipeline::default();
    let ctx = CallContext::new(call.name.clone(), call.arguments.clone()).with_protocol(ProtocolVersion::new(protocol));
    let a = &call.arguments;
    let result = match call.name.as_str() {
        "fleet_status" => pipeline.call_sync(&ctx, tools::fleet_status),
        "task_status" => pipeline.call_sync(&ctx, || tools::task_status(&args(a))),
        "pipeline_status" => pipeline.call_sync(&ctx, || tools::pipeline_status(&args(a))),
        "quality_assess" => pipeline.call_sync(&ctx, || tools::quality_assess(&args(a))),
        "security_scan" => pipeline.call_sync(&ctx, || tools::security_scan(&args(a))),
        "qe/coverage_gaps" => pipeline.call_sync(&ctx, || tools::coverage_gaps(&args(a))),
        "search_tickets" => pipeline.call_sync(&ctx, || tools::search_tickets(&args(a))),
        "search_tickets_page" => pipeline.call_sync(&ctx, || tools::search_tickets_page(&args(a))),
        "scrape_page" => pipeline.call_sync(&ctx, || tools::scrape_page(&args(a))),
        "broken_fleet_status" => pipeline.process(&ctx, FleetStatus::contract(), &tools::broken_fleet_status()),
        "broken_security_scan" => pipeline.process(&ctx, SecurityScan::contract(), &tools::broken_security_scan()),
        other => panic!("no in-process path for `{other}`"),
    };
    result.to_json()
}

/// Calls that the in-process pipeline can replay: those whose arguments are valid
/// (argument checking belongs to the transport adapter) and that have a contract.
pub(crate) fn replayable(call: &Call) -> bool {
    call.expect != "invalid_arguments" && call.expect != "uncontracted"
}

/// The error code in an `isError` result's text block.
pub(crate) fn error_code(result: &Value) -> Option<String> {
    let text = result["content"][0]["text"].as_str()?;
    let body: Value = serde_json::from_str(text).ok()?;
    body["error"]["code"].as_str().map(str::to_owned)
}

/// `value` with every number as an `f64`: JavaScript has one number type, so the
/// TypeScript client hands back `80` for the `80.0` the server wrote. Equal after
/// this, equal as JSON numbers.
pub(crate) fn numbers_as_f64(value: &Value) -> Value {
    match value {
        Value::Number(n) => n.as_f64().and_then(serde_json::Number::from_f64).map_or(Value::Null, Value::Number),
        Value::Array(items) => Value::Array(items.iter().map(numbers_as_f64).collect()),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), numbers_as_f64(v))).collect()),
        other => other.clone(),
    }
}

/// What must be identical across transports: structuredContent, isError, the error
/// code and the contract identity.
pub(crate) fn essence(result: &Value) -> Value {
    json!({
        "structuredContent": numbers_as_f64(&result.get("structuredContent").cloned().unwrap_or(Value::Null)),
        "isError": result["isError"].as_bool().unwrap_or(false),
        "errorCode": error_code(result),
        "contract": result["_meta"][META_KEY].clone(),
    })
}

pub(crate) fn checked_in_schema(tool: &str) -> Value {
    let file = bins::root().join("schemas").join(contract_tools::schemas::file_name(tool));
    serde_json::from_str(&std::fs::read_to_string(&file).expect("checked-in schema")).expect("schema is JSON")
}

// ------------------------------------------------------------------ client summaries

/// Runs one client and returns its summary and everything it printed on stderr.
pub(crate) fn run_client(program: &str, args: &[String]) -> (Value, String) {
    run_client_within(program, args, CLIENT_DEADLINE)
}

pub(crate) fn run_client_within(program: &str, args: &[String], deadline: Duration) -> (Value, String) {
    clients_installed();
    let dir = bins::root().join("tests/interop");
    let out = bins::run_to_end(Command::new(program).current_dir(&dir).args(args), deadline);
    let summary: Value =
        out.stdout.lines().rev().find_map(|l| serde_json::from_str(l).ok()).unwrap_or_else(|| {
            panic!("{program} {args:?} printed no summary (status {}):\n{}", out.status, out.stderr)
        });
    assert!(out.status.success(), "{program} {args:?} failed ({}): {}\n{}", out.status, summary["fatal"], out.stderr);
    (summary, out.stderr)
}

pub(crate) fn ts_client(transport: &str, target: &str) -> (Value, String) {
    let mut args = vec!["ts_client.mjs".to_owned(), transport.to_owned(), target.to_owned()];
    if transport == "stdio" {
        args.push("--broken".to_owned());
    }
    run_client("node", &args)
}

pub(crate) fn ts2_client(transport: &str, target: &str, mode: &str) -> (Value, String) {
    let mut args = vec!["ts2_client.mjs".to_owned(), transport.to_owned(), target.to_owned()];
    if transport == "stdio" {
        args.push("--broken".to_owned());
    }
    args.extend(["--mode".to_owned(), mode.to_owned()]);
    run_client("node", &args)
}

/// One Inspector run, with `--strict` (the full portability report) over stdio only: the
/// schemas are the same over HTTP, and every Inspector process costs about a second.
pub(crate) fn inspector_client(transport: &str, target: &str, era: &str) -> (Value, String) {
    let mut args = vec!["inspector_client.mjs".to_owned(), transport.to_owned(), target.to_owned()];
    if transport == "stdio" {
        args.push("--broken".to_owned());
        args.push("--strict".to_owned());
    }
    args.extend(["--era".to_owned(), era.to_owned()]);
    run_client_within("node", &args, INSPECTOR_DEADLINE)
}

pub(crate) fn py_client(transport: &str, target: &str, mode: &str) -> (Value, String) {
    let python = bins::root().join("tests/interop/.venv/bin/python");
    let mut args = vec!["py_client.py".to_owned(), transport.to_owned(), target.to_owned()];
    if transport == "stdio" {
        args.push("--broken".to_owned());
    }
    args.extend(["--mode".to_owned(), mode.to_owned()]);
    run_client(python.to_str().expect("utf-8 path"), &args)
}

/// Every check a client summary must pass; returns the essence of each call for the
/// cross-transport comparison.
pub(crate) fn check_summary(summary: &Value, stderr: &str, protocol: &str) -> Vec<Value> {
    let who = format!("{} {} over {} ({protocol})", summary["client"], summary["sdk"], summary["transport"]);
    assert_eq!(summary["protocolVersion"], protocol, "{who}: negotiated protocol");

    // No warning about unknown formats or keywords, anywhere the client could print one.
    let console = summary["console"].to_string().to_lowercase() + &stderr.to_lowercase();
    for warning in ["unknown format", "unknown keyword", "strict mode"] {
        assert!(!console.contains(warning), "{who} printed `{warning}`:\n{console}");
    }
    // Nothing logged at warning or error level at all, not even for the calls that must
    // fail: a failing call is a result, not a log line.
    let loud: Vec<&Value> = summary["console"]
        .as_array()
        .expect("console")
        .iter()
        .filter(|entry| ["warn", "warning", "error", "critical"].contains(&entry["level"].as_str().unwrap_or_default()))
        .collect();
    assert!(loud.is_empty(), "{who} logged warnings or errors: {loud:?}");

    // The client's validator is live: it accepts the clean control and rejects the two
    // faulty ticket payloads (an extra key, an unknown status).
    assert_eq!(
        summary["validatorControl"],
        json!({ "good": true, "extraKey": false, "badEnum": false }),
        "{who}: validator control"
    );

    // tools/list: what is served is what was reviewed.
    let version = ProtocolVersion::new(protocol);
    let listed = summary["tools"].as_array().expect("tools");
    for tool in listed {
        let name = tool["name"].as_str().expect("tool name");
        if let Some(contract) = contract_of(name) {
            let file = checked_in_schema(contract.name());
            assert_eq!(contract.schema(), &file, "{name}: the contract differs from schemas/");
            // JavaScript reads every number as a double, so the TypeScript client sees the
            // u64 bound 18446744073709551615 as 18446744073709552000; compare as doubles
            // there. Python keeps integers exact, so its comparison is exact.
            let seen = |v: &Value| if summary["client"] == "typescript" { numbers_as_f64(v) } else { v.clone() };
            let listed_schema = &seen(&tool["outputSchema"]);
            let expected = advertised_output_schema(contract, &version);
            assert_eq!(*listed_schema, seen(&expected), "{who}: {name} advertises another schema");
            if expected["type"] == file["type"] {
                assert_eq!(*listed_schema, seen(&file), "{who}: {name} differs from its checked-in file");
            } else {
                // Wrapped for a 2025 peer: the checked-in root under `result`, same `$defs`.
                assert_eq!(listed_schema["properties"]["result"]["type"], file["type"], "{who}: {name}");
                assert_eq!(listed_schema["$defs"], seen(&file["$defs"]), "{who}: {name}");
            }
            assert_eq!(tool["meta"][META_KEY], contract_meta(contract), "{who}: {name} contract identity");
            if summary["client"] == "typescript" {
                assert_eq!(tool["validatorCompiled"], true, "{who}: the SDK compiled no validator for {name}");
            }
        } else {
            assert_eq!(tool["outputSchema"], Value::Null, "{who}: {name} is uncontracted yet has a schema");
            assert_eq!(tool["meta"][META_KEY], unqualified_meta(), "{who}: {name} must say qualified: false");
        }
    }
    let mut names: Vec<&str> = listed.iter().filter_map(|t| t["name"].as_str()).collect();
    names.sort_unstable();
    let mut expected: Vec<String> = qe_server::all_contracts().tools().map(str::to_owned).collect();
    expected.extend([tools::BROKEN_TOOL, tools::BROKEN_TASK_TOOL, tools::UNCONTRACTED_TOOL].map(str::to_owned));
    expected.sort_unstable();
    assert_eq!(names, expected, "{who}: tools/list");

    // tools/call.
    let mut essences = Vec::new();
    let calls = summary["calls"].as_array().expect("calls");
    assert_eq!(calls.len(), self::calls().len(), "{who}: every call was made");
    for call in calls {
        let name = call["name"].as_str().expect("name");
        let expect = call["expect"].as_str().expect("expect");
        let at = format!("{who}: {name} {}", call["arguments"]);
        assert_eq!(call["threw"], Value::Null, "{at}: the client threw");
        let result = &call["result"];
        match expect {
            "success" => {
                assert_eq!(result["isError"], false, "{at}: {result}");
                let contract = contract_of(name).expect("contracted");
                let structured = result.get("structuredContent").expect("structuredContent");
                let text: Value =
                    serde_json::from_str(result["content"][0]["text"].as_str().expect("text")).expect("JSON text");
                assert_eq!(
                    numbers_as_f64(&text),
                    numbers_as_f64(structured),
                    "{at}: the text block is not the structured JSON"
                );
                let natural =
                    if structured.is_object() && version.needs_object_root() && contract.schema()["type"] != "object" {
                        &structured["result"]
                    } else {
                        structured
                    };
                assert!(contract.validate(natural).is_ok(), "{at}: breaks its contract");
                assert_eq!(result["_meta"][META_KEY], result_meta(contract), "{at}: contract identity");
            }
            "uncontracted" => {
                assert_eq!(result["isError"], false, "{at}: {result}");
                assert_eq!(result["_meta"][META_KEY], unqualified_meta(), "{at}");
            }
            code => {
                assert_eq!(result["isError"], true, "{at}: {result}");
                assert_eq!(error_code(result).as_deref(), Some(code), "{at}: {result}");
                assert!(result.get("structuredContent").is_none(), "{at}: an error carries structuredContent");
            }
        }
        // The array-root tool, natural or wrapped by era.
        if name == "search_tickets" && expect == "success" {
            let sc = &result["structuredContent"];
            if version.needs_object_root() {
                assert!(sc["result"].is_array(), "{at}: a 2025 peer gets {{\"result\": [...]}}, got {sc}");
            } else {
                assert!(sc.is_array(), "{at}: a 2026-07-28 peer gets the array itself, got {sc}");
            }
        }
        essences.push(json!({ "name": name, "arguments": call["arguments"], "essence": essence(result) }));
    }
    let unknown = &summary["unknownTool"]["threw"];
    assert_eq!(unknown["code"], -32602, "{who}: an unknown tool is a JSON-RPC error, got {unknown}");
    essences
}

/// Asserts the essences from several transports agree with each other and, for
/// replayable calls, with the in-process pipeline.
pub(crate) fn assert_parity(protocol: &str, runs: &[(&str, Vec<Value>)]) {
    let (first_name, first) = &runs[0];
    for (name, run) in &runs[1..] {
        assert_eq!(run, first, "{name} and {first_name} differ ({protocol})");
    }
    for (call, seen) in calls().iter().zip(first) {
        if replayable(call) {
            let local = essence(&in_process(call, protocol));
            assert_eq!(
                seen["essence"], local,
                "{} {}: wire and in-process pipeline differ ({protocol})",
                call.name, call.arguments
            );
        }
    }
}

/// The findings of an Inspector `--strict` report, as (tool, severity, path, issue), in
/// the order printed: each block is `Warning: tool "<name>"` (or `Error:`), then `Path:`,
/// `Issue:` and `Suggestion:` lines.
pub(crate) fn portability_findings(report: &[&str]) -> Vec<(String, String, String, String)> {
    let mut findings = Vec::new();
    for (i, line) in report.iter().enumerate() {
        let Some((severity, tool)) = line.split_once(": tool ") else { continue };
        if !matches!(severity, "Warning" | "Error") {
            continue;
        }
        let field = |name: &str| {
            report[i + 1..]
                .iter()
                .take(3)
                .find_map(|l| l.trim_start().strip_prefix(name))
                .unwrap_or_default()
                .to_owned()
        };
        findings.push((tool.trim_matches('"').to_owned(), severity.to_owned(), field("Path: "), field("Issue: ")));
    }
    findings
}

/// Every check an Inspector CLI summary must pass (one Inspector process per request);
/// returns the essence of each call for the cross-transport comparison.
#[allow(clippy::too_many_lines)] // One client's whole run, checked in order.
pub(crate) fn check_inspector(summary: &Value, protocol: &str) -> Vec<Value> {
    let era = summary["era"].as_str().expect("era");
    let who = format!("inspector {} over {} ({era})", summary["inspector"], summary["transport"]);
    eprintln!("{who}: {} ms for {} calls", summary["millis"], summary["calls"].as_array().map_or(0, Vec::len));
    assert_eq!(summary["inspector"], "2.12.0", "{who}");
    assert_eq!(summary["sdk"], "2.3.1", "{who}: the v2 client inside the Inspector");
    let version = ProtocolVersion::new(protocol);

    // tools/list: no error and no portability finding. The Inspector lints every
    // `inputSchema` and `outputSchema` it lists (a `type` array, a schema with no
    // constraining keyword, a bare boolean, a remote `$ref`, …) and prints one summary
    // line when it finds anything; `--strict` prints each finding as a `Warning:` or
    // `Error:` block naming the tool and the path, and exits 6 on an error.
    assert_eq!(summary["list"]["exit"], 0, "{who}: tools/list {}", summary["list"]);
    let list_stderr: Vec<&str> =
        summary["list"]["stderr"].as_array().expect("stderr").iter().filter_map(Value::as_str).collect();
    assert!(list_stderr.is_empty(), "{who}: tools/list printed {list_stderr:?}");
    if summary["transport"] == "stdio" {
        assert_eq!(summary["strict"]["exit"], 0, "{who}: tools/list --strict {}", summary["strict"]);
        let strict: Vec<&str> = summary["strict"]["stderr"]
            .as_array()
            .expect("`--strict` ran over stdio")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let findings = portability_findings(&strict);
        assert!(findings.is_empty(), "{who}: {} portability findings: {findings:#?}", findings.len());
        assert!(strict.is_empty(), "{who}: tools/list --strict printed {strict:?}");
    }

    let listed = summary["tools"].as_array().expect("tools");
    let mut names: Vec<&str> = listed.iter().filter_map(|t| t["name"].as_str()).collect();
    names.sort_unstable();
    let mut expected: Vec<String> = qe_server::all_contracts().tools().map(str::to_owned).collect();
    expected.extend([tools::BROKEN_TOOL, tools::BROKEN_TASK_TOOL, tools::UNCONTRACTED_TOOL].map(str::to_owned));
    expected.sort_unstable();
    assert_eq!(names, expected, "{who}: tools/list");
    for tool in listed {
        let name = tool["name"].as_str().expect("tool name");
        if let Some(contract) = contract_of(name) {
            let advertised = advertised_output_schema(contract, &version);
            assert_eq!(numbers_as_f64(&tool["outputSchema"]), numbers_as_f64(&advertised), "{who}: {name}");
            assert_eq!(tool["meta"][META_KEY], contract_meta(contract), "{who}: {name} contract identity");
        } else {
            assert_eq!(tool["outputSchema"], Value::Null, "{who}: {name} is uncontracted yet has a schema");
            assert_eq!(tool["meta"][META_KEY], unqualified_meta(), "{who}: {name} must say qualified: false");
        }
    }

    // The first call of calls.json for each tool and for each outcome: every tool listed is
    // called, and every kind of error is met.
    let runs = summary["calls"].as_array().expect("calls");
    let mut called: Vec<&str> = runs.iter().filter_map(|r| r["name"].as_str()).collect();
    called.sort_unstable();
    called.dedup();
    assert_eq!(called, names, "{who}: every listed tool is called");
    let mut outcomes: Vec<&str> = runs.iter().filter_map(|r| r["expect"].as_str()).collect();
    outcomes.sort_unstable();
    outcomes.dedup();
    let mut every: Vec<String> = calls().into_iter().map(|c| c.expect).collect();
    every.sort_unstable();
    every.dedup();
    assert_eq!(outcomes, every, "{who}: every kind of outcome is met");
    let mut essences = Vec::new();
    for run in runs {
        let call = Call {
            name: run["name"].as_str().expect("name").to_owned(),
            arguments: run["arguments"].clone(),
            expect: run["expect"].as_str().expect("expect").to_owned(),
        };
        let at = format!("{who}: {} {}", call.name, call.arguments);
        assert!(
            calls().iter().any(|c| c.name == call.name && c.arguments == call.arguments && c.expect == call.expect),
            "{at}: not a call of calls.json"
        );
        let name = call.name.as_str();
        let stderr: Vec<&str> = run["stderr"].as_array().expect("stderr").iter().filter_map(Value::as_str).collect();
        let result = &run["result"];
        match call.expect.as_str() {
            "success" => {
                assert_eq!(run["exit"], 0, "{at}: {run}");
                assert!(stderr.is_empty(), "{at}: the Inspector printed {stderr:?}");
                assert_eq!(result["isError"], false, "{at}: {result}");
                let contract = contract_of(name).expect("contracted");
                let structured = &result["structuredContent"];
                let natural =
                    if structured.is_object() && version.needs_object_root() && contract.schema()["type"] != "object" {
                        &structured["result"]
                    } else {
                        structured
                    };
                assert!(contract.validate(natural).is_ok(), "{at}: breaks its contract: {structured}");
                assert_eq!(result["_meta"][META_KEY], result_meta(contract), "{at}: contract identity");
            }
            "uncontracted" => {
                assert_eq!(run["exit"], 0, "{at}: {run}");
                assert!(stderr.is_empty(), "{at}: the Inspector printed {stderr:?}");
                assert_eq!(result["isError"], false, "{at}: {result}");
                assert_eq!(result["_meta"][META_KEY], unqualified_meta(), "{at}");
            }
            code => {
                // Reported as the tool error it is: exit 5 and one error line naming the tool.
                assert_eq!(run["exit"], 5, "{at}: {run}");
                let line = format!(
                    r#"{{"error":{{"code":"tool_is_error","message":"Tool '{name}' returned isError:true."}}}}"#
                );
                assert_eq!(stderr, [line], "{at}");
                assert_eq!(result["isError"], true, "{at}: {result}");
                assert_eq!(error_code(result).as_deref(), Some(code), "{at}: {result}");
                assert!(result.get("structuredContent").is_none(), "{at}: an error carries structuredContent");
            }
        }
        if replayable(&call) {
            assert_eq!(
                essence(result),
                essence(&in_process(&call, protocol)),
                "{at}: differs from the in-process pipeline"
            );
        }
        essences.push(json!({ "name": name, "arguments": call.arguments, "essence": essence(result) }));
    }
    let unknown = &summary["unknownTool"];
    assert_ne!(unknown["exit"], 0, "{who}: an unknown tool must fail: {unknown}");
    let line = unknown["stderr"][0].as_str().unwrap_or_default();
    assert!(line.contains(r#""code":"tool_not_found""#), "{who}: {unknown}");
    essences
}

/// The fake Firecrawl API (`tests/interop/fake_firecrawl_api.mjs`) that the real
/// firecrawl-mcp is pointed at with `FIRECRAWL_API_URL`, stopped when dropped.
pub(crate) struct FakeApi {
    child: Child,
    pub(crate) url: String,
}

impl FakeApi {
    pub(crate) fn start() -> Self {
        let mut child = Command::new("node")
            .arg(bins::root().join("tests/interop/fake_firecrawl_api.mjs"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node runs the fake API");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped stdout"))
            .read_line(&mut line)
            .expect("the fake API says where it listens");
        let url = line.trim().strip_prefix("listening on ").unwrap_or_else(|| panic!("fake API said {line:?}"));
        Self { url: url.to_owned(), child }
    }
}

impl Drop for FakeApi {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
