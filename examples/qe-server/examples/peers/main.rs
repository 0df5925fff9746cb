//! Peers end to end: the same tool with the same payload served by our contracted rmcp
//! server, by plain rmcp, by tower-mcp (with its `schema-validation` feature), by the
//! official TypeScript SDK's `McpServer` in both its v1 (`@modelcontextprotocol/sdk`, zod
//! output schema) and v2 (`@modelcontextprotocol/server`, zod v4 Standard Schema) packages
//! and by the official Python SDK's `MCPServer` (pydantic model), each a child process
//! driven by this one client with raw JSON-RPC, over stdio or over streamable HTTP.
//!
//! ```text
//! bash tests/interop/install.sh     # the pinned SDKs, once
//! cargo build --release --manifest-path bench/tower-mcp-peer/Cargo.toml   # the tower-mcp row
//! cargo build --release -p contract-proxy   # the row of contract-proxy in front of plain rmcp (stdio)
//! cargo run --release -p qe-server --features server --example peers
//! cargo run --release -p qe-server --features server --example peers -- --rounds 12 --round-ms 300 \
//!     --sizes 1,100,1000 --blocking-stdio
//! cargo run --release -p qe-server --features server --example peers -- --transport http --connections 1,8
//! cargo run --release -p qe-server --features server --example peers -- --transport http --instructions-only \
//!     --sizes 1,100,1000
//! cargo run --release -p qe-server --features server --example peers -- --invalid [--transport http]
//! cargo run --release -p qe-server --features server --example peers -- --servers typescript
//! cargo run --release -p qe-server --features server --example peers -- --era 2025-11-25,2026-07-28 \
//!     --root object,array --ours-stdio serve_stdio,pipes --instructions-only
//! ```
//!
//! **Configurations** (stdio): `--era 2025-11-25,2026-07-28` picks the protocol eras (a
//! process per server and era; 2026-07-28 has no handshake and every request carries its
//! `_meta`); `--root object,array` the root of the result (the page object of
//! `search_tickets_page`, or the same tickets as a top-level array from `search_tickets`,
//! which only the Rust servers have (ours, plain rmcp, tower-mcp): for a 2025-11-25 peer
//! ours sends the array wrapped as `{"result": […]}` and plain rmcp sends no
//! `structuredContent`, only the text block; the tables say which); `--ours-stdio serve_stdio,pipes` how ours
//! serves stdio (the library's `serve_stdio`, or rmcp's `serve(stdio_pipes())` written out),
//! a row each. The defaults (2025-11-25, object, `serve_stdio`) are the project's table.
//!
//! **Instructions per call** (after the timed rounds; `--no-instructions` skips them,
//! `--instructions-only` skips the rounds and needs no SDK installed): each Rust process — ours, plain rmcp,
//! tower-mcp, and the middle process of the proxy and relay rows — runs under `valgrind
//! --tool=callgrind` with N sequential calls and with 0 (the same handshake and
//! `tools/list`); the difference over N is printed per server, era, root and size, with
//! ratios against ours and plain rmcp (`callgrind.rs`). N is 200 up to 10 items, 50 up to
//! 100 and 20 above; `--instruction-calls 200,50,20` sets it per `--sizes` entry. Without
//! `valgrind` on PATH the command says so and prints no counts. The Node and Python
//! servers get no count: callgrind on a JIT is not comparable. With `--transport http`
//! ours and plain rmcp are counted as HTTP servers, in both eras (`callgrind.rs`).
//!
//! Over stdio two rows put a process in front of plain rmcp: `contract-proxy`, and a relay
//! (`peers relay -- PROGRAM…`) that only copies bytes both ways, the floor of any proxy.
//!
//! `--servers LIST` keeps only the servers whose names contain one of the comma-separated
//! parts (any case), and ours, which every ratio compares with.
//!
//! The tool is `search_tickets_page` with arguments `{"query": "t-", "limit": N}`: every
//! server builds a complete page of `N` generated tickets per call (the recipe is the
//! same in all six) and returns it as `structuredContent` and as a JSON text block,
//! validated against its output schema: our server against the checked-in contract
//! (`schemas/search_tickets_page.json`), tower-mcp against the schema it derives from the
//! same page types (`output_schema_for`), both TypeScript SDKs against the equivalent zod
//! schema, the Python SDK against the equivalent pydantic model. Plain rmcp returns
//! rmcp's own `Json<T>` and validates nothing, which is what a server author gets without
//! contracts. Before timing, one call per server and size is parsed in full and its
//! `structuredContent` and text block compared with the page this process builds, so every
//! row is known to carry the same payload.
//!
//! tower-mcp is a separate cargo project (`bench/tower-mcp-peer`, outside the workspace, so
//! its dependencies never enter the workspace build); its row runs when its release binary
//! exists and is skipped with a note otherwise.
//!
//! Rounds are interleaved: each round visits every size, and within a size every server,
//! in an order that rotates from round to round, making sequential calls for
//! `--round-ms`. A first round warms every server up (JIT, caches) and is not counted.
//! Reported per server and size: calls/s (median over rounds), p50/p99 of the latency of
//! every counted call, measured wall-clock from writing the request to reading the whole
//! response, and the server's CPU time per call (`/proc/<pid>/stat` over the counted
//! rounds). The client shares the machine with the servers, so on a busy machine all rows
//! slow down; nothing here asserts on the numbers.
//!
//! **stdio** (the default): each Rust server on its best stdio transport — ours on the
//! library's `serve_stdio` (rmcp's `stdio_pipes()` under it), plain rmcp on rmcp's
//! `stdio_pipes()`, tower-mcp on its own `StdioTransport` (reactor pipes on
//! Linux). `--blocking-stdio` adds our server and plain rmcp served with rmcp's `stdio()`
//! (blocking-pool reads and writes). The last row, **floor**, is not an MCP server: a loop
//! of blocking reads and writes that answers each call with a canned response (the same
//! page, built and serialized once per size; only the id is written per call). It is what
//! the pipes and this client cost, so it bounds from above what any stdio server can reach
//! in this harness.
//!
//! **`--transport http`**: every server listens on a loopback port (`--http 127.0.0.1:0`,
//! the bound address read from its stdout) at `/mcp`, and this client drives it with hyper
//! over keep-alive connections (`TCP_NODELAY`), once with each `--connections` count (each
//! connection making sequential calls, all of them at once). Ours is the library's HTTP
//! front (`contract_runtime::http`) before rmcp's `StreamableHttpService`; plain rmcp is
//! rmcp's `StreamableHttpService` with its default configuration in axum; tower-mcp its
//! `HttpTransport`; the TypeScript SDK v1 its `StreamableHTTPServerTransport` on `node:http`;
//! the TypeScript SDK v2, on `node:http`, its `NodeStreamableHTTPServerTransport` with
//! sessions for 2025-era traffic and `createMcpHandler` (a fresh `McpServer` per request)
//! for 2026-07-28, routed by `isLegacyRequest`; the Python SDK its streamable HTTP app on uvicorn. Every server is tried in both
//! protocol eras: **2025-11-25**, a session per connection (`initialize`,
//! `notifications/initialized`, then `Mcp-Session-Id` on every call), and **2026-07-28**,
//! no handshake and no session, every call carrying its `_meta` and the `Mcp-Method` /
//! `Mcp-Name` headers. A server that does not serve an era is listed with the reason and
//! has no row for it. Every Rust server runs on a current-thread tokio runtime, as the
//! Node and Python servers run on one thread.
//!
//! **`--invalid`**: no timing; one call per server with the query `invalid`, for which
//! every server's recipe leaves `title` out of the first ticket (a result that breaks the
//! output schema), and what each server did with it: an `isError` result, a JSON-RPC
//! error, or the broken result sent on.
//!
//! The same binary is the Rust servers: `peers serve contracted|plain|floor
//! [--blocking-stdio | --pipes | --http ADDR]`.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use contract_runtime::rmcp::{ContractedServer, Json};
use contract_runtime::{ToolError, ToolOutput};
use http_body_util::{BodyExt, Full};
use hyper::header::{ACCEPT, CONTENT_TYPE, HOST};
use qe_server::contracts::TicketPage;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

