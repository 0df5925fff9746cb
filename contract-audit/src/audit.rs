//! Connecting, listing, linting and calling.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use contract_runtime::client::rmcp::{CatalogWatch, Harness};
use contract_runtime::client::{CallOutcome, ContractInfo, FailureKind, FalseSuccess, KeyMismatch};
use contract_runtime::Violation;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use serde_json::Value;

use crate::lint::{lint_tool, Finding, Level};
use crate::published::{self, Listings, Tap};
use crate::stderr::Tail;
use crate::{synth, StderrMode, Target};

/// The whole audit of one server.
#[derive(Debug, serde::Serialize)]
pub(crate) struct Audit {
    pub(crate) server: ServerInfo,
    pub(crate) tools: Vec<ToolReport>,
    /// Every tool definition as listed (over all pages), by name; the first of a name
    /// listed twice.
    #[serde(skip)]
    pub(crate) listed: Vec<Value>,
    /// The names listed more than once.
    #[serde(skip)]
    pub(crate) duplicates: Vec<String>,
}

/// Which tools to call, and with what.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Calls<'a> {
    /// Call every tool (`--call`): with synthesized arguments, only those annotated
    /// `readOnlyHint: true`, unless `unsafe_too`.
    pub(crate) all: bool,
    /// Call tools that are not annotated read-only with synthesized arguments too
    /// (`--call-unsafe`); never one annotated `destructiveHint: true`.
    pub(crate) unsafe_too: bool,
    /// Arguments by tool name (`--args FILE`).
    pub(crate) file: Option<&'a Path>,
    /// Tools not to call.
    pub(crate) skip: &'a [String],
    /// Show the calls' progress on stderr (a table report; drawn only on a terminal).
    pub(crate) progress: bool,
    /// Instance pointers of values declared opaque, by tool (`--contracts FILE`): for a
    /// server that says nothing of its own open values.
    pub(crate) declared_open: Option<&'a BTreeMap<String, Vec<String>>>,
}

/// Who answered.
#[derive(Debug, serde::Serialize)]
pub(crate) struct ServerInfo {
    pub(crate) transport: &'static str,
    pub(crate) name: Option<String>,
    pub(crate) version: Option<String>,
    pub(crate) protocol: Option<String>,
}

/// Everything found about one tool.
#[derive(Debug, serde::Serialize)]
pub(crate) struct ToolReport {
    pub(crate) name: String,
    pub(crate) output_schema: bool,
    pub(crate) contract: Option<ContractInfo>,
    pub(crate) findings: Vec<Finding>,
    pub(crate) call: Option<CallReport>,
}

/// What one call did.
#[derive(Debug, serde::Serialize)]
pub(crate) struct CallReport {
    /// `file` or `synthesized`.
    pub(crate) arguments: &'static str,
    /// `valid`, `unvalidated`, `false-success` (no `isError`, but the value says it
    /// failed), `declared-error`, `contract-failure`, `arguments-invalid`, `not-called`,
    /// `timeout` or `transport-error`.
    pub(crate) result: &'static str,
    /// The declared error's code, or the failure's.
    pub(crate) code: Option<String>,
    /// A short, masked description.
    pub(crate) detail: String,
    /// Masked violations of a contract failure.
    pub(crate) violations: Vec<Violation>,
    /// Keys `structuredContent` and its one JSON text block do not share.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) mismatch: Option<KeyMismatch>,
    /// What says a result without `isError` failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) false_success: Option<FalseSuccess>,
    /// The SDK whose message a declared error is, when it refused the tool's own output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) refused_by: Option<&'static str>,
}

