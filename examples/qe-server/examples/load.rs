//! Drives a real `qe-server --broken` child with mixed `tools/call` requests over
//! streamable HTTP and over stdio, and prints throughput, p50, p99, lost and mismatched
//! responses for each.
//!
//! ```sh
//! cargo run --release -p qe-server --features server --example load -- [--calls 50000] [--concurrency 8] [--transport both|http|stdio]
//! ```
//!
//! - HTTP: `--concurrency` connections (keep-alive, `TCP_NODELAY`), each its own 2025-era
//!   session (`initialize`, `notifications/initialized`), each sending its share of the
//!   calls one after another.
//! - stdio: one child over pipes with `--concurrency` requests in flight, matched by id.
//!
//! The calls cycle through a fixed mix: valid calls of seven tools, invalid arguments,
//! an unknown task, an unknown tool and the broken tool. Every response is matched to
//! its request by id and its outcome kind (success, the tool error code, or a JSON-RPC
//! error) compared with what that call must give; a request with no answer within 20 s
//! is lost. The server binary is built first (`cargo build -p qe-server --features
//! server`, in this example's profile) unless `--server PATH` names one. The exit status
//! is 1 when any response is lost or mismatched.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{ACCEPT, CONTENT_TYPE, HOST};
use hyper::Request;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Semaphore;

/// How long one answer may take before its request counts as lost.
const ANSWER_DEADLINE: Duration = Duration::from_secs(20);
/// The 2025 handshake revision the HTTP sessions and the stdio client speak.
const PROTOCOL: &str = "2025-11-25";

/// What a call must give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// `isError: false`.
    Success,
    /// `isError: true` with this code in the error text.
    ToolError(&'static str),
    /// A JSON-RPC error object instead of a result.
    RpcError,
}

/// The mix, one entry per call in turn: 7 valid, 2 invalid arguments, an unknown task,
/// an unknown tool and the broken tool.
fn mix() -> Vec<(&'static str, Value, Expect)> {
    vec![
        ("fleet_status", json!({}), Expect::Success),
        ("task_status", json!({ "task_id": "T-1041" }), Expect::Success),
        ("search_tickets", json!({ "query": "bug" }), Expect::Success),
        ("quality_assess", json!({ "change": "ffc0c6a" }), Expect::Success),
        ("security_scan", json!({ "target": "agentic-qe@ffc0c6a" }), Expect::Success),
        ("search_tickets_page", json!({ "query": "login", "limit": 2 }), Expect::Success),
        ("scrape_page", json!({ "url": "https://docs.example.com/guide" }), Expect::Success),
        ("search_tickets", json!({ "query": "" }), Expect::ToolError("invalid_arguments")),
        ("task_status", json!({ "task": "T-1041" }), Expect::ToolError("invalid_arguments")),
        ("task_status", json!({ "task_id": "T-9999" }), Expect::ToolError("tool_execution_error")),
        ("no_such_tool", json!({}), Expect::RpcError),
        ("broken_fleet_status", json!({}), Expect::ToolError("output_contract_violation")),
    ]
}

/// The outcome kind of one JSON-RPC response.
fn outcome(response: &Value) -> Expect {
    if response.get("error").is_some() {
        return Expect::RpcError;
    }
    let result = &response["result"];
    if result["isError"] != json!(true) {
        return Expect::Success;
    }
    let code = result["content"][0]["text"]
        .as_str()
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .and_then(|error| error["error"]["code"].as_str().map(str::to_owned))
        .unwrap_or_default();
    // The codes are a closed set; an unexpected one can only mismatch.
    let known = ["invalid_arguments", "tool_execution_error", "output_contract_violation"];
    Expect::ToolError(known.into_iter().find(|k| *k == code).unwrap_or("other"))
}

fn call_message(id: u64, entry: &(&'static str, Value, Expect)) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": entry.0, "arguments": entry.1 } })
        .to_string()
}

fn initialize_message() -> String {
    json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": { "protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": { "name": "load", "version": "1" } }
    })
    .to_string()
}

