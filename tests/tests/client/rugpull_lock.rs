//! Rug pulls by servers written with the official TypeScript and Python SDKs
//! (`tests/interop/rugpull/`), caught over stdio and streamable HTTP, in two ways:
//!
//! - At run time, by the client harness (`client::rmcp::Harness` on rmcp's client): it pins
//!   the first listing, calls `lookup` until the server switches its tools and sends
//!   `notifications/tools/list_changed`, lists again, and holds back what the lock policy
//!   quarantines: its call refused with `tool_quarantined` before anything is sent (the
//!   server's `--log` shows which calls reached it) and its definition left out of
//!   `model_tools()`.
//! - Between two runs, by `contract-audit --locked`: pinned against the server as it starts,
//!   then compared with the same command line (or the same URL, on the same port) started
//!   in the changed listing (`RUGPULL_START=changed`). The lock it wrote is then given to
//!   the harness up front (`Lock::read`), which refuses the changed tool on its first call.
//!
//! Every mode of the scripts, one server process at a time per case. The expected changes
//! are written out here, per mode, from what the mode changes. The modes that change
//! nothing a caller relies on (`none`, `reordered`, `additive-output`) are the clean
//! controls, and `delete_record`, which no mode changes, is served and sent in every case.

use crate::support::bins;
use crate::support::interop;
use crate::support::rugpull;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use contract_runtime::client::lock::{Lock, LockPolicy, LockedServer, ServerSource, ToolDrift};
use contract_runtime::client::rmcp::{CatalogWatch, Harness};
use contract_runtime::client::{CallOutcome, Catalog, ContractFailure, FailureKind, RefreshReport};
use contract_runtime::evolution::tool::ToolChange;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt as _;
use serde_json::{json, Value};

use interop::{HttpServer, IO_DEADLINE};
use rugpull::{Mode, Sdk};

/// How long a server that must stay quiet is watched.
const QUIET: Duration = Duration::from_millis(300);

/// How long one contract-audit run may take.
const AUDIT_DEADLINE: Duration = Duration::from_secs(120);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transport {
    Stdio,
    Http,
}

// ------------------------------------------------------------------ what each mode must give

/// One difference from the pin: (tool, status, area, kind, verdict, pointer).
type Change = (String, String, String, String, String, String);

/// Every difference of `mode`'s changed listing from the baseline, tools by name.
fn expected_drift(mode: Mode) -> Vec<Change> {
    let rows: &[[&str; 6]] = match mode {
        Mode::None | Mode::Reordered => &[],
        Mode::Description => &[["lookup", "changed", "text", "text_changed", "text", "/description"]],
        // `score` may now be a string: a value the pinned caller never expected.
        Mode::OutputLoosened => {
            &[["lookup", "changed", "output", "type_widened", "breaking", "/outputSchema/properties/score/type"]]
        }
        Mode::RequiredArg => {
            &[["lookup", "changed", "input", "property_added", "breaking", "/inputSchema/properties/token"]]
        }
        Mode::ReadonlyFlipped => &[
            ["lookup", "changed", "annotation", "hint_less_safe", "breaking", "/annotations/readOnlyHint"],
            ["lookup", "changed", "annotation", "hint_less_safe", "breaking", "/annotations/destructiveHint"],
        ],
        Mode::Renamed => &[
            ["find_record", "added", "tool", "tool_added", "additive", ""],
            ["lookup", "removed", "tool", "tool_removed", "breaking", ""],
        ],
        Mode::AdditiveOutput => {
            &[["lookup", "changed", "output", "property_added", "additive", "/outputSchema/properties/note"]]
        }
    };
    rows.iter().map(|r| (r[0].into(), r[1].into(), r[2].into(), r[3].into(), r[4].into(), r[5].into())).collect()
}

/// The tool the harness holds back after the change: under the default policy a changed
/// text, a breaking change and a tool never approved; under `LockPolicy::any_change()`
/// any change at all.
fn held_back(mode: Mode, any_change: bool) -> Option<&'static str> {
    match mode {
        Mode::Description | Mode::OutputLoosened | Mode::RequiredArg | Mode::ReadonlyFlipped => Some("lookup"),
        Mode::Renamed => Some("find_record"),
        Mode::AdditiveOutput if any_change => Some("lookup"),
        Mode::None | Mode::Reordered | Mode::AdditiveOutput => None,
    }
}

