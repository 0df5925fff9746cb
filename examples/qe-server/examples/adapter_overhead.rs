//! What enforcement costs per `tools/call` at the MCP level: the same qe-server tools
//! served by plain rmcp (`Json<T>`, nothing validated) and wrapped in
//! `ContractedServer` (arguments checked, result validated, identity attached), each
//! over an in-memory duplex transport with one client making sequential calls.
//!
//! ```text
//! cargo run --release -p qe-server --features server --example adapter_overhead
//! ```
//!
//! Prints the median time per call of several rounds, and the ratio. Numbers depend on
//! the machine; nothing here asserts on them.

use std::time::{Duration, Instant};

use qe_server::server::{contracted, QeServer};
use rmcp::service::RoleServer;
use rmcp::{Service, ServiceExt};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf};

const CALLS_PER_ROUND: u32 = 2_000;
const ROUNDS: usize = 7;

struct Client {
    to_server: WriteHalf<DuplexStream>,
    from_server: Lines<BufReader<ReadHalf<DuplexStream>>>,
    next_id: u64,
}

impl Client {
    async fn connect<S: Service<RoleServer>>(server: S) -> Self {
        let (client, server_side) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(tokio::io::split(server_side)).await {
                let _ = running.waiting().await;
            }
        });
        let (read, write) = tokio::io::split(client);
        let mut client = Self { to_server: write, from_server: BufReader::new(read).lines(), next_id: 0 };
        let params = json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "bench", "version": "1" } });
        client.request("initialize", params).await;
        client.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await;
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

/// Median time per call of `tool` over `ROUNDS` rounds.
async fn per_call(client: &mut Client, tool: &str, arguments: &Value) -> Duration {
    let params = json!({ "name": tool, "arguments": arguments });
    let reply = client.request("tools/call", params.clone()).await;
    assert_eq!(reply["result"]["isError"], false, "{tool}: {reply}");
    let mut rounds = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for _ in 0..CALLS_PER_ROUND {
            client.request("tools/call", params.clone()).await;
        }
        rounds.push(start.elapsed() / CALLS_PER_ROUND);
    }
    rounds.sort_unstable();
    rounds[ROUNDS / 2]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let mut plain = Client::connect(QeServer::new(false)).await;
        let mut enforced = Client::connect(contracted(false).expect("contracts bind")).await;
        let cases = [
            ("fleet_status", json!({})),
            ("search_tickets", json!({ "query": "t-" })),
            ("security_scan", json!({ "target": "agentic-qe@ffc0c6a" })),
            ("scrape_page", json!({ "url": "https://docs.example.com/guide" })),
        ];
        println!("{CALLS_PER_ROUND} sequential tools/call per round, median of {ROUNDS} rounds, in-memory duplex");
        println!("{:<16} {:>14} {:>14} {:>7}", "tool", "plain rmcp", "contracted", "ratio");
        for (tool, arguments) in &cases {
            let base = per_call(&mut plain, tool, arguments).await;
            let checked = per_call(&mut enforced, tool, arguments).await;
            println!(
                "{tool:<16} {:>11.1} µs {:>11.1} µs {:>6.2}x",
                base.as_secs_f64() * 1e6,
                checked.as_secs_f64() * 1e6,
                checked.as_secs_f64() / base.as_secs_f64()
            );
        }
    });
}