mod callgrind;
mod http;
mod options;
mod page;
mod profile;
mod servers;
mod stdio;

use http::run_http;
use options::{parse, Era, Instructions, Options, Root, Serving, Transport};
use page::page;
use servers::run_server;
use stdio::{run_stdio, validation_path};

const TOOL: &str = "search_tickets_page";
/// The same tickets as a top-level array (the array-root rows, `--root array`).
const ARRAY_TOOL: &str = "search_tickets";
/// Our server's row, the first of every table.
const OURS: &str = "ours (contracted rmcp)";
const PROXY: &str = "contract-proxy → plain rmcp";
const RELAY: &str = "relay (copies only) → plain rmcp";
const QUERY: &str = "t-";
const PROTOCOL: &str = "2025-11-25";
/// The sessionless protocol revision: no `initialize`, every request carries its `_meta`.
const STATELESS: &str = "2026-07-28";
/// The query for which every server's recipe leaves `title` out of the first ticket.
const INVALID_QUERY: &str = "invalid";

/// User plus system CPU time of process `pid` (every thread), from `/proc/<pid>/stat`
/// (Linux; `None` elsewhere). It advances in clock ticks (10 ms), so it is read over
/// whole rounds: on a shared machine it is steadier than the wall clock, since time the
/// server spends waiting for a core is not counted.
fn process_cpu(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces; the fields after it are space-separated.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

fn truncated(line: &str) -> &str {
    let end = line.char_indices().nth(300).map_or(line.len(), |(i, _)| i);
    &line[..end]
}

/// Where the pinned SDKs and the peer scripts live.
fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop")
}