const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// What one run measured.
#[derive(Default)]
struct Tally {
    latencies: Vec<Duration>,
    lost: u64,
    mismatched: u64,
    examples: Vec<String>,
}

impl Tally {
    /// Records one answer to call `id` (mix entry `expect`).
    fn answer(&mut self, id: u64, expect: Expect, response: &Value, latency: Duration) {
        self.latencies.push(latency);
        let got = outcome(response);
        if response["id"] != json!(id) || got != expect {
            self.mismatched += 1;
            if self.examples.len() < 3 {
                let text: String = response.to_string().chars().take(300).collect();
                self.examples.push(format!("call {id}: expected {expect:?}, got {got:?}: {text}"));
            }
        }
    }

    fn lose(&mut self, id: u64, why: &str) {
        self.lost += 1;
        if self.examples.len() < 3 {
            self.examples.push(format!("call {id} lost: {why}"));
        }
    }

    fn merge(&mut self, other: Tally) {
        self.latencies.extend(other.latencies);
        self.lost += other.lost;
        self.mismatched += other.mismatched;
        self.examples.extend(other.examples.into_iter().take(3usize.saturating_sub(self.examples.len())));
    }
}

// ------------------------------------------------------------------ the server

struct Options {
    calls: u64,
    concurrency: u64,
    http: bool,
    stdio: bool,
    server: Option<PathBuf>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options { calls: 50_000, concurrency: 8, http: true, stdio: true, server: None };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("`{arg}` needs a value"));
        match arg.as_str() {
            "--calls" => options.calls = value()?.parse().map_err(|_| "`--calls`: a whole number")?,
            "--concurrency" => options.concurrency = value()?.parse().map_err(|_| "`--concurrency`: a whole number")?,
            "--transport" => match value()?.as_str() {
                "both" => (options.http, options.stdio) = (true, true),
                "http" => (options.http, options.stdio) = (true, false),
                "stdio" => (options.http, options.stdio) = (false, true),
                other => return Err(format!("`--transport {other}`: expected both, http or stdio")),
            },
            "--server" => options.server = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if options.concurrency == 0 || options.calls == 0 {
        return Err("`--calls` and `--concurrency` must be positive".to_owned());
    }
    Ok(options)
}

/// The server binary: `--server`, or built now in this example's profile.
fn server_binary(explicit: Option<PathBuf>) -> Result<PathBuf, String> {
    if let Some(path) = explicit {
        return Ok(path);
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    // target/<profile>/examples/load → target/<profile>/qe-server
    let profile_dir = exe.parent().and_then(Path::parent).ok_or("cannot locate the target directory")?;
    let release = profile_dir.file_name().is_some_and(|n| n == "release");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut build = std::process::Command::new(cargo);
    build.args(["build", "-p", "qe-server", "--features", "server", "--bin", "qe-server"]);
    if release {
        build.arg("--release");
    }
    let status = build.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("building qe-server failed".to_owned());
    }
    Ok(profile_dir.join(format!("qe-server{}", std::env::consts::EXE_SUFFIX)))
}

/// The CPU time (user + system) a process has used, from `/proc/<pid>/stat` (Linux
/// only; `USER_HZ` is 100 on every Linux the kernel ABI covers).
fn cpu_time(pid: &str) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces; the fields after its closing parenthesis do not.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// The resident set of a process in KiB, from `/proc` (Linux only).
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

// ------------------------------------------------------------------ HTTP

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

async fn connect(addr: SocketAddr) -> Result<Sender, String> {
    let stream = tokio::net::TcpStream::connect(addr).await.map_err(|e| format!("connect: {e}"))?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (sender, connection) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    tokio::spawn(connection);
    Ok(sender)
}

