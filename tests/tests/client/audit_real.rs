//! `contract-audit --args` against real TypeScript and Python MCP servers, for the findings
//! a call's result gives beside its validity:
//!
//! - `call-structured-text-mismatch`: fastmcp 4.3.2 strips keys its zod output schema does
//!   not name from `structuredContent` and leaves them in the text (a tiny fastmcp server,
//!   `tests/interop/sdk_servers.mjs`, and the real `firecrawl-mcp` 3.26.0 against a fake
//!   Firecrawl API of ours, `tests/interop/fake_firecrawl_api.mjs`).
//! - `call-server-reported-violation`: a server's SDK refusing the tool's own result is
//!   recognized by its message (fastmcp, the TypeScript SDK v1 and v2); the Python SDK's
//!   refusal reads like any crash and stays a declared error.
//! - `call-false-success`: `agentic-qe` 3.14.0 answers an unknown task with
//!   `{"success": false, …}` and no `isError`.
//!
//! Every finding has a clean control on the same server, and what the pinned TypeScript
//! SDK client makes of the same call is shown beside it (`tests/interop/sdk_calls.mjs`).

use crate::support::bins;
use crate::support::interop::FakeApi;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

const DEADLINE: Duration = Duration::from_secs(240);

pub(crate) fn interop() -> PathBuf {
    bins::server_everything(); // runs tests/interop/install.sh once (idempotent)
    bins::root().join("tests/interop")
}

/// A fresh directory for one test's files.
pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("audit-real-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What one audit run printed.
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("JSON report ({e}):\n{}\n{}", self.stdout, self.stderr))
    }
}

/// Runs `contract-audit` with `args` (writing `calls` as the `--args` file), then the
/// server's command line, in `dir`, with `env`.
pub(crate) fn audit(dir: &Path, env: &[(&str, &str)], flags: &[&str], calls: &Value, server: &[&str]) -> Run {
    let file = dir.join("args.json");
    std::fs::write(&file, calls.to_string()).unwrap();
    let mut cmd = Command::new(bins::contract_audit());
    cmd.current_dir(dir).args(["--timeout", "60", "--args"]).arg(&file).args(flags).arg("--").args(server);
    for (key, value) in env {
        cmd.env(key, value);
    }
    let out = bins::run_to_end(&mut cmd, DEADLINE);
    Run { code: out.status.code().expect("an exit code"), stdout: out.stdout, stderr: out.stderr }
}

pub(crate) fn tool<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == name))
        .unwrap_or_else(|| panic!("{name} in the report"))
}

/// The (kind, pointer, message) of a tool's call findings.
pub(crate) fn call_findings(report: &Value, name: &str) -> Vec<(String, String, String)> {
    tool(report, name)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["site"] == "call")
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_owned(),
                f["pointer"].as_str().unwrap().to_owned(),
                f["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The pointers of a tool's `call-structured-text-mismatch` findings.
fn mismatched(report: &Value, name: &str) -> BTreeSet<String> {
    call_findings(report, name).into_iter().filter(|f| f.0 == "call-structured-text-mismatch").map(|f| f.1).collect()
}

pub(crate) fn set(pointers: &[&str]) -> BTreeSet<String> {
    pointers.iter().map(|p| (*p).to_owned()).collect()
}

/// What the pinned TypeScript SDK client gets from the same calls: for each,
/// `{"name", "ok", "isError", "structuredContent", "error"}`.
fn sdk_client(dir: &Path, env: &[(&str, &str)], calls: &[(&str, Value)], server: &[&str]) -> Vec<Value> {
    let file = dir.join("sdk-calls.json");
    let list: Vec<Value> = calls.iter().map(|(name, args)| json!({"name": name, "arguments": args})).collect();
    std::fs::write(&file, Value::Array(list).to_string()).unwrap();
    let mut cmd = Command::new("node");
    cmd.current_dir(dir).arg(interop().join("sdk_calls.mjs")).arg(&file).args(server);
    for (key, value) in env {
        cmd.env(key, value);
    }
    let out = bins::run_to_end(&mut cmd, DEADLINE);
    assert!(out.status.success(), "sdk_calls.mjs: {}\n{}", out.status, out.stderr);
    let answer: Value = out
        .stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("sdk_calls.mjs printed no JSON: {}", out.stdout));
    assert_eq!(answer["listed"], true, "{answer:#}");
    answer["calls"].as_array().unwrap().clone()
}

