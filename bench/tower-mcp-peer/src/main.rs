//! The peers benchmark's tower-mcp server (examples/qe-server/examples/peers/ drives
//! it): `search_tickets_page` built with tower-mcp's `ToolBuilder`, its output schema
//! derived from the page types with `output_schema_for`, and the `schema-validation`
//! feature checking the arguments against the `inputSchema` and every `structuredContent`
//! against the `outputSchema`. `search_tickets` returns the same page's tickets as a
//! top-level array (the peers command's `--root array`), the same way.
//!
//! ```text
//! tower-mcp-peer                      # stdio: tower-mcp's StdioTransport (reactor pipes on Linux)
//! tower-mcp-peer --http 127.0.0.1:0   # streamable HTTP at /mcp; prints `listening on http://ADDR/mcp`
//! ```
//!
//! The page types repeat qe-server's `TicketPage` (schemas/search_tickets_page.json) with
//! serde and schemars alone, so that this project does not build the contract runtime.
//! The query `invalid` makes the recipe leave `title` out of the first ticket: a result
//! that breaks the output schema, to show what the server does with one.

use std::process::ExitCode;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tower_mcp::{CallToolResult, HttpTransport, McpRouter, StdioTransport, ToolBuilder};

/// The query that makes the recipe break its result.
const INVALID_QUERY: &str = "invalid";

/// Arguments of `search_tickets_page`.
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

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Ticket {
    id: String,
    title: String,
    status: TicketStatus,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum TicketStatus {
    Open,
    Closed,
}

// Every variant is in the schema; the recipe builds only complete pages.
#[allow(dead_code)]
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Disposition {
    Complete,
    Partial,
    Unknown,
    Unavailable,
}

#[allow(dead_code)]
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Truncation {
    None,
    Client,
    Server,
    Unknown,
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Completeness {
    disposition: Disposition,
    returned_count: u64,
    total_known: Option<u64>,
    pagination_complete: bool,
    truncation: Truncation,
    limitations: Vec<String>,
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TicketPage {
    query: String,
    tickets: Vec<Ticket>,
    next_cursor: Option<String>,
    completeness: Completeness,
}

/// The page every peer builds: `limit` generated tickets, complete.
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
        completeness: Completeness {
            disposition: Disposition::Complete,
            returned_count: u64::from(limit),
            total_known: Some(u64::from(limit)),
            pagination_complete: true,
            truncation: Truncation::None,
            limitations: Vec::new(),
        },
    }
}

fn router() -> McpRouter {
    let tool = ToolBuilder::new("search_tickets_page")
        .description("A page of `limit` generated tickets.")
        .output_schema_for::<TicketPage>()
        .handler(|args: PageArgs| async move {
            let page = page(&args.query, args.limit);
            if args.query != INVALID_QUERY {
                return CallToolResult::from_serialize(&page);
            }
            let mut value = serde_json::to_value(&page).map_err(|e| tower_mcp::Error::tool(e.to_string()))?;
            if let Some(first) = value["tickets"].get_mut(0).and_then(serde_json::Value::as_object_mut) {
                first.remove("title");
            }
            Ok(CallToolResult::json(value))
        })
        .build();
    let array = ToolBuilder::new("search_tickets")
        .description("The `limit` generated tickets of the page, as a top-level array.")
        .output_schema_for::<Vec<Ticket>>()
        .handler(|args: PageArgs| async move { CallToolResult::from_serialize(&page(&args.query, args.limit).tickets) })
        .build();
    McpRouter::new().server_info("peers-tower-mcp", "1.0.0").tool(tool).tool(array)
}

async fn run(http: Option<String>) -> Result<(), Box<dyn std::error::Error>> {
    let Some(addr) = http else {
        StdioTransport::new(router()).run().await?;
        return Ok(());
    };
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    let app = HttpTransport::new(router()).into_router_at("/mcp");
    // TCP_NODELAY as every other HTTP server in the comparison has it; tower-mcp's own
    // `serve` leaves it off.
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app).await?;
    Ok(())
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let http = match (args.next().as_deref(), args.next()) {
        (None, _) => None,
        (Some("--http"), Some(addr)) => Some(addr),
        _ => {
            eprintln!("usage: tower-mcp-peer [--http HOST:PORT]");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("tower-mcp-peer: cannot start the runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(http)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("tower-mcp-peer: {err}");
            ExitCode::FAILURE
        }
    }
}
