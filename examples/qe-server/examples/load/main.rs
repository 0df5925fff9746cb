//! Drives a real `qe-server --broken` child with mixed `tools/call` requests over
//! streamable HTTP and over stdio, and prints throughput, p50, p99, lost and mismatched
//! responses for each; with `--soak`, a million calls per run with the servers' resident
//! sets sampled as they go, judged for growth, and plotted.
//!
//! ```sh
//! cargo run --release -p qe-server --features server --example load -- [--calls 50000] [--concurrency 8] \
//!     [--transport both|http|stdio] [--era 2025-11-25|2026-07-28|both] [--server PATH]
//! cargo run --release -p qe-server --features server --example load -- --soak [--calls 1000000] \
//!     [--rss-every 10000] [--warmup 100000] [--svg target/soak-rss.svg] [--transport both|http|stdio] \
//!     [--era both] [--server PATH] [--proxy PATH] [--upstream PATH]
//! ```
//!
//! - HTTP: `--concurrency` connections (keep-alive, `TCP_NODELAY`), each sending its share
//!   of the calls one after another, in the protocol era `--era` names: 2025-11-25 (the
//!   default), a session per connection (`initialize`, `notifications/initialized`, then
//!   `Mcp-Session-Id` on every call), or 2026-07-28, no handshake and no session, every
//!   call carrying its `_meta` and the `Mcp-Method` / `Mcp-Name` headers.
//! - stdio: one child over pipes with `--concurrency` requests in flight, matched by id.
//!
//! The calls cycle through a fixed mix: valid calls of seven tools, invalid arguments,
//! an unknown task, an unknown tool and the broken tool. Every response is matched to
//! its request by id and its outcome kind (success, the tool error code, or a JSON-RPC
//! error) compared with what that call must give, a success also for its shape (a
//! non-empty `content` and a `structuredContent`); a request with no answer within 20 s
//! is lost. The server binary is built first (`cargo build -p qe-server --features
//! server`, in this example's profile) unless `--server PATH` names one. The exit status
//! is 1 when any response is lost or mismatched.
//!
//! **`--soak`**: `--calls` (a million by default) per run, every answer counted by the id
//! it carries (none may be lost, none answered twice, each a success of the right shape),
//! and the resident set (`VmRSS`) of the processes under load read from `/proc` before
//! the first call and every `--rss-every` answers. The runs, each with `--concurrency`
//! (8) at once: with stdio, `tool-contracts proxy -- peers serve plain` (the unified CLI's
//! enforcing proxy in front of plain rmcp over stdio; both processes sampled, the proxy
//! judged), every call `search_tickets_page` `{"query":"t-","limit":1}`; with HTTP,
//! `qe-server --http` once per `--era` (both by default), every call one of the mix's
//! seven valid ones. A run passes when the judged process's largest sample after
//! `--warmup` answers is within 5 % of its sample at `--warmup` (the first calls grow every
//! process by what it allocates once), and no call is lost, doubled or failed. The table
//! is printed as Markdown, the samples after it, and an SVG plot of every process's RSS
//! against calls is written to `--svg` (default `target/soak-rss.svg`). `--proxy` and
//! `--upstream` name the `tool-contracts` binary and the `peers` example (else both are
//! built, as the server is).

use std::collections::HashMap;
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

mod http;
mod ledger;
mod options;
mod procfs;
mod report;
mod soak;
mod stdio;
mod svg;

use http::run_http;
use ledger::Ledger;
use options::{built, parse, Artifact, Options, USAGE};
use procfs::{cpu_time, rss_kib};
use report::{percentile, row, Measured};
use stdio::{run_stdio, Launch};

/// How long one answer may take before its request counts as lost.
const ANSWER_DEADLINE: Duration = Duration::from_secs(20);
/// The 2025 handshake revision the HTTP sessions and the stdio client speak.
const PROTOCOL: &str = "2025-11-25";
/// The sessionless revision: no `initialize`, every request carries its `_meta`.
const STATELESS: &str = "2026-07-28";