pub(crate) fn node_server(which: &str) -> Vec<String> {
    vec!["node".to_owned(), interop().join("sdk_servers.mjs").to_str().unwrap().to_owned(), which.to_owned()]
}

pub(crate) fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

// --------------------------------------------------------------- keys that vanish

#[test]
fn fastmcp_strips_undeclared_keys_from_structured_content_and_the_audit_names_them() {
    let dir = scratch("fastmcp-keys");
    let server = node_server("fastmcp");
    let run = audit(&dir, &[], &["--format", "json"], &json!({"extra_keys": {}, "fine": {}}), &strs(&server));
    let report = run.json();
    // Warnings only: the default --deny error passes.
    assert_eq!(run.code, 0, "{report:#}\n{}", run.stderr);
    assert_eq!(tool(&report, "extra_keys")["call"]["result"], "valid", "{report:#}");
    assert_eq!(mismatched(&report, "extra_keys"), set(&["/cacheState", "/creditsUsed", "/metadata/statusCode"]));
    let call = &tool(&report, "extra_keys")["call"]["mismatch"];
    assert_eq!(call["only_in_structured"], json!([]), "{call:#}");
    // Clean control: the same server and schema, the same keys on both sides.
    assert_eq!(tool(&report, "fine")["call"]["result"], "valid");
    assert_eq!(call_findings(&report, "fine"), vec![], "{report:#}");
    assert!(tool(&report, "fine")["call"].get("mismatch").is_none(), "{report:#}");

    // The oracle: the TypeScript SDK client reads structuredContent without those keys.
    let sdk = sdk_client(&dir, &[], &[("extra_keys", json!({})), ("fine", json!({}))], &strs(&server));
    let page = json!({"markdown": "# Example Domain", "metadata": {"title": "Example Domain"}});
    assert_eq!(sdk[0]["structuredContent"], page, "{sdk:?}");
    assert_eq!(sdk[1]["structuredContent"], page, "{sdk:?}");

    // The table says where, one line per key; --deny warn fails the run on them.
    let run = audit(&dir, &[], &["--deny", "warn"], &json!({"extra_keys": {}, "fine": {}}), &strs(&server));
    assert_eq!(run.code, 1, "{}", run.stdout);
    // One line for the three identical findings, the tool and its pointers under it.
    let head =
        "  warn  call-structured-text-mismatch (call): only in the text block's JSON: structuredContent, what a \
                client validates and reads, lacks the key: 3 in 1 tool\n          extra_keys at /cacheState, \
                /creditsUsed, /metadata/statusCode\n";
    assert!(run.stdout.contains(head), "{head}\n{}", run.stdout);
    assert!(!run.stdout.contains("fine: call-"), "{}", run.stdout);
    let _ = std::fs::remove_dir_all(dir);
}

pub(crate) fn firecrawl() -> Vec<String> {
    let entry = interop().join("node_modules/firecrawl-mcp/dist/index.js");
    vec!["node".to_owned(), entry.to_str().unwrap().to_owned()]
}

