//! contract-proxy as a transparent relay (stdio on both sides), judged on the wire.
//!
//! Every run is tapped on both sides with `tee`: what the client wrote, what the proxy
//! gave the server, what the server wrote and what the proxy gave the client are four
//! files of lines. Through the proxy, the server must read exactly the client's lines and
//! the client exactly the server's, byte for byte and in order, except what the proxy
//! documents it changes (a refused call is answered by the proxy and never reaches the
//! server). The sessions run against the official reference servers (filesystem, memory,
//! everything), a tiny raw fixture whose bytes are known (`proxy/raw_server.mjs`), with a
//! raw JSON-RPC driver writing fixed lines, the official Python SDK client and the
//! TypeScript SDK v2 client. Controls: the same sessions directly (the tap itself changes
//! nothing), and a relay that decodes and re-encodes every message
//! (`support::reencoding_relay`) in the proxy's place, which the same oracle catches.

use crate::support::bins;
use crate::support::reencoding_relay::reencoding_relay;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub(crate) const DEADLINE: Duration = Duration::from_secs(60);

/// A fresh directory for one test's files.
pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("contract-proxy-transparent-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub(crate) fn interop(path: &str) -> PathBuf {
    bins::root().join("tests/interop").join(path)
}

pub(crate) fn reference(package: &str) -> String {
    bins::server_everything(); // installs the pinned packages
    let entry = interop(&format!("node_modules/@modelcontextprotocol/{package}/dist/index.js"));
    assert!(entry.is_file(), "install.sh did not install {package} at {}", entry.display());
    entry.display().to_string()
}

// ------------------------------------------------------------------ the taps

/// The four files of one tapped run.
pub(crate) struct Tap {
    pub(crate) client_out: PathBuf,
    pub(crate) client_in: PathBuf,
    pub(crate) server_in: PathBuf,
    pub(crate) server_out: PathBuf,
}

/// `argv` with its stdin copied to `input` and its stdout to `output`.
pub(crate) fn teed(input: &Path, output: &Path, argv: &[String]) -> Vec<String> {
    let mut wrapped = vec![
        "sh".to_owned(),
        "-c".to_owned(),
        r#"in=$1; out=$2; shift 2; tee -a "$in" | "$@" | tee -a "$out""#.to_owned(),
        "sh".to_owned(),
        input.display().to_string(),
        output.display().to_string(),
    ];
    wrapped.extend(argv.iter().cloned());
    wrapped
}

impl Tap {
    pub(crate) fn new(dir: &Path, name: &str) -> Self {
        let file = |side: &str| dir.join(format!("{name}.{side}"));
        Self {
            client_out: file("client-out"),
            client_in: file("client-in"),
            server_in: file("server-in"),
            server_out: file("server-out"),
        }
    }

    /// The command line a client launches: the server directly (`options: None`) or the
    /// proxy with `options` in front of it, tapped on both sides.
    pub(crate) fn command(&self, options: Option<&[&str]>, server: &[String]) -> Vec<String> {
        let upstream = teed(&self.server_in, &self.server_out, server);
        let middle = match options {
            None => upstream,
            Some(options) => {
                let mut argv = vec![bins::contract_proxy().display().to_string()];
                argv.extend(options.iter().map(|s| (*s).to_owned()));
                argv.push("--".to_owned());
                argv.extend(upstream);
                argv
            }
        };
        teed(&self.client_out, &self.client_in, &middle)
    }

    /// The command line a client launches: the re-encoding relay in front of the server,
    /// tapped on both sides as the proxy is.
    pub(crate) fn command_through_relay(&self, server: &[String]) -> Vec<String> {
        let upstream = teed(&self.server_in, &self.server_out, server);
        teed(&self.client_out, &self.client_in, &reencoding_relay(&upstream))
    }

