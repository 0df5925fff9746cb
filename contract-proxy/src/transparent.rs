//! Stdio on both sides: the client's own session with the server, and the server's own
//! bytes.
//!
//! The proxy owns the four pipe ends and runs one reader per direction. Each reads its
//! pipe line by line and writes every line it forwards to the other side's [`Outbox`] in
//! the order it came, so nothing overtakes anything else. A line is forwarded as the bytes
//! it came as, unless the proxy judges it:
//!
//! - from the client, a `tools/call` request is read (its name and arguments) and gated:
//!   a refusal is answered here and the server never sees the call; a call that passes goes
//!   on as it came (the client's id, `_meta`, `task` and every other field). A `server/discover`
//!   is refused here when `--upstream-protocol 2025-11-25` says the session is of that
//!   revision. Every other line goes on unread but for its id and method.
//! - from the server, the answers to the client's `tools/list`, `tools/call`, `tasks/get`
//!   and `tasks/result` and the `notifications/tasks` that carry a task's result are read
//!   and judged. Only what the judge changes is written anew (a refused call's error
//!   result, an advertised `outputSchema`, a lifted `structuredContent`, the contract's
//!   `_meta`, a quarantined tool left out of a page); every other field of the message
//!   keeps the server's bytes. Everything else goes on unread but for its id and method.
//!
//! The proxy sends the server requests of its own only to learn the tools when a call
//! names one its listing does not know (or after `notifications/tools/list_changed`):
//! `tools/list` under ids of its own (`"contract-proxy/<pid>/N"`), whose answers the
//! client never sees.

mod book;
mod client;
mod endings;
pub(crate) mod http;
mod judge;
mod message;
mod pipes;
mod quick;
mod routes;
mod shared;
mod tasks;
mod upstream_http;
mod wire;

use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::time::Duration;

use contract_runtime::client::lock::ServerSource;

use pipes::Lines;
pub(crate) use pipes::Outbox;
pub(crate) use shared::Shared;
use wire::{Down, Up, Wire};

/// What the upstream is: a command line to start, or a URL.
#[derive(Clone, Debug)]
pub(crate) enum Target {
    Command(Vec<String>),
    Url(String),
}

/// The relay's state for one session, its timer started.
fn wire(shared: Arc<Shared>, legacy_only: bool, down: Down, up: Up) -> Arc<Wire> {
    let wire = Arc::new(Wire::new(shared, legacy_only, down, up));
    tokio::spawn(Arc::clone(&wire).expire());
    wire
}

/// The relay in front of an HTTP upstream, for one client session.
fn start_url(url: &str, shared: Arc<Shared>, legacy_only: bool, down: Down) -> Arc<Wire> {
    let (up, mut from_server) = upstream_http::HttpUp::new(url);
    let wire = wire(shared, legacy_only, down, Up::Http(up));
    // The server's messages, in the order they came, while the relay lives.
    let relay = Arc::downgrade(&wire);
    tokio::spawn(async move {
        while let Some(line) = from_server.recv().await {
            let Some(wire) = relay.upgrade() else { break };
            wire.server_line(&line).await;
        }
    });
    wire
}

/// One upstream session: the server's process, started, and the relay's state.
struct Session {
    wire: Arc<Wire>,
    child: tokio::process::Child,
    stdout: tokio::process::ChildStdout,
}

/// Starts the upstream command line for one client session, whose lines go to `down`.
fn start(
    command: &[String],
    source: &ServerSource,
    shared: Arc<Shared>,
    legacy_only: bool,
    down: Down,
) -> Result<Session, String> {
    let (program, rest) = command.split_first().ok_or("give a command line after `--` or --upstream-url")?;
    // The upstream's stderr is the proxy's: its own messages reach whoever reads ours.
    let mut child = tokio::process::Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|err| format!("cannot start {source}: {err}"))?;
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        return Err(format!("cannot reach the pipes of {source}"));
    };
    let wire = wire(shared, legacy_only, down, Up::Pipe(Outbox::spawn(stdin)));
    Ok(Session { wire, child, stdout })
}

/// Reads the server's lines in order until it closes its output; then every request in
/// flight gets an error, and the exit status of the process is returned.
async fn relay_upstream(
    wire: Arc<Wire>,
    stdout: tokio::process::ChildStdout,
    mut child: tokio::process::Child,
) -> String {
    let mut lines = Lines::new(stdout);
    while lines.next().await {
        wire.server_line(&lines.line).await;
        lines.line.clear();
    }
    wire.upstream_closed();
    match tokio::time::timeout(Duration::from_secs(2), child.wait()).await {
        Ok(Ok(status)) => format!(" ({status})"),
        _ => String::new(),
    }
}

/// Serves the client on the proxy's stdin and stdout in front of the upstream command
/// line, until either side goes away.
pub(crate) async fn serve(
    target: &Target,
    source: &ServerSource,
    shared: Arc<Shared>,
    legacy_only: bool,
) -> Result<ExitCode, String> {
    let (client_read, client_write) = contract_runtime::rmcp::stdio_pipes();
    let down = Down::Pipe(Outbox::spawn(client_write));
    let command = match target {
        Target::Command(command) => command,
        Target::Url(url) => {
            let wire = start_url(url, shared, legacy_only, down);
            eprintln!("contract-proxy: the client's own session goes to {source}");
            return serve_client(wire, client_read).await;
        }
    };
    let Session { wire, child, stdout } = start(command, source, shared, legacy_only, down)?;
    eprintln!("contract-proxy: upstream {source} started; the client's own session goes to it");

    // The server's side: its lines in order; its end ends the proxy.
    let server = Arc::clone(&wire);
    let source_name = source.to_string();
    tokio::spawn(async move {
        let status = relay_upstream(Arc::clone(&server), stdout, child).await;
        // The errors of the requests in flight reach the client first.
        let _ = tokio::time::timeout(Duration::from_secs(2), server.down.drained()).await;
        eprintln!("contract-proxy: the upstream server closed the connection{status}: {source_name} ended; exiting");
        std::process::exit(1);
    });

    serve_client(wire, client_read).await
}

/// The client's side, in order: its end ends the proxy once what it waits for is answered.
async fn serve_client(
    wire: Arc<Wire>,
    client_read: impl tokio::io::AsyncRead + Unpin + Send + 'static,
) -> Result<ExitCode, String> {
    let mut lines = Lines::new(client_read);
    while lines.next().await {
        wire.client_line(&lines.line).await;
        lines.line.clear();
    }
    let limit = wire.shared.timeout;
    let _ = tokio::time::timeout(limit, wire.all_settled()).await;
    let _ = tokio::time::timeout(limit, wire.down.drained()).await;
    let _ = tokio::time::timeout(limit, wire.up.drained()).await;
    let _ = tokio::time::timeout(limit, wire.up.close()).await;
    Ok(ExitCode::SUCCESS)
}
