//! What enforcement costs per `tools/call` at the MCP level: the same qe-server tools
//! served by plain rmcp (`Json<T>`, nothing validated) and wrapped in
//! `ContractedServer` (arguments checked, result validated, identity attached), each
//! over an in-memory duplex transport with one client making sequential calls, in both
//! protocol eras: a 2025-11-25 session (`initialize` handshake) and 2026-07-28 requests
//! that carry their own `_meta`.
//!
//! ```text
//! cargo run --release -p qe-server --features server --example adapter_overhead
//! ```
//!
//! Rounds of plain and contracted calls alternate (their order flips every round), so
//! both sides see the same machine load; the median time per call of each side and the
//! ratio are printed. Time is the CPU time of the one runtime thread (client, server and
//! transport together) where Linux reports it, so a busy shared machine inflates both
//! sides alike; elsewhere it is wall-clock time. Nothing here asserts on the numbers.
//!
//! For a 2025 peer, plain rmcp drops a non-object `structuredContent` (`search_tickets`
//! returns an array) and sends only the text; the contracted server sends the contract's
//! wrapped `{"result": …}` object as well, so that row compares different payloads.

// The baseline is plain rmcp on purpose: its own `Json`, which the crate's clippy.toml refuses.
#![allow(clippy::disallowed_types)]
use std::time::{Duration, Instant};

use qe_server::contracts::{FleetStatus, ScrapePage, SearchTickets, SecurityScan};
use qe_server::server::contracted;
use qe_server::tools::{self, ScrapePageArgs, SearchTicketsArgs, SecurityScanArgs};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::service::RoleServer;
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler, Service, ServiceExt};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf};

const CALLS_PER_ROUND: u32 = 2_000;
const ROUNDS: usize = 9;
const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";

/// The same four tools as plain rmcp serves them: rmcp's own `Json<T>` (`to_value`, then
/// the text written from the value), no wrapper, nothing checked. The tool bodies are
/// qe-server's, so both sides build the same results.
#[derive(Clone)]
struct Plain {
    tool_router: ToolRouter<Self>,
}

/// The demo tools never fail here; a failure would show as a JSON-RPC error.
fn plain<T>(result: Result<T, contract_runtime::ToolError>) -> Result<Json<T>, ErrorData> {
    result.map(Json).map_err(|err| ErrorData::internal_error(err.message().to_owned(), None))
}

#[tool_router]
impl Plain {
    #[tool(description = "Health of the agent fleet: every agent, with healthy/degraded counts.")]
    async fn fleet_status(&self) -> Result<Json<FleetStatus>, ErrorData> {
        plain(tools::fleet_status())
    }

    #[tool(description = "Findings of a static security scan.")]
    async fn security_scan(
        &self,
        Parameters(args): Parameters<SecurityScanArgs>,
    ) -> Result<Json<SecurityScan>, ErrorData> {
        plain(tools::security_scan(&args))
    }

    #[tool(description = "Search tickets by query string. The result is an array of tickets.")]
    async fn search_tickets(
        &self,
        Parameters(args): Parameters<SearchTicketsArgs>,
    ) -> Result<Json<SearchTickets>, ErrorData> {
        plain(tools::search_tickets(&args))
    }

    #[tool(description = "Scrape one web page: markdown, links and provider metadata.")]
    async fn scrape_page(&self, Parameters(args): Parameters<ScrapePageArgs>) -> Result<Json<ScrapePage>, ErrorData> {
        plain(tools::scrape_page(&args))
    }
}

#[tool_handler(router = self.tool_router, name = "plain")]
impl ServerHandler for Plain {}

struct Client {
    to_server: WriteHalf<DuplexStream>,
    from_server: Lines<BufReader<ReadHalf<DuplexStream>>>,
    next_id: u64,
    /// The request `_meta` of a 2026-07-28 client; `None` in a 2025 session.
    meta: Option<Value>,
}

impl Client {
    async fn connect<S: Service<RoleServer>>(server: S, protocol: &str) -> Self {
        let (client, server_side) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(tokio::io::split(server_side)).await {
                let _ = running.waiting().await;
            }
        });
        let (read, write) = tokio::io::split(client);
        let mut client = Self { to_server: write, from_server: BufReader::new(read).lines(), next_id: 0, meta: None };
        if protocol == LEGACY {
            let params = json!({ "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": { "name": "bench", "version": "1" } });
            client.request("initialize", params).await;
            client.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await;
        } else {
            client.meta = Some(json!({
                "io.modelcontextprotocol/protocolVersion": protocol,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": { "name": "bench", "version": "1" }
            }));
        }
        client
    }

    async fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.to_server.write_all(line.as_bytes()).await.expect("write");
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).await;
        loop {
            let line = self.from_server.next_line().await.expect("read").expect("server open");
            let message: Value = serde_json::from_str(&line).expect("JSON");
            if message["id"] == json!(id) {
                return message;
            }
        }
    }
}

