//! `contract-proxy`: an enforcing MCP proxy for servers written in any language.
//!
//! It starts a stdio server (the command line after `--`) or connects to a streamable
//! HTTP one (`--upstream-url`), and serves MCP downstream over stdio (or `--http ADDR`).
//! It is a transparent relay: each client session is one upstream session, the client's
//! own, and everything the proxy does not judge passes as the server's (or the client's)
//! bytes, in order. Every request is forwarded both ways; `tools/list` and `tools/call` are enforced:
//! arguments are checked against each tool's advertised `inputSchema` before the call is
//! forwarded, results (a task's too) against its `outputSchema` (advertised, or declared
//! from `--contracts`), and with `--lock` a tool whose listing drifted from its pin is kept
//! from the client and its calls refused.

mod observe;
mod policy;
mod proxy;
mod transparent;

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser as _;
use contract_runtime::client::lock::{Lock, LockedServer, ServerSource};
use contract_runtime::http::{HttpLimits, McpLayer};
use contract_runtime::pipeline::Pipeline;
use contract_runtime::ErrorShape;
use contract_runtime::{ContractSet, OutputContract};
use rmcp::model::{InitializeResult, ProtocolVersion};
use rmcp::service::{ClientInitializeError, ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::Value;

use crate::policy::{Mode, Policy};
use crate::proxy::{Proxy, Relay, Shared};

/// Put an enforcing MCP proxy in front of any MCP server.
#[derive(Debug, clap::Parser)]
#[command(name = "contract-proxy", version, about, after_help = AFTER_HELP)]
#[non_exhaustive]
pub struct Cli {
    /// The upstream server's command line, for stdio: `contract-proxy -- node server.js`.
    #[arg(last = true, num_args = 1.., required_unless_present = "upstream_url")]
    command: Vec<String>,

    /// A streamable HTTP upstream, such as http://127.0.0.1:8000/mcp.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    upstream_url: Option<String>,

    /// Serve downstream over streamable HTTP on this address (at /mcp) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,

    /// A contract folder (canonical schema files and inventory.json, as `tool-contracts
    /// schemas` writes it): each contract is bound to the tool of its name, and is
    /// advertised and enforced for that tool when its server publishes no outputSchema; a
    /// result with no structuredContent has its one JSON text block lifted into it, and a
    /// result in a declared error shape becomes a tool_execution_error with the server's
    /// message. Every other listed tool is marked `qualified: false` in its `_meta`.
    #[arg(long, value_name = "DIR")]
    contracts: Option<PathBuf>,

    /// Bind a contract of --contracts to a tool of another name (repeatable).
    #[arg(long, value_name = "TOOL=CONTRACT", requires = "contracts")]
    bind: Vec<String>,

    /// A tools lock: tools whose listing drifted from their pin (changed text, a
    /// breaking change, a tool not in the lock) are removed from tools/list and their
    /// calls refused with `tool_quarantined`.
    #[arg(long, value_name = "FILE")]
    lock: Option<PathBuf>,

    /// What is done to a tool's calls: `enforce` (the default), `warn` (report-only:
    /// failures are logged and counted, and the client sees exactly what the server sent,
    /// a declared contract not even advertised) or `off` (nothing is checked). `*=MODE`
    /// sets every tool not named. Repeatable.
    #[arg(long, value_name = "TOOL=MODE")]
    mode: Vec<String>,

    /// A tool with an advertised outputSchema whose server answers only with a JSON text
    /// block: the text is parsed into structuredContent and validated (repeatable; a
    /// contract from --contracts lifts without it).
    #[arg(long, value_name = "TOOL")]
    lift_text: Vec<String>,

    /// Record what each tool's results look like in FILE (rewritten after every result):
    /// per tool and instance pointer, how many results carried each property, of which
    /// JSON types, and whether the tool's schema names it — counts and names, never
    /// values, bounded. `tool-contracts schemas --suggest FILE` reads it. Results of tools
    /// in `off` mode are not recorded.
    #[arg(long, value_name = "FILE")]
    observe: Option<PathBuf>,

    /// Seconds one forwarded request may take before the client gets an error.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    timeout: u64,

    /// How the upstream session starts: `auto` (the default) asks the upstream with
    /// `server/discover` whether it speaks 2026-07-28 and falls back to `initialize` when
    /// it answers that method with an error; `2026-07-28` or `2025-11-25` start that
    /// revision's session without asking (`2025-11-25` for a server that ignores an
    /// unknown first request: `auto` waits 10 s for it). Clients are offered no newer
    /// revision than the upstream session has.
    #[arg(long, value_name = "REVISION", default_value = "auto", value_parser = ["auto", "2026-07-28", "2025-11-25"])]
    upstream_protocol: String,

    /// Log violations let through, refusals and quarantines (`info`), or only warnings.
    #[arg(long, value_name = "LEVEL", default_value = "warn")]
    log_level: tracing::Level,

    /// With stdio on both sides, serve the client through rmcp's two halves (the proxy's
    /// own upstream session, messages decoded and re-encoded) instead of the transparent
    /// relay: the path `--http` and `--upstream-url` take, for comparison.
    #[arg(long, hide = true)]
    no_fast_lane: bool,
}

const AFTER_HELP: &str = "Refused calls and results are isError results whose one text block is
{\"error\": {\"code\", \"message\", \"retryable\", \"violations\"?}}, with code
invalid_arguments, output_contract_violation or tool_quarantined; a result that breaks its
contract and matches the error shape contracts.json declares beside it is the server's
error, tool_execution_error with the server's message (sanitized). Declared isError
results pass unchanged.

Exit status:
  0  the client disconnected
  1  the upstream server exited or closed the connection (over stdio)
  2  the proxy could not start (bad command line, unreadable --contracts or --lock, an
     upstream command that cannot be started)

The client's own session is the upstream's: its initialize starts it, and every message
the proxy does not judge passes as the bytes it came as, in order.";

/// Parses the proxy's command line from the process arguments and runs it.
#[must_use]
pub fn main() -> ExitCode {
    run_cli(Cli::parse())
}

/// Runs the proxy with parsed options until the client or the upstream goes away.
#[must_use]
pub fn run_cli(cli: Cli) -> ExitCode {
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_max_level(cli.log_level).init();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("contract-proxy: cannot start the async runtime: {err}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("contract-proxy: {err}");
            ExitCode::from(2)
        }
    }
}

async fn run(cli: Cli) -> Result<ExitCode, String> {
    let source = match &cli.upstream_url {
        Some(url) => ServerSource::Url(url.clone()),
        None => ServerSource::Command(cli.command.clone()),
    };
    let policy = policy(&cli, &source)?;
    let policy = Arc::new(policy);
    let timeout = Duration::from_secs(cli.timeout.max(1));
    let legacy_only = cli.upstream_protocol == "2025-11-25";
    let target = match &cli.upstream_url {
        Some(url) => transparent::Target::Url(url.clone()),
        None => transparent::Target::Command(cli.command.clone()),
    };
    if !cli.no_fast_lane {
        // The transparent relay: one upstream session per client session, the client's own.
        if let Some(addr) = cli.http {
            return transparent::http::serve(addr, target, source, policy, timeout, legacy_only).await;
        }
        let shared = Arc::new(Shared::fresh(policy, timeout));
        return transparent::serve(&target, &source, shared, legacy_only).await;
    }
    let shared = Arc::new(Shared::fresh(policy, timeout));
    let (running, child) = connect(&cli, &source, Arc::clone(&shared)).await?;
    let info = running.peer().peer_info().ok_or("the upstream server gave no initialize result")?;
    let info = initialize_result(&info)?;
    let upstream_name = format!("{} {}", info.server_info.name, info.server_info.version);
    let _ = shared.info.set(info);
    let _ = shared.upstream.set(running.peer().clone());
    if shared.info.get().is_some_and(|i| i.capabilities.tools.is_some()) {
        let listing =
            shared.relist().await.map_err(|err| format!("cannot list the upstream's tools: {}", err.message))?;
        tracing::info!(tools = listing.tools.len(), quarantined = listing.quarantined.len(), "upstream listed");
    }
    eprintln!("contract-proxy: upstream {upstream_name} connected ({source})");
    // The upstream going away ends the proxy: a client must not talk to a dead server.
    tokio::spawn(async move {
        let reason = running.waiting().await;
        let status = match child {
            Some(mut child) => match tokio::time::timeout(Duration::from_secs(2), child.wait()).await {
                Ok(Ok(status)) => format!(" ({status})"),
                _ => String::new(),
            },
            None => String::new(),
        };
        let why = match reason {
            Ok(reason) => format!("{reason:?}"),
            Err(err) => err.to_string(),
        };
        eprintln!("contract-proxy: the upstream server closed the connection{status}: {why}; exiting");
        std::process::exit(1);
    });
    let proxy = Proxy(shared);
    match cli.http {
        Some(addr) => serve_http(proxy, addr).await,
        None => match contract_runtime::rmcp::serve_stdio(proxy).await {
            Ok(_) => Ok(ExitCode::SUCCESS),
            Err(err) => Err(err.to_string()),
        },
    }
}

/// Serves `proxy` over streamable HTTP at `/mcp` behind the library's front.
async fn serve_http(proxy: Proxy, addr: SocketAddr) -> Result<ExitCode, String> {
    let limits = HttpLimits::default();
    let service = McpLayer::new(limits.clone()).service(proxy);
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener =
        tokio::net::TcpListener::bind(addr).await.map_err(|err| format!("cannot listen on {addr}: {err}"))?;
    let bound = listener.local_addr().map_err(|err| format!("cannot read the address bound: {err}"))?;
    eprintln!("contract-proxy: serving MCP on http://{bound}/mcp");
    contract_runtime::http::serve(listener, app, &limits).await;
    Ok(ExitCode::SUCCESS)
}

/// A running upstream connection and its child process (stdio).
type Connected = (RunningService<RoleClient, Relay>, Option<tokio::process::Child>);

/// Starts or connects to the upstream and completes its `initialize` (or `server/discover`).
async fn connect(cli: &Cli, source: &ServerSource, shared: Arc<Shared>) -> Result<Connected, String> {
    match start(cli, source, Arc::clone(&shared), lifecycle(cli)).await {
        // A server that answers `server/discover` with the revisions it speaks, none of
        // them 2026-07-28, is asked again the old way, on a fresh connection.
        Err(Start::Incompatible(why)) if cli.upstream_protocol == "auto" => {
            tracing::info!(upstream = %source, %why, "the upstream speaks no 2026-07-28; starting a 2025-11-25 session");
            start(cli, source, shared, ClientLifecycleMode::Initialize).await.map_err(Start::into_message)
        }
        other => other.map_err(Start::into_message),
    }
}

/// Why an upstream session did not start.
enum Start {
    /// The upstream named the revisions it speaks, and none is the one asked for.
    Incompatible(String),
    Failed(String),
}

impl Start {
    fn into_message(self) -> String {
        match self {
            Self::Incompatible(message) | Self::Failed(message) => message,
        }
    }
}

/// One attempt at an upstream session started `mode`'s way.
async fn start(
    cli: &Cli,
    source: &ServerSource,
    shared: Arc<Shared>,
    mode: ClientLifecycleMode,
) -> Result<Connected, Start> {
    let relay = Relay(Arc::clone(&shared));
    let limit = Duration::from_secs(cli.timeout.max(1));
    let failed = |context: String, err: ClientInitializeError| match err {
        ClientInitializeError::NoCompatibleProtocolVersion { .. } => Start::Incompatible(format!("{context}: {err}")),
        other => Start::Failed(format!("{context}: {other}")),
    };
    let overdue = || Start::Failed(format!("{source} did not complete initialize within {}s", limit.as_secs()));
    if let Some(url) = &cli.upstream_url {
        let transport = StreamableHttpClientTransport::from_uri(url.as_str());
        let running = tokio::time::timeout(limit, relay.serve_with_lifecycle(transport, mode))
            .await
            .map_err(|_| overdue())?
            .map_err(|err| failed(format!("cannot connect to {source}"), err))?;
        return Ok((running, None));
    }
    let (program, rest) = cli
        .command
        .split_first()
        .ok_or_else(|| Start::Failed("give a command line after `--` or --upstream-url".into()))?;
    // The upstream's stderr is the proxy's: its own messages reach whoever reads ours.
    let mut child = tokio::process::Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|err| Start::Failed(format!("cannot start {source}: {err}")))?;
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        return Err(Start::Failed(format!("cannot reach the pipes of {source}")));
    };
    let mut stdout = tokio::io::BufReader::new(stdout);
    let mut stdin = stdin;
    let mode = match mode {
        // Asked here rather than by rmcp's own probe, which gives a server 10 s to answer
        // however slowly it starts: a server the proxy starts gets the --timeout.
        ClientLifecycleMode::Auto { .. } => match tokio::time::timeout(limit, probe(&mut stdout, &mut stdin)).await {
            Ok(Ok(true)) => ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
            Ok(Ok(false)) => ClientLifecycleMode::Initialize,
            Ok(Err(err)) => {
                let status = child.try_wait().ok().flatten().map(|s| format!(" ({s})")).unwrap_or_default();
                return Err(Start::Failed(format!("{source} did not answer server/discover{status}: {err}")));
            }
            Err(_) => return Err(overdue()),
        },
        other => other,
    };
    let serving = tokio::time::timeout(limit, relay.serve_with_lifecycle((stdout, stdin), mode)).await;
    let running = match serving {
        Ok(Ok(running)) => running,
        Ok(Err(err)) => {
            let status = child.try_wait().ok().flatten().map(|s| format!(" ({s})")).unwrap_or_default();
            return Err(failed(format!("{source} did not complete initialize{status}"), err));
        }
        Err(_) => return Err(overdue()),
    };
    Ok((running, Some(child)))
}

