//! Peers end to end: the same tool with the same payload served by our contracted rmcp
//! server, by plain rmcp, by tower-mcp (with its `schema-validation` feature), by the
//! official TypeScript SDK's `McpServer` (zod output schema) and by the official Python
//! SDK's `MCPServer` (pydantic model), each a child process driven by this one client with
//! raw JSON-RPC, over stdio or over streamable HTTP.
//!
//! ```text
//! bash tests/interop/install.sh     # the pinned SDKs, once
//! cargo build --release --manifest-path bench/tower-mcp-peer/Cargo.toml   # the tower-mcp row
//! cargo build --release -p contract-proxy   # the row of contract-proxy in front of plain rmcp (stdio)
//! cargo run --release -p qe-server --features server --example peers
//! cargo run --release -p qe-server --features server --example peers -- --rounds 12 --round-ms 300 \
//!     --sizes 1,100,1000 --blocking-stdio
//! cargo run --release -p qe-server --features server --example peers -- --transport http --connections 1,8
//! cargo run --release -p qe-server --features server --example peers -- --invalid [--transport http]
//! ```
//!
//! The tool is `search_tickets_page` with arguments `{"query": "t-", "limit": N}`: every
//! server builds a complete page of `N` generated tickets per call (the recipe is the
//! same in all five) and returns it as `structuredContent` and as a JSON text block,
//! validated against its output schema: our server against the checked-in contract
//! (`schemas/search_tickets_page.json`), tower-mcp against the schema it derives from the
//! same page types (`output_schema_for`), the TypeScript SDK against the equivalent zod
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
//! **stdio** (the default): each Rust server on its best stdio transport — ours and plain
//! rmcp on rmcp's `stdio_pipes()`, tower-mcp on its own `StdioTransport` (reactor pipes on
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
//! `HttpTransport`; the TypeScript SDK its `StreamableHTTPServerTransport` on `node:http`;
//! the Python SDK its streamable HTTP app on uvicorn. Every server is tried in both
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
//! [--blocking-stdio | --http ADDR]`.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use contract_runtime::rmcp::{ContractedServer, Json};
use contract_runtime::{Completeness, ToolError, ToolOutput};
use http_body_util::{BodyExt, Full};
use hyper::header::{ACCEPT, CONTENT_TYPE, HOST};
use qe_server::contracts::{Ticket, TicketPage, TicketStatus};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const TOOL: &str = "search_tickets_page";
const QUERY: &str = "t-";
const PROTOCOL: &str = "2025-11-25";
/// The sessionless protocol revision: no `initialize`, every request carries its `_meta`.
const STATELESS: &str = "2026-07-28";
/// The query for which every server's recipe leaves `title` out of the first ticket.
const INVALID_QUERY: &str = "invalid";

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

/// What the Rust servers' tool returns: the page, or for [`INVALID_QUERY`] the page with
/// `title` left out of its first ticket. Its schema is the page's, so the tool advertises
/// the same `outputSchema` either way.
enum Reply {
    Page(TicketPage),
    Broken(Value),
}

impl Serialize for Reply {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Page(page) => page.serialize(serializer),
            Self::Broken(value) => value.serialize(serializer),
        }
    }
}

impl JsonSchema for Reply {
    fn schema_name() -> Cow<'static, str> {
        TicketPage::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        TicketPage::schema_id()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        TicketPage::json_schema(generator)
    }
}

fn reply(query: &str, limit: u32) -> Reply {
    let page = page(query, limit);
    if query != INVALID_QUERY {
        return Reply::Page(page);
    }
    let mut value = serde_json::to_value(page).unwrap_or_default();
    if let Some(first) = value["tickets"].get_mut(0).and_then(Value::as_object_mut) {
        first.remove("title");
    }
    Reply::Broken(value)
}