/// Runs the audit of `args`'s server, with `calls`. When a stdio server cannot be
/// audited, the error ends with the tail of its stderr (`--stderr tail`).
pub(crate) async fn run(args: &Target, calls: Calls<'_>) -> Result<Audit, String> {
    let plan = arguments_file(calls.file)?;
    let limit = Duration::from_secs(args.timeout.max(1));
    let watch = CatalogWatch::new("contract-audit", env!("CARGO_PKG_VERSION"));
    if let Some(url) = &args.url {
        eprintln!("contract-audit: connecting to {url}");
        let running = timed(limit, watch.clone().serve(StreamableHttpClientTransport::from_uri(url.as_str())))
            .await?
            .map_err(|err| format!("cannot connect to {url}: {err}"))?;
        return audit(calls, plan.as_ref(), limit, &watch, running, ("streamable-http", &Listings::default())).await;
    }
    let (program, rest) = args.command.split_first().ok_or("give a URL or a command line after `--`")?;
    eprintln!("contract-audit: starting {}", args.command.join(" "));
    // The child process lives as long as the connection; it is killed when dropped.
    let mut child = tokio::process::Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(match args.stderr {
            StderrMode::Tail => Stdio::piped(),
            StderrMode::Inherit => Stdio::inherit(),
            StderrMode::Discard => Stdio::null(),
        })
        .kill_on_drop(true)
        .spawn()
        .map_err(|err| format!("cannot start `{program}`: {err}"))?;
    let tail = child.stderr.take().map(Tail::capture);
    let listings = Listings::default();
    let stdout = Tap::new(child.stdout.take().ok_or("the child has no stdout")?, listings.clone());
    let stdin = child.stdin.take().ok_or("the child has no stdin")?;
    let err = match timed(limit, watch.clone().serve((stdout, stdin))).await {
        Ok(Ok(running)) => match audit(calls, plan.as_ref(), limit, &watch, running, ("stdio", &listings)).await {
            Ok(audit) => return Ok(audit),
            // The connection is closed by now: the server's exit says nothing.
            Err(err) => {
                let _ = child.start_kill();
                err
            }
        },
        Ok(Err(err)) => init_failed(program, &err.to_string(), &mut child).await,
        Err(err) => init_failed(program, &err, &mut child).await,
    };
    let tail = match tail {
        Some(tail) => tail.render(Duration::from_secs(2)).await,
        None => String::new(),
    };
    Err(err + &tail)
}

/// The error for a server that did not complete the handshake, with how it ended: a
/// server still running shortly after is stopped, so that its pipes close.
async fn init_failed(program: &str, err: &str, child: &mut tokio::process::Child) -> String {
    let status = if let Ok(Ok(status)) = tokio::time::timeout(Duration::from_millis(500), child.wait()).await {
        format!("the server exited: {status}")
    } else {
        let _ = child.start_kill();
        "the server was still running and has been stopped".to_owned()
    };
    format!("cannot initialize `{program}`: {err} ({status})")
}

