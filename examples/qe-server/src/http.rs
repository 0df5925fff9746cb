//! Streamable HTTP serving (feature `server`): `contract_runtime::http`'s front (limits,
//! JSON-RPC error bodies, the session cap and idle expiry, JSON answers instead of SSE)
//! before rmcp's `StreamableHttpService`, mounted in axum at `/mcp`, and its `serve`
//! for the connections (`TCP_NODELAY`, a connection cap, a header deadline). What each
//! limit answers is in `contract_runtime::http`.

use std::net::SocketAddr;

use axum::http::StatusCode;
pub use contract_runtime::http::HttpLimits;
use contract_runtime::http::McpLayer;
use contract_runtime::rmcp::ContractedServer;

use crate::server::QeServer;

/// Binds `addr` for [`serve`].
///
/// # Errors
///
/// The address cannot be bound.
pub async fn bind(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(addr).await
}

/// Serves streamable HTTP at `http://{listener address}/mcp` until the process ends;
/// any other path is `404`.
pub async fn serve(server: ContractedServer<QeServer>, listener: tokio::net::TcpListener, limits: HttpLimits) {
    let app = axum::Router::new()
        .nest_service("/mcp", McpLayer::new(limits.clone()).service(server))
        .fallback(|| async { (StatusCode::NOT_FOUND, "Not Found: the MCP endpoint is /mcp") });
    contract_runtime::http::serve(listener, app, &limits).await;
}