/// The `tools/call` params for `tool`, with the request `_meta` a 2026 client sends.
fn call_params(client: &Client, tool: &str, arguments: &Value) -> Value {
    let mut params = json!({ "name": tool, "arguments": arguments });
    if let Some(meta) = &client.meta {
        params["_meta"] = meta.clone();
    }
    params
}

/// CPU time this thread has run, from `clock_gettime(CLOCK_THREAD_CPUTIME_ID)` (Linux;
/// `None` elsewhere). The runtime is single-threaded, so the client, the server and the
/// transport all run here: CPU time counts their work and not the time other processes
/// on a shared machine take the core away. (`/proc/thread-self/schedstat` would do too,
/// but it advances by scheduler ticks, 4 ms here: a 12 % step on a 30 ms round.)
fn cpu_time() -> Option<Duration> {
    if cfg!(target_os = "linux") {
        let now = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        Some(Duration::new(u64::try_from(now.tv_sec).ok()?, u32::try_from(now.tv_nsec).ok()?))
    } else {
        None
    }
}

/// Time per call of one round of `tool`: CPU time where the system reports it, else
/// wall-clock time.
async fn round(client: &mut Client, params: &Value) -> Duration {
    let (start, cpu_start) = (Instant::now(), cpu_time());
    for _ in 0..CALLS_PER_ROUND {
        client.request("tools/call", params.clone()).await;
    }
    let spent = match (cpu_start, cpu_time()) {
        (Some(a), Some(b)) => b.saturating_sub(a),
        _ => start.elapsed(),
    };
    spent / CALLS_PER_ROUND
}

/// Median time per call of `tool` on each side, rounds interleaved.
async fn compare(plain: &mut Client, enforced: &mut Client, tool: &str, arguments: &Value) -> (Duration, Duration) {
    let plain_params = call_params(plain, tool, arguments);
    let enforced_params = call_params(enforced, tool, arguments);
    for (client, params) in [(&mut *plain, &plain_params), (&mut *enforced, &enforced_params)] {
        let reply = client.request("tools/call", params.clone()).await;
        assert_eq!(reply["result"]["isError"], false, "{tool}: {reply}");
    }
    let (mut a, mut b) = (Vec::with_capacity(ROUNDS), Vec::with_capacity(ROUNDS));
    for r in 0..ROUNDS {
        if r % 2 == 0 {
            a.push(round(plain, &plain_params).await);
            b.push(round(enforced, &enforced_params).await);
        } else {
            b.push(round(enforced, &enforced_params).await);
            a.push(round(plain, &plain_params).await);
        }
    }
    a.sort_unstable();
    b.sort_unstable();
    (a[ROUNDS / 2], b[ROUNDS / 2])
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let cases = [
            ("fleet_status", json!({})),
            ("search_tickets", json!({ "query": "t-" })),
            ("security_scan", json!({ "target": "agentic-qe@ffc0c6a" })),
            ("scrape_page", json!({ "url": "https://docs.example.com/guide" })),
        ];
        println!(
            "{CALLS_PER_ROUND} sequential tools/call per round, median of {ROUNDS} interleaved rounds, in-memory duplex, {} time",
            if cpu_time().is_some() { "thread CPU" } else { "wall-clock" }
        );
        println!("{:<16} {:<11} {:>14} {:>14} {:>7}", "tool", "protocol", "plain rmcp", "contracted", "ratio");
        for protocol in [LEGACY, MODERN] {
            let mut plain = Client::connect(Plain { tool_router: Plain::tool_router() }, protocol).await;
            let mut enforced = Client::connect(contracted(false).expect("contracts bind"), protocol).await;
            for (tool, arguments) in &cases {
                let (base, checked) = compare(&mut plain, &mut enforced, tool, arguments).await;
                println!(
                    "{tool:<16} {protocol:<11} {:>11.1} µs {:>11.1} µs {:>6.2}x",
                    base.as_secs_f64() * 1e6,
                    checked.as_secs_f64() * 1e6,
                    checked.as_secs_f64() / base.as_secs_f64()
                );
            }
        }
    });
}
