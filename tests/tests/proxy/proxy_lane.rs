//! contract-proxy's lane for `tools/call` when both sides are stdio: calls go to the
//! upstream under the client's own ids and their answers are judged straight from the
//! upstream's bytes. Every kind of verdict is checked, and answers are compared with what
//! the server answers directly; ids, cancellation, progress, tasks, timeouts, an upstream
//! that exits, large and deep results and many calls in flight at once are driven with raw
//! JSON-RPC lines against the TypeScript SDK fixtures of `tests/interop/proxy/`.

use crate::support::bins;
use crate::support::reencoding_relay::reencoding_relay;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use contract_runtime::client::lock::{Lock, LockedServer, ServerSource};
use contract_runtime::wire::META_KEY;
use serde_json::{json, Value};

pub(crate) const DEADLINE: Duration = Duration::from_secs(60);

pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("contract-proxy-lane-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub(crate) fn interop(path: &str) -> PathBuf {
    bins::root().join("tests/interop").join(path)
}

pub(crate) fn tools_file(dir: &Path, entries: &Value) -> PathBuf {
    let path = dir.join("tools.json");
    std::fs::write(&path, entries.to_string()).unwrap();
    path
}

/// A result whose `structuredContent` is `value`, with the same JSON as its text.
pub(crate) fn answer(value: &Value) -> Value {
    json!({ "content": [{ "type": "text", "text": value.to_string() }], "structuredContent": value })
}

pub(crate) fn report_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "count": { "type": "integer" }, "status": { "type": "string" } },
        "required": ["count", "status"],
    })
}

/// The error object in an `isError` result's one text block.
pub(crate) fn error_of(result: &Value) -> Value {
    assert_eq!(result["isError"], true, "an error result: {result:#}");
    let text = result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("a text block: {result:#}"));
    serde_json::from_str::<Value>(text).unwrap_or_else(|e| panic!("the text is JSON ({e}): {text}"))["error"].clone()
}

pub(crate) fn upstream(server: &str, tools: &Path) -> Vec<String> {
    vec!["node".to_owned(), interop(server).display().to_string(), tools.display().to_string()]
}

/// The proxy's command line with `options` in front of `server` (a fixture) with `tools`.
pub(crate) fn proxied(options: &[&str], server: &str, tools: &Path) -> Vec<String> {
    let mut argv = vec![bins::contract_proxy().display().to_string()];
    argv.extend(options.iter().map(|s| (*s).to_owned()));
    argv.push("--".to_owned());
    argv.extend(upstream(server, tools));
    argv
}

/// A process on raw pipes: JSON-RPC lines in, lines out.
pub(crate) struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    stderr: Option<thread::JoinHandle<String>>,
    /// Messages read while waiting for another, in arrival order.
    pub(crate) seen: Vec<Value>,
}