/// The tower-mcp server's release binary, when it has been built.
fn tower_mcp_binary() -> Result<PathBuf, String> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/tower-mcp-peer");
    let binary = manifest.join("target/release").join(format!("tower-mcp-peer{}", std::env::consts::EXE_SUFFIX));
    if binary.exists() {
        Ok(binary)
    } else {
        Err("tower-mcp: not built, its rows are skipped (build it with `cargo build --release --manifest-path \
             bench/tower-mcp-peer/Cargo.toml`)"
            .to_owned())
    }
}

/// How each server is started: a name, a program and its arguments (HTTP mode appends
/// `--http 127.0.0.1:0`). A server that cannot run here is a note instead.
struct Spec {
    name: &'static str,
    program: PathBuf,
    args: Vec<String>,
    /// A Rust process of ours whose instructions per call are counted under callgrind
    /// (the MCP servers, the proxy and the relay; not the floor, not a JIT).
    counted: bool,
    /// It has the array-root tool, `search_tickets`.
    array: bool,
}

/// Our server's row name for each way it serves stdio; the first `--ours-stdio` is
/// [`OURS`].
fn ours_name(serving: Serving, first: bool) -> &'static str {
    match (serving, first) {
        (_, true) => OURS,
        (Serving::ServeStdio, false) => "ours, serve_stdio()",
        (Serving::Pipes, false) => "ours, serve(stdio_pipes())",
    }
}

