//! The library's streamable HTTP front served on a loopback port from a thread and
//! runtime of its own, for tests that drive it over real connections.

use std::net::SocketAddr;

use contract_runtime::http::{HttpLimits, McpService};

/// Serves `front` at `/mcp` on a free loopback port until the test process ends; its
/// address.
pub(crate) fn serve_on_thread<H>(front: McpService<H>, limits: HttpLimits) -> SocketAddr
where
    H: rmcp::ServerHandler + Clone + Send + Sync + 'static,
{
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.set_nonblocking(true).expect("non-blocking listener");
    let addr = listener.local_addr().expect("local address");
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("a tokio listener");
            let app = axum::Router::new().nest_service("/mcp", front);
            contract_runtime::http::serve(listener, app, &limits).await;
        });
    });
    addr
}