impl Session {
    pub(crate) fn start(argv: &[String]) -> Self {
        bins::server_everything(); // installs the pinned SDK the fixtures run on
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let value = serde_json::from_str::<Value>(&line)
                    .unwrap_or_else(|e| json!({ "unreadable line": line, "error": e.to_string() }));
                let _ = tx.send(value);
            }
        });
        let mut stderr = child.stderr.take().unwrap();
        let stderr = thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
            text
        });
        let stdin = child.stdin.take();
        Self { child, stdin, lines, stderr: Some(stderr), seen: Vec::new() }
    }

    /// Started and initialized on 2025-11-25 with `capabilities`.
    pub(crate) fn initialized(argv: &[String], capabilities: &Value) -> Self {
        let mut s = Self::start(argv);
        s.send(&json!({ "jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": { "name": "raw", "version": "0" } } }));
        let init = s.response(&json!("init"));
        assert!(init.get("result").is_some(), "initialized: {init:#}");
        s.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        s
    }

    pub(crate) fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write");
        stdin.flush().unwrap();
    }

    pub(crate) fn send_call(&mut self, id: &Value, tool: &str, arguments: &Value) {
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": tool, "arguments": arguments } }));
    }

    pub(crate) fn next_message(&mut self, deadline: Instant) -> Value {
        let left = deadline.checked_duration_since(Instant::now()).unwrap_or_else(|| panic!("no message in time"));
        match self.lines.recv_timeout(left) {
            Ok(message) => message,
            Err(mpsc::RecvTimeoutError::Timeout) => panic!("no message in time; seen {:#?}", self.seen),
            Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the process closed its stdout; seen {:#?}", self.seen),
        }
    }

    /// The response to `id` (a whole JSON-RPC message); other messages are kept in `seen`.
    pub(crate) fn response(&mut self, id: &Value) -> Value {
        if let Some(at) = self.seen.iter().position(|m| m.get("id") == Some(id) && m.get("method").is_none()) {
            return self.seen.remove(at);
        }
        let deadline = Instant::now() + DEADLINE;
        loop {
            let message = self.next_message(deadline);
            if message.get("id") == Some(id) && message.get("method").is_none() {
                return message;
            }
            self.seen.push(message);
        }
    }

    pub(crate) fn call(&mut self, id: &Value, tool: &str, arguments: &Value) -> Value {
        self.send_call(id, tool, arguments);
        self.response(id)
    }

    /// Waits for a notification of `method` and returns it (with what came before it in `seen`).
    pub(crate) fn notification(&mut self, method: &str) -> Value {
        if let Some(at) = self.seen.iter().position(|m| m["method"] == method) {
            return self.seen.remove(at);
        }
        let deadline = Instant::now() + DEADLINE;
        loop {
            let message = self.next_message(deadline);
            if message["method"] == method {
                return message;
            }
            self.seen.push(message);
        }
    }

    /// Every message not taken yet (`seen`, then what comes) until the process closes its
    /// stdout.
    pub(crate) fn until_closed(&mut self) -> Vec<Value> {
        let mut messages = std::mem::take(&mut self.seen);
        let deadline = Instant::now() + DEADLINE;
        loop {
            let left = deadline.checked_duration_since(Instant::now()).unwrap_or_else(|| panic!("stdout still open"));
            match self.lines.recv_timeout(left) {
                Ok(message) => messages.push(message),
                Err(mpsc::RecvTimeoutError::Disconnected) => return messages,
                Err(mpsc::RecvTimeoutError::Timeout) => panic!("stdout still open; read {messages:#?}"),
            }
        }
    }

    /// Waits for the process to exit (stdin still open): its status code and stderr.
    pub(crate) fn exited(mut self) -> (Option<i32>, String) {
        let start = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status.code();
            }
            assert!(start.elapsed() < DEADLINE, "the process did not exit");
            thread::sleep(Duration::from_millis(20));
        };
        drop(self.stdin.take());
        (status, self.stderr.take().and_then(|h| h.join().ok()).unwrap_or_default())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ------------------------------------------------------------------ which lane

#[test]
fn calls_reach_the_upstream_under_the_clients_own_ids() {
    let dir = scratch("which");
    let tools = tools_file(
        &dir,
        &json!([{ "tool": { "name": "who", "inputSchema": { "type": "object" } }, "answer": "request_id" }]),
    );
    let mut relay = Session::initialized(&proxied(&[], "proxy/server.mjs", &tools), &json!({}));
    let through_relay = relay.call(&json!("client-7"), "who", &json!({}));
    assert_eq!(through_relay["result"]["structuredContent"]["id"], "client-7", "{through_relay:#}");
    // Control: a relay that numbers the client's requests itself (initialize 1, the call
    // 2) is seen doing so.
    let mut renumbering = Session::initialized(&reencoding_relay(&upstream("proxy/server.mjs", &tools)), &json!({}));
    let through_renumbering = renumbering.call(&json!("client-7"), "who", &json!({}));
    assert_eq!(through_renumbering["result"]["structuredContent"]["id"], 2, "{through_renumbering:#}");
}

// ------------------------------------------------------------------ the same answers

