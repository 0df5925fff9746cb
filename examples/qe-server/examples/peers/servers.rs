//! The Rust servers the peers command runs as children: ours (contracted), plain rmcp
//! and the floor, over stdio or streamable HTTP. Ours and plain rmcp have two tools: the
//! page (`search_tickets_page`, an object root) and its tickets alone (`search_tickets`,
//! an array root).

#[allow(clippy::wildcard_imports)] // One program split by concern: the parent holds what they share.
use super::*;
use qe_server::contracts::SearchTickets;

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

    #[tool(description = "The `limit` generated tickets of the page, as a top-level array.")]
    async fn search_tickets(&self, Parameters(args): Parameters<PageArgs>) -> Result<Json<SearchTickets>, ToolError> {
        Ok(Json(SearchTickets(page(&args.query, args.limit).tickets)))
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

    #[tool(description = "The `limit` generated tickets of the page, as a top-level array.")]
    async fn search_tickets(
        &self,
        Parameters(args): Parameters<PageArgs>,
    ) -> rmcp::handler::server::wrapper::Json<SearchTickets> {
        rmcp::handler::server::wrapper::Json(SearchTickets(page(&args.query, args.limit).tickets))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Plain {}

/// How a Rust server serves stdio.
#[derive(Clone, Copy)]
pub(super) enum StdioMode {
    /// Ours: the library's `contract_runtime::rmcp::serve_stdio`; plain rmcp: rmcp's
    /// `serve` on its `stdio_pipes()`.
    Default,
    /// `--pipes`: rmcp's `serve` on `stdio_pipes()`, for ours too.
    Pipes,
    /// `--blocking-stdio`: rmcp's `serve` on its `stdio()` (blocking-pool reads and writes).
    Blocking,
}

/// Serves `handler` over stdio, as `how` says; `ours` picks the library's `serve_stdio`
/// for [`StdioMode::Default`].
async fn serve<H: ServerHandler>(handler: H, how: StdioMode, ours: bool) -> Result<(), Box<dyn std::error::Error>> {
    match how {
        StdioMode::Default if ours => {
            contract_runtime::rmcp::serve_stdio(handler).await?;
        }
        StdioMode::Default | StdioMode::Pipes => {
            handler.serve(rmcp::transport::stdio_pipes()).await?.waiting().await?;
        }
        StdioMode::Blocking => {
            handler.serve(rmcp::transport::stdio()).await?.waiting().await?;
        }
    }
    Ok(())
}

/// Resolves once this process's stdin reaches its end: an HTTP server stops then, so a
/// client that started it with a piped stdin ends it cleanly by closing that pipe (what
/// a run under callgrind needs to write its profile).
async fn stdin_closed() {
    use tokio::io::AsyncReadExt;
    let mut stdin = tokio::io::stdin();
    let mut buf = [0u8; 64];
    while matches!(stdin.read(&mut buf).await, Ok(n) if n > 0) {}
}

/// Binds `addr` and says where on stdout (the line the client waits for).
async fn listen(addr: &str) -> Result<tokio::net::TcpListener, Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    Ok(listener)
}

/// Ours over streamable HTTP: the library's front before rmcp's service, served by its
/// `serve` (`TCP_NODELAY`, the connection cap, the header deadline) until stdin closes.
async fn serve_http_contracted(
    server: ContractedServer<Contracted>,
    addr: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    use contract_runtime::http::{HttpLimits, McpLayer};
    let limits = HttpLimits::default();
    let app = axum::Router::new().nest_service("/mcp", McpLayer::new(limits.clone()).service(server));
    let listener = listen(addr).await?;
    tokio::select! {
        () = contract_runtime::http::serve(listener, app, &limits) => {}
        () = stdin_closed() => {}
    }
    Ok(())
}

/// Plain rmcp over streamable HTTP: its `StreamableHttpService` with the default
/// configuration (sessions, SSE answers) in axum, with `TCP_NODELAY` as every HTTP server
/// here has it, until stdin closes.
async fn serve_http_plain(addr: &str) -> Result<(), Box<dyn std::error::Error>> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
    use std::future::IntoFuture as _;
    let service = StreamableHttpService::new(
        || Ok(Plain { tool_router: Plain::tool_router() }),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = axum::serve::ListenerExt::tap_io(listen(addr).await?, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    tokio::select! {
        served = axum::serve(listener, app).into_future() => served?,
        () = stdin_closed() => {}
    }
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

pub(super) fn run_server(kind: &str, stdio: StdioMode, http: Option<&str>) -> ExitCode {
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
                    contract_runtime::contracts![TicketPage, SearchTickets],
                )?;
                match http {
                    Some(addr) => serve_http_contracted(server, addr).await,
                    None => serve(server, stdio, true).await,
                }
            }
            "plain" => match http {
                Some(addr) => serve_http_plain(addr).await,
                None => serve(Plain { tool_router: Plain::tool_router() }, stdio, false).await,
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