/// The tool as a contracted server writes it: our `Json`, wrapped in [`ContractedServer`].
#[derive(Clone)]
struct Contracted {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Contracted {
    #[tool(description = "A page of `limit` generated tickets.")]
    async fn search_tickets_page(&self, Parameters(args): Parameters<PageArgs>) -> Result<Json<Reply>, ToolError> {
        Ok(Json(reply(&args.query, args.limit)))
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
    ) -> rmcp::handler::server::wrapper::Json<Reply> {
        rmcp::handler::server::wrapper::Json(reply(&args.query, args.limit))
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

/// Binds `addr` and says where on stdout (the line the client waits for).
async fn listen(addr: &str) -> Result<tokio::net::TcpListener, Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    Ok(listener)
}

/// Ours over streamable HTTP: the library's front before rmcp's service, served by its
/// `serve` (`TCP_NODELAY`, the connection cap, the header deadline).
async fn serve_http_contracted(
    server: ContractedServer<Contracted>,
    addr: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    use contract_runtime::http::{HttpLimits, McpLayer};
    let limits = HttpLimits::default();
    let app = axum::Router::new().nest_service("/mcp", McpLayer::new(limits.clone()).service(server));
    contract_runtime::http::serve(listen(addr).await?, app, &limits).await;
    Ok(())
}

/// Plain rmcp over streamable HTTP: its `StreamableHttpService` with the default
/// configuration (sessions, SSE answers) in axum, with `TCP_NODELAY` as every HTTP server
/// here has it.
async fn serve_http_plain(addr: &str) -> Result<(), Box<dyn std::error::Error>> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
    let service = StreamableHttpService::new(
        || Ok(Plain { tool_router: Plain::tool_router() }),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = axum::serve::ListenerExt::tap_io(listen(addr).await?, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app).await?;
    Ok(())
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

fn run_server(kind: &str, blocking: bool, http: Option<&str>) -> ExitCode {
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
                match http {
                    Some(addr) => serve_http_contracted(server, addr).await,
                    None => serve(server, blocking).await,
                }
            }
            "plain" => match http {
                Some(addr) => serve_http_plain(addr).await,
                None => serve(Plain { tool_router: Plain::tool_router() }, blocking).await,
            },
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

#[derive(Clone, Copy, PartialEq, Eq)]
enum Transport {
    Stdio,
    Http,
}

struct Options {
    rounds: usize,
    round: Duration,
    sizes: Vec<u32>,
    blocking_stdio: bool,
    transport: Transport,
    connections: Vec<usize>,
    invalid: bool,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        rounds: 10,
        round: Duration::from_millis(250),
        sizes: vec![1, 100, 1_000],
        blocking_stdio: false,
        transport: Transport::Stdio,
        connections: vec![1, 8],
        invalid: false,
    };
    let mut args = args.iter();
    let number = |flag: &str, value: Option<&String>| -> Result<u64, String> {
        value
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("`{flag}` needs a positive whole number"))
    };
    let list = |flag: &str, value: Option<&String>| -> Result<Vec<u32>, String> {
        let list = value.ok_or_else(|| format!("`{flag}` needs a list such as 1,100,1000"))?;
        list.split(',')
            .map(|s| s.trim().parse::<u32>().ok().filter(|&n| n > 0))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("`{flag} {list}`: expected positive whole numbers, comma-separated"))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => options.rounds = usize::try_from(number(arg, args.next())?).map_err(|e| e.to_string())?,
            "--round-ms" => options.round = Duration::from_millis(number(arg, args.next())?),
            "--sizes" => options.sizes = list(arg, args.next())?,
            "--connections" => {
                options.connections = list(arg, args.next())?.into_iter().map(|n| n as usize).collect();
            }
            "--blocking-stdio" => options.blocking_stdio = true,
            "--invalid" => options.invalid = true,
            "--transport" => {
                options.transport = match args.next().map(String::as_str) {
                    Some("stdio") => Transport::Stdio,
                    Some("http") => Transport::Http,
                    _ => return Err("`--transport` needs `stdio` or `http`".to_owned()),
                }
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(options)
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
}

fn specs(options: &Options, notes: &mut Vec<String>) -> Result<Vec<Spec>, String> {
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
    let own =
        |name, args: &[&str]| Spec { name, program: exe.clone(), args: args.iter().map(|a| (*a).to_owned()).collect() };
    let mut specs =
        vec![own("ours (contracted rmcp)", &["serve", "contracted"]), own("plain rmcp", &["serve", "plain"])];
    if options.blocking_stdio && options.transport == Transport::Stdio {
        specs.push(own("ours, stdio()", &["serve", "contracted", "--blocking-stdio"]));
        specs.push(own("plain rmcp, stdio()", &["serve", "plain", "--blocking-stdio"]));
    }
    match tower_mcp_binary() {
        Ok(program) => specs.push(Spec { name: "tower-mcp", program, args: Vec::new() }),
        Err(note) => notes.push(note),
    }
    // contract-proxy in front of plain rmcp, over stdio: the proxy's own process is what it
    // adds (its CPU column is the added CPU; the server behind it is the plain rmcp row's).
    if options.transport == Transport::Stdio {
        let proxy = exe
            .parent()
            .and_then(Path::parent)
            .map(|dir| dir.join(format!("contract-proxy{}", std::env::consts::EXE_SUFFIX)))
            .filter(|path| path.exists());
        match proxy {
            Some(program) => specs.push(Spec {
                name: "contract-proxy → plain rmcp",
                program,
                args: vec!["--".to_owned(), exe.to_string_lossy().into_owned(), "serve".to_owned(), "plain".to_owned()],
            }),
            None => notes.push(
                "contract-proxy: not built, its row is skipped (build it with `cargo build --release -p \
                 contract-proxy`)"
                    .to_owned(),
            ),
        }
    }
    let script = |file: &str| interop.join("peers").join(file).to_string_lossy().into_owned();
    specs.push(Spec {
        name: "TypeScript McpServer",
        program: PathBuf::from("node"),
        args: vec![script("ts_server.mjs")],
    });
    specs.push(Spec { name: "Python MCPServer", program: python, args: vec![script("py_server.py")] });
    // The floor answers only the page; it has no recipe to break and no HTTP mode.
    if options.transport == Transport::Stdio && !options.invalid {
        specs.push(own("floor (canned answers)", &["serve", "floor"]));
    }
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
        "{key}  {:<32} {:>11} {:>10} {:>10} {:>8}  {:>12}  {:>13}  {:>12}",
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
            "{key}  {:<32} {rate:>11.0} {:>10.0} {:>10.0} {:>8}  {ratio:>12}  {cpu_text:>13}  {cpu_ratio:>12}",
            names[p],
            percentile(&row.latencies, 0.50).as_secs_f64() * 1e6,
            percentile(&row.latencies, 0.99).as_secs_f64() * 1e6,
            row.latencies.len(),
        );
    }
}