/// `contract-audit --locked`'s exit status under the default `--deny error`: 1 when a
/// breaking or text change is found (a removed tool is breaking), 0 otherwise.
fn audit_exit(mode: Mode) -> i32 {
    match mode {
        Mode::Description | Mode::OutputLoosened | Mode::RequiredArg | Mode::ReadonlyFlipped | Mode::Renamed => 1,
        Mode::None | Mode::Reordered | Mode::AdditiveOutput => 0,
    }
}

/// Arguments `mode`'s `lookup` accepts after the change: a refusal is then the lock's,
/// not the arguments'.
fn lookup_arguments(mode: Mode) -> Value {
    if mode == Mode::RequiredArg {
        json!({"id": "later", "token": "t"})
    } else {
        json!({"id": "later"})
    }
}

fn drift_rows(drifts: &[&ToolDrift]) -> Vec<Change> {
    let mut drifts = drifts.to_vec();
    drifts.sort_by(|a, b| a.name().cmp(b.name()));
    drifts
        .iter()
        .flat_map(|d| {
            d.changes().iter().map(|c: &ToolChange| {
                (
                    d.name().to_owned(),
                    d.status().as_str().to_owned(),
                    c.area().as_str().to_owned(),
                    c.kind().to_owned(),
                    c.verdict().as_str().to_owned(),
                    c.pointer().to_owned(),
                )
            })
        })
        .collect()
}

// ------------------------------------------------------------------ the server's log

/// The server's `--log FILE`: one JSON line per call received and per GET stream opened.
struct Log {
    path: PathBuf,
}