/// One POST; returns the session id header (if any) and the JSON-RPC messages in the body
/// (plain JSON or SSE `data:` lines).
async fn post(
    sender: &mut Sender,
    addr: SocketAddr,
    session: Option<&str>,
    body: String,
) -> Result<(Option<String>, Vec<Value>), String> {
    let mut request = Request::post("/mcp")
        .header(HOST, addr.to_string())
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream");
    if let Some(session) = session {
        request = request.header("mcp-session-id", session).header("mcp-protocol-version", PROTOCOL);
    }
    let request = request.body(Full::new(Bytes::from(body))).map_err(|e| e.to_string())?;
    sender.ready().await.map_err(|e| format!("connection: {e}"))?;
    let response = sender.send_request(request).await.map_err(|e| format!("send: {e}"))?;
    let session = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let status = response.status();
    let sse = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    let body = response.into_body().collect().await.map_err(|e| format!("body: {e}"))?.to_bytes();
    // The server chooses per answer: one JSON object, or an SSE stream whose `data:`
    // lines carry the messages (each on one line, as compact JSON is).
    let messages: Vec<Value> = if sse {
        body.split(|&b| b == b'\n')
            .filter_map(|line| line.strip_prefix(b"data:"))
            .filter_map(|data| serde_json::from_slice(data.trim_ascii()).ok())
            .collect()
    } else {
        serde_json::from_slice::<Value>(&body).map(|value| vec![value]).unwrap_or_default()
    };
    if messages.is_empty() && !status.is_success() {
        return Err(format!("HTTP {status}: {}", String::from_utf8_lossy(&body)));
    }
    Ok((session, messages))
}

/// One client: its own connection and session, its calls one after another.
async fn http_client(addr: SocketAddr, ids: Vec<u64>) -> Tally {
    let mix = mix();
    let mut tally = Tally::default();
    let opened = async {
        let mut sender = connect(addr).await?;
        let (session, _) = post(&mut sender, addr, None, initialize_message()).await?;
        let session = session.ok_or("no Mcp-Session-Id on the initialize response")?;
        post(&mut sender, addr, Some(&session), INITIALIZED.to_owned()).await?;
        Ok::<_, String>((sender, session))
    };
    let (mut sender, session) = match opened.await {
        Ok(opened) => opened,
        Err(err) => {
            for id in ids {
                tally.lose(id, &err);
            }
            return tally;
        }
    };
    for id in ids {
        let entry = &mix[usize::try_from(id).unwrap_or(0) % mix.len()];
        let start = Instant::now();
        let sent =
            tokio::time::timeout(ANSWER_DEADLINE, post(&mut sender, addr, Some(&session), call_message(id, entry)));
        match sent.await {
            Ok(Ok((_, messages))) => match messages.iter().find(|m| m.get("id").is_some()) {
                Some(response) => tally.answer(id, entry.2, response, start.elapsed()),
                None => tally.lose(id, "no JSON-RPC response in the body"),
            },
            Ok(Err(err)) => {
                tally.lose(id, &err);
                // The connection may be gone; the session is not.
                if let Ok(fresh) = connect(addr).await {
                    sender = fresh;
                }
            }
            Err(_) => tally.lose(id, "no answer within the deadline"),
        }
    }
    tally
}