    pub(crate) fn lines(path: &Path) -> Vec<String> {
        // tee may still be writing its last line when the client has its answer.
        thread::sleep(Duration::from_millis(300));
        std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Asserts the server read the client's lines and the client the server's, byte for
    /// byte, but for the requests of `refused_ids` (answered by the proxy itself: the
    /// request never reaches the server, the answer is the proxy's). Returns (client
    /// wrote, client read).
    pub(crate) fn assert_transparent(&self, refused_ids: &[Value]) -> (Vec<String>, Vec<String>) {
        let (client_out, client_in) = (Self::lines(&self.client_out), Self::lines(&self.client_in));
        let (server_in, server_out) = (Self::lines(&self.server_in), Self::lines(&self.server_out));
        let refused = |line: &String| {
            serde_json::from_str::<Value>(line).is_ok_and(|m| m.get("id").is_some_and(|id| refused_ids.contains(id)))
        };
        let sent: Vec<&String> = client_out.iter().filter(|l| !refused(l)).collect();
        let read: Vec<&String> = client_in.iter().filter(|l| !refused(l)).collect();
        assert_lines_equal(&sent, &server_in.iter().collect::<Vec<_>>(), "client wrote", "server read");
        assert_lines_equal(&server_out.iter().collect::<Vec<_>>(), &read, "server wrote", "client read");
        (client_out, client_in)
    }
}

pub(crate) fn assert_lines_equal(left: &[&String], right: &[&String], l: &str, r: &str) {
    for (i, (a, b)) in left.iter().zip(right).enumerate() {
        assert_eq!(a, b, "line {i}: what the {l} differs from what the {r}");
    }
    assert_eq!(
        left.len(),
        right.len(),
        "the {l} {} lines, the {r} {}: {:#?}",
        left.len(),
        right.len(),
        if left.len() > right.len() { &left[right.len()..] } else { &right[left.len()..] }
    );
}

fn parsed(lines: &[String]) -> Vec<Value> {
    lines.iter().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

/// The result of the response to `id` among `messages`.
fn result_of(messages: &[Value], id: u64) -> Value {
    messages
        .iter()
        .find(|m| m["id"] == id && m.get("method").is_none())
        .unwrap_or_else(|| panic!("no response to {id}"))["result"]
        .clone()
}

// ------------------------------------------------------------------ the raw driver

/// A client on raw pipes that writes fixed lines and answers the server's requests with
/// fixed lines.
pub(crate) struct Driver {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    /// The roots the driver answers `roots/list` with.
    root: String,
}

impl Driver {
    pub(crate) fn start(argv: &[String], envs: &[(&str, &str)], root: &str) -> Self {
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
            .envs(envs.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            // A group of its own: the taps, the proxy and the server end with it.
            .process_group(0)
            .spawn()
            .expect("spawn");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let stdin = child.stdin.take();
        Self { child, stdin, lines, root: root.to_owned() }
    }

    pub(crate) fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").expect("write");
        stdin.flush().unwrap();
    }

    /// Reads messages, answering the server's requests, until one matches `done` (answered
    /// first, when it is a request of the server's); returns it.
    pub(crate) fn until(&mut self, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        loop {
            let left = DEADLINE.checked_sub(start.elapsed()).unwrap_or_else(|| panic!("no {what}"));
            let line = self.lines.recv_timeout(left).unwrap_or_else(|_| panic!("no {what}"));
            let message: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("JSON ({e}): {line}"));
            if let (Some(method), Some(id)) = (message["method"].as_str(), message.get("id")) {
                let id = id.to_string();
                let result = match method {
                    "roots/list" => format!(r#"{{"roots":[{{"uri":"file://{}","name":"granted"}}]}}"#, self.root),
                    "sampling/createMessage" => r#"{"role":"assistant","content":{"type":"text","text":"sampled 0.7"},"model":"fixed-model","stopReason":"endTurn"}"#.to_owned(),
                    "elicitation/create" => r#"{"action":"decline"}"#.to_owned(),
                    _ => "{}".to_owned(),
                };
                self.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#));
            }
            if done(&message) {
                return message;
            }
        }
    }

    /// Sends a request line and waits for its response.
    pub(crate) fn request(&mut self, id: u64, method: &str, params: &str) -> Value {
        self.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#));
        self.until(&format!("response to {id}"), |m| m["id"] == id && m.get("method").is_none())
    }

    pub(crate) fn initialize(&mut self, capabilities: &str) -> Value {
        let init = self.request(
            1,
            "initialize",
            &format!(
                r#"{{"protocolVersion":"2025-11-25","capabilities":{capabilities},"clientInfo":{{"name":"raw-driver","version":"1.0.0"}}}}"#
            ),
        );
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        init
    }

    /// Closes stdin and waits a while for the exit (a server with timers of its own, such
    /// as the everything server's, outlives its input; the group is ended on drop).
    pub(crate) fn finish(mut self) {
        drop(self.stdin.take());
        let start = Instant::now();
        while self.child.try_wait().unwrap().is_none() && start.elapsed() < Duration::from_secs(5) {
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-TERM", "--", &group]).stderr(Stdio::null()).status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `tools/list`'s names.
fn names(list: &Value) -> Vec<String> {
    list["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

// ------------------------------------------------------------------ filesystem

/// The filesystem server started on `allowed`, the driver's roots naming `granted`.
fn filesystem_session(tap: &Tap, options: Option<&[&str]>, allowed: &Path, granted: &Path) -> Vec<Value> {
    let server = vec!["node".to_owned(), reference("server-filesystem"), allowed.display().to_string()];
    let mut d = Driver::start(&tap.command(options, &server), &[], &granted.display().to_string());
    d.initialize(r#"{"roots":{"listChanged":true}}"#);
    // The server asks for the client's roots once initialized; the driver answers.
    d.until("roots/list", |m| m["method"] == "roots/list");
    // The server checks the roots it was given before it uses them.
    thread::sleep(Duration::from_secs(1));
    let mut answers = Vec::new();
    answers.push(d.request(2, "tools/list", "{}"));
    let file = granted.join("notes.txt").display().to_string();
    answers.push(d.request(3, "tools/call", r#"{"name":"list_allowed_directories","arguments":{}}"#));
    answers.push(d.request(
        4,
        "tools/call",
        &format!(r#"{{"name":"write_file","arguments":{{"path":"{file}","content":"ratio 0.7\none 1\n"}}}}"#),
    ));
    answers.push(d.request(
        5,
        "tools/call",
        &format!(r#"{{"name":"read_text_file","arguments":{{"path":"{file}","head":1}}}}"#),
    ));
    answers.push(d.request(6, "ping", "{}"));
    d.finish();
    answers
}

#[test]
fn the_filesystem_server_gets_the_clients_roots_and_every_byte_passes_both_ways() {
    let dir = scratch("filesystem");
    let (allowed, granted) = (dir.join("allowed"), dir.join("granted"));
    for folder in [&allowed, &granted] {
        std::fs::create_dir_all(folder).unwrap();
    }
    let through = Tap::new(&dir, "through");
    let via_proxy = filesystem_session(&through, Some(&[]), &allowed, &granted);
    let (_, read) = through.assert_transparent(&[]);
    // The client's roots reached the server: it now allows the granted folder.
    let allowed_now = via_proxy[1]["result"]["content"][0]["text"].as_str().unwrap().to_owned();
    assert!(allowed_now.contains("granted"), "{allowed_now}");
    let roots_asked = parsed(&read).iter().filter(|m| m["method"] == "roots/list").count();
    assert_eq!(roots_asked, 1, "the server's roots/list reached the client");
    assert_eq!(via_proxy[3]["result"]["content"][0]["text"], "ratio 0.7", "{:#}", via_proxy[3]);

    // Control: directly, the same session reads the same lines (the tap changes nothing,
    // and the server answers the same session the same way).
    let direct = Tap::new(&dir, "direct");
    std::fs::remove_file(granted.join("notes.txt")).unwrap();
    let _ = filesystem_session(&direct, None, &allowed, &granted);
    let (_, direct_read) = direct.assert_transparent(&[]);
    assert_eq!(read, direct_read, "the client reads through the proxy what it reads directly");
}

// ------------------------------------------------------------------ memory

fn memory_session(tap: &Tap, options: Option<&[&str]>, memory: &Path) {
    let server = vec!["node".to_owned(), reference("server-memory")];
    let file = memory.display().to_string();
    let mut d = Driver::start(&tap.command(options, &server), &[("MEMORY_FILE_PATH", &file)], "/");
    d.initialize("{}");
    d.request(2, "tools/list", "{}");
    d.request(
        3,
        "tools/call",
        r#"{"name":"create_entities","arguments":{"entities":[{"name":"Ada","entityType":"person","observations":["ratio 0.7","weight 1.0"]}]}}"#,
    );
    d.request(
        4,
        "tools/call",
        r#"{"name":"add_observations","arguments":{"observations":[{"entityName":"Ada","contents":["one 1"]}]}}"#,
    );
    d.request(5, "tools/call", r#"{"name":"read_graph","arguments":{}}"#);
    d.request(6, "tools/call", r#"{"name":"search_nodes","arguments":{"query":"Ada"}}"#);
    d.request(7, "ping", "{}");
    d.finish();
}

#[test]
fn the_memory_server_session_passes_byte_for_byte() {
    let dir = scratch("memory");
    let through = Tap::new(&dir, "through");
    memory_session(&through, Some(&[]), &dir.join("through.jsonl"));
    let (_, read) = through.assert_transparent(&[]);
    let messages = parsed(&read);
    let graph = result_of(&messages, 5);
    assert!(graph.to_string().contains("ratio 0.7"), "{graph:#}");
    // Control: directly, the client reads the same lines.
    let direct = Tap::new(&dir, "direct");
    memory_session(&direct, None, &dir.join("direct.jsonl"));
    let (_, direct_read) = direct.assert_transparent(&[]);
    assert_eq!(read, direct_read, "the client reads through the proxy what it reads directly");
}

// ------------------------------------------------------------------ everything

pub(crate) fn everything() -> Vec<String> {
    vec!["node".to_owned(), reference("server-everything"), "stdio".to_owned()]
}

/// Polls `tasks/get` until the task is no longer working; returns the last poll.
fn poll_task(d: &mut Driver, first_id: u64, task: &Value) -> Value {
    let start = Instant::now();
    for id in first_id.. {
        let poll = d.request(id, "tasks/get", &json!({ "taskId": task }).to_string());
        if poll["result"]["status"] != "working" || start.elapsed() > DEADLINE {
            return poll;
        }
        thread::sleep(Duration::from_millis(200));
    }
    unreachable!()
}

#[test]
fn the_everything_server_keeps_its_tasks_execution_and_gated_tools_through_the_proxy() {
    let dir = scratch("everything");
    for (name, options) in [("direct", None), ("through", Some(&[][..]))] {
        // A client that declares no sampling, elicitation or roots.
        let tap = Tap::new(&dir, &format!("{name}-plain"));
        let mut d = Driver::start(&tap.command(options, &everything()), &[], "/");
        let init = d.initialize("{}");
        assert!(init["result"]["capabilities"]["tasks"].is_object(), "{name}: the tasks capability: {init:#}");
        let list = d.request(2, "tools/list", "{}");
        let listed = names(&list["result"]);
        assert!(!listed.contains(&"trigger-sampling-request".to_owned()), "{name}: {listed:?}");
        assert!(!listed.contains(&"get-roots-list".to_owned()), "{name}: {listed:?}");
        let research =
            list["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "simulate-research-query");
        assert_eq!(research.unwrap()["execution"]["taskSupport"], "required", "{name}");
        let sum = d.request(3, "tools/call", r#"{"name":"get-sum","arguments":{"a":0.7,"b":1}}"#);
        assert!(sum["result"]["content"][0]["text"].as_str().unwrap().contains("1.7"), "{name}: {sum:#}");
        // The task-required tool, called as a task, runs to its result.
        let created = d.request(
            4,
            "tools/call",
            r#"{"name":"simulate-research-query","arguments":{"topic":"wire bytes"},"task":{"ttl":60000}}"#,
        );
        let task = created["result"]["task"]["taskId"].clone();
        assert!(task.is_string(), "{name}: a task: {created:#}");
        let done = poll_task(&mut d, 10, &task);
        assert_eq!(done["result"]["status"], "completed", "{name}: {done:#}");
        let result = d.request(100, "tasks/result", &json!({ "taskId": task }).to_string());
        assert!(result["result"]["content"].is_array(), "{name}: {result:#}");
        let pong = d.request(101, "ping", "{}");
        assert_eq!(pong["result"], json!({}), "{name}");
        d.finish();
        let (_, read) = tap.assert_transparent(&[]);
        // The server's tools/list_changed right after initialize reaches the client.
        let changed = parsed(&read).iter().filter(|m| m["method"] == "notifications/tools/list_changed").count();
        assert!(changed >= 1, "{name}: the list_changed after initialize arrives");

        // A client that declares them sees the tools gated on them, and the server's
        // requests reach it.
        let tap = Tap::new(&dir, &format!("{name}-capable"));
        let mut d = Driver::start(&tap.command(options, &everything()), &[], "/srv/granted");
        d.initialize(r#"{"sampling":{},"elicitation":{},"roots":{"listChanged":true}}"#);
        let listed = names(&d.request(2, "tools/list", "{}")["result"]);
        for gated in ["trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"] {
            assert!(listed.contains(&gated.to_owned()), "{name}: {gated} in {listed:?}");
        }
        let sampled = d.request(
            3,
            "tools/call",
            r#"{"name":"trigger-sampling-request","arguments":{"prompt":"hi","maxTokens":10}}"#,
        );
        assert!(sampled.to_string().contains("sampled 0.7"), "{name}: {sampled:#}");
        let roots = d.request(4, "tools/call", r#"{"name":"get-roots-list","arguments":{}}"#);
        assert!(roots.to_string().contains("/srv/granted"), "{name}: {roots:#}");
        d.finish();
        tap.assert_transparent(&[]);
    }
}

#[test]
fn a_refused_call_is_the_only_difference_and_never_reaches_the_server() {
    let dir = scratch("refused");
    let tap = Tap::new(&dir, "through");
    let mut d = Driver::start(&tap.command(Some(&[]), &everything()), &[], "/");
    d.initialize("{}");
    d.request(2, "tools/list", "{}");
    let refused = d.request(3, "tools/call", r#"{"name":"get-sum","arguments":{"a":"seven","b":1}}"#);
    let text = refused["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{refused:#}"));
    assert!(text.contains("invalid_arguments"), "{refused:#}");
    // Control: the same tool with good arguments reaches the server and its answer passes.
    let sum = d.request(4, "tools/call", r#"{"name":"get-sum","arguments":{"a":0.7,"b":1}}"#);
    assert!(sum["result"]["content"][0]["text"].as_str().unwrap().contains("1.7"), "{sum:#}");
    d.finish();
    tap.assert_transparent(&[json!(3)]);
    let server_read = Tap::lines(&tap.server_in);
    assert!(!server_read.iter().any(|l| l.contains("seven")), "the refused call never reached the server");
}

// ------------------------------------------------------------------ the raw fixture

pub(crate) fn raw_server() -> Vec<String> {
    bins::server_everything();
    vec!["node".to_owned(), interop("proxy/raw_server.mjs").display().to_string()]
}

/// A raw session through `argv` (a tapped command line): the call's result and the pong.
fn raw_session(argv: &[String]) -> (Value, Value) {
    let mut d = Driver::start(argv, &[], "/");
    d.initialize("{}");
    d.request(2, "tools/list", "{}");
    let call = d.request(
        3,
        "tools/call",
        r#"{"name":"burst","arguments":{"n":3,"x":0.7},"_meta":{"progressToken":"p-1"},"task":{"ttl":1}}"#,
    );
    let pong = d.request(4, "ping", "{}");
    d.finish();
    (call, pong)
}

#[test]
fn numbers_fields_and_a_pong_pass_as_the_server_wrote_them() {
    let dir = scratch("raw");
    let tap = Tap::new(&dir, "through");
    let (_, pong) = raw_session(&tap.command(Some(&[]), &raw_server()));
    assert_eq!(pong["result"], json!({ "pong": true }));
    let (written, read) = tap.assert_transparent(&[]);
    let answer = read.iter().find(|l| l.contains(r#""id":3,"result""#)).expect("the call's answer");
    assert!(answer.contains(r#"{"ratio":0.7,"one":1,"oneFloat":1.0,"hundred":1e2,"n":3}"#), "{answer}");
    let listing = read.iter().find(|l| l.contains(r#""id":2,"result""#)).expect("the listing");
    assert!(listing.contains(r#""execution":{"taskSupport":"optional"}"#), "{listing}");
    assert!(listing.contains(r#""maximum":1.0"#) && listing.contains(r#""weight":0.7"#), "{listing}");
    let init = read.iter().find(|l| l.contains(r#""id":1,"result""#)).expect("initialize");
    assert!(init.contains(r#""serverInfo":{"version":"1.0.0","name":"raw-fixture"}"#), "{init}");
    let call = written.iter().find(|l| l.contains(r#""id":3"#)).expect("the call");
    assert!(call.contains(r#""task":{"ttl":1}"#), "the call's task field is the client's: {call}");

    // Control: a relay that decodes and re-encodes in the proxy's place, which the same
    // oracle catches.
    let relay = Tap::new(&dir, "relay");
    let (_, pong) = raw_session(&relay.command_through_relay(&raw_server()));
    assert_eq!(pong["result"], json!({}), "the relay's own ping answer drops the pong");
    let (server_out, client_in) = (Tap::lines(&relay.server_out), Tap::lines(&relay.client_in));
    let answer = client_in.iter().find(|l| l.contains(r#""id":3"#)).expect("the call's answer");
    assert!(!answer.contains("1e2"), "respelled: {answer}");
    assert!(!server_out.iter().any(|l| client_in.contains(l) && l.contains("1e2")));
    let caught = std::panic::catch_unwind(|| relay.assert_transparent(&[])).expect_err("the oracle fails the relay");
    let why = caught.downcast_ref::<String>().map_or("", String::as_str);
    assert!(why.contains("differs from what the"), "it fails on a line that differs: {why}");
}

// ------------------------------------------------------------------ order

#[test]
fn notifications_sent_before_a_response_arrive_before_it_every_time() {
    const CALLS: u64 = 300;
    const N: u64 = 9;
    let mut argv = vec![bins::contract_proxy().display().to_string(), "--".to_owned()];
    argv.extend(raw_server());
    let mut d = Driver::start(&argv, &[], "/");
    d.initialize("{}");
    d.request(2, "tools/list", "{}");
    for call in 0..CALLS {
        let id = 10 + call;
        d.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"burst","arguments":{{"n":{N}}},"_meta":{{"progressToken":"c-{call}"}}}}}}"#
        ));
        let mut before = Vec::new();
        let start = Instant::now();
        loop {
            let left = DEADLINE.checked_sub(start.elapsed()).expect("in time");
            let line = d.lines.recv_timeout(left).expect("a line");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                assert!(message["result"]["structuredContent"]["n"] == N, "{message:#}");
                break;
            }
            before.push(message);
        }
        assert_eq!(before.len() as u64, N, "call {call}: every notification before the response: {before:#?}");
        let progress: Vec<&Value> = before.iter().filter(|m| m["method"] == "notifications/progress").collect();
        assert!(progress.iter().all(|m| m["params"]["progressToken"] == format!("c-{call}")), "{progress:#?}");
        assert_eq!(progress.len(), 3, "call {call}");
    }
    d.finish();
}

// ------------------------------------------------------------------ the official clients

/// Runs a client script to its summary (one JSON line on stdout).
fn client_summary(program: &str, script: &Path, args: &[String]) -> Value {
    let out = bins::run_to_end(Command::new(program).arg(script).args(args), DEADLINE);
    assert!(out.status.success(), "{} failed:\n{}\n{}", script.display(), out.stdout, out.stderr);
    serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| panic!("JSON ({e}):\n{}\n{}", out.stdout, out.stderr))
}

#[test]
fn the_python_and_typescript_v2_clients_see_the_servers_own_bytes() {
    let dir = scratch("clients");
    let calls = dir.join("calls.json");
    std::fs::write(
        &calls,
        json!([
            { "name": "get-sum", "arguments": { "a": 0.7, "b": 1 } },
            { "name": "get-structured-content", "arguments": { "location": "New York" } },
            { "name": "echo", "arguments": { "message": "one 1.0" } }
        ])
        .to_string(),
    )
    .unwrap();
    let ts_calls = dir.join("ts_calls.json");
    std::fs::write(
        &ts_calls,
        json!([
            { "name": "get-sum", "arguments": { "a": 0.7, "b": 1 } },
            { "name": "get-roots-list", "arguments": {} },
            { "name": "trigger-sampling-request", "arguments": { "prompt": "hi", "maxTokens": 10 } }
        ])
        .to_string(),
    )
    .unwrap();
    let python = interop(".venv/bin/python").display().to_string();
    let mut summaries = Vec::new();
    for (name, options) in [("direct", None), ("through", Some(&[][..]))] {
        // The official Python SDK client (it offers no roots, sampling or elicitation).
        let tap = Tap::new(&dir, &format!("py-{name}"));
        let mut args = vec![calls.display().to_string(), "stdio".to_owned()];
        args.extend(tap.command(options, &everything()));
        let py = client_summary(&python, &interop("proxy/py_client.py"), &args);
        tap.assert_transparent(&[]);
        let listed: Vec<&str> = py["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert!(!listed.contains(&"trigger-sampling-request"), "{name}: gated on sampling: {listed:?}");
        assert!(py["calls"].as_array().unwrap().iter().all(|c| c["threw"].is_null()), "{name}: {py:#}");

        // The TypeScript SDK v2 client, offering roots and sampling.
        let tap = Tap::new(&dir, &format!("ts2-{name}"));
        let mut args = vec![ts_calls.display().to_string(), "file:///srv/granted".to_owned()];
        args.extend(tap.command(options, &everything()));
        let ts = client_summary("node", &interop("proxy/ts2_session.mjs"), &args);
        tap.assert_transparent(&[]);
        let calls = ts["calls"].as_array().unwrap();
        assert!(calls.iter().all(|c| c["threw"].is_null()), "{name}: {ts:#}");
        assert!(calls[1].to_string().contains("file:///srv/granted"), "{name}: the client's roots: {ts:#}");
        assert!(calls[2].to_string().contains("sampled 0.7"), "{name}: the client's sampling: {ts:#}");
        summaries.push((py, ts));
    }
    // What each client gets through the proxy is what it gets directly.
    assert_eq!(summaries[0].0["tools"], summaries[1].0["tools"]);
    assert_eq!(summaries[0].0["calls"], summaries[1].0["calls"]);
    assert_eq!(summaries[0].1["tools"], summaries[1].1["tools"]);
    assert_eq!(summaries[0].1["calls"], summaries[1].1["calls"]);
}

// ------------------------------------------------------------------ behind --http

/// A process group (a child spawned as its leader), ended on drop: whatever a test
/// asserts, nothing it started outlives it.
pub(crate) struct Group(pub(crate) Child);

impl Drop for Group {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-TERM", "--", &format!("-{}", self.0.id())]).status();
        let _ = self.0.wait();
    }
}

/// `contract-proxy --http` on a free loopback port in front of `upstream` (in a process
/// group of its own, with `envs`): the process and the URL it serves.
pub(crate) fn serve_http(upstream: &[String], envs: &[(&str, &str)]) -> (Child, String) {
    let mut child = Command::new(bins::contract_proxy())
        .args(["--http", "127.0.0.1:0", "--"])
        .args(upstream)
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("contract-proxy: serving MCP on ") {
                let _ = tx.send(url.to_owned());
            }
        }
    });
    let url = rx.recv_timeout(DEADLINE).expect("the proxy says where it serves");
    (child, url)
}

/// One HTTP/1.1 exchange on a fresh connection: (status, headers in lower case, body).
pub(crate) fn http(
    addr: &str,
    method: &str,
    session: Option<&str>,
    body: &str,
) -> (u16, Vec<(String, String)>, String) {
    use std::io::Read;
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(DEADLINE)).unwrap();
    let session = session.map(|id| format!("Mcp-Session-Id: {id}\r\n")).unwrap_or_default();
    write!(
        stream,
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{session}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8(raw).unwrap();
    let (head, rest) = text.split_once("\r\n\r\n").expect("a response head");
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let chunked = headers.iter().any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        let mut body = String::new();
        let mut rest = rest;
        while let Some((size, after)) = rest.split_once("\r\n") {
            let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            if size == 0 {
                break;
            }
            body.push_str(&after[..size]);
            rest = &after[size + 2..];
        }
        body
    } else {
        rest.to_owned()
    };
    (status, headers, body)
}

/// The JSON-RPC messages of a response body: one JSON object, or an SSE stream's data lines.
pub(crate) fn messages_of(headers: &[(String, String)], body: &str) -> Vec<String> {
    let sse = headers.iter().any(|(k, v)| k == "content-type" && v.starts_with("text/event-stream"));
    if sse {
        body.lines().filter_map(|l| l.strip_prefix("data: ")).map(str::to_owned).collect()
    } else if body.is_empty() {
        Vec::new()
    } else {
        vec![body.to_owned()]
    }
}

#[test]
fn behind_http_a_session_gets_a_process_of_its_own_and_the_servers_bytes_in_order() {
    let dir = scratch("http");
    let tap = Tap::new(&dir, "http");
    let (mut child, url) = serve_http(&teed(&tap.server_in, &tap.server_out, &raw_server()), &[]);
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();
    let sent = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw-http","version":"1.0.0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"burst","arguments":{"n":5,"x":0.7},"_meta":{"progressToken":"h-1"}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"ping","params":{}}"#,
    ];
    let mut session: Option<String> = None;
    let mut received = Vec::new();
    for body in sent {
        let (status, headers, text) = http(&addr, "POST", session.as_deref(), body);
        assert!(status == 200 || status == 202, "{status}: {text}");
        if session.is_none() {
            session = headers.iter().find(|(k, _)| k == "mcp-session-id").map(|(_, v)| v.clone());
            assert!(session.is_some(), "initialize opens a session: {headers:?}");
        }
        received.extend(messages_of(&headers, &text));
    }
    // The burst's notifications came on the call's stream, before its answer.
    let answer_at = received.iter().position(|l| l.contains(r#""id":3,"result""#)).expect("the call's answer");
    assert_eq!(answer_at, 2 + 5, "{received:#?}");
    assert!(received.last().unwrap().contains(r#"{"pong":true}"#), "{received:#?}");
    // Control: a second session is refused nothing and starts a process of its own.
    let (status, headers, _) = http(&addr, "POST", None, sent[0]);
    let other = headers.iter().find(|(k, _)| k == "mcp-session-id").map(|(_, v)| v.clone());
    assert_eq!(status, 200);
    assert_ne!(other, session, "a session of its own");
    // A request without a session that does not start one is refused.
    let (status, _, _) = http(&addr, "POST", None, sent[2]);
    assert_eq!(status, 400);
    let _ = Command::new("kill").args(["-TERM", "--", &format!("-{}", child.id())]).status();
    let _ = child.wait();
    // What the first session's server read and wrote is what its client sent and read.
    let (server_in, server_out) = (Tap::lines(&tap.server_in), Tap::lines(&tap.server_out));
    let first_session: Vec<&String> = server_out.iter().take(received.len()).collect();
    assert_lines_equal(&first_session, &received.iter().collect::<Vec<_>>(), "server wrote", "client read");
    let sent: Vec<String> = sent.iter().map(|s| (*s).to_owned()).collect();
    assert_lines_equal(
        &server_in.iter().take(sent.len()).collect::<Vec<_>>(),
        &sent.iter().collect::<Vec<_>>(),
        "server read",
        "client sent",
    );
}

#[test]
fn through_an_http_hop_both_ways_the_client_still_reads_the_servers_bytes() {
    // The raw fixture behind one proxy serving HTTP; a second proxy in front of that URL
    // (`--upstream-url`) serves the client over stdio. Both are transparent: the client
    // reads the server's lines and the server the client's, through both hops.
    let dir = scratch("hop");
    let tap = Tap::new(&dir, "hop");
    let (mut front, url) = serve_http(&teed(&tap.server_in, &tap.server_out, &raw_server()), &[]);
    let client_side = [bins::contract_proxy().display().to_string(), "--upstream-url".to_owned(), url];
    let mut d = Driver::start(&teed(&tap.client_out, &tap.client_in, &client_side), &[], "/");
    d.initialize("{}");
    d.request(2, "tools/list", "{}");
    let call = d.request(
        3,
        "tools/call",
        r#"{"name":"burst","arguments":{"n":4,"x":0.7},"_meta":{"progressToken":"hop"},"task":{"ttl":1}}"#,
    );
    assert_eq!(call["result"]["structuredContent"]["hundred"].as_f64(), Some(100.0), "{call:#}");
    let pong = d.request(4, "ping", "{}");
    assert_eq!(pong["result"], json!({ "pong": true }));
    d.finish();
    let _ = Command::new("kill").args(["-TERM", "--", &format!("-{}", front.id())]).status();
    let _ = front.wait();
    let (_, read) = tap.assert_transparent(&[]);
    assert!(read.iter().any(|l| l.contains(r#""hundred":1e2"#)), "{read:#?}");
}
