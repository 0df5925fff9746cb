//! A declared error shape: `contracts.json` says how a server answers a failure as an
//! ordinary result (`{"success": false, "error": "…"}`, `isError` unset), `tool-contracts
//! schemas` writes it beside the contract (canonical, its SHA-256 in the inventory), and
//! `tool-contracts proxy` answers a result that breaks the contract and matches the shape
//! with `isError`, code `tool_execution_error` and the server's message, sanitized and
//! bounded like every message. A result matching neither stays a violation. Driven by the
//! TypeScript SDK v2 and Python SDK clients through a client configuration.

use crate::proxy_user_servers::{call, error_text, scratch, text_result, write_json};
use crate::support::bins;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

const DEADLINE: Duration = Duration::from_secs(120);

/// The error shape of the fixture's `task` contract (and Agentic QE's answers).
pub(crate) fn false_success_shape() -> Value {
    json!({
        "type": "object",
        "properties": { "success": { "const": false }, "error": { "type": "string" } },
        "required": ["success", "error"],
    })
}

fn answer(value: &Value) -> Value {
    text_result(&value.to_string())
}

/// The fixture's tools, each answering one JSON text block, and `contracts/` with the
/// `task` contract and its error shape, written by `tool-contracts schemas`.
fn setup(dir: &Path, huge: &str) -> (PathBuf, PathBuf) {
    let input = json!({ "type": "object", "properties": {} });
    let tool = |name: &str, answer: Value| json!({ "tool": { "name": name, "inputSchema": input }, "answer": answer });
    let failed = |message: &str| answer(&json!({ "success": false, "error": message }));
    let tools = dir.join("tools.json");
    write_json(
        &tools,
        &json!([
            tool("task", answer(&json!({ "id": "t-1", "status": "done" }))),
            tool("task_missing", failed("Task not found: t-9")),
            tool(
                "task_leaky",
                failed("cannot open /home/ci/.aqe/memory.db: token=s3cr3t-value, retry with ghp_abcdefghijklmnop1234"),
            ),
            tool("task_huge", failed(huge)),
            tool("task_control", failed("Task\u{1b}[2J not\u{7} found\u{202e}: t-9\nat Object.<anonymous> (x.js:1:1)")),
            tool("task_neither", answer(&json!({ "success": false, "reason": "no error member" }))),
        ]),
    );
    let contracts = dir.join("contracts");
    write_json(
        &contracts.join("contracts.json"),
        &json!({ "task": {
            "version": "1.0.0", "compatibility": "exact", "schema": "src/task.json",
            "error": { "schema": "src/task.error.json", "message": "/error" },
        } }),
    );
    write_json(
        &contracts.join("src/task.json"),
        &json!({
            "type": "object",
            "properties": { "id": { "type": "string" }, "status": { "type": "string", "enum": ["running", "done"] } },
            "required": ["id", "status"],
        }),
    );
    write_json(&contracts.join("src/task.error.json"), &false_success_shape());
    let out = bins::run_to_end(
        Command::new(bins::tool_contracts()).arg("schemas").arg(&contracts).current_dir(dir),
        DEADLINE,
    );
    assert!(out.status.success(), "tool-contracts schemas: {}\n{}", out.stdout, out.stderr);
    (tools, contracts)
}

fn proxied(tools: &Path, contracts: &Path) -> Value {
    let mut args: Vec<String> = vec!["proxy".into(), "--contracts".into(), contracts.display().to_string()];
    for tool in ["task_missing", "task_leaky", "task_huge", "task_control", "task_neither"] {
        args.extend(["--bind".into(), format!("{tool}=task")]);
    }
    args.extend(["--".into(), "node".into()]);
    args.push(bins::root().join("tests/interop/fixture_server.mjs").display().to_string());
    args.push(tools.display().to_string());
    json!({ "mcpServers": { "s": { "command": bins::tool_contracts(), "args": args } } })
}

/// The error body of a refusal: `{"code", "message", "retryable"}`.
pub(crate) fn error_body(result: &Value) -> Value {
    let text = error_text(result);
    serde_json::from_str::<Value>(&text).unwrap_or_else(|err| panic!("the error text is JSON ({err}): {text}"))["error"]
        .clone()
}