/// The two ways a client speaks to an HTTP server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Era {
    /// 2025-11-25: `initialize` per connection, then the session id on every request.
    Sessions,
    /// 2026-07-28: no handshake, no session; `_meta` and the `Mcp-*` headers per request.
    Stateless,
}

impl Era {
    fn label(self) -> &'static str {
        match self {
            Self::Sessions => PROTOCOL,
            Self::Stateless => STATELESS,
        }
    }
}

/// One call of a mix: the tool, its arguments and what it must give.
type Call = (&'static str, Value, Expect);

/// What a call must give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// `isError: false`.
    Success,
    /// `isError: true` with this code in the error text.
    ToolError(&'static str),
    /// A JSON-RPC error object instead of a result.
    RpcError,
    /// A result that is no error but lacks a non-empty `content` or a
    /// `structuredContent` (every tool here has an output schema); no call expects it.
    Malformed,
}

/// The mix, one entry per call in turn: 7 valid, 2 invalid arguments, an unknown task,
/// an unknown tool and the broken tool.
fn mix() -> Vec<Call> {
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
        let content = result["content"].as_array().is_some_and(|blocks| !blocks.is_empty());
        let structured = result.get("structuredContent").is_some_and(|value| !value.is_null());
        return if content && structured { Expect::Success } else { Expect::Malformed };
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

/// A `tools/call` of `call` with id `id`; in the 2026-07-28 era with the `_meta` that
/// stands in for the handshake.
fn call_message(id: u64, call: &Call, era: Era) -> String {
    let mut params = json!({ "name": call.0, "arguments": call.1 });
    if era == Era::Stateless {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": STATELESS,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": { "name": "load", "version": "1" },
        });
    }
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params }).to_string()
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

/// One run's calls: how many, how many at once, the mix they cycle through, and the
/// ledger their answers are counted in.
#[derive(Clone)]
struct Run {
    calls: u64,
    concurrency: u64,
    mix: Arc<Vec<Call>>,
    ledger: Arc<Ledger>,
}

impl Run {
    /// A run of `calls` calls through `mix`, sampling RSS every `rss_every` answers
    /// (never with 0).
    fn new(calls: u64, concurrency: u64, mix: Vec<Call>, rss_every: u64) -> Self {
        Self { calls, concurrency, mix: Arc::new(mix), ledger: Arc::new(Ledger::new(calls, rss_every)) }
    }

    /// The call with id `id`.
    fn call(&self, id: u64) -> &Call {
        &self.mix[usize::try_from(id).unwrap_or(0) % self.mix.len()]
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match parse(&args) {
        Ok(options) => options,
        Err(msg) => {
            eprintln!("load: {msg}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
    if options.soak {
        return soak::run(&options, &runtime);
    }
    let binary = match built(options.server.clone(), "qe-server", &["server"], &Artifact::Bin("qe-server")) {
        Ok(binary) => binary,
        Err(msg) => {
            eprintln!("load: {msg}");
            return ExitCode::FAILURE;
        }
    };
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
        for &era in &options.eras {
            let run = runtime.block_on(run_http(&binary, era, &Run::new(calls, concurrency, mix(), 0)));
            let transport = match era {
                Era::Sessions => "streamable HTTP".to_owned(),
                Era::Stateless => format!("streamable HTTP {STATELESS}"),
            };
            report(&transport, format!("{concurrency} connections"), run);
        }
    }
    if options.stdio {
        let launch = Launch {
            program: binary.clone(),
            args: vec!["--broken".to_owned()],
            name: "qe-server".to_owned(),
            upstream: None,
        };
        let run = runtime.block_on(run_stdio(&launch, &Run::new(calls, concurrency, mix(), 0)));
        report("stdio", format!("{concurrency} in flight"), run);
    }
    if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