fn specs(options: &Options, notes: &mut Vec<String>) -> Result<Vec<Spec>, String> {
    let exe = std::env::current_exe().map_err(|err| err.to_string())?;
    let interop = interop_dir();
    let python = interop.join(".venv/bin/python");
    let node_sdk = interop.join("node_modules/@modelcontextprotocol/sdk");
    // Counting instructions needs only the Rust servers.
    let sdks = python.exists() && node_sdk.exists();
    if !sdks && options.instructions != Instructions::Only {
        return Err(format!(
            "the pinned SDKs are not installed under {}: run `bash tests/interop/install.sh` first",
            interop.display()
        ));
    }
    // `--servers`: ours always, since every ratio compares with it; the others by name.
    let keep = |name: &str| {
        name.starts_with("ours")
            || options.servers.as_ref().is_none_or(|wanted| {
                let name = name.to_lowercase();
                wanted.iter().any(|w| name.contains(w.as_str()))
            })
    };
    let own = |name, args: &[&str]| Spec {
        name,
        program: exe.clone(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        counted: true,
        array: true,
    };
    let stdio = options.transport == Transport::Stdio;
    let mut specs = Vec::new();
    if stdio {
        for (i, &serving) in options.ours_stdio.iter().enumerate() {
            let args: &[&str] = match serving {
                Serving::ServeStdio => &["serve", "contracted"],
                Serving::Pipes => &["serve", "contracted", "--pipes"],
            };
            specs.push(own(ours_name(serving, i == 0), args));
        }
    } else {
        specs.push(own(OURS, &["serve", "contracted"]));
    }
    specs.push(own("plain rmcp", &["serve", "plain"]));
    if options.blocking_stdio && stdio {
        specs.push(own("ours, stdio()", &["serve", "contracted", "--blocking-stdio"]));
        specs.push(own("plain rmcp, stdio()", &["serve", "plain", "--blocking-stdio"]));
    }
    match tower_mcp_binary() {
        Ok(program) => specs.push(Spec { name: "tower-mcp", program, args: Vec::new(), counted: true, array: true }),
        Err(note) if keep("tower-mcp") => notes.push(note),
        Err(_) => {}
    }
    // contract-proxy in front of plain rmcp, over stdio: the proxy's own process is what it
    // adds (its CPU column is the added CPU; the server behind it is the plain rmcp row's).
    if options.transport == Transport::Stdio && keep(PROXY) {
        let proxy = exe
            .parent()
            .and_then(Path::parent)
            .map(|dir| dir.join(format!("contract-proxy{}", std::env::consts::EXE_SUFFIX)))
            .filter(|path| path.exists());
        match proxy {
            Some(program) => specs.push(Spec {
                name: PROXY,
                program,
                args: vec!["--".to_owned(), exe.to_string_lossy().into_owned(), "serve".to_owned(), "plain".to_owned()],
                counted: true,
                array: true,
            }),
            None => notes.push(
                "contract-proxy: not built, its row is skipped (build it with `cargo build --release -p \
                 contract-proxy`)"
                    .to_owned(),
            ),
        }
    }
    // A process that only copies bytes both ways, in front of plain rmcp: what any stdio
    // proxy pays for the extra hop before it reads a byte (the proxy row's floor).
    if options.transport == Transport::Stdio && !options.invalid {
        specs.push(own(RELAY, &["relay", "--", &exe.to_string_lossy(), "serve", "plain"]));
    }
    if !sdks {
        specs.retain(|spec| keep(spec.name));
        return Ok(specs);
    }
    let script = |file: &str| interop.join("peers").join(file).to_string_lossy().into_owned();
    let node = |name, file| Spec {
        name,
        program: PathBuf::from("node"),
        args: vec![script(file)],
        counted: false,
        array: false,
    };
    specs.push(node("TypeScript McpServer", "ts_server.mjs"));
    let v2 = ["server", "node"].map(|package| interop.join("node_modules/@modelcontextprotocol").join(package));
    if v2.iter().all(|dir| dir.exists()) {
        specs.push(node("TypeScript v2 McpServer", "ts2_server.mjs"));
    } else if keep("TypeScript v2 McpServer") {
        notes.push(
            "TypeScript v2: @modelcontextprotocol/server or @modelcontextprotocol/node is not installed, its rows are \
             skipped (run `bash tests/interop/install.sh`)"
                .to_owned(),
        );
    }
    specs.push(Spec {
        name: "Python MCPServer",
        program: python,
        args: vec![script("py_server.py")],
        counted: false,
        array: false,
    });
    // The floor answers only the page; it has no recipe to break and no HTTP mode.
    if options.transport == Transport::Stdio && !options.invalid {
        specs.push(Spec { counted: false, array: false, ..own("floor (canned answers)", &["serve", "floor"]) });
    }
    specs.retain(|spec| keep(spec.name));
    Ok(specs)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    // Nearest rank: the smallest latency at or above the fraction `p` of all calls.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// What the counted rounds of one server (at one size and connection count) measured.
#[derive(Clone, Default)]
struct Stats {
    rates: Vec<f64>,
    latencies: Vec<Duration>,
    /// The server's CPU time over the counted rounds, and the calls it covers.
    cpu: Duration,
    cpu_calls: u32,
}

impl Stats {
    fn add(&mut self, rate: f64, cpu: Option<(Duration, u32)>) {
        self.rates.push(rate);
        if let Some((time, calls)) = cpu {
            self.cpu += time;
            self.cpu_calls += calls;
        }
    }
}

fn print_header(key: &str) {
    println!(
        "{key}  {:<36} {:>11} {:>10} {:>10} {:>8}  {:>12}  {:>13}  {:>12}",
        "server", "calls/s", "p50 µs", "p99 µs", "calls", "ours is", "CPU µs/call", "ours' CPU is"
    );
}

/// The rows of one group (a size, and over HTTP a connection count); the first row is
/// ours, which the ratios compare with.
fn print_group(key: &str, names: &[String], stats: &mut [Stats]) {
    let ours = median(&mut stats[0].rates);
    let per_call = |s: &Stats| (s.cpu_calls > 0).then(|| s.cpu.as_secs_f64() * 1e6 / f64::from(s.cpu_calls));
    let ours_cpu = per_call(&stats[0]);
    for (p, row) in stats.iter_mut().enumerate() {
        let rate = median(&mut row.rates);
        row.latencies.sort_unstable();
        let ratio = if p == 0 { String::new() } else { format!("{:.2}x", ours / rate) };
        let their_cpu = per_call(row);
        let cpu_text = their_cpu.map_or_else(|| "-".to_owned(), |c| format!("{c:.1}"));
        // Lower is better for CPU: "ours' CPU is" = theirs over ours, read like "ours is".
        let cpu_ratio = match (p, ours_cpu, their_cpu) {
            (0, _, _) => String::new(),
            (_, Some(o), Some(t)) if o > 0.0 => format!("{:.2}x", t / o),
            _ => "-".to_owned(),
        };
        println!(
            "{key}  {:<36} {rate:>11.0} {:>10.0} {:>10.0} {:>8}  {ratio:>12}  {cpu_text:>13}  {cpu_ratio:>12}",
            names[p],
            percentile(&row.latencies, 0.50).as_secs_f64() * 1e6,
            percentile(&row.latencies, 0.99).as_secs_f64() * 1e6,
            row.latencies.len(),
        );
    }
}

/// The `params` of a `tools/call` of `root`'s tool in `era`.
fn call_params(root: Root, era: Era, query: &str, limit: u32) -> String {
    format!(r#"{{"name":"{}","arguments":{{"query":"{query}","limit":{limit}}}{}}}"#, root.tool(), era.meta_member())
}

/// What a server did with the broken result of [`INVALID_QUERY`].
fn judge_invalid(reply: &Value) -> String {
    if let Some(error) = reply.get("error") {
        return format!(
            "JSON-RPC error {}: {}",
            error["code"],
            truncated(error["message"].as_str().unwrap_or_default())
        );
    }
    let result = &reply["result"];
    if result["isError"] == Value::Bool(true) {
        let text = result["content"][0]["text"].as_str().unwrap_or_default().replace('\n', " ");
        let carried = if result.get("structuredContent").is_some() { " (with structuredContent)" } else { "" };
        return format!("isError{carried}: {}", truncated(&text));
    }
    match result["structuredContent"]["tickets"].get(0) {
        Some(first) if first.get("title").is_none() => {
            "sent it: a success whose structuredContent lacks tickets[0].title".to_owned()
        }
        Some(_) => "a success with a complete page (the recipe did not break it)".to_owned(),
        None => format!("something else: {}", truncated(&reply.to_string())),
    }
}

fn print_notes(notes: &[String]) {
    for note in notes {
        println!("note: {note}");
    }
}

async fn run_client(options: Options) -> Result<(), String> {
    if cfg!(debug_assertions) && !options.invalid {
        eprintln!("peers: this is a debug build; run it with `cargo run --release` for figures worth reading");
    }
    match options.transport {
        Transport::Stdio => run_stdio(&options).await,
        Transport::Http => run_http(&options).await,
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("relay") {
        return relay(&args[1..]);
    }
    if args.first().map(String::as_str) == Some("serve") {
        let kind = args.get(1).map_or("", String::as_str);
        let stdio = if args.iter().any(|a| a == "--blocking-stdio") {
            servers::StdioMode::Blocking
        } else if args.iter().any(|a| a == "--pipes") {
            servers::StdioMode::Pipes
        } else {
            servers::StdioMode::Default
        };
        let http = args.iter().position(|a| a == "--http").and_then(|i| args.get(i + 1)).map(String::as_str);
        return run_server(kind, stdio, http);
    }
    let options = match parse(&args) {
        Ok(options) => options,
        Err(msg) => {
            eprintln!("peers: {msg}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("peers: cannot start the runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run_client(options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("peers: {err}");
            ExitCode::FAILURE
        }
    }
}

/// `relay -- PROGRAM ARGS…`: starts the program and copies this process's stdin to its
/// stdin and its stdout to this process's stdout, a thread each, with blocking reads and
/// writes and no buffering beyond one read: nothing parsed, nothing checked.
fn relay(args: &[String]) -> ExitCode {
    use std::os::fd::AsFd;
    use std::process::Stdio;

    let Some((program, rest)) = args.strip_prefix(&["--".to_owned()]).and_then(|rest| rest.split_first()) else {
        eprintln!("peers relay: usage: relay -- PROGRAM [ARGS…]");
        return ExitCode::from(2);
    };
    let mut child =
        match std::process::Command::new(program).args(rest).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn() {
            Ok(child) => child,
            Err(err) => {
                eprintln!("peers relay: cannot start {program}: {err}");
                return ExitCode::FAILURE;
            }
        };
    let (Some(mut to_child), Some(mut from_child)) = (child.stdin.take(), child.stdout.take()) else {
        return ExitCode::FAILURE;
    };
    let out = std::io::stdout().as_fd().try_clone_to_owned().map(std::fs::File::from);
    let input = std::io::stdin().as_fd().try_clone_to_owned().map(std::fs::File::from);
    let (Ok(mut out), Ok(mut input)) = (out, input) else {
        eprintln!("peers relay: cannot take stdin and stdout");
        return ExitCode::FAILURE;
    };
    std::thread::spawn(move || {
        // The child sees end of input when this side's stdin ends.
        let _ = std::io::copy(&mut input, &mut to_child);
    });
    let _ = std::io::copy(&mut from_child, &mut out);
    match child.wait() {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    }
}
