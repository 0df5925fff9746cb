//! Peers end to end: the same tool with the same payload served over stdio by our
//! contracted rmcp server, by plain rmcp, by the official TypeScript SDK's `McpServer`
//! (zod output schema) and by the official Python SDK's `MCPServer` (pydantic model),
//! each a child process driven by this one client with raw JSON-RPC.
//!
//! ```text
//! bash tests/interop/install.sh     # the pinned SDKs, once
//! cargo run --release -p qe-server --features server --example peers
//! cargo run --release -p qe-server --features server --example peers -- --rounds 12 --round-ms 300 \
//!     --sizes 1,100,1000 --blocking-stdio
//! ```
//!
//! The tool is `search_tickets_page` with arguments `{"query": "t-", "limit": N}`: every
//! server builds a complete page of `N` generated tickets per call (the recipe is the
//! same in all four) and returns it as `structuredContent` and as a JSON text block,
//! validated against its output schema: our server against the checked-in contract
//! (`schemas/search_tickets_page.json`), the TypeScript SDK against the equivalent zod
//! schema, the Python SDK against the equivalent pydantic model. Plain rmcp returns
//! rmcp's own `Json<T>` and validates nothing, which is what a server author gets without
//! contracts. Before timing, one call per server and size is parsed in full and its
//! `structuredContent` and text block compared with the page this process builds, so every
//! row is known to carry the same payload.
//!
//! Rounds are interleaved: each round visits every size, and within a size every server,
//! in an order that rotates from round to round, making sequential calls for
//! `--round-ms`. A first round warms every server up (JIT, caches) and is not counted.
//! Reported per server and size: calls/s (median over rounds), and p50/p99 of the
//! latency of every counted call, measured wall-clock from writing the request to
//! reading the whole response line. The client shares the machine with the servers, so
//! on a busy machine all rows slow down; nothing here asserts on the numbers.
//!
//! `--blocking-stdio` adds our server and plain rmcp served with rmcp's `stdio()`
//! (blocking-pool reads and writes) next to the default `stdio_pipes()`.
//!
//! The last row, **floor**, is not an MCP server: a loop of blocking reads and writes that
//! answers each call with a canned response (the same page, built and serialized once per
//! size; only the id is written per call). It is what the pipes and this client cost, so it
//! bounds from above what any stdio server can reach in this harness: a ratio to a peer
//! larger than floor's ratio to it is out of reach for every server.
//!
//! The same binary is the Rust servers: `peers serve contracted|plain|floor [--blocking-stdio]`.

use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use contract_runtime::rmcp::{ContractedServer, Json};
use contract_runtime::{Completeness, ToolError, ToolOutput};
use qe_server::contracts::{Ticket, TicketPage, TicketStatus};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const TOOL: &str = "search_tickets_page";
const QUERY: &str = "t-";
const PROTOCOL: &str = "2025-11-25";

// ---------------------------------------------------------------- the Rust servers

/// Arguments of the benchmark's `search_tickets_page`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PageArgs {
    /// Echoed as the page's `query`.
    #[schemars(length(min = 1))]
    query: String,
    /// How many tickets the page holds.
    #[schemars(range(min = 1))]
    limit: u32,
}

/// The page every peer builds: `limit` generated tickets, complete. The TypeScript and
/// Python servers follow the same recipe, and the client checks that they do.
fn page(query: &str, limit: u32) -> TicketPage {
    let tickets = (1..=limit)
        .map(|i| Ticket {
            id: format!("T-{i}"),
            title: format!("Ticket {i}: login fails after password reset"),
            status: if i % 3 == 0 { TicketStatus::Closed } else { TicketStatus::Open },
        })
        .collect();
    TicketPage {
        query: query.to_owned(),
        tickets,
        next_cursor: None,
        completeness: Completeness::complete(u64::from(limit)),
    }
}