fn call_params(query: &str, limit: u32) -> String {
    format!(r#"{{"name":"{TOOL}","arguments":{{"query":"{query}","limit":{limit}}}}}"#)
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

// ---------------------------------------------------------------- stdio

async fn run_stdio(options: &Options) -> Result<(), String> {
    let mut notes = Vec::new();
    let mut peers = Vec::new();
    for spec in specs(options, &mut notes)? {
        let args: Vec<&str> = spec.args.iter().map(String::as_str).collect();
        let name = if spec.name == "tower-mcp" { "tower-mcp (its stdio)" } else { spec.name };
        peers.push(Peer::spawn(name, &spec.program, &args).await?);
    }
    if options.invalid {
        println!(
            "invalid result probe over stdio: `{TOOL}` with query `{INVALID_QUERY}` (the first ticket has no title)"
        );
        print_notes(&notes);
        let params = call_params(INVALID_QUERY, 2);
        for peer in &mut peers {
            peer.request("tools/call", &params).await?;
            let reply: Value =
                serde_json::from_str(&peer.line).map_err(|err| format!("{}: not JSON: {err}", peer.name))?;
            println!("  {:<24} {}", peer.name, judge_invalid(&reply));
        }
        shut_down(&mut peers).await;
        return Ok(());
    }
    let path = validation_path()?;
    let params: Vec<String> = options.sizes.iter().map(|n| call_params(QUERY, *n)).collect();
    for (size, params) in options.sizes.iter().zip(&params) {
        let expected = serde_json::to_value(page(QUERY, *size)).map_err(|err| err.to_string())?;
        for peer in &mut peers {
            peer.verify(params, &expected).await?;
        }
    }
    let count = peers.len();
    // [size][peer]
    let mut stats = vec![vec![Stats::default(); count]; options.sizes.len()];
    let mut discard = Vec::new();
    for round in 0..=options.rounds {
        for (s, params) in params.iter().enumerate() {
            for k in 0..count {
                let p = (k + round) % count;
                if round == 0 {
                    let _ = peers[p].round(params, options.round, &mut discard).await?;
                    discard.clear();
                } else {
                    let (rate, spent) = peers[p].round(params, options.round, &mut stats[s][p].latencies).await?;
                    stats[s][p].add(rate, spent);
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
        "stdio transports: ours and plain rmcp: rmcp's stdio_pipes(){}; tower-mcp: its StdioTransport (reactor pipes \
         on Linux); TypeScript: StdioServerTransport; Python: the SDK's stdio",
        if options.blocking_stdio { " (the `stdio()` rows: rmcp's stdio())" } else { "" }
    );
    print_notes(&notes);
    print_header(&format!("{:>6}", "items"));
    let names: Vec<String> = peers.iter().map(|p| p.name.clone()).collect();
    for (s, size) in options.sizes.iter().enumerate() {
        print_group(&format!("{size:>6}"), &names, &mut stats[s]);
    }
    shut_down(&mut peers).await;
    Ok(())
}

async fn shut_down(peers: &mut [Peer]) {
    for peer in peers {
        // Closing stdin is the stdio shutdown; a server that lingers is killed.
        let _ = peer.stdin.shutdown().await;
        if tokio::time::timeout(Duration::from_secs(2), peer.child.wait()).await.is_err() {
            let _ = peer.child.kill().await;
        }
    }
}

/// Which path of the rmcp adapter validates the result, and whether the contract would be
/// covered in-process.
fn validation_path() -> Result<String, String> {
    // Under `ContractedServer` the result is validated on the `Value` path (the wrapper
    // judges the `structuredContent` it will send); the text block and the NaN check are
    // one pass in our `Json`.
    Ok(match TicketPage::try_contract().map(contract_runtime::OutputContract::fast_path) {
        Ok(contract_runtime::fast::Coverage::Covered) => {
            "Value + jsonschema path of the rmcp adapter (in-process, the Pipeline would take the fast path)".to_owned()
        }
        Ok(contract_runtime::fast::Coverage::Fallback(why)) => format!("Value + jsonschema path ({why})"),
        Ok(other) => format!("{other:?}"),
        Err(err) => return Err(err.to_string()),
    })
}

// ---------------------------------------------------------------- streamable HTTP

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

/// The two ways a client speaks to an HTTP server.
#[derive(Clone, Copy, PartialEq, Eq)]
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

/// The `_meta` of a 2026-07-28 request.
const STATELESS_META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"peers","version":"1"}}"#;

/// One keep-alive connection (and, in the 2025 era, its session).
struct Conn {
    sender: Sender,
    addr: SocketAddr,
    era: Era,
    session: Option<String>,
    next_id: u64,
}

/// What one POST brought back: the status and the body.
struct Answer {
    status: hyper::StatusCode,
    session: Option<String>,
    body: Bytes,
}

impl Answer {
    /// The JSON-RPC messages of the body: one JSON object, or the `data:` lines of an SSE
    /// stream.
    fn messages(&self) -> Vec<Value> {
        if self.body.first() == Some(&b'{') {
            return serde_json::from_slice::<Value>(&self.body).map(|v| vec![v]).unwrap_or_default();
        }
        self.body
            .split(|&b| b == b'\n')
            .filter_map(|line| line.strip_prefix(b"data:"))
            .filter_map(|data| serde_json::from_slice(data.trim_ascii()).ok())
            .collect()
    }

    fn text(&self) -> String {
        truncated(&String::from_utf8_lossy(&self.body)).to_owned()
    }
}

impl Conn {
    async fn open(addr: SocketAddr, era: Era) -> Result<Self, String> {
        let stream = tokio::net::TcpStream::connect(addr).await.map_err(|e| format!("connect: {e}"))?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        let (sender, connection) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(|e| format!("handshake: {e}"))?;
        tokio::spawn(connection);
        let mut conn = Self { sender, addr, era, session: None, next_id: 0 };
        if era == Era::Sessions {
            let init = format!(
                r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{PROTOCOL}","capabilities":{{}},"clientInfo":{{"name":"peers","version":"1"}}}}}}"#
            );
            let answer = conn.post("initialize", init).await?;
            conn.session = Some(answer.session.clone().ok_or_else(|| {
                format!("no Mcp-Session-Id on the initialize response (HTTP {}: {})", answer.status, answer.text())
            })?);
            conn.post(
                "notifications/initialized",
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
            )
            .await?;
        }
        Ok(conn)
    }

    async fn post(&mut self, method: &str, body: String) -> Result<Answer, String> {
        let mut request = hyper::Request::post("/mcp")
            .header(HOST, self.addr.to_string())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream");
        match (self.era, &self.session) {
            (Era::Sessions, Some(session)) => {
                request = request.header("mcp-session-id", session).header("mcp-protocol-version", PROTOCOL);
            }
            (Era::Sessions, None) => {}
            (Era::Stateless, _) => {
                request = request.header("mcp-protocol-version", STATELESS).header("mcp-method", method);
                if method == "tools/call" {
                    request = request.header("mcp-name", TOOL);
                }
            }
        }
        let request = request.body(Full::new(Bytes::from(body))).map_err(|e| e.to_string())?;
        self.sender.ready().await.map_err(|e| format!("connection: {e}"))?;
        let response = self.sender.send_request(request).await.map_err(|e| format!("send: {e}"))?;
        let status = response.status();
        let session = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
        let body = response.into_body().collect().await.map_err(|e| format!("body: {e}"))?.to_bytes();
        Ok(Answer { status, session, body })
    }

    /// One `tools/call` with `arguments` (a JSON object's text); the answer and the id
    /// it must carry.
    async fn call(&mut self, arguments: &str) -> Result<(Answer, u64), String> {
        self.next_id += 1;
        let id = self.next_id;
        let meta = if self.era == Era::Stateless { format!(r#","_meta":{STATELESS_META}"#) } else { String::new() };
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{TOOL}","arguments":{arguments}{meta}}}}}"#
        );
        Ok((self.post("tools/call", body).await?, id))
    }

    /// The response to call `id` in `answer`, parsed.
    fn response(answer: &Answer, id: u64) -> Result<Value, String> {
        answer
            .messages()
            .into_iter()
            .find(|m| m["id"] == id)
            .ok_or_else(|| format!("no response to call {id} (HTTP {}: {})", answer.status, answer.text()))
    }
}

/// One table row over HTTP: a server in one era, with its connections open.
struct HttpRow {
    name: String,
    pid: Option<u32>,
    conns: Vec<Conn>,
}

/// One server process listening on a loopback port.
struct HttpServer {
    name: &'static str,
    child: Child,
    addr: SocketAddr,
}

impl HttpServer {
    async fn spawn(spec: &Spec) -> Result<Self, String> {
        let name = spec.name;
        let mut child = Command::new(&spec.program)
            .args(&spec.args)
            .args(["--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|err| format!("{name}: cannot start `{}`: {err}", spec.program.display()))?;
        let mut lines = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
        let addr = loop {
            let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
                .await
                .map_err(|_| format!("{name}: no `listening on` line within 30 s"))?
                .map_err(|err| format!("{name}: {err}"))?
                .ok_or_else(|| format!("{name}: exited before listening"))?;
            if let Some(url) = line.trim().strip_prefix("listening on http://") {
                let addr = url.trim_end_matches("/mcp");
                break addr.parse::<SocketAddr>().map_err(|err| format!("{name}: address `{addr}`: {err}"))?;
            }
        };
        // Keep reading stdout so that the server never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(Self { name, child, addr })
    }

    /// A row in `era` with `connections` connections, each call checked in full at
    /// every size.
    async fn row(&self, era: Era, connections: usize, sizes: &[u32]) -> Result<HttpRow, String> {
        let mut conns = Vec::with_capacity(connections);
        for _ in 0..connections {
            conns.push(Conn::open(self.addr, era).await?);
        }
        for &size in sizes {
            let expected = serde_json::to_value(page(QUERY, size)).map_err(|err| err.to_string())?;
            for conn in &mut conns {
                let (answer, id) = conn.call(&arguments(QUERY, size)).await?;
                let reply = Conn::response(&answer, id)?;
                let result = &reply["result"];
                if result.is_null() || result["isError"] == Value::Bool(true) {
                    return Err(format!("not a success: {}", truncated(&reply.to_string())));
                }
                if result["structuredContent"] != expected {
                    return Err("structuredContent differs from the expected page".to_owned());
                }
                let text = result["content"][0]["text"].as_str().unwrap_or_default();
                if serde_json::from_str::<Value>(text).ok().as_ref() != Some(&expected) {
                    return Err("the text block is not the expected page".to_owned());
                }
            }
        }
        Ok(HttpRow { name: format!("{} {}", self.name, era.label()), pid: self.child.id(), conns })
    }
}

fn arguments(query: &str, limit: u32) -> String {
    format!(r#"{{"query":"{query}","limit":{limit}}}"#)
}

/// One connection's sequential calls for `span`, each checked cheaply (the full check ran
/// before): its latencies, or the first failure.
async fn http_calls(mut conn: Conn, arguments: Arc<str>, span: Duration) -> (Conn, Result<Vec<Duration>, String>) {
    let mut latencies = Vec::new();
    let start = Instant::now();
    while latencies.len() < 3 || start.elapsed() < span {
        let sent = Instant::now();
        let (answer, id) = match conn.call(&arguments).await {
            Ok(answer) => answer,
            Err(err) => return (conn, Err(err)),
        };
        latencies.push(sent.elapsed());
        let body = &answer.body[..];
        let has = |needle: &[u8]| memfind(body, needle);
        let id_text = format!("\"id\":{id}");
        if !answer.status.is_success()
            || !has(id_text.as_bytes())
            || !has(b"\"structuredContent\"")
            || has(b"\"isError\":true")
        {
            return (conn, Err(format!("a call failed (HTTP {}): {}", answer.status, answer.text())));
        }
    }
    (conn, Ok(latencies))
}

fn memfind(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

impl HttpRow {
    /// `connections` of this row's connections calling at once for `span`: calls/s over
    /// all of them, and the server's CPU time over the round.
    async fn round(
        &mut self,
        arguments: &Arc<str>,
        connections: usize,
        span: Duration,
        latencies: &mut Vec<Duration>,
    ) -> Result<(f64, Option<(Duration, u32)>), String> {
        let cpu_start = self.pid.and_then(process_cpu);
        let start = Instant::now();
        let tasks: Vec<_> = self
            .conns
            .drain(..connections)
            .map(|conn| tokio::spawn(http_calls(conn, arguments.clone(), span)))
            .collect();
        let mut calls = 0u32;
        let mut failure = None;
        let mut back = Vec::with_capacity(connections);
        for task in tasks {
            let (conn, outcome) = task.await.map_err(|err| format!("{}: {err}", self.name))?;
            back.push(conn);
            match outcome {
                Ok(done) => {
                    calls += u32::try_from(done.len()).unwrap_or(u32::MAX);
                    latencies.extend(done);
                }
                Err(err) => failure = failure.or(Some(err)),
            }
        }
        let elapsed = start.elapsed();
        back.append(&mut self.conns);
        self.conns = back;
        if let Some(err) = failure {
            return Err(format!("{}: {err}", self.name));
        }
        let cpu = match (cpu_start, self.pid.and_then(process_cpu)) {
            (Some(a), Some(b)) => Some((b.saturating_sub(a), calls)),
            _ => None,
        };
        Ok((f64::from(calls) / elapsed.as_secs_f64(), cpu))
    }
}

async fn run_http(options: &Options) -> Result<(), String> {
    let mut notes = Vec::new();
    let mut servers = Vec::new();
    for spec in specs(options, &mut notes)? {
        servers.push(HttpServer::spawn(&spec).await?);
    }
    let most = options.connections.iter().copied().max().unwrap_or(1);
    if options.invalid {
        println!("invalid result probe over streamable HTTP: `{TOOL}` with query `{INVALID_QUERY}` (the first ticket has no title)");
        print_notes(&notes);
        for server in &servers {
            for era in [Era::Sessions, Era::Stateless] {
                let probe = async {
                    let mut conn = Conn::open(server.addr, era).await?;
                    let (answer, id) = conn.call(&arguments(INVALID_QUERY, 2)).await?;
                    Conn::response(&answer, id).map(|reply| (answer.status, reply))
                };
                let label = format!("{} {}", server.name, era.label());
                match probe.await {
                    Ok((status, reply)) => println!("  {label:<32} HTTP {status}: {}", judge_invalid(&reply)),
                    Err(err) => println!("  {label:<32} no answer in this era: {err}"),
                }
            }
        }
        return Ok(());
    }
    let mut rows = Vec::new();
    for server in &servers {
        for era in [Era::Sessions, Era::Stateless] {
            match server.row(era, most, &options.sizes).await {
                Ok(row) => rows.push(row),
                Err(err) if rows.is_empty() => return Err(format!("{} {}: {err}", server.name, era.label())),
                Err(err) => notes.push(format!("{} {}: no row: {err}", server.name, era.label())),
            }
        }
    }
    let count = rows.len();
    let arguments: Vec<Arc<str>> = options.sizes.iter().map(|&n| Arc::from(arguments(QUERY, n))).collect();
    // [size][connections][row]
    let mut stats = vec![vec![vec![Stats::default(); count]; options.connections.len()]; options.sizes.len()];
    let mut discard = Vec::new();
    for round in 0..=options.rounds {
        for (s, arguments) in arguments.iter().enumerate() {
            for (c, &connections) in options.connections.iter().enumerate() {
                for k in 0..count {
                    let p = (k + round) % count;
                    if round == 0 {
                        let _ = rows[p].round(arguments, connections, options.round, &mut discard).await?;
                        discard.clear();
                    } else {
                        let cell = &mut stats[s][c][p];
                        let (rate, spent) =
                            rows[p].round(arguments, connections, options.round, &mut cell.latencies).await?;
                        cell.add(rate, spent);
                    }
                }
            }
        }
    }
    println!(
        "peers end to end: `{TOOL}` over streamable HTTP (loopback, keep-alive, TCP_NODELAY), one client process; each \
         connection makes sequential calls; {} interleaved rounds of {} ms per server, size and connection count \
         (after one warm-up round); calls/s = median over rounds (all connections), p50/p99 over every call, \
         wall-clock; CPU = the server process's, per call",
        options.rounds,
        options.round.as_millis()
    );
    println!("ours validates `{TOOL}` on the {}", validation_path()?);
    println!(
        "servers: ours: contract_runtime::http's front + rmcp StreamableHttpService (JSON answers); plain rmcp: \
         StreamableHttpService, default configuration (SSE answers) in axum; tower-mcp: HttpTransport in axum; \
         TypeScript: StreamableHTTPServerTransport (JSON responses) on node:http; Python: streamable_http_app \
         (JSON responses) on uvicorn; every Rust server on a current-thread runtime"
    );
    print_notes(&notes);
    print_header(&format!("{:>6} {:>5}", "items", "conns"));
    let names: Vec<String> = rows.iter().map(|r| r.name.clone()).collect();
    for (s, size) in options.sizes.iter().enumerate() {
        for (c, connections) in options.connections.iter().enumerate() {
            print_group(&format!("{size:>6} {connections:>5}"), &names, &mut stats[s][c]);
        }
    }
    drop(rows);
    for mut server in servers {
        let _ = server.child.kill().await;
    }
    Ok(())
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
    if args.first().map(String::as_str) == Some("serve") {
        let kind = args.get(1).map_or("", String::as_str);
        let blocking = args.iter().any(|a| a == "--blocking-stdio");
        let http = args.iter().position(|a| a == "--http").and_then(|i| args.get(i + 1)).map(String::as_str);
        return run_server(kind, blocking, http);
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