impl Log {
    fn events(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.path).unwrap_or_default();
        // Whole lines only: a line being written has no newline yet.
        let complete = text.rfind('\n').map_or("", |end| &text[..=end]);
        complete
            .lines()
            .map(|line| {
                serde_json::from_str(line).unwrap_or_else(|e| panic!("a log line that is not JSON ({e}): {line}"))
            })
            .collect()
    }

    /// The tools called, in the order the calls reached the server.
    fn calls(&self) -> Vec<String> {
        self.events()
            .into_iter()
            .filter(|e| e["event"] == "call")
            .map(|e| e["tool"].as_str().expect("a tool name").to_owned())
            .collect()
    }

    /// Waits until the server logged an open GET stream: from then on the notification of
    /// a switch reaches the client.
    async fn listening(&self) {
        let deadline = tokio::time::Instant::now() + IO_DEADLINE;
        while !self.events().iter().any(|e| e["event"] == "listen") {
            assert!(tokio::time::Instant::now() < deadline, "the client never opened its GET stream");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// A fresh directory for one case's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rugpull-lock-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// The server's stdio command line, logging to `log`, starting in the baseline listing.
fn command(sdk: Sdk, mode: Mode, after: u32, log: &Path) -> Command {
    interop::clients_installed();
    let mut cmd = sdk.command(mode, after);
    cmd.arg("--log").arg(log).env_remove("RUGPULL_START");
    cmd
}

/// The same command, starting in the changed listing.
fn changed(mut cmd: Command) -> Command {
    cmd.env("RUGPULL_START", "changed");
    cmd
}

/// A command line as contract-audit is given it (and keys its lock entry by).
fn argv(cmd: &Command) -> Vec<String> {
    std::iter::once(cmd.get_program()).chain(cmd.get_args()).map(|a| a.to_string_lossy().into_owned()).collect()
}

// ------------------------------------------------------------------ the harness side

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime")
}

/// An rmcp client connection, and the stdio server process behind it (killed on drop).
struct Link {
    client: RunningService<RoleClient, CatalogWatch>,
    _child: Option<tokio::process::Child>,
}

async fn over_stdio(cmd: Command, watch: &CatalogWatch) -> Link {
    let mut child = tokio::process::Command::from(cmd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the server");
    let transport = (child.stdout.take().expect("stdout"), child.stdin.take().expect("stdin"));
    let client = tokio::time::timeout(IO_DEADLINE, watch.clone().serve(transport))
        .await
        .expect("initialize in time")
        .expect("initialize");
    Link { client, _child: Some(child) }
}

async fn over_http(url: &str, watch: &CatalogWatch) -> Link {
    let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
    let client = tokio::time::timeout(IO_DEADLINE, watch.clone().serve(transport))
        .await
        .expect("initialize in time")
        .expect("initialize");
    Link { client, _child: None }
}

async fn call(harness: &Harness, tool: &str, arguments: Value) -> CallOutcome {
    tokio::time::timeout(Duration::from_secs(30), harness.call(tool, arguments))
        .await
        .expect("the call answers within 30s")
        .expect("the call reaches the harness's gates")
}

/// Waits (bounded) until a list-changed notification reached the harness and the catalog
/// was listed again; returns what that refresh found.
async fn refreshed_after(harness: &Harness, generation: u64, at: &str) -> RefreshReport {
    let deadline = tokio::time::Instant::now() + IO_DEADLINE;
    loop {
        let report = harness.ensure_fresh().await.expect("tools/list");
        if let Some(report) = report.filter(|_| harness.catalog().generation() > generation) {
            return report;
        }
        assert!(tokio::time::Instant::now() < deadline, "{at}: list_changed never reached the harness");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Asserts `outcome` is a result validated against the outputSchema, with `structured`.
fn assert_validated(outcome: &CallOutcome, structured: &Value, at: &str) {
    match outcome {
        CallOutcome::Success(s) => {
            assert!(s.validated, "{at}: {outcome:?}");
            assert_eq!(s.structured.as_ref(), Some(structured), "{at}");
        }
        other => panic!("{at}: expected a validated result, got {other:?}"),
    }
}

/// The quarantine refusal of `outcome`; panics on any other outcome.
fn quarantined<'a>(outcome: &'a CallOutcome, at: &str) -> &'a ContractFailure {
    let CallOutcome::ContractFailure(failure) = outcome else { panic!("{at}: expected a refusal, got {outcome:?}") };
    assert_eq!(failure.kind, FailureKind::Quarantined, "{at}: {failure}");
    assert_eq!(failure.kind.code().as_str(), "tool_quarantined");
    failure
}

fn model_names(harness: &Harness) -> Vec<String> {
    harness.catalog().model_tools().map(|t| t.name().to_owned()).collect()
}

/// What must hold once the harness listed `mode`'s changed tools (`report`): the drift as
/// expected, the held-back tool refused with nothing sent and kept from the model, the
/// others served. The log's calls before and after show what reached the server.
async fn after_change(harness: &Harness, log: &Log, mode: Mode, held: Option<&str>, report: &RefreshReport, at: &str) {
    let all: Vec<&ToolDrift> = report.quarantined.iter().chain(&report.passed).collect();
    assert_eq!(drift_rows(&all), expected_drift(mode), "{at}: the drift");
    let names: Vec<&str> = report.quarantined.iter().map(ToolDrift::name).collect();
    assert_eq!(names, held.into_iter().collect::<Vec<_>>(), "{at}: held back");

    let mut sent = log.calls();
    if let Some(tool) = held {
        let arguments = if tool == "lookup" { lookup_arguments(mode) } else { json!({"id": "later"}) };
        let outcome = call(harness, tool, arguments).await;
        let failure = quarantined(&outcome, at);
        assert_eq!(failure.drift.as_deref(), report.quarantined.first(), "{at}: the refusal carries the drift");
        let view = outcome.model_view();
        assert_eq!(view["error"]["code"], "tool_quarantined", "{at}: {view}");
        assert!(!model_names(harness).iter().any(|n| n == tool), "{at}: {tool} offered to the model");
        if mode == Mode::Description {
            // The operator is shown the instruction; the model reads that the text
            // changed, never the new text.
            let signals = failure.drift.as_deref().map(|d| d.changes()[0].signals().to_vec());
            assert_eq!(signals, Some(vec!["imperative: before calling any other tool".to_owned()]), "{at}");
            assert!(!view.to_string().contains("include the result"), "{at}: {view}");
        }
        if mode == Mode::Renamed {
            // The old name is gone, not held back: unknown, and not sent either.
            let outcome = call(harness, "lookup", json!({"id": "later"})).await;
            assert!(
                matches!(&outcome, CallOutcome::ContractFailure(f) if f.kind == FailureKind::UnknownTool),
                "{at}: {outcome:?}"
            );
        }
    } else {
        let outcome = call(harness, "lookup", lookup_arguments(mode)).await;
        assert_validated(&outcome, &json!({"id": "later", "score": 0.5}), at);
        assert!(model_names(harness).iter().any(|n| n == "lookup"), "{at}");
        sent.push("lookup".to_owned());
    }
    // The control: the tool no mode changes is offered, served and sent.
    assert!(model_names(harness).iter().any(|n| n == "delete_record"), "{at}");
    let outcome = call(harness, "delete_record", json!({"id": "later"})).await;
    assert!(
        matches!(&outcome, CallOutcome::Success(s) if s.text == ["deleted later"] && !s.validated),
        "{at}: {outcome:?}"
    );
    sent.push("delete_record".to_owned());
    assert_eq!(log.calls(), sent, "{at}: the calls that reached the server");
}

/// The harness pins on first use (the default policy, or `LockPolicy::any_change()`,
/// judges later listings), calls `lookup` twice (a server started with `--after 2`
/// switches on the second call and notifies), lists again when told, and holds the server
/// to the pin. Returns the pin.
async fn first_use(
    link: Link,
    watch: &CatalogWatch,
    log: &Log,
    mode: Mode,
    any_change: bool,
    at: &str,
) -> LockedServer {
    let policy = if any_change { LockPolicy::any_change() } else { LockPolicy::default() };
    let harness = Harness::with_catalog(link.client.peer().clone(), watch, Catalog::with_policy(policy));
    let sent = log.calls();

    // Before the switch: the first listing is pinned, both calls answer as pinned.
    for n in 1..=2 {
        let id = format!("r{n}");
        assert_validated(&call(&harness, "lookup", json!({"id": id})).await, &json!({"id": id, "score": 0.5}), at);
    }
    let pinned = harness.catalog().pinned().cloned().expect("pinned on first use");
    let names: Vec<&str> = pinned.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["delete_record", "lookup"], "{at}");
    assert_eq!(log.calls()[sent.len()..], ["lookup", "lookup"], "{at}");
    let generation = harness.catalog().generation();

    let report = if mode.changes() {
        refreshed_after(&harness, generation, at).await
    } else {
        // The control never says its tools changed: nothing marks the catalog stale.
        tokio::time::sleep(QUIET).await;
        assert!(harness.ensure_fresh().await.expect("tools/list").is_none(), "{at}: a change was announced");
        harness.refresh().await.expect("tools/list")
    };
    assert!(!report.pinned, "{at}: the pin is kept");
    after_change(&harness, log, mode, held_back(mode, any_change), &report, at).await;
    link.client.cancel().await.expect("close");
    pinned
}

/// `first_use` on a server of its own.
fn harness_rug_pull(sdk: Sdk, transport: Transport, mode: Mode, any_change: bool) {
    let policy = if any_change { ", any change" } else { "" };
    let at = format!("harness, {sdk:?} over {transport:?}, --mode {}{policy}", mode.arg());
    let dir = scratch(&format!("harness-{sdk:?}-{transport:?}-{}-{any_change}", mode.arg()));
    let log = Log { path: dir.join("events.jsonl") };
    let mut cmd = command(sdk, mode, 2, &log.path);
    runtime().block_on(async {
        let watch = CatalogWatch::new("contract-tests", "0");
        let (_server, link) = match transport {
            Transport::Stdio => (None, over_stdio(cmd, &watch).await),
            Transport::Http => {
                let server = HttpServer::spawn(cmd.args(["--http", "127.0.0.1:0"]), rugpull::ANNOUNCE);
                let link = over_http(&server.url(), &watch).await;
                // The change is announced on the GET stream: only once it is open.
                log.listening().await;
                (Some(server), link)
            }
        };
        first_use(link, &watch, &log, mode, any_change, &at).await;
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// The harness given `file` (written by `contract-audit pin`) up front, on a server that
/// starts in the changed listing: the lock judges the very first listing.
async fn lock_up_front(
    link: Link,
    watch: &CatalogWatch,
    file: &Path,
    source: &ServerSource,
    log: &Log,
    mode: Mode,
    at: &str,
) {
    let lock = Lock::read(file).unwrap_or_else(|e| panic!("{at}: the lock reads back: {e}"));
    let pinned = lock.server(source).cloned().unwrap_or_else(|| panic!("{at}: no entry for {source}"));
    let names: Vec<&str> = pinned.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["delete_record", "lookup"], "{at}: the baseline was pinned");
    let harness =
        Harness::with_catalog(link.client.peer().clone(), watch, Catalog::with_lock(pinned, LockPolicy::default()));
    let report = harness.ensure_fresh().await.expect("tools/list").expect("a first listing");
    assert!(!report.pinned, "{at}: a given lock is not replaced by the listing");
    after_change(&harness, log, mode, held_back(mode, false), &report, at).await;
    link.client.cancel().await.expect("close");
}

// ------------------------------------------------------------------ the contract-audit side

/// Runs contract-audit with `args` (then `--` and `command`, when given), the server
/// starting changed or not: (exit code, stdout, stderr).
fn audit(args: &[&str], command: Option<&[String]>, start_changed: bool) -> (i32, String, String) {
    let mut cmd = Command::new(bins::contract_audit());
    cmd.args(args);
    if let Some(command) = command {
        cmd.arg("--").args(command);
    }
    // A stdio server is contract-audit's child, and inherits its environment.
    if start_changed {
        cmd.env("RUGPULL_START", "changed");
    } else {
        cmd.env_remove("RUGPULL_START");
    }
    let out = bins::run_to_end(&mut cmd, AUDIT_DEADLINE);
    (out.status.code().expect("an exit code"), out.stdout, out.stderr)
}

/// The `--locked --format json` report of `mode`'s changed server against the baseline pin.
fn check_report(sdk: Sdk, mode: Mode, source: &ServerSource, code: i32, out: &str, err: &str, at: &str) {
    let report: Value =
        serde_json::from_str(out).unwrap_or_else(|e| panic!("{at}: a JSON report ({e}):\n{out}\n{err}"));
    let text = |v: &Value| v.as_str().unwrap_or_else(|| panic!("{at}: not a string: {v}")).to_owned();
    let rows: Vec<Change> = report["drift"]
        .as_array()
        .expect("drift")
        .iter()
        .flat_map(|d| {
            d["changes"].as_array().expect("changes").iter().map(move |c| {
                (
                    text(&d["tool"]),
                    text(&d["status"]),
                    text(&c["area"]),
                    text(&c["kind"]),
                    text(&c["verdict"]),
                    text(&c["pointer"]),
                )
            })
        })
        .collect();
    let expected = expected_drift(mode);
    assert_eq!(rows, expected, "{at}: {report:#}");
    // Breaking and text changes are errors, additive ones notes (the README's table).
    for change in report["drift"].as_array().unwrap().iter().flat_map(|d| d["changes"].as_array().unwrap()) {
        let level = if matches!(change["verdict"].as_str(), Some("breaking" | "text")) { "error" } else { "info" };
        assert_eq!(change["level"], level, "{at}: {change}");
    }
    assert_eq!(code, audit_exit(mode), "{at}: the exit status\n{out}\n{err}");

    assert_eq!(report["source"], serde_json::to_value(source).unwrap(), "{at}");
    let name = if sdk == Sdk::TypeScript { "rugpull-ts" } else { "rugpull-py" };
    assert_eq!(report["pinned_server"], json!({"name": name, "version": "1.0.0"}), "{at}");
    assert_eq!(report["tools"], json!({"pinned": 2, "listed": 2}), "{at}");
    let tools = |status: &str| {
        let mut names: Vec<&str> = expected.iter().filter(|c| c.1 == status).map(|c| c.0.as_str()).collect();
        names.dedup();
        names.len()
    };
    let errors = expected.iter().filter(|c| c.4 == "breaking" || c.4 == "text").count();
    assert_eq!(
        report["summary"],
        json!({
            "changed": tools("changed"),
            "added": tools("added"),
            "removed": tools("removed"),
            "unchanged": 2 - tools("changed") - tools("added"),
            "errors": errors,
            "warnings": 0,
            "notes": expected.len() - errors,
        }),
        "{at}"
    );
    if mode == Mode::Description {
        let change = &report["drift"][0]["changes"][0];
        assert_eq!(change["old_text"], "Returns the record with the given id.", "{at}");
        assert_eq!(
            change["new_text"],
            format!("Returns the record with the given id.{}", rugpull::INSTRUCTION),
            "{at}"
        );
        assert_eq!(
            change["word_diff"],
            format!("Returns the record with the given id.{{+{}+}}", rugpull::INSTRUCTION),
            "{at}"
        );
        assert_eq!(change["signals"], json!(["imperative: before calling any other tool"]), "{at}: {change}");
    }
}

/// Over stdio: pins the server as it starts, starts it again changed under the same
/// command line, and runs `contract-audit --locked`; then gives the lock to the harness
/// up front against the changed server (a process of its own).
fn audit_over_stdio(sdk: Sdk, mode: Mode) {
    let at = format!("contract-audit --locked, {sdk:?} over stdio, --mode {}", mode.arg());
    let dir = scratch(&format!("audit-{sdk:?}-stdio-{}", mode.arg()));
    let file = dir.join("tools.lock.json");
    let lock = file.to_str().expect("a UTF-8 path").to_owned();
    let log = Log { path: dir.join("events.jsonl") };
    let line = argv(&command(sdk, mode, 1, &log.path));
    let (code, out, err) = audit(&["pin", "--lock", &lock], Some(&line), false);
    assert_eq!(code, 0, "{at}: pin\n{out}\n{err}");
    let (code, out, err) = audit(&["--locked", &lock, "--format", "json"], Some(&line), true);
    let source = ServerSource::Command(line.clone());
    check_report(sdk, mode, &source, code, &out, &err, &at);
    assert_eq!(log.calls(), Vec::<String>::new(), "{at}: contract-audit lists, it does not call");
    let changed = changed(command(sdk, mode, 1, &log.path));
    assert_eq!(argv(&changed), line, "the same command line");
    runtime().block_on(async {
        let watch = CatalogWatch::new("contract-tests", "0");
        let connection = over_stdio(changed, &watch).await;
        lock_up_front(connection, &watch, &file, &source, &log, mode, &format!("{at}, then the harness")).await;
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// Over streamable HTTP, one server process at a time: the server as it starts is pinned
/// by `contract-audit pin`, then rug-pulled at run time under the harness (`first_use`,
/// whose pin must be the lock's); started again changed on the same port, it is compared
/// by `contract-audit --locked` with the same URL, and held to the lock up front.
fn over_http_both_ways(sdk: Sdk, mode: Mode) {
    let at = format!("{sdk:?} over HTTP, --mode {}", mode.arg());
    let dir = scratch(&format!("http-{sdk:?}-{}", mode.arg()));
    let file = dir.join("tools.lock.json");
    let lock = file.to_str().expect("a UTF-8 path").to_owned();
    let log = Log { path: dir.join("events.jsonl") };
    let runtime = runtime();

    let baseline =
        HttpServer::spawn(command(sdk, mode, 2, &log.path).args(["--http", "127.0.0.1:0"]), rugpull::ANNOUNCE);
    let url = baseline.url();
    let source = ServerSource::Url(url.clone());
    let (code, out, err) = audit(&["pin", "--lock", &lock, &url], None, false);
    assert_eq!(code, 0, "{at}: pin\n{out}\n{err}");
    assert_eq!(log.calls(), Vec::<String>::new(), "{at}: contract-audit pin lists, it does not call");
    let pinned = runtime.block_on(async {
        let watch = CatalogWatch::new("contract-tests", "0");
        let link = over_http(&url, &watch).await;
        // The change is announced on the GET stream: only once it is open.
        log.listening().await;
        first_use(link, &watch, &log, mode, false, &format!("harness, {at}")).await
    });
    // The harness pinned on first use what contract-audit pinned into the lock.
    let entry = Lock::read(&file).expect("the lock reads back").server(&source).cloned().expect("the entry");
    assert_eq!(pinned.tools, entry.tools, "{at}: two pins of one listing");
    drop(baseline);

    let mut changed = changed(command(sdk, mode, 2, &log.path));
    let server = HttpServer::spawn(changed.args(["--http", &url_authority(&url)]), rugpull::ANNOUNCE);
    assert_eq!(server.url(), url, "{at}: the same port");
    let sent = log.calls();
    let (code, out, err) = audit(&["--locked", &lock, "--format", "json", &url], None, false);
    check_report(sdk, mode, &source, code, &out, &err, &format!("contract-audit --locked, {at}"));
    assert_eq!(log.calls(), sent, "{at}: contract-audit lists, it does not call");
    runtime.block_on(async {
        let watch = CatalogWatch::new("contract-tests", "0");
        let link = over_http(&url, &watch).await;
        lock_up_front(link, &watch, &file, &source, &log, mode, &format!("lock up front, {at}")).await;
    });
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `HOST:PORT` of an `http://HOST:PORT/mcp` URL.
fn url_authority(url: &str) -> String {
    url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned()
}

// ------------------------------------------------------------------ the cases

/// One test per mode for `$run`, in module `$module`.
macro_rules! per_mode {
    ($module:ident, $run:expr) => {
        mod $module {
            use super::*;

            #[test]
            fn none() {
                ($run)(Mode::None);
            }
            #[test]
            fn description() {
                ($run)(Mode::Description);
            }
            #[test]
            fn output_loosened() {
                ($run)(Mode::OutputLoosened);
            }
            #[test]
            fn required_arg() {
                ($run)(Mode::RequiredArg);
            }
            #[test]
            fn readonly_flipped() {
                ($run)(Mode::ReadonlyFlipped);
            }
            #[test]
            fn renamed() {
                ($run)(Mode::Renamed);
            }
            #[test]
            fn reordered() {
                ($run)(Mode::Reordered);
            }
            #[test]
            fn additive_output() {
                ($run)(Mode::AdditiveOutput);
            }
        }
    };
}

per_mode!(harness_typescript_stdio, |m| harness_rug_pull(Sdk::TypeScript, Transport::Stdio, m, false));
per_mode!(harness_python_stdio, |m| harness_rug_pull(Sdk::Python, Transport::Stdio, m, false));
per_mode!(audit_typescript_stdio, |m| audit_over_stdio(Sdk::TypeScript, m));
per_mode!(audit_python_stdio, |m| audit_over_stdio(Sdk::Python, m));
per_mode!(http_typescript, |m| over_http_both_ways(Sdk::TypeScript, m));
per_mode!(http_python, |m| over_http_both_ways(Sdk::Python, m));

/// An additive output change passes the default policy (the `additive_output` cases) and
/// is held back by one that quarantines any change.
mod harness_any_change {
    use super::*;

    #[test]
    fn typescript_stdio_additive_output() {
        harness_rug_pull(Sdk::TypeScript, Transport::Stdio, Mode::AdditiveOutput, true);
    }
    #[test]
    fn typescript_http_additive_output() {
        harness_rug_pull(Sdk::TypeScript, Transport::Http, Mode::AdditiveOutput, true);
    }
    #[test]
    fn python_stdio_additive_output() {
        harness_rug_pull(Sdk::Python, Transport::Stdio, Mode::AdditiveOutput, true);
    }
    #[test]
    fn python_http_additive_output() {
        harness_rug_pull(Sdk::Python, Transport::Http, Mode::AdditiveOutput, true);
    }
    /// Control: a listing the same but for key order is no change even to that policy.
    #[test]
    fn typescript_stdio_reordered() {
        harness_rug_pull(Sdk::TypeScript, Transport::Stdio, Mode::Reordered, true);
    }
}