/// The id of the proxy's own `server/discover`, which no rmcp request id can equal.
const PROBE_ID: &str = "contract-proxy:discover";

/// Asks a stdio server with `server/discover` whether it speaks 2026-07-28: a result says
/// it does, an error (method not found, an unsupported revision) that it does not. Lines
/// before the answer are dropped: a server sends nothing before its session starts.
async fn probe<R, W>(stdout: &mut R, stdin: &mut W) -> Result<bool, String>
where
    R: tokio::io::AsyncBufRead + Unpin,
    W: tokio::io::AsyncWrite + Unpin,
{
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let request = serde_json::json!({
        "jsonrpc": "2.0",
        "id": PROBE_ID,
        "method": "server/discover",
        "params": { "_meta": {
            "io.modelcontextprotocol/protocolVersion": ProtocolVersion::V_2026_07_28.as_str(),
            "io.modelcontextprotocol/clientInfo": { "name": "contract-proxy", "version": env!("CARGO_PKG_VERSION") },
            "io.modelcontextprotocol/clientCapabilities": {},
        } },
    });
    let mut line = request.to_string();
    line.push('\n');
    stdin.write_all(line.as_bytes()).await.map_err(|err| err.to_string())?;
    stdin.flush().await.map_err(|err| err.to_string())?;
    let mut answer = String::new();
    loop {
        answer.clear();
        if stdout.read_line(&mut answer).await.map_err(|err| err.to_string())? == 0 {
            return Err("it closed its output".to_owned());
        }
        let Ok(message) = serde_json::from_str::<Value>(&answer) else { continue };
        if message.get("id").and_then(Value::as_str) == Some(PROBE_ID) {
            return Ok(message.get("result").is_some());
        }
    }
}