async fn run_http(binary: &Path, calls: u64, concurrency: u64) -> Result<(Tally, Duration, Measured), String> {
    let mut child = tokio::process::Command::new(binary)
        .args(["--http", "127.0.0.1:0", "--broken"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("spawn {}: {e}", binary.display()))?;
    let mut stderr = BufReader::new(child.stderr.take().ok_or("no stderr")?).lines();
    let addr = loop {
        let line = tokio::time::timeout(ANSWER_DEADLINE, stderr.next_line())
            .await
            .map_err(|_| "the server did not announce its address")?
            .map_err(|e| e.to_string())?
            .ok_or("the server exited before listening")?;
        if let Some(url) = line.strip_prefix("qe-server: listening on http://") {
            break url.trim_end_matches("/mcp").parse::<SocketAddr>().map_err(|e| e.to_string())?;
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    tokio::spawn(async move {
        while let Ok(Some(line)) = stderr.next_line().await {
            eprintln!("server: {line}");
        }
    });
    let cpu_before = (child.id().and_then(|pid| cpu_time(&pid.to_string())), cpu_time("self"));
    let start = Instant::now();
    let clients: Vec<_> = (0..concurrency)
        .map(|c| {
            let ids: Vec<u64> = (1..=calls).filter(|id| id % concurrency == c).collect();
            tokio::spawn(http_client(addr, ids))
        })
        .collect();
    let mut tally = Tally::default();
    for client in clients {
        tally.merge(client.await.map_err(|e| e.to_string())?);
    }
    let wall = start.elapsed();
    let measured = Measured::of(child.id(), cpu_before);
    let _ = child.kill().await;
    Ok((tally, wall, measured))
}

// ------------------------------------------------------------------ stdio

async fn write_line(stdin: &mut tokio::process::ChildStdin, text: String) -> Result<(), String> {
    let mut line = text.into_bytes();
    line.push(b'\n');
    stdin.write_all(&line).await.map_err(|e| e.to_string())
}

async fn run_stdio(binary: &Path, calls: u64, concurrency: u64) -> Result<(Tally, Duration, Measured), String> {
    let mut child = tokio::process::Command::new(binary)
        .arg("--broken")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("spawn {}: {e}", binary.display()))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut lines = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
    write_line(&mut stdin, initialize_message()).await?;
    loop {
        let line = tokio::time::timeout(ANSWER_DEADLINE, lines.next_line())
            .await
            .map_err(|_| "no answer to initialize")?
            .map_err(|e| e.to_string())?
            .ok_or("the server exited during initialize")?;
        if serde_json::from_str::<Value>(&line).is_ok_and(|m| m["id"] == json!(0)) {
            break;
        }
    }
    write_line(&mut stdin, INITIALIZED.to_owned()).await?;

    let mix = Arc::new(mix());
    let window = Arc::new(Semaphore::new(usize::try_from(concurrency).unwrap_or(8)));
    let pending: Arc<Mutex<HashMap<u64, Instant>>> = Arc::default();
    let cpu_before = (child.id().and_then(|pid| cpu_time(&pid.to_string())), cpu_time("self"));
    let start = Instant::now();
    let writer = {
        let (mix, window, pending) = (mix.clone(), window.clone(), pending.clone());
        tokio::spawn(async move {
            for id in 1..=calls {
                let Ok(permit) = window.acquire().await else { break };
                permit.forget();
                let entry = &mix[usize::try_from(id).unwrap_or(0) % mix.len()];
                pending.lock().expect("not poisoned").insert(id, Instant::now());
                let mut line = call_message(id, entry).into_bytes();
                line.push(b'\n');
                if stdin.write_all(&line).await.is_err() {
                    break;
                }
            }
            stdin
        })
    };
    let mut tally = Tally::default();
    let mut answered = 0;
    while answered < calls {
        let Ok(Ok(Some(line))) = tokio::time::timeout(ANSWER_DEADLINE, lines.next_line()).await else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            tally.mismatched += 1;
            continue;
        };
        let Some(id) = message["id"].as_u64() else { continue };
        let sent = pending.lock().expect("not poisoned").remove(&id);
        if let Some(sent) = sent {
            let entry = &mix[usize::try_from(id).unwrap_or(0) % mix.len()];
            tally.answer(id, entry.2, &message, sent.elapsed());
            answered += 1;
            window.add_permits(1);
        } else {
            tally.mismatched += 1;
            tally.examples.push(format!("an answer to no pending call: {line}"));
        }
    }
    let wall = start.elapsed();
    window.close();
    let _stdin = writer.await.map_err(|e| e.to_string())?;
    let still_pending: Vec<u64> = pending.lock().expect("not poisoned").keys().copied().collect();
    for id in still_pending {
        tally.lose(id, "no answer on stdout");
    }
    // Calls the writer never sent (the server stopped reading) are lost too.
    let sent = u64::try_from(tally.latencies.len()).unwrap_or(u64::MAX) + tally.lost;
    tally.lost += calls.saturating_sub(sent);
    let measured = Measured::of(child.id(), cpu_before);
    let _ = child.kill().await;
    Ok((tally, wall, measured))
}

// ------------------------------------------------------------------ report

/// What the run cost the processes: CPU time of the server and of this client, and the
/// server's resident set at the end.
struct Measured {
    server_cpu: Option<Duration>,
    client_cpu: Option<Duration>,
    server_rss_kib: Option<u64>,
}

impl Measured {
    fn of(pid: Option<u32>, (server_before, client_before): (Option<Duration>, Option<Duration>)) -> Self {
        let server_after = pid.and_then(|pid| cpu_time(&pid.to_string()));
        let since = |after: Option<Duration>, before: Option<Duration>| Some(after?.saturating_sub(before?));
        Self {
            server_cpu: since(server_after, server_before),
            client_cpu: since(cpu_time("self"), client_before),
            server_rss_kib: pid.and_then(rss_kib),
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
    let rank = ((sorted.len() as f64) * p).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn row(transport: &str, concurrency: &str, mut tally: Tally, wall: Duration, measured: &Measured) -> (String, bool) {
    tally.latencies.sort_unstable();
    #[allow(clippy::cast_precision_loss)]
    let throughput = tally.latencies.len() as f64 / wall.as_secs_f64();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let calls = tally.latencies.len() + usize::try_from(tally.lost).unwrap_or(0);
    // CPU per 1,000 calls: on a shared machine this says more than the wall clock.
    let per_thousand = |cpu: Option<Duration>| {
        cpu.map_or_else(
            || "-".to_owned(),
            |cpu| {
                format!(
                    "{:.0} ms",
                    cpu.as_secs_f64() * 1e3 * 1000.0 / f64::from(u32::try_from(calls.max(1)).unwrap_or(u32::MAX))
                )
            },
        )
    };
    let (server_cpu, client_cpu) = (per_thousand(measured.server_cpu), per_thousand(measured.client_cpu));
    let rss = measured.server_rss_kib.map_or_else(
        || "-".to_owned(),
        |kib| format!("{:.1} MiB", f64::from(u32::try_from(kib).unwrap_or(u32::MAX)) / 1024.0),
    );
    let mut line = format!(
        "| {transport} | {concurrency} | {calls} | {:.2} s | {throughput:.0}/s | {:.3} ms | {:.3} ms | {} | {} | {server_cpu} | {client_cpu} | {rss} |",
        wall.as_secs_f64(),
        ms(percentile(&tally.latencies, 0.50)),
        ms(percentile(&tally.latencies, 0.99)),
        tally.lost,
        tally.mismatched,
    );
    for example in &tally.examples {
        let _ = write!(line, "\n    {example}");
    }
    (line, tally.lost == 0 && tally.mismatched == 0)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match parse(&args) {
        Ok(options) => options,
        Err(msg) => {
            eprintln!(
                "load: {msg}\nusage: load [--calls N] [--concurrency N] [--transport both|http|stdio] [--server PATH]"
            );
            return ExitCode::from(2);
        }
    };
    let binary = match server_binary(options.server.clone()) {
        Ok(binary) => binary,
        Err(msg) => {
            eprintln!("load: {msg}");
            return ExitCode::FAILURE;
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
    let (calls, concurrency) = (options.calls, options.concurrency);
    println!(
        "| transport | concurrency | calls | wall | throughput | p50 | p99 | lost | mismatched | server CPU / 1k calls \
         | client CPU / 1k calls | server RSS after |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut clean = true;
    let mut report = |transport: &str, concurrency: String, run: Result<(Tally, Duration, Measured), String>| match run
    {
        Ok((tally, wall, measured)) => {
            let (line, ok) = row(transport, &concurrency, tally, wall, &measured);
            println!("{line}");
            clean &= ok;
        }
        Err(err) => {
            println!("| {transport} | failed: {err} |");
            clean = false;
        }
    };
    if options.http {
        let run = runtime.block_on(run_http(&binary, calls, concurrency));
        report("streamable HTTP", format!("{concurrency} connections"), run);
    }
    if options.stdio {
        let run = runtime.block_on(run_stdio(&binary, calls, concurrency));
        report("stdio", format!("{concurrency} in flight"), run);
    }
    if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
