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
mod transparent;
mod verdicts;

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser as _;
use contract_runtime::client::lock::{Lock, LockedServer, ServerSource};
use contract_runtime::pipeline::Pipeline;
use contract_runtime::ErrorShape;
use contract_runtime::{ContractSet, OutputContract};

use crate::transparent::Shared;
use crate::verdicts::{Mode, Policy};

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

    /// The revision the upstream session may be of: the client's own first request starts
    /// it. `2025-11-25` refuses a client's `server/discover` (the client then starts with
    /// `initialize`), for a server that speaks only that revision or ignores an unknown
    /// first request; `auto` (the default) and `2026-07-28` let it through as it came.
    #[arg(long, value_name = "REVISION", default_value = "auto", value_parser = ["auto", "2026-07-28", "2025-11-25"])]
    upstream_protocol: String,

    /// Log violations let through, refusals and quarantines (`info`), or only warnings.
    #[arg(long, value_name = "LEVEL", default_value = "warn")]
    log_level: tracing::Level,
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
    // One upstream session per client session, the client's own.
    if let Some(addr) = cli.http {
        return transparent::http::serve(addr, target, source, policy, timeout, legacy_only).await;
    }
    let shared = Arc::new(Shared::fresh(policy, timeout));
    transparent::serve(&target, &source, shared, legacy_only).await
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
