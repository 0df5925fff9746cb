//! Accepting connections: `TCP_NODELAY`, a connection cap and a deadline for each
//! request head, none of which `axum::serve` sets (it gives hyper no timer, so hyper's
//! header timeout never runs, and accepts without bound).

use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
use hyper::body::Incoming;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower_service::Service;

use super::{BoxError, HttpLimits};

/// Serves `app` (an axum `Router`, or any tower service of HTTP requests) on the
/// connections of `listener`, HTTP/1.1, until the future is dropped. Each connection is
/// its own task with `TCP_NODELAY` set, so a client that misbehaves or vanishes affects
/// no other; at most [`HttpLimits::max_connections`] are served at once (further
/// clients wait in the kernel's backlog, holding no task or buffer), and a connection
/// whose request head has not arrived within [`HttpLimits::header_timeout`] is closed.
/// A failed `accept` (out of descriptors and the like) is retried after 50 ms.
pub async fn serve<S, B>(listener: TcpListener, app: S, limits: &HttpLimits)
where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let header_timeout = limits.header_timeout;
    loop {
        // Waiting for a slot before accepting leaves further clients in the backlog.
        let Ok(slot) = slots.clone().acquire_owned().await else { return };
        let Ok((stream, _peer)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        // Only fails on a socket that is already gone; the connection then ends by itself.
        let _ = stream.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let _slot = slot;
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(header_timeout)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            // A client that disconnects mid-request ends only its own connection.
            let _ = connection.await;
        });
    }
}