/// Lists, lints and (when asked) calls over an initialized connection.
async fn audit(
    args: Calls<'_>,
    plan: Option<&BTreeMap<String, Value>>,
    limit: Duration,
    watch: &CatalogWatch,
    running: RunningService<RoleClient, CatalogWatch>,
    (transport, listings): (&'static str, &Listings),
) -> Result<Audit, String> {
    let server = server_info(&running, transport);
    let harness = Harness::new(running.peer().clone(), watch);
    eprintln!("contract-audit: listing tools");
    let refreshed = timed(limit, harness.refresh()).await?.map_err(|err| format!("tools/list failed: {err}"))?;

    let listed: Vec<Value> = harness.catalog().tools().map(|entry| entry.definition().clone()).collect();
    let mut tools: Vec<ToolReport> = harness
        .catalog()
        .tools()
        .map(|entry| ToolReport {
            name: entry.name().to_owned(),
            output_schema: entry.output_schema().is_some(),
            contract: entry.contract().cloned(),
            findings: {
                let mut findings = lint_tool(
                    entry,
                    args.declared_open.and_then(|open| open.get(entry.name())).map_or(&[], Vec::as_slice),
                );
                let declaration = listings.get(entry.name()).unwrap_or_else(|| entry.definition().clone());
                findings.extend(published::finding(&declaration));
                findings
            },
            call: None,
        })
        .collect();
    if args.all || plan.is_some() {
        let total = tools.len();
        let progress = progress_bar(args.progress, total);
        for (i, tool) in tools.iter_mut().enumerate() {
            progress.set_position(i as u64);
            if args.skip.contains(&tool.name) {
                continue;
            }
            let given = plan.and_then(|p| p.get(&tool.name)).cloned();
            if given.is_none() && !args.all {
                continue;
            }
            if given.is_none() {
                if let Some(why) = not_on_synthesized(&listed[i], args.unsafe_too) {
                    tool.call = Some(plain("synthesized", "not-called", why.to_owned()));
                    continue;
                }
            }
            progress.set_message(crate::shown::clean(&tool.name));
            let report = call_one(&harness, &tool.name, given, limit).await;
            tool.findings.extend(call_findings(&report));
            tool.call = Some(report);
        }
        progress.finish_and_clear();
    }
    let _ = running.cancel().await;
    Ok(Audit { server, tools, listed, duplicates: refreshed.duplicates })
}

/// The calls' progress bar on stderr: drawn only when stderr is a terminal (indicatif
/// hides it on a pipe or a file) and the report is the table.
fn progress_bar(shown: bool, total: usize) -> indicatif::ProgressBar {
    if !shown {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::with_draw_target(Some(total as u64), indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) = indicatif::ProgressStyle::with_template("calling tools [{bar:30}] {pos}/{len} {wide_msg}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.tick();
    bar
}

/// Calls one tool with the given arguments, or with synthesized ones.
async fn call_one(harness: &Harness, tool: &str, given: Option<Value>, limit: Duration) -> CallReport {
    let (source, arguments) = if let Some(arguments) = given {
        ("file", Some(arguments))
    } else {
        let catalog = harness.catalog();
        let schema = catalog.get(tool).and_then(|e| e.input_schema()).cloned().unwrap_or(Value::Null);
        let chosen = synth::candidates(&schema).into_iter().find(|c| catalog.check_arguments(tool, c).is_ok());
        ("synthesized", chosen)
    };
    let Some(arguments) = arguments else {
        return plain(source, "not-called", "no valid arguments could be synthesized from the inputSchema".to_owned());
    };
    let outcome = match tokio::time::timeout(limit, harness.call(tool, arguments)).await {
        Err(_) => return plain(source, "timeout", format!("no answer within {}s", limit.as_secs())),
        // The server refused the arguments themselves (JSON-RPC invalid params): the
        // call was made and answered, so this is about the arguments, not the connection.
        Ok(Err(err)) if err.protocol_error().is_some_and(|(code, _)| code == INVALID_PARAMS) => {
            let message: String = err.protocol_error().map_or("", |(_, m)| m).chars().take(200).collect();
            return CallReport {
                code: Some(INVALID_PARAMS.to_string()),
                ..plain(
                    source,
                    "arguments-invalid",
                    format!("the server refused the arguments (JSON-RPC {INVALID_PARAMS}): {message}"),
                )
            };
        }
        Ok(Err(err)) => return plain(source, "transport-error", err.to_string()),
        Ok(Ok(outcome)) => outcome,
    };
    match outcome {
        CallOutcome::Success(success) => {
            let (result, detail) = match (&success.false_success, success.validated) {
                (Some(found), _) => ("false-success", format!("{} in {} without isError", found.signal, found.source)),
                (None, true) => ("valid", "structuredContent is valid".to_owned()),
                (None, false) if success.structured.is_some() => {
                    ("unvalidated", "structuredContent without a declared outputSchema".to_owned())
                }
                (None, false) => ("unvalidated", "text only, no outputSchema".to_owned()),
            };
            CallReport {
                mismatch: success.mismatch.map(|m| *m),
                false_success: success.false_success.map(|f| *f),
                ..plain(source, result, detail)
            }
        }
        CallOutcome::DeclaredError(error) => CallReport {
            detail: error.message.chars().take(200).collect(),
            code: error.code,
            refused_by: error.refused_by.map(|r| r.sdk),
            ..plain(source, "declared-error", String::new())
        },
        CallOutcome::ContractFailure(failure) => CallReport {
            code: Some(failure.kind.code().as_str().to_owned()),
            violations: failure.violations.clone(),
            ..plain(
                source,
                if failure.kind == FailureKind::InvalidArguments { "arguments-invalid" } else { "contract-failure" },
                failure.to_string(),
            )
        },
    }
}

/// JSON-RPC's "invalid params".
const INVALID_PARAMS: i32 = -32602;

/// Why a tool must not be called with synthesized arguments, if it must not: it is
/// annotated `destructiveHint: true` (never), or not annotated `readOnlyHint: true`
/// (unless `--call-unsafe`). Annotations are the server's word, not a guarantee, so they
/// only ever hold a call back.
fn not_on_synthesized(definition: &Value, unsafe_calls: bool) -> Option<&'static str> {
    let hint = |name: &str| definition.get("annotations").and_then(|a| a.get(name)).and_then(Value::as_bool);
    if hint("destructiveHint") == Some(true) {
        Some("annotated destructiveHint: true: called only with its arguments from --args")
    } else if hint("readOnlyHint") == Some(true) || unsafe_calls {
        None
    } else {
        Some("not annotated readOnlyHint: true: give its arguments in --args, or pass --call-unsafe")
    }
}

fn plain(arguments: &'static str, result: &'static str, detail: String) -> CallReport {
    CallReport {
        arguments,
        result,
        code: None,
        detail,
        violations: Vec::new(),
        mismatch: None,
        false_success: None,
        refused_by: None,
    }
}

/// The findings a call adds.
fn call_findings(report: &CallReport) -> Vec<Finding> {
    let mut findings = Vec::new();
    let failed = match (report.result, report.refused_by) {
        // The server's SDK (or a tool-contracts server) refused the tool's own result: the
        // tool is broken even though the client is protected.
        ("declared-error", Some(sdk)) => Some((
            Level::Error,
            "call-server-reported-violation",
            format!("the server refused its own result ({sdk}): {}", report.detail),
        )),
        ("contract-failure", _) => Some((Level::Error, "call-contract-failure", report.detail.clone())),
        ("arguments-invalid", _) => Some((Level::Warn, "call-arguments-invalid", report.detail.clone())),
        ("timeout", _) => Some((Level::Warn, "call-timeout", report.detail.clone())),
        ("transport-error", _) => Some((Level::Warn, "call-transport-error", report.detail.clone())),
        _ => None,
    };
    if let Some((level, kind, message)) = failed {
        findings.push(Finding::new(level, kind, "call", "", message));
    }
    let notices = report.false_success.iter().map(FalseSuccess::notice);
    for notice in notices.chain(report.mismatch.iter().flat_map(KeyMismatch::notices)) {
        findings.push(Finding::new(Level::Warn, notice.kind, "call", &notice.pointer, notice.message));
    }
    findings
}

/// Reads `--contracts FILE`: a `contracts.json` (`{"tool": {"opaque": ["/pointer", …], …}}`),
/// of which only each tool's `opaque` pointers are read.
pub(crate) fn declared_open(path: &Path) -> Result<BTreeMap<String, Vec<String>>, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|err| format!("cannot read {shown}: {err}"))?;
    let value: Value = serde_json::from_str(&text).map_err(|err| format!("{shown} is not JSON: {err}"))?;
    let Value::Object(tools) = value else {
        return Err(format!("{shown} must hold a JSON object of contracts by tool name"));
    };
    let mut open = BTreeMap::new();
    for (tool, contract) in tools {
        let at = format!("/{}/opaque", contract_runtime::schema::escape_pointer_token(&tool));
        let pointers = match contract.get("opaque") {
            None => Vec::new(),
            Some(Value::Array(list)) => list
                .iter()
                .map(|p| match p.as_str() {
                    Some(p) if p.is_empty() || p.starts_with('/') => Ok(p.to_owned()),
                    _ => Err(format!("{shown}: `{at}` must list JSON pointers (\"/raw\", \"/items/*/x\")")),
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(format!("{shown}: `{at}` must be an array of JSON pointers")),
        };
        open.insert(tool, pointers);
    }
    Ok(open)
}

/// Reads `--args FILE`: an object of argument objects by tool name.
fn arguments_file(path: Option<&Path>) -> Result<Option<BTreeMap<String, Value>>, String> {
    let Some(path) = path else { return Ok(None) };
    let text = std::fs::read_to_string(path).map_err(|err| format!("cannot read {}: {err}", path.display()))?;
    let value: Value = serde_json::from_str(&text).map_err(|err| format!("{} is not JSON: {err}", path.display()))?;
    let Value::Object(map) = value else {
        return Err(format!("{} must hold a JSON object of arguments by tool name", path.display()));
    };
    Ok(Some(map.into_iter().collect()))
}

async fn timed<T>(limit: Duration, future: impl std::future::Future<Output = T>) -> Result<T, String> {
    tokio::time::timeout(limit, future).await.map_err(|_| format!("no answer within {}s", limit.as_secs()))
}

fn server_info(running: &RunningService<RoleClient, CatalogWatch>, transport: &'static str) -> ServerInfo {
    let info = running.peer().peer_info().and_then(|info| serde_json::to_value(&*info).ok()).unwrap_or_default();
    let text = |pointer: &str| info.pointer(pointer).and_then(Value::as_str).map(str::to_owned);
    ServerInfo {
        transport,
        name: text("/serverInfo/name"),
        version: text("/serverInfo/version"),
        protocol: text("/protocolVersion"),
    }
}