/// How the upstream session starts, from `--upstream-protocol`.
fn lifecycle(cli: &Cli) -> ClientLifecycleMode {
    match cli.upstream_protocol.as_str() {
        "2025-11-25" => ClientLifecycleMode::Initialize,
        "2026-07-28" => ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
        _ => ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::V_2025_11_25),
        },
    }
}

/// The upstream's peer information as the `initialize` result the proxy advertises.
fn initialize_result(info: &impl serde::Serialize) -> Result<InitializeResult, String> {
    let mut value = serde_json::to_value(info).map_err(|err| err.to_string())?;
    if value.get("serverInfo").is_none_or(Value::is_null) {
        value["serverInfo"] = serde_json::json!({ "name": "upstream", "version": "0.0.0" });
    }
    serde_json::from_value(value).map_err(|err| format!("the upstream's initialize result is unusable: {err}"))
}

/// The policy the options describe.
fn policy(cli: &Cli, source: &ServerSource) -> Result<Policy, String> {
    let mut default_mode = Mode::Enforce;
    let mut modes = BTreeMap::new();
    for entry in &cli.mode {
        let (tool, mode) = entry.rsplit_once('=').ok_or_else(|| format!("--mode `{entry}`: write TOOL=MODE"))?;
        let mode = Mode::parse(mode)
            .ok_or_else(|| format!("--mode `{entry}`: the mode is enforce, warn or off, not `{mode}`"))?;
        if tool == "*" {
            default_mode = mode;
        } else {
            modes.insert(tool.to_owned(), mode);
        }
    }
    let (declared, error_shapes) = declared(cli)?;
    Ok(Policy {
        declared,
        error_shapes,
        lock: cli.lock.as_deref().map(|path| pinned(path, source)).transpose()?,
        default_mode,
        modes,
        lift_text: cli.lift_text.iter().cloned().collect::<BTreeSet<_>>(),
        qualify: cli.contracts.is_some(),
        observer: cli.observe.clone().map(observe::Observer::create).transpose()?,
        names_checked: std::sync::atomic::AtomicBool::new(false),
        pipeline: Pipeline::builder().build(),
        warned: AtomicU64::new(0),
    })
}