#[test]
fn schemas_writes_the_error_shape_beside_the_contract_and_the_proxy_loads_it() {
    let dir = scratch("error-shape-folder");
    let (_, contracts) = setup(&dir, "huge");
    let inventory: Value =
        serde_json::from_str(&std::fs::read_to_string(contracts.join("inventory.json")).unwrap()).unwrap();
    let entry = &inventory["contracts"][0];
    assert_eq!(entry["error"]["file"], "task.error.json", "{inventory:#}");
    assert_eq!(entry["error"]["message"], "/error", "{inventory:#}");
    let written = std::fs::read_to_string(contracts.join("task.error.json")).unwrap();
    // Canonical, and the inventory holds its SHA-256.
    let value: Value = serde_json::from_str(&written).unwrap();
    assert_eq!(written, contract_runtime::schema::canonical_string(&value));
    assert_eq!(entry["error"]["sha256"], contract_runtime::schema::sha256_hex(written.as_bytes()));
    // The folder loads with the shape, and is up to date.
    let set = contract_runtime::ContractSet::load_dir(&contracts).unwrap();
    let shape = set.error_shape("task").expect("the error shape loads");
    assert!(shape.matches(&json!({ "success": false, "error": "x" })));
    assert!(set.error_shape("other").is_none());
    let check = bins::run_to_end(
        Command::new(bins::tool_contracts()).args(["schemas", "--check"]).arg(&contracts).current_dir(&dir),
        DEADLINE,
    );
    assert!(check.status.success(), "{}\n{}", check.stdout, check.stderr);

    // The written file edited by hand: the proxy refuses to start, naming the hash.
    std::fs::write(contracts.join("task.error.json"), written.replace("\"error\"", "\"err\"")).unwrap();
    let err = contract_runtime::ContractSet::load_dir(&contracts).unwrap_err().to_string();
    assert!(err.contains("/contracts/0/sha256") && err.contains("task.error.json"), "{err}");
    // The fix the drift check prints (run `tool-contracts schemas`) restores it.
    let check = bins::run_to_end(
        Command::new(bins::tool_contracts()).args(["schemas", "--check"]).arg(&contracts).current_dir(&dir),
        DEADLINE,
    );
    assert_eq!(check.status.code(), Some(1), "{}\n{}", check.stdout, check.stderr);
    assert!(check.stderr.contains("task.error.json"), "{}", check.stderr);
    let fix = bins::run_to_end(
        Command::new(bins::tool_contracts()).arg("schemas").arg(&contracts).current_dir(&dir),
        DEADLINE,
    );
    assert!(fix.status.success(), "{}\n{}", fix.stdout, fix.stderr);
    assert!(contract_runtime::ContractSet::load_dir(&contracts).unwrap().error_shape("task").is_some());

    // The error shape removed from contracts.json: its file goes, nothing else does.
    write_json(
        &contracts.join("contracts.json"),
        &json!({ "task": { "version": "1.0.0", "compatibility": "exact", "schema": "src/task.json" } }),
    );
    let out = bins::run_to_end(
        Command::new(bins::tool_contracts()).arg("schemas").arg(&contracts).current_dir(&dir),
        DEADLINE,
    );
    assert!(out.status.success(), "{}\n{}", out.stdout, out.stderr);
    assert!(!contracts.join("task.error.json").exists());
    let set = contract_runtime::ContractSet::load_dir(&contracts).unwrap();
    assert!(set.get("task").is_some() && set.error_shape("task").is_none());
}

#[test]
fn a_result_in_the_declared_error_shape_is_a_tool_error_with_the_servers_message() {
    let dir = scratch("error-shape");
    let huge = format!("{}END-OF-MESSAGE", "x".repeat(200_000));
    let (tools, contracts) = setup(&dir, &huge);
    let config = proxied(&tools, &contracts);
    for client in ["python", "typescript"] {
        // Clean control: a result that keeps the contract passes, lifted.
        let (ok, _) = call(client, &dir, &config, "task");
        assert_ne!(ok["result"]["isError"], true, "{client}: {ok}");
        assert_eq!(ok["result"]["structuredContent"], json!({ "id": "t-1", "status": "done" }), "{client}");

        let (missing, _) = call(client, &dir, &config, "task_missing");
        let result = &missing["result"];
        let body = error_body(result);
        assert_eq!(body["code"], "tool_execution_error", "{client}: {result}");
        assert_eq!(body["message"], "Task not found: t-9", "{client}: the server's own message");
        assert_eq!(body["retryable"], false);
        let identity = &result["_meta"]["tool-contracts.dev/contract"];
        assert_eq!(identity["qualified"], true, "{client}: {result}");
        assert!(identity["id"].as_str().unwrap().starts_with("task@1.0.0+sha256:"), "{client}: {result}");

        // A result matching neither the contract nor the error shape stays a violation.
        let (neither, _) = call(client, &dir, &config, "task_neither");
        let body = error_body(&neither["result"]);
        assert_eq!(body["code"], "output_contract_violation", "{client}: {neither}");
        assert!(!body.to_string().contains("no error member"), "{client}: the value stays out: {body}");
    }
}

#[test]
fn the_servers_error_message_is_sanitized_and_bounded() {
    let dir = scratch("error-shape-adversarial");
    let huge = format!("{}END-OF-MESSAGE", "x".repeat(200_000));
    let (tools, contracts) = setup(&dir, &huge);
    let config = proxied(&tools, &contracts);
    let message = |tool: &str| {
        let (seen, _) = call("typescript", &dir, &config, tool);
        let body = error_body(&seen["result"]);
        assert_eq!(body["code"], "tool_execution_error", "{tool}: {seen}");
        body["message"].as_str().unwrap().to_owned()
    };
    let leaky = message("task_leaky");
    for secret in ["/home/ci", "memory.db", "s3cr3t-value", "ghp_abcdefghijklmnop1234"] {
        assert!(!leaky.contains(secret), "{secret} is masked: {leaky}");
    }
    assert!(leaky.starts_with("cannot open [path]"), "the rest of the message stays: {leaky}");

    let huge = message("task_huge");
    assert!(huge.chars().count() <= contract_runtime::redact::MAX_MESSAGE_CHARS + 1, "{} chars", huge.len());
    assert!(huge.ends_with('…') && !huge.contains("END-OF-MESSAGE"), "cut, and says so");

    let control = message("task_control");
    assert!(!control.chars().any(char::is_control), "no control character: {control:?}");
    assert!(!control.contains('\u{202e}'), "no reordering mark: {control:?}");
    assert!(!control.contains("Object.<anonymous>"), "no stack trace line: {control:?}");
    assert_eq!(control, "Task [2J not found : t-9");

    // Clean control: an ordinary message passes as the server wrote it.
    assert_eq!(message("task_missing"), "Task not found: t-9");
}
