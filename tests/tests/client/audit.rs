//! `contract-audit` against real servers over stdio and streamable HTTP: our qe-server
//! (clean, and with `--broken`: the broken tool is reported) and the pinned
//! `@modelcontextprotocol/server-everything`, a server we did not write. Bad command
//! lines get a clear error and exit status 2, with the tail of a failing server's stderr.
//! Every finding kind the audit can emit is shown to matter to a pinned real client: the
//! TypeScript SDK's Ajv and its client (`tests/interop/validators.mjs`, `sdk_calls.mjs`,
//! against `fixture_server.mjs`) or the Python SDK's `jsonschema` (`validators.py`).

use crate::support::bins;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

const DEADLINE: Duration = Duration::from_secs(120);

/// A fresh directory for one test's files.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("contract-audit-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the audit with `args` and returns (exit code, stdout, stderr).
fn audit(args: &[&str]) -> (i32, String, String) {
    let out = bins::run_to_end(Command::new(bins::contract_audit()).args(args), DEADLINE);
    (out.status.code().expect("an exit code"), out.stdout, out.stderr)
}

/// Runs the audit with `--format json` and parses its report.
fn audit_json(args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = audit(&all);
    let report = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("JSON report ({e}):\n{stdout}\n{stderr}"));
    (code, report)
}

fn tool<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == name))
        .unwrap_or_else(|| panic!("{name} in the report"))
}

fn kinds(tool: &Value) -> Vec<String> {
    tool["findings"].as_array().unwrap().iter().map(|f| f["kind"].as_str().unwrap().to_owned()).collect()
}