/// The contracts of `--contracts` by tool, with `--bind`, and the error shapes declared
/// beside them.
type Declarations = (BTreeMap<String, &'static OutputContract>, BTreeMap<String, ErrorShape>);

/// The contracts of `--contracts`, by tool, with `--bind`; and their error shapes.
fn declared(cli: &Cli) -> Result<Declarations, String> {
    let Some(dir) = &cli.contracts else { return Ok(Declarations::default()) };
    let set = ContractSet::load_dir(dir).map_err(|err| format!("--contracts {}: {err}", dir.display()))?;
    let mut declared: BTreeMap<String, &'static OutputContract> =
        set.bindings().map(|b| (b.tool().to_owned(), b.contract())).collect();
    for entry in &cli.bind {
        let (tool, name) = entry.split_once('=').ok_or_else(|| format!("--bind `{entry}`: write TOOL=CONTRACT"))?;
        let contract =
            set.get(name).ok_or_else(|| format!("--bind `{entry}`: {} holds no contract `{name}`", dir.display()))?;
        declared.insert(tool.to_owned(), contract);
    }
    let shapes = declared
        .iter()
        .filter_map(|(tool, contract)| set.error_shape(contract.name()).map(|shape| (tool.clone(), *shape)))
        .collect();
    Ok((declared, shapes))
}

/// The lock's pin of `source`; the lock's only server when it pins exactly one.
fn pinned(path: &Path, source: &ServerSource) -> Result<LockedServer, String> {
    let lock = Lock::read(path).map_err(|err| format!("--lock: {err}"))?;
    if let Some(server) = lock.server(source) {
        return Ok(server.clone());
    }
    match lock.servers.as_slice() {
        [only] => {
            tracing::info!(pinned = %only.source, upstream = %source, "the lock's only server stands for the upstream");
            Ok(only.clone())
        }
        _ => Err(format!("--lock {}: no server pinned for {source}", path.display())),
    }
}