/// Every kind of verdict: refused, passed unchanged, passed with a contract identity,
/// lifted text, warn mode, a declared error, refused arguments, a quarantined tool, an
/// unknown tool.
#[test]
fn the_lane_gives_every_verdict() {
    let dir = scratch("differential");
    let input = json!({ "type": "object", "properties": { "q": { "type": "string" } } });
    let pinned_tool = json!({ "name": "pinned", "description": "Counts.", "inputSchema": input });
    let listed = json!([
        { "tool": { "name": "report", "inputSchema": input, "outputSchema": report_schema() }, "answer": answer(&json!({ "count": 3 })) },
        { "tool": { "name": "report_ok", "inputSchema": input, "outputSchema": report_schema() },
          "answer": answer(&json!({ "count": 3, "status": "ok" })) },
        { "tool": { "name": "loose", "inputSchema": input, "outputSchema": report_schema() }, "answer": answer(&json!({ "count": 1 })) },
        { "tool": { "name": "failing", "inputSchema": input, "outputSchema": report_schema() },
          "answer": { "isError": true, "content": [{ "type": "text", "text": "backend down" }] } },
        { "tool": { "name": "weather", "inputSchema": input }, "answer": answer(&json!({ "city": "Oslo" })) },
        { "tool": { "name": "weather_ok", "inputSchema": input }, "answer": answer(&json!({ "city": "Oslo", "celsius": 4.5 })) },
        { "tool": { "name": "weather_text", "inputSchema": input },
          "answer": { "content": [{ "type": "text", "text": "{\"city\":\"Oslo\",\"celsius\":4.5}" }] } },
        { "tool": { "name": "untyped", "inputSchema": input }, "answer": { "content": [{ "type": "text", "text": "hi" }] } },
        { "tool": pinned_tool, "answer": answer(&json!({ "count": 1 })) },
    ]);
    let tools = tools_file(&dir, &listed);
    // The lock pins every tool as listed but `pinned`, whose pin has another description.
    let mut pins: Vec<Value> = listed.as_array().unwrap().iter().map(|e| e["tool"].clone()).collect();
    pins.last_mut().unwrap()["description"] = json!("Counts the notes.");
    let mut lock = Lock::new();
    lock.upsert(LockedServer::pin(ServerSource::Command(upstream("proxy/server.mjs", &tools)), None, &pins));
    let lock_file = dir.join("tools.lock.json");
    std::fs::write(&lock_file, lock.to_canonical_string()).unwrap();
    let contracts = bins::root().join("tests/fixtures/dynamic");
    let options = [
        "--contracts",
        contracts.to_str().unwrap(),
        "--bind",
        "weather_ok=weather",
        "--bind",
        "weather_text=weather",
        "--lift-text",
        "weather_text",
        "--mode",
        "loose=warn",
        "--lock",
        lock_file.to_str().unwrap(),
    ];
    let calls = [
        ("report", json!({ "q": "x" })),
        ("report_ok", json!({ "q": "x" })),
        ("loose", json!({ "q": "x" })),
        ("failing", json!({ "q": "x" })),
        ("weather", json!({})),
        ("weather_ok", json!({})),
        ("weather_text", json!({})),
        ("untyped", json!({})),
        ("pinned", json!({})),
        ("report_ok", json!({ "q": 7 })),
        ("nope", json!({})),
    ];
    let mut s = Session::initialized(&proxied(&options, "proxy/server.mjs", &tools), &json!({}));
    let lane: Vec<Value> =
        calls.iter().enumerate().map(|(n, (tool, arguments))| s.call(&json!(n), tool, arguments)).collect();
    let result = |n: usize| &lane[n]["result"];
    assert_eq!(error_of(result(0))["code"], "output_contract_violation");
    assert_eq!(result(1), &answer(&json!({ "count": 3, "status": "ok" })));
    assert_eq!(result(2), &answer(&json!({ "count": 1 })), "warn mode passes it unchanged");
    assert_eq!(result(3), &json!({ "isError": true, "content": [{ "type": "text", "text": "backend down" }] }));
    assert_eq!(error_of(result(4))["code"], "output_contract_violation");
    assert!(result(4)["_meta"][META_KEY]["id"].as_str().is_some_and(|id| id.starts_with("weather@")));
    assert_eq!(result(5)["structuredContent"], json!({ "city": "Oslo", "celsius": 4.5 }));
    assert!(result(5)["_meta"][META_KEY]["id"].as_str().is_some_and(|id| id.starts_with("weather@")));
    assert_eq!(result(6)["structuredContent"], json!({ "city": "Oslo", "celsius": 4.5 }), "lifted");
    assert_eq!(result(7), &json!({ "content": [{ "type": "text", "text": "hi" }] }));
    assert_eq!(error_of(result(8))["code"], "tool_quarantined");
    assert_eq!(error_of(result(9))["code"], "invalid_arguments");
    assert!(lane[10]["error"]["message"].as_str().is_some_and(|m| m.contains("nope")), "{:#}", lane[10]);
}