fn names(report: &Value, filter: impl Fn(&Value) -> bool) -> Vec<String> {
    report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| filter(t))
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn qe_server_clean_over_stdio() {
    let server = bins::qe_server().to_str().unwrap();
    let (code, report) = audit_json(&["--", server]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["server"]["name"], "qe-server");
    assert_eq!(report["server"]["transport"], "stdio");
    assert_eq!(names(&report, |t| t["output_schema"] == false), ["server_version"]);
    assert_eq!(tool(&report, "server_version")["contract"]["qualified"], false);
    let tickets = tool(&report, "search_tickets");
    assert_eq!(tickets["contract"]["qualified"], true);
    assert_eq!(tickets["contract"]["name"], "search_tickets");
    assert_eq!(report["summary"]["errors"], 0);
    // The opaque values of scrape_page are declared holes: the listing says so and the
    // audit reports them as declared, not as permissive.
    let scrape = tool(&report, "scrape_page");
    assert_eq!(scrape["contract"]["opaque"], json!(["/actions/*/output", "/metadata"]));
    let at = |kind: &str| -> Vec<(String, String)> {
        scrape["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["kind"] == kind)
            .map(|f| (f["pointer"].as_str().unwrap().to_owned(), f["message"].as_str().unwrap().to_owned()))
            .collect()
    };
    assert_eq!(at("permissive"), vec![], "{scrape:#}");
    let opaque = at("opaque");
    assert_eq!(opaque.len(), 2, "{scrape:#}");
    assert_eq!(opaque[0].0, "/$defs/ActionResult/properties/output");
    assert!(opaque[0].1.starts_with("opaque declared at /actions/*/output"), "{opaque:?}");
    assert_eq!(opaque[1].0, "/properties/metadata");
    assert!(opaque[1].1.starts_with("opaque declared at /metadata"), "{opaque:?}");
    // No tool of ours gets a note about `$defs`: Ajv resolves `$ref`s into it. The one
    // draft-07 finding is task_status's `unevaluatedProperties`, which Ajv ignores.
    let draft07: Vec<String> = names(&report, |t| kinds(t).contains(&"draft07-ignores".to_owned()));
    assert_eq!(draft07, ["task_status"]);
    assert!(!report.to_string().contains("`$defs`"), "{report:#}");
    // The table says the same.
    let (code, table, _) = audit(&["--", server]);
    assert_eq!(code, 0, "{table}");
    assert!(
        table
            .contains("info  scrape_page: opaque (outputSchema at /properties/metadata): opaque declared at /metadata"),
        "{table}"
    );
}

#[test]
fn a_declared_error_shows_its_code_and_reason_in_the_table() {
    let server = bins::qe_server().to_str().unwrap();
    let dir = scratch("declared-error");
    let args = dir.join("args.json");
    std::fs::write(&args, r#"{"scrape_page": {"url": "ftp://example.com/"}}"#).unwrap();
    let (code, table, stderr) = audit(&["--args", args.to_str().unwrap(), "--", server]);
    assert_eq!(code, 0, "a declared error is the tool's answer, not a finding: {table}\n{stderr}");
    assert!(
        table.contains(
            "  call  scrape_page: declared-error `unavailable` (call): only http and https pages can be scraped"
        ),
        "{table}"
    );
    // Control: the same tool called with a page it can scrape has no such line.
    std::fs::write(&args, r#"{"scrape_page": {"url": "https://example.com/"}}"#).unwrap();
    let (code, table, _) = audit(&["--args", args.to_str().unwrap(), "--", server]);
    assert_eq!(code, 0, "{table}");
    assert!(table.contains("scrape_page") && table.contains("valid"), "{table}");
    assert!(!table.contains("declared-error"), "{table}");
}

#[test]
fn qe_server_broken_tool_is_reported_with_a_failing_exit() {
    let server = bins::qe_server().to_str().unwrap();
    let dir = scratch("broken");
    let args = dir.join("args.json");
    std::fs::write(&args, r#"{"broken_fleet_status": {}, "fleet_status": {}, "search_tickets": {"query": "bug"}}"#)
        .unwrap();
    let (code, report) = audit_json(&["--args", args.to_str().unwrap(), "--", server, "--broken"]);
    assert_eq!(code, 1, "an error finding fails the default --deny error: {report:#}");
    let broken = tool(&report, "broken_fleet_status");
    assert_eq!(broken["call"]["result"], "declared-error");
    assert_eq!(broken["call"]["code"], "output_contract_violation");
    assert!(kinds(broken).contains(&"call-server-reported-violation".to_owned()));
    // Controls: the sound tools called in the same run are valid, and only the named tools were called.
    assert_eq!(tool(&report, "fleet_status")["call"]["result"], "valid");
    assert_eq!(tool(&report, "search_tickets")["call"]["result"], "valid");
    assert!(tool(&report, "task_status")["call"].is_null());
    // The human table names the tool and the finding.
    let (code, table, stderr) = audit(&["--args", args.to_str().unwrap(), "--", server, "--broken"]);
    assert_eq!(code, 1);
    assert!(table.contains("error broken_fleet_status: call-server-reported-violation"), "{table}");
    // The calls' progress is drawn only on a terminal (client/audit_progress.rs): a pipe
    // gets none of it.
    assert!(!stderr.contains("calling tools ["), "no progress bar on a pipe: {stderr}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn qe_server_over_streamable_http_lists_what_stdio_lists() {
    let mut child = Command::new(bins::qe_server())
        .args(["--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn qe-server --http");
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("qe-server: listening on ") {
                let _ = tx.send(url.to_owned());
            }
        }
    });
    let url = rx.recv_timeout(Duration::from_secs(30)).expect("the server announces its address");
    // qe-server annotates no tool read-only: --call-unsafe calls them on synthesized arguments.
    let (code, over_http) = audit_json(&["--call", "--call-unsafe", &url]);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(code, 0, "{over_http:#}");
    assert_eq!(over_http["server"]["transport"], "streamable-http");
    assert_eq!(tool(&over_http, "fleet_status")["call"]["result"], "valid");
    let (_, over_stdio) = audit_json(&["--", bins::qe_server().to_str().unwrap()]);
    assert_eq!(names(&over_http, |_| true), names(&over_stdio, |_| true));
}

#[test]
fn server_everything_findings_and_calls() {
    let entry = bins::server_everything().to_str().unwrap();
    let skip = [
        "--skip",
        "trigger-long-running-operation",
        "--skip",
        "simulate-research-query",
        "--skip",
        "gzip-file-as-resource",
    ];
    let mut args = vec!["--call", "--timeout", "20"];
    args.extend_from_slice(&skip);
    args.extend_from_slice(&["--", "node", entry, "stdio"]);
    let (code, report) = audit_json(&args);
    assert_eq!(code, 0, "no errors: {report:#}");
    assert_eq!(report["server"]["name"], "mcp-servers/everything");
    assert_eq!(names(&report, |t| t["output_schema"] == true), ["get-structured-content"]);
    for name in ["echo", "get-sum", "get-env", "get-tiny-image"] {
        let t = tool(&report, name);
        assert_eq!(kinds(t), ["no-output-schema"], "{t:#}");
        assert!(t["contract"].is_null(), "{t:#}");
    }
    // Calls with synthesized arguments: the declared schema holds; the others are unvalidated.
    let structured = tool(&report, "get-structured-content");
    assert_eq!(structured["call"]["arguments"], "synthesized");
    assert_eq!(structured["call"]["result"], "valid");
    assert_eq!(tool(&report, "echo")["call"]["result"], "unvalidated");
    assert_eq!(tool(&report, "get-sum")["call"]["result"], "unvalidated");
    assert!(tool(&report, "trigger-long-running-operation")["call"].is_null(), "skipped");
    // Twelve tools without an outputSchema are warnings: --deny warn fails the run.
    let (code, _, _) = audit(&["--deny", "warn", "--", "node", entry, "stdio"]);
    assert_eq!(code, 1);
}

#[test]
fn bad_command_lines_get_a_clear_error() {
    let (code, _, stderr) = audit(&[]);
    assert_eq!(code, 2, "{stderr}");
    let (code, _, stderr) = audit(&["--", "/nonexistent/mcp-server"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot start `/nonexistent/mcp-server`"), "{stderr}");
    let server = bins::qe_server().to_str().unwrap();
    let (code, _, stderr) = audit(&["--args", "/nonexistent/args.json", "--", server]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot read /nonexistent/args.json"), "{stderr}");
    // A port nobody listens on: bind one, note it, close it.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (code, _, stderr) = audit(&["--timeout", "10", &format!("http://127.0.0.1:{port}/mcp")]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot connect"), "{stderr}");
    // A process that is not an MCP server.
    let (code, _, stderr) = audit(&["--timeout", "10", "--", "true"]);
    assert_eq!(code, 2, "{stderr}");
}

// ------------------------------------------------------------------ the server's stderr

/// Writes an executable shell script.
fn script(dir: &std::path::Path, name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn a_server_that_fails_to_start_shows_the_tail_of_its_stderr() {
    let dir = scratch("stderr");
    let failing = script(
        &dir,
        "failing.sh",
        "echo 'loading /etc/server.toml' >&2\nprintf 'error: \\033[31mmissing key\\033[0m `token`\\r\\n' >&2\nexit 3\n",
    );
    let (code, stdout, stderr) = audit(&["--", &failing]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.contains(&format!("cannot initialize `{failing}`")), "{stderr}");
    assert!(stderr.contains("(the server exited: exit status: 3)"), "{stderr}");
    assert!(stderr.contains("the server's stderr:\n  | loading /etc/server.toml\n"), "{stderr}");
    // Control characters arrive escaped: the server cannot drive the terminal.
    assert!(stderr.contains("  | error: \\u{1b}[31mmissing key\\u{1b}[0m `token`"), "{stderr}");
    assert!(!stderr.contains('\u{1b}') && !stderr.contains('\r'), "{stderr:?}");
    // `--stderr discard` drops it; `--stderr inherit` passes it through untouched.
    let (code, _, stderr) = audit(&["--stderr", "discard", "--", &failing]);
    assert_eq!(code, 2);
    assert!(!stderr.contains("loading /etc/server.toml"), "{stderr}");
    let (code, _, stderr) = audit(&["--stderr", "inherit", "--", &failing]);
    assert_eq!(code, 2);
    assert!(stderr.contains("loading /etc/server.toml\nerror: \u{1b}[31mmissing key"), "{stderr:?}");
    assert!(!stderr.contains("the server's stderr"), "{stderr}");
    // Control: a server that starts is audited, and its stderr is not shown.
    let quiet =
        script(&dir, "logs-then-serves.sh", &format!("echo 'starting up' >&2\nexec {}\n", bins::qe_server().display()));
    let (code, stdout, stderr) = audit(&["--", &quiet]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("server: qe-server"), "{stdout}");
    assert!(!stderr.contains("starting up") && !stderr.contains("the server's stderr"), "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}

/// The most memory the audit process used (`VmHWM`), in KiB, read while it runs.
fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn a_server_that_floods_stderr_keeps_the_audit_bounded() {
    let dir = scratch("flood");
    // Megabytes, then the line that matters, then exit.
    let finite = script(
        &dir,
        "finite.sh",
        "yes 'noise noise noise noise noise noise noise noise' | head -n 250000 >&2\necho 'fatal: the line that matters' >&2\nexit 1\n",
    );
    let (code, _, stderr) = audit(&["--", &finite]);
    assert_eq!(code, 2, "{}", &stderr[..stderr.len().min(2000)]);
    assert!(stderr.len() < 16 * 1024, "the tail is bounded: {} bytes", stderr.len());
    assert!(stderr.contains("its last 40 lines;"), "{stderr}");
    assert!(stderr.trim_end().ends_with("  | fatal: the line that matters"), "{stderr}");
    // A server that floods without end and never answers (it keeps its stdout open): the
    // audit gives up at --timeout, stops it, and stays small while draining gigabytes.
    let endless = script(
        &dir,
        "endless.sh",
        "echo 'starting' >&2\nexec 3>&1\nexec yes 'flood flood flood flood flood flood' >&2\n",
    );
    let mut child = Command::new(bins::contract_audit())
        .args(["--timeout", "3", "--", &endless])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stderr.take().unwrap();
    let reader = thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut pipe, &mut text).unwrap();
        text
    });
    let start = std::time::Instant::now();
    let mut peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        peak = peak.max(peak_kib(child.id()).unwrap_or(0));
        assert!(start.elapsed() < Duration::from_secs(30), "the audit hangs on a flooding server");
        thread::sleep(Duration::from_millis(50));
    };
    let stderr = reader.join().unwrap();
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(peak > 0 && peak < 64 * 1024, "peak memory {peak} KiB");
    assert!(stderr.contains("no answer within 3s (the server was still running and has been stopped)"), "{stderr}");
    assert!(stderr.len() < 16 * 1024, "{} bytes", stderr.len());
    let dropped: u64 = stderr
        .split("lines; ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the dropped byte count: {stderr}"));
    assert!(dropped > 10_000_000, "it drained the flood: {dropped} bytes");
    eprintln!("flood: {dropped} bytes drained in {:?}, peak {peak} KiB", start.elapsed());
    let _ = std::fs::remove_dir_all(dir);
}

// ------------------------------------------------------------------ findings that matter

const SCHEMA_2020: &str = "https://json-schema.org/draft/2020-12/schema";

/// A closed 2020-12 object schema with these properties.
fn closed(properties: &Value) -> Value {
    json!({"$schema": SCHEMA_2020, "type": "object", "properties": properties, "additionalProperties": false})
}

fn text_result(structured: &Value) -> Value {
    json!({"content": [{"type": "text", "text": structured.to_string()}], "structuredContent": structured})
}

/// One tool of the fixture server: its definition and how it answers.
fn fixture_tool(name: &str, input: Option<Value>, output: Option<Value>, meta: Option<Value>, answer: Value) -> Value {
    let mut tool = json!({"name": name});
    if let Some(input) = input {
        tool["inputSchema"] = input;
    }
    if let Some(output) = output {
        tool["outputSchema"] = output;
    }
    if let Some(meta) = meta {
        tool["_meta"] = meta;
    }
    let mut entry = json!({"tool": tool});
    entry["answer"] = answer;
    entry
}

/// Runs an interop script in tests/interop and parses the JSON it prints last.
fn interop(program: &str, args: &[&str]) -> Value {
    bins::server_everything(); // installs the pinned clients (idempotent)
    let dir = bins::root().join("tests/interop");
    let out = bins::run_to_end(Command::new(program).current_dir(&dir).args(args), DEADLINE);
    assert!(out.status.success(), "{program} {args:?}: {}\n{}", out.status, out.stderr);
    out.stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("{program}: {}", out.stdout))
}

/// What the TypeScript SDK's Ajv (`schema` cases) and its tools/list parser (`tool` cases) say.
fn ajv(dir: &std::path::Path, cases: &[Value]) -> Vec<Value> {
    let file = dir.join("ajv-cases.json");
    std::fs::write(&file, Value::Array(cases.to_vec()).to_string()).unwrap();
    interop("node", &["validators.mjs", file.to_str().unwrap()]).as_array().unwrap().clone()
}

/// What the Python SDK's `jsonschema` (the 2020-12 validator our schemas name) says.
fn python(dir: &std::path::Path, cases: &[Value]) -> Vec<Value> {
    let file = dir.join("py-cases.json");
    std::fs::write(&file, Value::Array(cases.to_vec()).to_string()).unwrap();
    let python = bins::root().join("tests/interop/.venv/bin/python");
    interop(python.to_str().unwrap(), &["validators.py", file.to_str().unwrap()]).as_array().unwrap().clone()
}

/// The (kind, pointer) findings of one tool in a report.
fn found(report: &Value, name: &str) -> Vec<(String, String)> {
    tool(report, name)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["kind"].as_str().unwrap().to_owned(), f["pointer"].as_str().unwrap().to_owned()))
        .collect()
}

/// The finding kinds `contract-audit --help` lists.
fn listed_kinds() -> Vec<String> {
    let (code, help, _) = audit(&["--help"]);
    assert_eq!(code, 0);
    let section = help.split("Findings (kind, level: what it does to a client):\n").nth(1).expect("a Findings section");
    section.lines().take_while(|l| !l.is_empty()).map(|l| l.split_whitespace().next().unwrap().to_owned()).collect()
}

#[test]
#[allow(clippy::too_many_lines)]
fn every_finding_kind_matters_to_a_pinned_client() {
    let dir = scratch("findings");
    let object = || Some(json!({"type": "object"}));
    let exact = |extra: Value| {
        let mut entry = json!({"qualified": true, "compatibility": "exact", "name": "fixture", "version": "1.0.0"});
        if let (Value::Object(entry), Value::Object(extra)) = (&mut entry, extra) {
            entry.extend(extra);
        }
        Some(json!({ "tool-contracts.dev/contract": entry }))
    };
    let ok = |value: Value| text_result(&value);
    // Keyword → (property schema, a value 2020-12 rejects, a value it accepts).
    let draft07 = [
        ("prefixItems", json!({"type": "array", "prefixItems": [{"type": "integer"}]}), json!(["x"]), json!([1])),
        (
            "unevaluatedProperties",
            json!({"type": "object", "properties": {"a": {"type": "integer"}}, "unevaluatedProperties": false}),
            json!({"a": 1, "b": 2}),
            json!({"a": 1}),
        ),
        (
            "unevaluatedItems",
            json!({"type": "array", "unevaluatedItems": {"type": "integer"}}),
            json!(["x"]),
            json!([1]),
        ),
        (
            "dependentRequired",
            json!({"type": "object", "dependentRequired": {"a": ["b"]}}),
            json!({"a": 1}),
            json!({"a": 1, "b": 2}),
        ),
        (
            "dependentSchemas",
            json!({"type": "object", "dependentSchemas": {"a": {"required": ["b"]}}}),
            json!({"a": 1}),
            json!({"a": 1, "b": 2}),
        ),
        (
            "minContains",
            json!({"type": "array", "contains": {"type": "integer"}, "minContains": 2}),
            json!([1]),
            json!([1, 2]),
        ),
        (
            "maxContains",
            json!({"type": "array", "contains": {"type": "integer"}, "maxContains": 1}),
            json!([1, 2]),
            json!([1]),
        ),
        ("$dynamicRef", json!({"$dynamicRef": "#count"}), json!("x"), json!(1)),
    ];
    let mut draft07_props = serde_json::Map::new();
    for (keyword, schema, _, _) in &draft07 {
        draft07_props.insert((*keyword).to_owned(), schema.clone());
    }
    let mut draft07_schema = closed(&Value::Object(draft07_props));
    draft07_schema["$defs"] = json!({"count": {"$dynamicAnchor": "count", "type": "integer"}});

    let schemas = BTreeMap::from([
        ("draft07", draft07_schema.clone()),
        (
            "format",
            closed(
                &json!({"port": {"type": "integer", "format": "uint16"}, "at": {"type": "string", "format": "date-time"}}),
            ),
        ),
        ("permissive", closed(&json!({"any": {}, "also": true, "n": {"type": "integer"}}))),
        ("opaque", closed(&json!({"extra": {"description": "passed through"}, "n": {"type": "integer"}}))),
        ("open_object", json!({"$schema": SCHEMA_2020, "type": "object", "properties": {"n": {"type": "integer"}}})),
        ("remote_ref", closed(&json!({"x": {"$ref": "https://example.com/s.json"}}))),
        ("unresolvable_ref", closed(&json!({"x": {"$ref": "#/$defs/missing"}}))),
        ("bad_pattern", closed(&json!({"x": {"type": "string", "pattern": "("}}))),
        ("bad_result", closed(&json!({"n": {"type": "integer"}}))),
        ("self_reported", closed(&json!({"n": {"type": "integer"}}))),
    ]);
    let schema = |name: &str| schemas[name].clone();
    let needs_query = json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
    let violation = json!({"content": [{"type": "text",
        "text": r#"{"error":{"code":"output_contract_violation","message":"the result broke the output contract"}}"#}],
        "isError": true});
    let call_tools = vec![
        fixture_tool("bad_result", object(), Some(schema("bad_result")), None, ok(json!({"n": "not a number"}))),
        fixture_tool("no_output", object(), None, None, ok(json!({"n": "not a number"}))),
        fixture_tool("self_reported", object(), Some(schema("self_reported")), None, violation),
        fixture_tool("slow", object(), None, None, json!("hang")),
        fixture_tool("zz_exit", object(), None, None, json!("exit")),
    ];
    let mut all_tools = call_tools.clone();
    all_tools.extend([
        fixture_tool("draft07", object(), Some(schema("draft07")), None, ok(json!({}))),
        fixture_tool("format", object(), Some(schema("format")), None, ok(json!({}))),
        fixture_tool("permissive", object(), Some(schema("permissive")), None, ok(json!({}))),
        fixture_tool("opaque", object(), Some(schema("opaque")), exact(json!({"opaque": ["/extra"]})), ok(json!({}))),
        fixture_tool("open_object", object(), Some(schema("open_object")), exact(json!({})), ok(json!({}))),
        fixture_tool("remote_ref", object(), Some(schema("remote_ref")), None, ok(json!({}))),
        fixture_tool("unresolvable_ref", object(), Some(schema("unresolvable_ref")), None, ok(json!({}))),
        fixture_tool("bad_pattern", object(), Some(schema("bad_pattern")), None, ok(json!({}))),
        fixture_tool("needs_query", Some(needs_query.clone()), None, None, ok(json!({}))),
        fixture_tool("array_input", Some(json!({"type": "array"})), None, None, ok(json!({}))),
    ]);
    let fixture = dir.join("all-tools.json");
    std::fs::write(&fixture, Value::Array(all_tools.clone()).to_string()).unwrap();
    let server = bins::root().join("tests/interop/fixture_server.mjs");
    let args = dir.join("args.json");
    std::fs::write(
        &args,
        json!({"bad_result": {}, "no_output": {}, "self_reported": {}, "slow": {}, "zz_exit": {}, "needs_query": {}})
            .to_string(),
    )
    .unwrap();
    bins::server_everything();
    // The slow tool never answers, so this bounds the run; it is also the start-up budget a
    // loaded machine needs for node and the SDK.
    let (code, report) = audit_json(&[
        "--timeout",
        "8",
        "--args",
        args.to_str().unwrap(),
        "--",
        "node",
        server.to_str().unwrap(),
        fixture.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{report:#}");
    let mut shown: Vec<&str> = Vec::new();
    let has = |name: &str, kind: &str, pointer: &str| {
        let all = found(&report, name);
        assert!(all.contains(&(kind.to_owned(), pointer.to_owned())), "{name}: {kind} at {pointer:?} in {all:?}");
    };

    // Listing: the SDK's own tools/list parser rejects the whole listing for one such tool.
    has("array_input", "input-root-not-object", "");
    let listing = ajv(
        &dir,
        &[
            json!({"tool": tool_definition(&all_tools, "array_input")}),
            json!({"tool": tool_definition(&all_tools, "needs_query")}),
        ],
    );
    assert_eq!(listing[0]["listing"], false, "{listing:?}");
    assert_eq!(listing[1]["listing"], true, "control: {listing:?}");
    shown.push("input-root-not-object");

    // Schemas: what each client's validator does with the schema the finding is about.
    for (keyword, _, _, _) in &draft07 {
        has("draft07", "draft07-ignores", &format!("/properties/{keyword}"));
    }
    let draft07_cases: Vec<Value> = draft07
        .iter()
        .map(|(keyword, _, bad, good)| json!({"schema": draft07_schema, "values": [{*keyword: bad}, {*keyword: good}]}))
        .collect();
    let (ts, py) = (ajv(&dir, &draft07_cases), python(&dir, &draft07_cases));
    for (i, (keyword, ..)) in draft07.iter().enumerate() {
        assert_eq!(py[i]["accepts"], json!([false, true]), "2020-12 rejects the bad `{keyword}` value: {:?}", py[i]);
        assert_eq!(ts[i]["accepts"], json!([true, true]), "Ajv accepts what `{keyword}` rejects: {:?}", ts[i]);
    }
    shown.push("draft07-ignores");

    has("format", "non-standard-format", "/properties/port");
    assert!(!found(&report, "format").iter().any(|(_, p)| p == "/properties/at"), "date-time is standard");
    let cases = [
        json!({"schema": schema("format"), "values": [{"port": 70_000}, {"port": -1}]}),
        json!({"schema": schema("format"), "values": [{"at": "yesterday"}, {"at": "2026-01-01T00:00:00Z"}]}),
    ];
    let ts = ajv(&dir, &cases);
    assert_eq!(ts[0]["accepts"], json!([true, true]), "Ajv ignores `uint16`: {:?}", ts[0]);
    assert!(ts[0]["warnings"].to_string().contains(r#"unknown format \"uint16\" ignored"#), "{:?}", ts[0]);
    assert_eq!(ts[1]["accepts"], json!([false, true]), "control: Ajv enforces date-time: {:?}", ts[1]);
    shown.push("non-standard-format");

    has("permissive", "permissive", "/properties/any");
    has("permissive", "permissive", "/properties/also");
    has("opaque", "opaque", "/properties/extra");
    assert!(!found(&report, "opaque").iter().any(|(k, _)| k == "permissive"), "{:?}", found(&report, "opaque"));
    let anything = [json!(null), json!(1), json!("s"), json!([1]), json!({"k": true})];
    let at = |key: &str| -> Vec<Value> { anything.iter().map(|v| json!({ key: v })).collect() };
    let cases = [
        json!({"schema": schema("permissive"), "values": at("any")}),
        json!({"schema": schema("permissive"), "values": at("also")}),
        json!({"schema": schema("opaque"), "values": at("extra")}),
        json!({"schema": schema("permissive"), "values": [{"n": "s"}, {"n": 1}]}),
    ];
    for answers in [ajv(&dir, &cases), python(&dir, &cases)] {
        for answer in &answers[..3] {
            assert_eq!(
                answer["accepts"],
                json!([true, true, true, true, true]),
                "any value is accepted there: {answer:?}"
            );
        }
        assert_eq!(answers[3]["accepts"], json!([false, true]), "control: a typed field is checked: {:?}", answers[3]);
    }
    shown.extend(["permissive", "opaque"]);

    has("open_object", "open-object", "");
    let mut closed_version = schema("open_object");
    closed_version["additionalProperties"] = json!(false);
    let cases = [
        json!({"schema": schema("open_object"), "values": [{"n": 1, "undeclared": true}]}),
        json!({"schema": closed_version, "values": [{"n": 1, "undeclared": true}, {"n": 1}]}),
    ];
    let ts = ajv(&dir, &cases);
    assert_eq!(ts[0]["accepts"], json!([true]), "{:?}", ts[0]);
    assert_eq!(ts[1]["accepts"], json!([false, true]), "control: the closed object is checked: {:?}", ts[1]);
    shown.push("open-object");

    // An output object that requires nothing: `{}` is a result to both clients.
    has("open_object", "output-accepts-empty-object", "");
    let mut requires = schema("open_object");
    requires["required"] = json!(["n"]);
    let cases = [
        json!({"schema": schema("open_object"), "values": [{}]}),
        json!({"schema": requires, "values": [{}, {"n": 1}]}),
    ];
    for answers in [ajv(&dir, &cases), python(&dir, &cases)] {
        assert_eq!(answers[0]["accepts"], json!([true]), "{:?}", answers[0]);
        assert_eq!(answers[1]["accepts"], json!([false, true]), "control: a required member: {:?}", answers[1]);
    }
    shown.push("output-accepts-empty-object");

    has("remote_ref", "remote-ref", "/properties/x");
    has("unresolvable_ref", "unresolvable-ref", "/properties/x");
    has("bad_pattern", "schema-does-not-compile", "");
    let cases = [
        json!({"schema": schema("remote_ref"), "values": [{"x": 1}]}),
        json!({"schema": schema("unresolvable_ref"), "values": [{"x": 1}]}),
        json!({"schema": schema("bad_pattern"), "values": [{"x": "a"}]}),
        json!({"schema": schema("bad_result"), "values": [{"n": 1}]}),
    ];
    for answers in [ajv(&dir, &cases), python(&dir, &cases)] {
        for answer in &answers[..3] {
            assert_eq!(answer["compiles"], false, "the client cannot build its validator: {answer:?}");
        }
        assert_eq!(answers[3]["compiles"], true, "control: {:?}", answers[3]);
    }
    shown.extend(["remote-ref", "unresolvable-ref", "schema-does-not-compile"]);

    // Calls: the same server's tools, called by the TypeScript SDK's own client.
    has("no_output", "no-output-schema", "");
    has("bad_result", "call-contract-failure", "");
    has("self_reported", "call-server-reported-violation", "");
    has("needs_query", "call-arguments-invalid", "");
    has("slow", "call-timeout", "");
    has("zz_exit", "call-transport-error", "");
    let calls_fixture = dir.join("call-tools.json");
    std::fs::write(&calls_fixture, Value::Array(call_tools).to_string()).unwrap();
    let calls = dir.join("calls.json");
    let order = ["no_output", "bad_result", "self_reported", "slow", "zz_exit"];
    std::fs::write(
        &calls,
        Value::Array(order.iter().map(|n| json!({"name": n, "arguments": {}})).collect()).to_string(),
    )
    .unwrap();
    let sdk = interop(
        "node",
        &["sdk_calls.mjs", calls.to_str().unwrap(), "node", server.to_str().unwrap(), calls_fixture.to_str().unwrap()],
    );
    assert_eq!(sdk["listed"], true, "{sdk:#}");
    let sdk_call = |i: usize| &sdk["calls"][i];
    // No outputSchema: the client takes structuredContent of any shape.
    assert_eq!(sdk_call(0)["ok"], true, "{sdk:#}");
    assert_eq!(sdk_call(0)["structuredContent"], json!({"n": "not a number"}));
    // The same content under an outputSchema it breaks: the client's callTool throws.
    assert_eq!(sdk_call(1)["ok"], false, "{sdk:#}");
    assert!(sdk_call(1)["error"].as_str().unwrap().contains("does not match the tool's output schema"), "{sdk:#}");
    // The server refused its own result: the client gets an error and no data.
    assert_eq!(sdk_call(2)["isError"], true, "{sdk:#}");
    assert_eq!(sdk_call(2)["structuredContent"], Value::Null);
    assert_eq!(sdk_call(3)["ok"], false, "{sdk:#}");
    assert!(sdk_call(3)["error"].as_str().unwrap().contains("timed out"), "{sdk:#}");
    assert_eq!(sdk_call(4)["ok"], false, "{sdk:#}");
    assert!(sdk_call(4)["error"].as_str().unwrap().contains("Connection closed"), "{sdk:#}");
    // The arguments the audit would not send break the inputSchema for Ajv too.
    let ts = ajv(&dir, &[json!({"schema": needs_query, "values": [{}, {"q": "x"}]})]);
    assert_eq!(ts[0]["accepts"], json!([false, true]), "{ts:?}");
    shown.extend([
        "no-output-schema",
        "call-contract-failure",
        "call-server-reported-violation",
        "call-timeout",
        "call-transport-error",
        "call-arguments-invalid",
    ]);

    // Shown against real servers, each with what the TypeScript SDK client makes of the
    // same call, in audit_real.rs: fastmcp and firecrawl-mcp (the client's structuredContent
    // lacks the keys the text has) and agentic-qe (the client takes the failure for success).
    shown.extend(["call-structured-text-mismatch", "call-false-success"]);

    // A tool's own contentHash (draft SEP-3140) is shown in published_hash.rs against a
    // raw fixture whose hashes node computes. No pinned client verifies the draft's hash
    // yet: what these two kinds predict is what a client implementing the draft does.
    shown.extend(["published-hash-mismatch", "published-hash-unreadable"]);

    // Every kind the audit can emit was shown, and every one shown is one it emits.
    let mut listed = listed_kinds();
    listed.sort();
    shown.sort_unstable();
    assert_eq!(shown, listed);
    let _ = std::fs::remove_dir_all(dir);
}

fn tool_definition(tools: &[Value], name: &str) -> Value {
    tools.iter().find(|t| t["tool"]["name"] == name).map(|t| t["tool"].clone()).unwrap()
}
