//! Serving over stdin/stdout the fast way (cargo feature `stdio`).
//!
//! rmcp's `stdio()` runs every read of stdin and every write to stdout on tokio's
//! blocking thread pool: each message crosses threads twice. MCP clients launch a stdio
//! server with both streams as pipes, and a pipe can be read and written without
//! blocking, on tokio's IO reactor: [`stdio_pipes`] does that when both streams are
//! pipes (on Linux, through its own non-blocking descriptors, so the process's own
//! streams and its children keep their blocking flags) and falls back to `stdio()` by
//! itself on anything else — a file, a terminal, `/dev/null`, another OS. Measured end
//! to end, the same contracted server answers about 3x more one-item calls per second
//! on pipes read this way (BENCHMARKS.md, "Peers end to end").

use std::fmt;

use rmcp::service::{QuitReason, ServerInitializeError};
use rmcp::{ServerHandler, ServiceExt};

/// The stdio transport for [`ServiceExt::serve`]: non-blocking pipes when stdin and
/// stdout are both pipes, rmcp's blocking `stdio()` handles otherwise.
///
/// # Panics
///
/// Outside a tokio runtime with IO enabled (on Linux, where the pipes are registered
/// with the runtime's reactor).
pub use rmcp::transport::stdio_pipes;

/// Serves one client over stdin/stdout with [`stdio_pipes`] until it disconnects (or
/// the service is cancelled), and says why it stopped.
///
/// A plain `tools/call` request line is read by its keys into the request rmcp's own
/// reader would make, about a sixth of what that reader spends on it (rmcp tries the
/// line against each variant of its message enums); every other line is rmcp's to
/// read, in the order the client sent it. A contracted result goes out with its
/// `structuredContent` written from the text the contract checked rather than from its
/// tree; the JSON is the same. Where no completeness invariant needs the tree, it is
/// never built: between the adapter and the wire such a result carries its text alone
/// and no `structured_content`, and a handler of your own wrapped around
/// `ContractedServer` that reads or rewrites `structured_content` should serve with
/// rmcp's `serve(stdio_pipes())` instead, where every result carries its tree.
///
/// # Examples
///
/// ```no_run
/// # async fn run<H: rmcp::ServerHandler>(handler: H) -> Result<(), Box<dyn std::error::Error>> {
/// use contract_runtime::rmcp::{serve_stdio, ContractedServer};
///
/// let server = ContractedServer::new(handler, contract_runtime::ContractSet::new())?;
/// serve_stdio(server).await?;
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// [`StdioError::Handshake`] when the client closed stdin or sent something else before
/// completing `initialize`; [`StdioError::Stopped`] when the serving task panicked or
/// was aborted.
pub async fn serve_stdio<H: ServerHandler>(handler: H) -> Result<QuitReason, StdioError> {
    let (read, write) = stdio_pipes();
    let running =
        handler.serve(super::lane::Lane::new(read, write)).await.map_err(|err| StdioError::Handshake(Box::new(err)))?;
    running.waiting().await.map_err(|err| StdioError::Stopped(Box::new(err)))
}

/// Why [`serve_stdio`] ended without serving to the end.
#[derive(Debug)]
#[non_exhaustive]
pub enum StdioError {
    /// The MCP handshake did not complete.
    Handshake(Box<ServerInitializeError>),
    /// The task serving the connection panicked or was aborted.
    Stopped(Box<dyn std::error::Error + Send + Sync>),
}

impl fmt::Display for StdioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Handshake(err) => write!(f, "the MCP handshake over stdio failed: {err}"),
            Self::Stopped(err) => write!(f, "serving over stdio stopped: {err}"),
        }
    }
}

impl std::error::Error for StdioError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Handshake(err) => Some(err.as_ref()),
            Self::Stopped(err) => Some(err.as_ref()),
        }
    }
}