// ------------------------------------------------------------------ ids

#[test]
fn client_ids_in_the_lanes_namespace_are_answered_under_their_own_ids() {
    let dir = scratch("ids");
    let tools = tools_file(
        &dir,
        &json!([{ "tool": { "name": "echo", "inputSchema": { "type": "object" } }, "answer": "echo_after" }]),
    );
    let mut s = Session::initialized(&proxied(&[], "proxy/server.mjs", &tools), &json!({}));
    // The lane's own spelling, the same numbers as numbers and as plain strings, all in
    // flight at once, the first sent answered last.
    let ids = [
        json!("contract-proxy/1"),
        json!("contract-proxy/2"),
        json!(1),
        json!(2),
        json!("1"),
        json!("contract-proxy/x"),
    ];
    for (n, id) in ids.iter().enumerate() {
        let ms = 50 * (ids.len() - n);
        s.send_call(id, "echo", &json!({ "tag": n, "ms": ms }));
    }
    for (n, id) in ids.iter().enumerate() {
        let response = s.response(id);
        assert_eq!(response["result"]["structuredContent"]["tag"], n, "the answer to {id} is its own: {response:#}");
    }
    // No answer came twice or under another id.
    assert!(s.seen.iter().all(|m| m.get("method").is_some()), "{:#?}", s.seen);
}

#[test]
fn many_calls_in_flight_answered_out_of_order_each_reach_their_own_id() {
    let dir = scratch("many");
    let tools = tools_file(
        &dir,
        &json!([{ "tool": { "name": "echo", "inputSchema": { "type": "object" } }, "answer": "echo_after" }]),
    );
    let mut s = Session::initialized(&proxied(&[], "proxy/server.mjs", &tools), &json!({}));
    let count = 64;
    for n in 0..count {
        s.send_call(&json!(n), "echo", &json!({ "tag": n, "ms": 4 * (count - n) }));
    }
    let deadline = Instant::now() + DEADLINE;
    let mut answered = Vec::new();
    let mut results = HashMap::new();
    while answered.len() < count {
        let message = s.next_message(deadline);
        let Some(id) = message.get("id").and_then(Value::as_u64) else { continue };
        answered.push(id);
        assert!(results.insert(id, message["result"]["structuredContent"]["tag"].clone()).is_none(), "{id} twice");
    }
    for n in 0..count {
        assert_eq!(results[&(n as u64)], json!(n), "call {n} got another call's answer");
    }
    // The upstream answered the last sent first: the answers did not come in sending order.
    assert_ne!(answered, (0..count as u64).collect::<Vec<_>>(), "answered in order: {answered:?}");
}

// ------------------------------------------------------------------ cancellation and progress