/// The tool as a contracted server writes it: our `Json`, wrapped in [`ContractedServer`].
#[derive(Clone)]
struct Contracted {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Contracted {
    #[tool(description = "A page of `limit` generated tickets.")]
    async fn search_tickets_page(&self, Parameters(args): Parameters<PageArgs>) -> Result<Json<TicketPage>, ToolError> {
        Ok(Json(page(&args.query, args.limit)))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Contracted {}

/// The tool as plain rmcp writes it: rmcp's own `Json<T>`, nothing validated.
#[derive(Clone)]
struct Plain {
    tool_router: ToolRouter<Self>,
}

// The baseline is plain rmcp on purpose: its own `Json`, which the crate's clippy.toml refuses.
#[allow(clippy::disallowed_types)]
#[tool_router]
impl Plain {
    #[tool(description = "A page of `limit` generated tickets.")]
    async fn search_tickets_page(
        &self,
        Parameters(args): Parameters<PageArgs>,
    ) -> rmcp::handler::server::wrapper::Json<TicketPage> {
        rmcp::handler::server::wrapper::Json(page(&args.query, args.limit))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Plain {}

/// Serves `handler` over stdio: through `contract_runtime::rmcp::serve_stdio` (rmcp's
/// `stdio_pipes()`), or with `blocking`, through rmcp's `stdio()`.
async fn serve<H: ServerHandler>(handler: H, blocking: bool) -> Result<(), Box<dyn std::error::Error>> {
    if blocking {
        handler.serve(rmcp::transport::stdio()).await?.waiting().await?;
        Ok(())
    } else {
        contract_runtime::rmcp::serve_stdio(handler).await?;
        Ok(())
    }
}

/// The floor row: answers `initialize` and `tools/call` with canned responses, one line
/// at a time, with no MCP library and no async runtime. The response to a call is the
/// page of the requested size, serialized once and reused; only the id changes.
fn run_floor() -> ExitCode {
    use std::collections::HashMap;
    use std::io::{BufRead, Write};

    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    let mut bodies: HashMap<u32, String> = HashMap::new();
    for line in stdin.lines() {
        let Ok(line) = line else { break };
        let Ok(request) = serde_json::from_str::<Value>(&line) else { continue };
        let Some(id) = request.get("id").map(Value::to_string) else { continue };
        let body = match request["method"].as_str() {
            Some("initialize") => format!(
                r#"{{"protocolVersion":"{PROTOCOL}","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"floor","version":"1"}}}}"#
            ),
            Some("tools/call") => {
                let limit = request["params"]["arguments"]["limit"].as_u64().and_then(|n| u32::try_from(n).ok());
                let Some(limit) = limit else { continue };
                bodies
                    .entry(limit)
                    .or_insert_with(|| {
                        let page = serde_json::to_value(page(QUERY, limit)).unwrap_or_default();
                        let text = page.to_string();
                        serde_json::json!({
                            "content": [{ "type": "text", "text": text }],
                            "structuredContent": page,
                            "isError": false,
                        })
                        .to_string()
                    })
                    .clone()
            }
            _ => continue,
        };
        let written =
            writeln!(stdout, r#"{{"jsonrpc":"2.0","id":{id},"result":{body}}}"#).and_then(|()| stdout.flush());
        if written.is_err() {
            break;
        }
    }
    ExitCode::SUCCESS
}

fn run_server(kind: &str, blocking: bool) -> ExitCode {
    if kind == "floor" {
        return run_floor();
    }
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("peers: cannot start the runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let served = runtime.block_on(async {
        match kind {
            "contracted" => {
                let server = ContractedServer::new(
                    Contracted { tool_router: Contracted::tool_router() },
                    contract_runtime::contracts![TicketPage],
                )?;
                serve(server, blocking).await
            }
            "plain" => serve(Plain { tool_router: Plain::tool_router() }, blocking).await,
            other => Err(format!("unknown server `{other}`: expected `contracted`, `plain` or `floor`").into()),
        }
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("peers: {err}");
            ExitCode::FAILURE
        }
    }
}

// ---------------------------------------------------------------- the client

/// One server child and its pipes.
struct Peer {
    name: String,
    child: Child,
    /// The server's process id, for its CPU time in `/proc`.
    pid: Option<u32>,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
    next_id: u64,
}

impl Peer {
    async fn spawn(name: &str, program: &Path, args: &[&str]) -> Result<Self, String> {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|err| format!("{name}: cannot start `{}`: {err}", program.display()))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::with_capacity(1 << 20, child.stdout.take().ok_or("no stdout")?);
        let pid = child.id();
        let mut peer = Self { name: name.to_owned(), child, pid, stdin, stdout, line: String::new(), next_id: 0 };
        let init = format!(
            r#"{{"protocolVersion":"{PROTOCOL}","capabilities":{{}},"clientInfo":{{"name":"peers","version":"1"}}}}"#
        );
        peer.request("initialize", &init).await?;
        peer.stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .await
            .map_err(|err| format!("{name}: {err}"))?;
        Ok(peer)
    }

    /// Sends one request and reads lines until its response; the response stays in
    /// `self.line`. The id is found by its text (`"id":N,` or `"id":N}`): ticket ids are
    /// strings, so no payload can imitate it, and the client spends no time parsing
    /// large responses during timing.
    async fn request(&mut self, method: &str, params: &str) -> Result<(), String> {
        self.next_id += 1;
        let id = self.next_id;
        let message = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{method}\",\"params\":{params}}}\n");
        self.stdin.write_all(message.as_bytes()).await.map_err(|err| format!("{}: write: {err}", self.name))?;
        let (a, b) = (format!("\"id\":{id},"), format!("\"id\":{id}}}"));
        loop {
            self.line.clear();
            let read =
                self.stdout.read_line(&mut self.line).await.map_err(|err| format!("{}: read: {err}", self.name))?;
            if read == 0 {
                return Err(format!("{}: the server closed its stdout", self.name));
            }
            if self.line.contains(&a) || self.line.contains(&b) {
                return Ok(());
            }
        }
    }

    /// One call, checked in full: a success whose `structuredContent` and text block
    /// both equal `expected`.
    async fn verify(&mut self, params: &str, expected: &Value) -> Result<(), String> {
        self.request("tools/call", params).await?;
        let reply: Value = serde_json::from_str(&self.line).map_err(|err| format!("{}: not JSON: {err}", self.name))?;
        let result = &reply["result"];
        if result.is_null() || result["isError"] == Value::Bool(true) {
            return Err(format!("{}: not a success: {}", self.name, truncated(&self.line)));
        }
        if &result["structuredContent"] != expected {
            return Err(format!("{}: structuredContent differs from the expected page", self.name));
        }
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        if serde_json::from_str::<Value>(text).ok().as_ref() != Some(expected) {
            return Err(format!("{}: the text block is not the expected page", self.name));
        }
        Ok(())
    }

    /// Sequential calls for `span`: the latency of each, the calls per second, and the
    /// server's CPU time over the round (with the number of calls it covers).
    async fn round(
        &mut self,
        params: &str,
        span: Duration,
        latencies: &mut Vec<Duration>,
    ) -> Result<(f64, Option<(Duration, u32)>), String> {
        let cpu_start = self.pid.and_then(process_cpu);
        let start = Instant::now();
        let mut calls = 0u32;
        while calls < 3 || start.elapsed() < span {
            let sent = Instant::now();
            self.request("tools/call", params).await?;
            latencies.push(sent.elapsed());
            // A cheap guard that every counted call succeeded (the full check ran before).
            if self.line.contains("\"isError\":true") || !self.line.contains("\"structuredContent\"") {
                return Err(format!("{}: a call failed: {}", self.name, truncated(&self.line)));
            }
            calls += 1;
        }
        let rate = f64::from(calls) / start.elapsed().as_secs_f64();
        let cpu = match (cpu_start, self.pid.and_then(process_cpu)) {
            (Some(a), Some(b)) => Some((b.saturating_sub(a), calls)),
            _ => None,
        };
        Ok((rate, cpu))
    }
}

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

struct Options {
    rounds: usize,
    round: Duration,
    sizes: Vec<u32>,
    blocking_stdio: bool,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options =
        Options { rounds: 10, round: Duration::from_millis(250), sizes: vec![1, 100, 1_000], blocking_stdio: false };
    let mut args = args.iter();
    let number = |flag: &str, value: Option<&String>| -> Result<u64, String> {
        value
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("`{flag}` needs a positive whole number"))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => options.rounds = usize::try_from(number(arg, args.next())?).map_err(|e| e.to_string())?,
            "--round-ms" => options.round = Duration::from_millis(number(arg, args.next())?),
            "--sizes" => {
                let list = args.next().ok_or("`--sizes` needs a list such as 1,100,1000")?;
                options.sizes = list
                    .split(',')
                    .map(|s| s.trim().parse::<u32>().ok().filter(|&n| n > 0))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| format!("`--sizes {list}`: expected positive whole numbers, comma-separated"))?;
            }
            "--blocking-stdio" => options.blocking_stdio = true,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(options)
}

/// Where the pinned SDKs and the peer scripts live.
fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop")
}

async fn spawn_all(options: &Options) -> Result<Vec<Peer>, String> {
    let exe = std::env::current_exe().map_err(|err| err.to_string())?;
    let interop = interop_dir();
    let python = interop.join(".venv/bin/python");
    let node_sdk = interop.join("node_modules/@modelcontextprotocol/sdk");
    if !python.exists() || !node_sdk.exists() {
        return Err(format!(
            "the pinned SDKs are not installed under {}: run `bash tests/interop/install.sh` first",
            interop.display()
        ));
    }
    let node = PathBuf::from("node");
    let ts = interop.join("peers/ts_server.mjs");
    let py = interop.join("peers/py_server.py");
    let mut peers = vec![
        Peer::spawn("ours (contracted rmcp)", &exe, &["serve", "contracted"]).await?,
        Peer::spawn("plain rmcp", &exe, &["serve", "plain"]).await?,
    ];
    if options.blocking_stdio {
        peers.push(Peer::spawn("ours, stdio()", &exe, &["serve", "contracted", "--blocking-stdio"]).await?);
        peers.push(Peer::spawn("plain rmcp, stdio()", &exe, &["serve", "plain", "--blocking-stdio"]).await?);
    }
    peers.push(Peer::spawn("TypeScript McpServer", &node, &[&ts.to_string_lossy()]).await?);
    peers.push(Peer::spawn("Python MCPServer", &python, &[&py.to_string_lossy()]).await?);
    peers.push(Peer::spawn("floor (canned answers)", &exe, &["serve", "floor"]).await?);
    Ok(peers)
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

async fn run_client(options: Options) -> Result<(), String> {
    if cfg!(debug_assertions) {
        eprintln!("peers: this is a debug build; run it with `cargo run --release` for figures worth reading");
    }
    // Under `ContractedServer` the result is validated on the `Value` path (the wrapper
    // judges the `structuredContent` it will send); the text block and the NaN check are
    // one pass in our `Json`. Say so, and whether the contract would be covered in-process.
    let path = match TicketPage::try_contract().map(contract_runtime::OutputContract::fast_path) {
        Ok(contract_runtime::fast::Coverage::Covered) => {
            "Value + jsonschema path of the rmcp adapter (in-process, the Pipeline would take the fast path)".to_owned()
        }
        Ok(contract_runtime::fast::Coverage::Fallback(why)) => format!("Value + jsonschema path ({why})"),
        Ok(other) => format!("{other:?}"),
        Err(err) => return Err(err.to_string()),
    };
    let mut peers = spawn_all(&options).await?;
    let params: Vec<String> = options
        .sizes
        .iter()
        .map(|n| format!(r#"{{"name":"{TOOL}","arguments":{{"query":"{QUERY}","limit":{n}}}}}"#))
        .collect();
    for (size, params) in options.sizes.iter().zip(&params) {
        let expected = serde_json::to_value(page(QUERY, *size)).map_err(|err| err.to_string())?;
        for peer in &mut peers {
            peer.verify(params, &expected).await?;
        }
    }
    let count = peers.len();
    // [size][peer]: latencies of every counted call, and calls/s per round.
    let mut latencies = vec![vec![Vec::new(); count]; options.sizes.len()];
    let mut rates = vec![vec![Vec::new(); count]; options.sizes.len()];
    // [size][peer]: the server's CPU time over the counted rounds, and the calls it covers.
    let mut cpu = vec![vec![(Duration::ZERO, 0u32); count]; options.sizes.len()];
    let mut discard = Vec::new();
    for round in 0..=options.rounds {
        for (s, params) in params.iter().enumerate() {
            for k in 0..count {
                let p = (k + round) % count;
                if round == 0 {
                    let _ = peers[p].round(params, options.round, &mut discard).await?;
                    discard.clear();
                } else {
                    let (rate, spent) = peers[p].round(params, options.round, &mut latencies[s][p]).await?;
                    rates[s][p].push(rate);
                    if let Some((time, calls)) = spent {
                        cpu[s][p].0 += time;
                        cpu[s][p].1 += calls;
                    }
                }
            }
        }
    }
    println!(
        "peers end to end: `{TOOL}` over stdio, one client, sequential calls; {} interleaved rounds of {} ms per server \
         and size (after one warm-up round); calls/s = median over rounds, p50/p99 over every call, wall-clock",
        options.rounds,
        options.round.as_millis()
    );
    println!("ours validates `{TOOL}` on the {path}");
    println!(
        "{:>6}  {:<24} {:>11} {:>10} {:>10} {:>8}  {:>12}  {:>13}  {:>12}",
        "items", "server", "calls/s", "p50 µs", "p99 µs", "calls", "ours is", "CPU µs/call", "ours' CPU is"
    );
    for (s, size) in options.sizes.iter().enumerate() {
        let ours = median(&mut rates[s][0]);
        let per_call =
            |(time, calls): (Duration, u32)| (calls > 0).then(|| time.as_secs_f64() * 1e6 / f64::from(calls));
        let ours_cpu = per_call(cpu[s][0]);
        for p in 0..count {
            let rate = median(&mut rates[s][p]);
            let calls = &mut latencies[s][p];
            calls.sort_unstable();
            let ratio = if p == 0 { String::new() } else { format!("{:.2}x", ours / rate) };
            let their_cpu = per_call(cpu[s][p]);
            let cpu_text = their_cpu.map_or_else(|| "-".to_owned(), |c| format!("{c:.1}"));
            // Lower is better for CPU: "ours' CPU is" = theirs over ours, read like "ours is".
            let cpu_ratio = match (p, ours_cpu, their_cpu) {
                (0, _, _) => String::new(),
                (_, Some(o), Some(t)) if o > 0.0 => format!("{:.2}x", t / o),
                _ => "-".to_owned(),
            };
            println!(
                "{size:>6}  {:<24} {rate:>11.0} {:>10.0} {:>10.0} {:>8}  {ratio:>12}  {cpu_text:>13}  {cpu_ratio:>12}",
                peers[p].name,
                percentile(calls, 0.50).as_secs_f64() * 1e6,
                percentile(calls, 0.99).as_secs_f64() * 1e6,
                calls.len(),
            );
        }
    }
    for peer in &mut peers {
        // Closing stdin is the stdio shutdown; a server that lingers is killed.
        let _ = peer.stdin.shutdown().await;
        if tokio::time::timeout(Duration::from_secs(2), peer.child.wait()).await.is_err() {
            let _ = peer.child.kill().await;
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("serve") {
        let kind = args.get(1).map_or("", String::as_str);
        let blocking = args.iter().any(|a| a == "--blocking-stdio");
        return run_server(kind, blocking);
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