#[test]
fn firecrawl_mcp_sends_keys_in_its_text_that_its_structured_content_lacks() {
    let dir = scratch("firecrawl");
    let api = FakeApi::start();
    let env = [("FIRECRAWL_API_KEY", "fc-test"), ("FIRECRAWL_API_URL", api.url.as_str())];
    let server = firecrawl();
    let calls = json!({"firecrawl_scrape": {"url": "https://example.com"}, "firecrawl_credit_usage": {}});
    let run = audit(&dir, &env, &["--format", "json"], &calls, &strs(&server));
    let report = run.json();
    assert_eq!(run.code, 0, "{report:#}\n{}", run.stderr);
    assert_eq!(report["tools"].as_array().unwrap().len(), 29);
    assert_eq!(report["summary"]["output_schema_declared"], 29);
    // The scraped document's top-level keys the schema does not name are gone from
    // structuredContent; metadata is `unknown` in the schema, so its keys all stay.
    assert_eq!(tool(&report, "firecrawl_scrape")["call"]["result"], "valid", "{report:#}");
    assert_eq!(mismatched(&report, "firecrawl_scrape"), set(&["/cacheState", "/creditsUsed"]));
    // Clean control: the current credit view picks its declared fields itself.
    assert_eq!(tool(&report, "firecrawl_credit_usage")["call"]["result"], "valid", "{report:#}");
    assert_eq!(call_findings(&report, "firecrawl_credit_usage"), vec![], "{report:#}");

    // The historical view passes the API's body on: its undeclared keys vanish the same way.
    let run = audit(
        &dir,
        &env,
        &["--format", "json"],
        &json!({"firecrawl_credit_usage": {"view": "historical"}}),
        &strs(&server),
    );
    let report = run.json();
    assert_eq!(mismatched(&report, "firecrawl_credit_usage"), set(&["/periodCount", "/teamId"]), "{report:#}");

    // The oracle: the TypeScript SDK client's structuredContent lacks them; every key it
    // has is in the text the audit compared with.
    let sdk = sdk_client(
        &dir,
        &env,
        &[
            ("firecrawl_scrape", json!({"url": "https://example.com"})),
            ("firecrawl_credit_usage", json!({"view": "historical"})),
        ],
        &strs(&server),
    );
    let keys = |v: &Value| v.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>()).unwrap_or_default();
    assert_eq!(keys(&sdk[0]["structuredContent"]), ["markdown", "metadata"], "{sdk:?}");
    assert_eq!(sdk[0]["structuredContent"]["metadata"]["statusCode"], 200, "{sdk:?}");
    assert_eq!(keys(&sdk[1]["structuredContent"]), ["periods", "success"], "{sdk:?}");
    let _ = std::fs::remove_dir_all(dir);
}

// ------------------------------------------------- a server refusing its own output