#[test]
fn a_cancelled_lane_call_is_cancelled_upstream_and_never_answered() {
    let dir = scratch("cancel");
    let input = json!({ "type": "object" });
    let tools = tools_file(
        &dir,
        &json!([
            { "tool": { "name": "wait", "inputSchema": input }, "answer": "cancellable" },
            { "tool": { "name": "fast", "inputSchema": input }, "answer": answer(&json!({ "n": 1 })) }
        ]),
    );
    let mut s = Session::initialized(&proxied(&[], "proxy/server.mjs", &tools), &json!({}));
    let id = json!("contract-proxy/1");
    s.send_call(&id, "wait", &json!({}));
    // Control: the call is in flight and another is answered meanwhile.
    assert_eq!(s.call(&json!(2), "fast", &json!({}))["result"]["structuredContent"], json!({ "n": 1 }));
    s.send(&json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": id, "reason": "done" } }));
    let note = s.notification("notifications/message");
    assert_eq!(note["params"]["data"], "cancelled wait", "the server saw the cancellation: {note:#}");
    // The server answers the cancelled call when cancelled; the client does not hear of it.
    assert_eq!(s.call(&json!(3), "fast", &json!({}))["result"]["structuredContent"], json!({ "n": 1 }));
    assert!(s.seen.iter().all(|m| m.get("id") != Some(&id)), "the cancelled call was answered: {:#?}", s.seen);
}

#[test]
fn progress_of_a_lane_call_reaches_the_client_under_its_own_token_before_the_answer() {
    let dir = scratch("progress");
    let tools = tools_file(
        &dir,
        &json!([{ "tool": { "name": "steps", "inputSchema": { "type": "object" } }, "answer": "progress" }]),
    );
    let mut s = Session::initialized(&proxied(&[], "proxy/server.mjs", &tools), &json!({}));
    // A string token and a numeric one, each the client's own.
    for (id, token) in [(json!(1), json!("steps-token")), (json!(2), json!(77))] {
        s.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": "steps", "arguments": {}, "_meta": { "progressToken": token } } }));
        let response = s.response(&id);
        assert_eq!(response["result"]["structuredContent"], json!({ "hadProgressToken": true }), "{response:#}");
        let reports: Vec<Value> = s.seen.drain(..).filter(|m| m["method"] == "notifications/progress").collect();
        assert_eq!(reports.len(), 2, "both reports, before the answer: {reports:#?}");
        for (n, report) in reports.iter().enumerate() {
            assert_eq!(report["params"]["progressToken"], token, "{report:#}");
            #[allow(clippy::cast_precision_loss)]
            let step = (n + 1) as f64;
            assert_eq!(report["params"]["progress"].as_f64(), Some(step), "{report:#}");
        }
    }
}

// ------------------------------------------------------------------ tasks

#[test]
fn a_task_a_lane_call_is_answered_with_is_judged_when_it_completes() {
    let dir = scratch("tasks");
    let input = json!({ "type": "object" });
    let tools = tools_file(
        &dir,
        &json!([
            { "tool": { "name": "report", "inputSchema": input, "outputSchema": report_schema() }, "answer": answer(&json!({ "count": 3 })) },
            { "tool": { "name": "report_ok", "inputSchema": input, "outputSchema": report_schema() },
              "answer": answer(&json!({ "count": 3, "status": "ok" })) }
        ]),
    );
    // The client declares tasks on the call itself, not at initialize.
    let mut s = Session::initialized(&proxied(&[], "proxy/task_server.mjs", &tools), &json!({}));
    let meta = json!({ "io.modelcontextprotocol/clientCapabilities": { "extensions": { "io.modelcontextprotocol/tasks": {} } } });
    let poll = |s: &mut Session, tool: &str, n: u64| {
        s.send(&json!({ "jsonrpc": "2.0", "id": n, "method": "tools/call",
            "params": { "name": tool, "arguments": {}, "_meta": meta } }));
        let handle = s.response(&json!(n))["result"].clone();
        assert_eq!(handle["resultType"], "task", "{handle:#}");
        // tasks/get declares tasks too: the client declared none at initialize.
        let get = json!({ "taskId": handle["taskId"], "_meta": meta });
        for round in 1..=2 {
            s.send(&json!({ "jsonrpc": "2.0", "id": n * 10 + round, "method": "tasks/get", "params": get }));
        }
        s.response(&json!(n * 10 + 1));
        s.response(&json!(n * 10 + 2))["result"].clone()
    };
    let done = poll(&mut s, "report", 1);
    assert_eq!(done["status"], "completed", "{done:#}");
    assert_eq!(error_of(&done["result"])["code"], "output_contract_violation", "{done:#}");
    // Control: the clean sibling's task result passes unchanged.
    let ok = poll(&mut s, "report_ok", 2);
    assert_eq!(ok["result"], answer(&json!({ "count": 3, "status": "ok" })), "{ok:#}");
}

// ------------------------------------------------------------------ the upstream failing

#[test]
fn a_lane_call_the_upstream_never_answers_gets_the_timeout_error_and_is_cancelled_upstream() {
    let dir = scratch("timeout");
    let input = json!({ "type": "object" });
    let tools = tools_file(
        &dir,
        &json!([
            { "tool": { "name": "wait", "inputSchema": input }, "answer": "cancellable" },
            { "tool": { "name": "fast", "inputSchema": input }, "answer": answer(&json!({ "n": 1 })) }
        ]),
    );
    // The upstream's start must fit in the timeout too: not too short on a busy machine.
    let mut s = Session::initialized(&proxied(&["--timeout", "3"], "proxy/server.mjs", &tools), &json!({}));
    let timed_out = s.call(&json!(1), "wait", &json!({}));
    let message = timed_out["error"]["message"].as_str().unwrap_or_else(|| panic!("an error: {timed_out:#}"));
    assert!(message.contains("did not answer tools/call within 3s"), "{message}");
    // The proxy cancelled it upstream, which the fixture logs.
    assert_eq!(s.notification("notifications/message")["params"]["data"], "cancelled wait");
    // Control: the proxy keeps serving.
    assert_eq!(s.call(&json!(2), "fast", &json!({}))["result"]["structuredContent"], json!({ "n": 1 }));
}

#[test]
fn lane_calls_in_flight_when_the_upstream_exits_get_its_error() {
    let dir = scratch("exit");
    let input = json!({ "type": "object" });
    let tools = tools_file(
        &dir,
        &json!([
            { "tool": { "name": "slow", "inputSchema": input }, "answer": "hang" },
            { "tool": { "name": "crash", "inputSchema": input }, "answer": "exit" },
            { "tool": { "name": "fast", "inputSchema": input }, "answer": answer(&json!({ "n": 1 })) }
        ]),
    );
    let mut s = Session::initialized(&proxied(&[], "fixture_server.mjs", &tools), &json!({}));
    // Control: served before the crash.
    assert_eq!(s.call(&json!(1), "fast", &json!({}))["result"]["structuredContent"], json!({ "n": 1 }));
    s.send_call(&json!(2), "slow", &json!({}));
    s.send_call(&json!(3), "crash", &json!({}));
    for id in [2, 3] {
        let response = s.response(&json!(id));
        let message = response["error"]["message"].as_str().unwrap_or_else(|| panic!("an error: {response:#}"));
        assert!(
            message.contains("the upstream server closed the connection; tools/call was not answered"),
            "{message}"
        );
    }
    let (status, stderr) = s.exited();
    assert_eq!(status, Some(1), "{stderr}");
    assert!(stderr.contains("the upstream server closed the connection"), "{stderr}");
}

// ------------------------------------------------------------------ large and deep

#[test]
fn a_large_result_and_a_deep_one_pass_through_the_lane_whole() {
    let dir = scratch("large");
    let items: Vec<Value> =
        (0..20_000).map(|n| json!({ "id": format!("t-{n}"), "score": n, "ok": n % 2 == 0 })).collect();
    let large = json!({ "items": items });
    let deep = (0..100).fold(json!({}), |inner, _| json!({ "a": inner }));
    let input = json!({ "type": "object" });
    let tools = tools_file(
        &dir,
        &json!([
            { "tool": { "name": "large", "inputSchema": input,
                        "outputSchema": { "type": "object", "required": ["items"], "properties": { "items": { "type": "array" } } } },
              "answer": answer(&large) },
            { "tool": { "name": "deep", "inputSchema": input }, "answer": answer(&deep) }
        ]),
    );
    let mut direct = Session::initialized(&upstream("proxy/server.mjs", &tools), &json!({}));
    let mut s = Session::initialized(&proxied(&[], "proxy/server.mjs", &tools), &json!({}));
    for tool in ["large", "deep"] {
        let want = direct.call(&json!(tool), tool, &json!({}));
        let got = s.call(&json!(tool), tool, &json!({}));
        assert!(want["result"].get("structuredContent").is_some(), "{tool} directly: {want}");
        assert_eq!(got, want, "{tool} through the lane differs from the direct answer");
    }
    assert_eq!(s.call(&json!(9), "large", &json!({}))["result"]["structuredContent"], large);
}
