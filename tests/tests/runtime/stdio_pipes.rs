//! `contract_runtime::rmcp::serve_stdio` (what qe-server serves stdio with) both ways:
//! on pipes it reads and writes without tokio's blocking pool, and on a stream that is
//! not a pipe it falls back to rmcp's `stdio()` and serves all the same.
//!
//! The oracle for "without the blocking pool" is the child's own thread list
//! (`/proc/<pid>/task/*/comm`): qe-server runs stdio on a current-thread runtime, so
//! any thread named `tokio-runtime-w…` is a blocking-pool thread, which `stdio()` keeps
//! busy with a pending read of stdin. The fallback case is the control: the same wait
//! with stdout not a pipe shows that thread.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::bins;

const DEADLINE: Duration = Duration::from_secs(20);
const LEGACY: &str = "2025-11-25";

fn initialize() -> String {
    json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": { "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": { "name": "stdio", "version": "1" } }
    })
    .to_string()
}

fn initialized() -> String {
    json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string()
}

fn call(id: u64) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": "fleet_status", "arguments": {} } })
        .to_string()
}

/// Lines read from a child's stdout on a thread, so every wait has a deadline.
fn lines_of(stdout: ChildStdout) -> mpsc::Receiver<Value> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let Ok(value) = serde_json::from_str(&line) else { continue };
            if tx.send(value).is_err() {
                break;
            }
        }
    });
    rx
}

fn response(rx: &mpsc::Receiver<Value>, id: u64) -> Value {
    let end = Instant::now() + DEADLINE;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        let message = rx.recv_timeout(left).unwrap_or_else(|_| panic!("no response {id} within {DEADLINE:?}"));
        if message["id"] == id {
            return message;
        }
    }
}

fn assert_fleet_status(reply: &Value) {
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    assert!(reply["result"]["structuredContent"]["agents"].is_array(), "{reply}");
}

/// The child's threads other than its main thread, by name: its blocking-pool threads.
fn blocking_pool_threads(child: &Child) -> Vec<String> {
    let main = child.id().to_string();
    let tasks = std::fs::read_dir(format!("/proc/{main}/task")).expect("/proc/<pid>/task");
    tasks
        .filter_map(Result::ok)
        .filter(|task| task.file_name().to_str() != Some(main.as_str()))
        .map(|task| std::fs::read_to_string(task.path().join("comm")).unwrap_or_default().trim().to_owned())
        .collect()
}

/// Waits up to a second for a blocking-pool thread to appear (the read of stdin is
/// handed to it after the last answer is written), then returns what is there.
fn settled_blocking_threads(child: &Child) -> Vec<String> {
    let end = Instant::now() + Duration::from_secs(1);
    loop {
        let threads = blocking_pool_threads(child);
        if !threads.is_empty() || Instant::now() >= end {
            return threads;
        }
        thread::sleep(Duration::from_millis(20));
    }
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn on_pipes_the_server_answers_without_a_blocking_pool_thread() {
    let mut child = Command::new(bins::qe_server())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn qe-server");
    let mut stdin = child.stdin.take().expect("piped stdin");
    let rx = lines_of(child.stdout.take().expect("piped stdout"));
    let child = Killed(child);
    writeln!(stdin, "{}", initialize()).expect("write initialize");
    assert_eq!(response(&rx, 0)["result"]["protocolVersion"], LEGACY);
    writeln!(stdin, "{}\n{}", initialized(), call(1)).expect("write the call");
    assert_fleet_status(&response(&rx, 1));
    // The server now waits for the next line of stdin, on the reactor.
    assert_eq!(settled_blocking_threads(&child.0), Vec::<String>::new());
    writeln!(stdin, "{}", call(2)).expect("write a second call");
    assert_fleet_status(&response(&rx, 2));
    // Closing stdin ends the session, and the server exits cleanly.
    drop(stdin);
    let mut child = child;
    let end = Instant::now() + DEADLINE;
    let status = loop {
        if let Some(status) = child.0.try_wait().expect("try_wait") {
            break status;
        }
        assert!(Instant::now() < end, "qe-server did not exit after stdin closed");
        thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
}

#[test]
fn with_stdout_not_a_pipe_it_falls_back_to_the_blocking_pool_and_still_serves() {
    let out = std::env::temp_dir().join(format!("stdio-fallback-{}.jsonl", std::process::id()));
    let file = std::fs::File::create(&out).expect("create the output file");
    let mut child = Command::new(bins::qe_server())
        .stdin(Stdio::piped())
        .stdout(file)
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn qe-server");
    let mut stdin = child.stdin.take().expect("piped stdin");
    let child = Killed(child);
    writeln!(stdin, "{}\n{}\n{}", initialize(), initialized(), call(1)).expect("write the session");
    let end = Instant::now() + DEADLINE;
    let reply = loop {
        let text = std::fs::read_to_string(&out).expect("read the output file");
        let found = text.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).find(|m| m["id"] == 1);
        if let Some(reply) = found {
            break reply;
        }
        assert!(Instant::now() < end, "no answer to the call in {}:\n{text}", out.display());
        thread::sleep(Duration::from_millis(20));
    };
    assert_fleet_status(&reply);
    // The control of the pipe test: `stdio()` holds a blocking thread on the read.
    assert!(!settled_blocking_threads(&child.0).is_empty(), "stdio() reads stdin on the blocking pool");
    drop(stdin);
    drop(child);
    let _ = std::fs::remove_file(&out);
}

#[test]
fn with_stdin_redirected_from_a_file_it_falls_back_and_answers_the_handshake() {
    let input = std::env::temp_dir().join(format!("stdio-input-{}.jsonl", std::process::id()));
    std::fs::write(&input, format!("{}\n{}\n", initialize(), initialized())).expect("write the input file");
    let mut child = Command::new(bins::qe_server())
        .stdin(std::fs::File::open(&input).expect("open the input file"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn qe-server");
    let rx = lines_of(child.stdout.take().expect("piped stdout"));
    let mut child = Killed(child);
    let init = response(&rx, 0);
    assert_eq!(init["result"]["protocolVersion"], LEGACY, "{init}");
    assert!(init["result"]["capabilities"]["tools"].is_object(), "{init}");
    // The end of the file is the client going away: the server exits by itself, cleanly.
    let end = Instant::now() + DEADLINE;
    let status = loop {
        if let Some(status) = child.0.try_wait().expect("try_wait") {
            break status;
        }
        assert!(Instant::now() < end, "qe-server did not exit at the end of its input file");
        thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    let _ = std::fs::remove_file(&input);
}