#[test]
fn each_sdks_refusal_of_its_own_output_is_a_server_reported_violation() {
    let dir = scratch("refusals");
    let calls = json!({"wrong_type": {}, "own_error": {}, "fine": {}});
    for (which, sdk) in [("fastmcp", "fastmcp 4.x"), ("ts1", "TypeScript SDK v1"), ("ts2", "TypeScript SDK v2")] {
        let server = node_server(which);
        let run = audit(&dir, &[], &["--format", "json"], &calls, &strs(&server));
        let report = run.json();
        // A refusal is an error: the default --deny error fails the run.
        assert_eq!(run.code, 1, "{which}: {report:#}\n{}", run.stderr);
        let refused = &tool(&report, "wrong_type")["call"];
        assert_eq!(refused["result"], "declared-error", "{which}: {refused:#}");
        assert_eq!(refused["refused_by"], sdk, "{which}: {refused:#}");
        let found = call_findings(&report, "wrong_type");
        assert_eq!(found.len(), 1, "{which}: {found:?}");
        assert_eq!(found[0].0, "call-server-reported-violation");
        assert!(found[0].2.starts_with(&format!("the server refused its own result ({sdk}): ")), "{found:?}");
        // Clean controls: the tool's own error stays a declared error, a valid result valid.
        let own = &tool(&report, "own_error")["call"];
        assert_eq!((own["result"].as_str(), own.get("refused_by")), (Some("declared-error"), None), "{which}: {own:#}");
        assert!(own["detail"].as_str().unwrap().contains("page not found"), "{which}: {own:#}");
        assert_eq!(call_findings(&report, "own_error"), vec![], "{which}");
        assert_eq!(tool(&report, "fine")["call"]["result"], "valid", "{which}");
        // The messages, as each SDK wrote them (the recognizers' patterns).
        let detail = refused["detail"].as_str().unwrap();
        let expected = match which {
            "fastmcp" => "Tool 'wrong_type' structured output validation failed: ",
            "ts1" => "MCP error -32602: Output validation error: Invalid structured content for tool wrong_type",
            _ => "Output validation error: Invalid structured content for tool wrong_type",
        };
        assert!(detail.starts_with(expected), "{which}: {detail}");
        // The oracle: the SDK client gets an error result and no data.
        let sdk_calls = sdk_client(&dir, &[], &[("wrong_type", json!({})), ("own_error", json!({}))], &strs(&server));
        assert_eq!((&sdk_calls[0]["isError"], &sdk_calls[0]["structuredContent"]), (&json!(true), &Value::Null));
        assert_eq!(sdk_calls[1]["isError"], true);
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_python_sdk_refuses_its_own_output_with_the_message_of_a_crash() {
    let dir = scratch("python-refusal");
    let python = interop().join(".venv/bin/python");
    let script = interop().join("sdk_server.py");
    let server = [python.to_str().unwrap(), script.to_str().unwrap()];
    let calls = json!({"wrong_type": {}, "crash": {}, "own_error": {}, "fine": {}});
    let run = audit(&dir, &[], &["--format", "json"], &calls, &server);
    let report = run.json();
    assert_eq!(run.code, 0, "{report:#}\n{}", run.stderr);
    // mcp 2.3.0 refuses the wrong result (no data reaches the client), but its message is
    // the one of any crash in the tool: recognizing it would call every crash a refusal,
    // so both stay declared errors, and the audit says no more than the server did.
    let detail = |name: &str| tool(&report, name)["call"]["detail"].as_str().unwrap().to_owned();
    assert_eq!(detail("wrong_type"), "Error executing tool wrong_type");
    assert_eq!(detail("crash"), "Error executing tool crash");
    for name in ["wrong_type", "crash", "own_error"] {
        assert_eq!(tool(&report, name)["call"]["result"], "declared-error", "{name}: {report:#}");
        assert_eq!(call_findings(&report, name), vec![], "{name}");
    }
    assert_eq!(detail("own_error"), "Error executing tool own_error: page not found");
    assert_eq!(tool(&report, "fine")["call"]["result"], "valid");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn firecrawl_mcp_refusing_a_wrong_typed_api_answer_is_a_server_reported_violation() {
    let dir = scratch("firecrawl-refusal");
    let api = FakeApi::start();
    let env = [("FIRECRAWL_API_KEY", "fc-wrong-types"), ("FIRECRAWL_API_URL", api.url.as_str())];
    let run = audit(&dir, &env, &["--format", "json"], &json!({"firecrawl_credit_usage": {}}), &strs(&firecrawl()));
    let report = run.json();
    assert_eq!(run.code, 1, "{report:#}\n{}", run.stderr);
    let call = &tool(&report, "firecrawl_credit_usage")["call"];
    assert_eq!(call["refused_by"], "fastmcp 4.x", "{call:#}");
    let detail = call["detail"].as_str().unwrap();
    assert!(detail.starts_with("Tool 'firecrawl_credit_usage' structured output validation failed: "), "{detail}");
    assert_eq!(call_findings(&report, "firecrawl_credit_usage")[0].0, "call-server-reported-violation");
    let _ = std::fs::remove_dir_all(dir);
}

// ------------------------------------------------------------- a false success

#[test]
fn agentic_qe_answers_an_unknown_task_with_a_false_success() {
    let dir = scratch("aqe");
    let bundle = interop().join("aqe/node_modules/agentic-qe/dist/mcp/bundle.js");
    let server = ["node", bundle.to_str().unwrap()];
    let env = [("AQE_MEMORY_BACKEND", "memory")];
    let calls = json!({"task_status": {"taskId": "no-such-task"}, "aqe_health": {}});
    let run = audit(&dir, &env, &["--format", "json"], &calls, &server);
    let report = run.json();
    assert_eq!(run.code, 0, "{report:#}\n{}", run.stderr);
    let status = &tool(&report, "task_status")["call"];
    assert_eq!(status["result"], "false-success", "{status:#}");
    let found = &status["false_success"];
    assert_eq!(
        (&found["source"], &found["pointer"], &found["signal"]),
        (&json!("text"), &json!("/success"), &json!("success: false"))
    );
    // agentic-qe names the unknown task, or (before its fleet is up, as it answers a call
    // made right after the listing) says the fleet is not initialized: either way with
    // `success: false` and no isError.
    let message = found["message"].as_str().unwrap();
    assert!(
        ["Task not found: no-such-task", "Fleet not initialized. Call fleet_init first."].contains(&message),
        "{found:#}"
    );
    assert_eq!(
        call_findings(&report, "task_status"),
        [(
            "call-false-success".to_owned(),
            "/success".to_owned(),
            format!("success: false in text but isError is unset: {message}")
        )]
    );
    // Clean control: the health check succeeds, and says so.
    let health = &tool(&report, "aqe_health")["call"];
    assert_eq!(health["result"], "unvalidated", "{health:#}");
    assert_eq!(call_findings(&report, "aqe_health"), vec![]);

    // The oracle: the TypeScript SDK client takes the failure for a success.
    let sdk = sdk_client(&dir, &env, &[("task_status", json!({"taskId": "no-such-task"}))], &server);
    assert_eq!((&sdk[0]["ok"], &sdk[0]["isError"]), (&json!(true), &json!(false)), "{sdk:?}");

    // The table shows it; --deny warn fails the run on it.
    let run = audit(&dir, &env, &["--deny", "warn"], &calls, &server);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let line =
        "  warn  task_status: call-false-success (call at /success): success: false in text but isError is unset";
    assert!(run.stdout.contains(line), "{}", run.stdout);
    let _ = std::fs::remove_dir_all(dir);
}

// ------------------------------------------------------------ calls that are safe

/// One tool of `tests/interop/fixture_server.mjs` (the TypeScript SDK's low-level server):
/// its definition, with these annotations, and its answer.
fn fixture_tool(name: &str, annotations: &Value, answer: Value) -> Value {
    let text = json!({"content": [{"type": "text", "text": "done"}]});
    let answer = if answer.is_null() { text } else { answer };
    json!({"tool": {"name": name, "inputSchema": {"type": "object"}, "annotations": annotations}, "answer": answer})
}

#[test]
fn synthesized_arguments_call_only_read_only_tools_and_never_destructive_ones() {
    let dir = scratch("safety");
    // `b_destroyer` ends the server if it is called: every call after it would fail, so
    // `c_writer` answering is the server's own word that `b_destroyer` was not called.
    let tools = json!([
        fixture_tool("a_reader", &json!({"readOnlyHint": true}), Value::Null),
        fixture_tool("b_destroyer", &json!({"readOnlyHint": false, "destructiveHint": true}), json!("exit")),
        fixture_tool("c_writer", &json!({}), Value::Null),
        fixture_tool(
            "d_reader_said_destructive",
            &json!({"readOnlyHint": true, "destructiveHint": true}),
            json!("exit")
        ),
    ]);
    let file = dir.join("tools.json");
    std::fs::write(&file, tools.to_string()).unwrap();
    let server = [
        "node".to_owned(),
        interop().join("fixture_server.mjs").to_str().unwrap().to_owned(),
        file.to_str().unwrap().to_owned(),
    ];
    let run_with = |flags: &[&str]| {
        let mut cmd = Command::new(bins::contract_audit());
        cmd.current_dir(&dir).args(["--timeout", "60", "--format", "json"]).args(flags).arg("--").args(&server);
        let out = bins::run_to_end(&mut cmd, DEADLINE);
        let report: Value =
            serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", out.stdout, out.stderr));
        (out.status.code().unwrap(), report)
    };
    let call = |report: &Value, name: &str| {
        let call = &tool(report, name)["call"];
        (call["result"].as_str().unwrap().to_owned(), call["detail"].as_str().unwrap().to_owned())
    };
    let read_only = "not annotated readOnlyHint: true: give its arguments in --args, or pass --call-unsafe";
    let destructive = "annotated destructiveHint: true: called only with its arguments from --args";

    let (code, report) = run_with(&["--call"]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(call(&report, "a_reader").0, "unvalidated", "{report:#}");
    assert_eq!(call(&report, "b_destroyer"), ("not-called".to_owned(), destructive.to_owned()));
    assert_eq!(call(&report, "c_writer"), ("not-called".to_owned(), read_only.to_owned()));
    assert_eq!(call(&report, "d_reader_said_destructive"), ("not-called".to_owned(), destructive.to_owned()));

    // The fix the message names: --call-unsafe calls the writer (the clean control: the
    // server is still up), and still not the destructive tools.
    let (code, report) = run_with(&["--call", "--call-unsafe"]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(call(&report, "c_writer").0, "unvalidated", "{report:#}");
    assert_eq!(call(&report, "b_destroyer"), ("not-called".to_owned(), destructive.to_owned()));
    // The other fix: arguments from --args call the destructive tool, which ends the server.
    let args = dir.join("args.json");
    std::fs::write(&args, json!({"b_destroyer": {}}).to_string()).unwrap();
    let (code, report) = run_with(&["--call", "--args", args.to_str().unwrap()]);
    assert_eq!(call(&report, "b_destroyer").0, "transport-error", "{report:#}");
    assert_eq!(call(&report, "c_writer"), ("not-called".to_owned(), read_only.to_owned()));
    assert_eq!(code, 0, "{report:#}");

    // The table says which were not called, and why.
    let mut cmd = Command::new(bins::contract_audit());
    cmd.current_dir(&dir).args(["--call", "--"]).args(&server);
    let table = bins::run_to_end(&mut cmd, DEADLINE).stdout;
    assert!(table.contains(&format!("  call  c_writer: not-called (call): {read_only}")), "{table}");
    assert!(table.contains(&format!("  call  b_destroyer: not-called (call): {destructive}")), "{table}");
    // --call-unsafe means nothing without --call.
    let out =
        bins::run_to_end(Command::new(bins::contract_audit()).args(["--call-unsafe", "--"]).args(&server), DEADLINE);
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("--call"), "{}", out.stderr);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_json_rpc_invalid_params_answer_is_an_argument_finding() {
    let dir = scratch("invalid-params");
    let tools = json!([
        fixture_tool("refuses", &json!({"readOnlyHint": true}), json!("invalid-params")),
        fixture_tool("zz_exit", &json!({"readOnlyHint": true}), json!("exit")),
    ]);
    let file = dir.join("tools.json");
    std::fs::write(&file, tools.to_string()).unwrap();
    let script = interop().join("fixture_server.mjs");
    let server = ["node", script.to_str().unwrap(), file.to_str().unwrap()];
    let run = audit(&dir, &[], &["--format", "json"], &json!({"refuses": {"id": "T-0"}, "zz_exit": {}}), &server);
    let report = run.json();
    assert_eq!(run.code, 0, "{report:#}");
    let refused = &tool(&report, "refuses")["call"];
    assert_eq!(refused["result"], "arguments-invalid", "{refused:#}");
    assert_eq!(refused["code"], "-32602");
    assert_eq!(
        call_findings(&report, "refuses"),
        [(
            "call-arguments-invalid".to_owned(),
            String::new(),
            "the server refused the arguments (JSON-RPC -32602): MCP error -32602: refuses: the id must name an existing ticket"
                .to_owned()
        )]
    );
    // Clean control: a connection that ends is still a transport error.
    assert_eq!(tool(&report, "zz_exit")["call"]["result"], "transport-error", "{report:#}");
    assert_eq!(call_findings(&report, "zz_exit")[0].0, "call-transport-error");
    let _ = std::fs::remove_dir_all(dir);
}
