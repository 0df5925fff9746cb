//! The real servers our users named, through `tool-contracts proxy`, driven by the official
//! Python SDK and TypeScript SDK v2 clients through a client configuration: Agentic QE
//! (npm `agentic-qe` 3.14.0, run with `AQE_MEMORY_BACKEND=memory`; no `outputSchema`,
//! every result one JSON text block, failures answered as `{"success": false, "error": …}`
//! without `isError`) and Firecrawl's MCP server (npm `firecrawl-mcp` 3.26.0 on fastmcp,
//! every tool with an `outputSchema`, against our fake Firecrawl API). Contracts are plain
//! JSON Schema, made into a folder by `tool-contracts schemas`: declared contracts are
//! advertised and enforced, text lifted, a false success made a tool error with its
//! reason, a tool without a contract passed through unchanged and marked, warn mode
//! invisible, each refusal beside a clean control.

use crate::proxy_error_shape::{error_body, false_success_shape};
use crate::proxy_user_servers::{call_with, scratch, write_json};
use crate::support::bins;
use crate::support::interop::FakeApi;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

const DEADLINE: Duration = Duration::from_secs(120);

fn aqe_bundle() -> PathBuf {
    bins::root().join("tests/interop/aqe/node_modules/agentic-qe/dist/mcp/bundle.js")
}

/// `dir/contracts/` for Agentic QE: `task_status` and `aqe_health` (their success
/// envelopes, objects open) with the false-success error shape, or without it.
fn aqe_contracts(dir: &Path, with_error: bool) -> PathBuf {
    let contracts = dir.join(if with_error { "contracts" } else { "contracts-no-error" });
    let envelope = |data: Value| {
        json!({
            "type": "object",
            "properties": { "success": { "const": true }, "data": data },
            "required": ["success", "data"],
        })
    };
    let entry = |name: &str| {
        let mut entry =
            json!({ "version": "1.0.0", "compatibility": "additive", "schema": format!("src/{name}.json") });
        if with_error {
            entry["error"] = json!({ "schema": "src/false_success.json", "message": "/error" });
        }
        entry
    };
    // `fleet_status`'s contract is wrong on purpose: the server says "healthy".
    write_json(
        &contracts.join("contracts.json"),
        &json!({
            "task_status": entry("task_status"),
            "aqe_health": entry("aqe_health"),
            "fleet_status": { "version": "1.0.0", "compatibility": "additive", "schema": "src/fleet_status.json" },
        }),
    );
    write_json(
        &contracts.join("src/fleet_status.json"),
        &envelope(json!({
            "type": "object",
            "properties": { "status": { "type": "string", "enum": ["ok"] } },
            "required": ["status"],
        })),
    );
    write_json(
        &contracts.join("src/task_status.json"),
        &envelope(json!({
            "type": "object",
            "properties": { "taskId": { "type": "string" }, "status": { "type": "string" } },
            "required": ["taskId", "status"],
        })),
    );
    write_json(
        &contracts.join("src/aqe_health.json"),
        &envelope(json!({
            "type": "object",
            "properties": { "status": { "type": "string", "enum": ["healthy", "degraded", "unhealthy"] } },
            "required": ["status"],
        })),
    );
    write_json(&contracts.join("src/false_success.json"), &false_success_shape());
    let out = bins::run_to_end(
        Command::new(bins::tool_contracts()).arg("schemas").arg(&contracts).current_dir(dir),
        DEADLINE,
    );
    assert!(out.status.success(), "tool-contracts schemas: {}\n{}", out.stdout, out.stderr);
    contracts
}

/// A client configuration that runs Agentic QE behind `tool-contracts proxy args…`.
fn aqe_proxied(args: &[String]) -> Value {
    let mut all: Vec<String> = vec!["proxy".into()];
    all.extend(args.iter().cloned());
    all.extend(["--".into(), "node".into(), aqe_bundle().display().to_string()]);
    json!({ "mcpServers": { "s": {
        "command": bins::tool_contracts(), "args": all, "env": { "AQE_MEMORY_BACKEND": "memory" },
    } } })
}

/// What Agentic QE answers an unknown task with: it names the task, or (before its fleet
/// is up) says the fleet is not initialized; either way `success: false`, no `isError`.
const AQE_FAILURES: [&str; 2] = ["Task not found: no-such-task", "Fleet not initialized. Call fleet_init first."];

#[test]
fn agentic_qe_false_success_becomes_a_tool_error_with_its_reason() {
    let dir = scratch("real-aqe-error-shape");
    let contracts = aqe_contracts(&dir, true);
    let config = aqe_proxied(&["--contracts".into(), contracts.display().to_string()]);
    let unknown = json!({ "taskId": "no-such-task" });
    for client in ["python", "typescript"] {
        let (status, _) = call_with(client, &dir, &config, "task_status", &unknown);
        let result = &status["result"];
        let body = error_body(result);
        assert_eq!(body["code"], "tool_execution_error", "{client}: {result}");
        let message = body["message"].as_str().unwrap();
        assert!(AQE_FAILURES.contains(&message), "{client}: the server's reason: {message}");
        let identity = &result["_meta"]["tool-contracts.dev/contract"];
        assert!(identity["id"].as_str().unwrap().starts_with("task_status@1.0.0+sha256:"), "{client}: {result}");
        assert!(status["definitions"]["task_status"]["outputSchema"].is_object(), "{client}: advertised");

        // Clean control: the health check keeps its contract and passes, lifted.
        let (health, _) = call_with(client, &dir, &config, "aqe_health", &json!({}));
        let result = &health["result"];
        assert_ne!(result["isError"], true, "{client}: {result}");
        assert_eq!(result["structuredContent"]["success"], true, "{client}: {result}");
        assert_eq!(result["structuredContent"]["data"]["status"], "healthy", "{client}: {result}");
    }

    // Without the error shape, the same answer is a broken contract that loses the reason.
    let contracts = aqe_contracts(&dir, false);
    let config = aqe_proxied(&["--contracts".into(), contracts.display().to_string()]);
    let (status, _) = call_with("typescript", &dir, &config, "task_status", &unknown);
    let body = error_body(&status["result"]);
    assert_eq!(body["code"], "output_contract_violation", "{status}");
    assert!(!AQE_FAILURES.iter().any(|m| body.to_string().contains(m)), "{body}");
}

/// A direct client configuration for `command` (no proxy), with `env`.
fn direct(command: &[String], env: &Value) -> Value {
    json!({ "mcpServers": { "s": { "command": command[0], "args": command[1..], "env": env } } })
}

#[test]
fn agentic_qe_through_the_proxy_refuses_a_broken_contract_passes_the_rest_and_warns_invisibly() {
    let dir = scratch("real-aqe");
    let contracts = aqe_contracts(&dir, true);
    let enforce = aqe_proxied(&["--contracts".into(), contracts.display().to_string()]);
    let plain =
        direct(&["node".into(), aqe_bundle().display().to_string()], &json!({ "AQE_MEMORY_BACKEND": "memory" }));
    let key = "tool-contracts.dev/contract";
    for client in ["python", "typescript"] {
        // A contract the server breaks: refused, the pointer named, the value kept out.
        let (fleet, _) = call_with(client, &dir, &enforce, "fleet_status", &json!({}));
        let body = error_body(&fleet["result"]);
        assert_eq!(body["code"], "output_contract_violation", "{client}: {fleet}");
        assert_eq!(body["violations"][0]["pointer"], "/data/status", "{client}: {body}");
        assert!(!body.to_string().contains("healthy"), "{client}: the value stays out: {body}");
        assert!(fleet["definitions"]["fleet_status"]["outputSchema"].is_object(), "{client}: advertised");
        // Clean control, and a tool without a contract: it passes as the server sent it,
        // marked in the listing.
        let (teams, _) = call_with(client, &dir, &enforce, "team_list", &json!({}));
        let (teams_plain, _) = call_with(client, &dir, &plain, "team_list", &json!({}));
        assert_eq!(teams["result"], teams_plain["result"], "{client}: unchanged");
        assert_eq!(teams["definitions"]["team_list"]["_meta"][key], json!({ "qualified": false }), "{client}");
        let mut unmarked = teams["definitions"]["team_list"].clone();
        unmarked.as_object_mut().unwrap().remove("_meta");
        assert_eq!(unmarked, teams_plain["definitions"]["team_list"], "{client}: the tool as listed, plus the mark");

        // Warn mode: the client sees what it sees without the proxy; the proxy logs where.
        let warn = aqe_proxied(&[
            "--contracts".into(),
            contracts.display().to_string(),
            "--mode".into(),
            "fleet_status=warn".into(),
        ]);
        let (warned, log) = call_with(client, &dir, &warn, "fleet_status", &json!({}));
        let (unproxied, _) = call_with(client, &dir, &plain, "fleet_status", &json!({}));
        assert_eq!(warned["definitions"]["fleet_status"], unproxied["definitions"]["fleet_status"], "{client}");
        let result = &warned["result"];
        assert!(result.get("structuredContent").is_none() && result.get("_meta").is_none(), "{client}: {result}");
        assert_ne!(result["isError"], true, "{client}: {result}");
        let line = log.lines().find(|l| l.contains("contract failure let through (warn mode)")).unwrap_or_else(|| {
            panic!("{client}: the proxy logs the failure:\n{log}");
        });
        assert!(line.contains("/data/status") && !line.contains("healthy"), "{client}: {line}");
    }
}

#[test]
fn firecrawl_mcp_through_the_proxy_keeps_its_own_schemas_refuses_bad_arguments_and_marks_its_tools() {
    let dir = scratch("real-firecrawl");
    let api = FakeApi::start();
    let env = json!({ "FIRECRAWL_API_KEY": "fc-test", "FIRECRAWL_API_URL": api.url });
    let server = vec![
        "node".to_owned(),
        bins::root().join("tests/interop/node_modules/firecrawl-mcp/dist/index.js").display().to_string(),
    ];
    // A contract for a tool that publishes its own outputSchema: the server's is kept.
    let contracts = dir.join("contracts");
    write_json(
        &contracts.join("contracts.json"),
        &json!({ "firecrawl_scrape": { "version": "1.0.0", "compatibility": "additive", "schema": "src/scrape.json" } }),
    );
    write_json(
        &contracts.join("src/scrape.json"),
        &json!({ "type": "object", "properties": { "markdown": { "type": "string" } }, "required": ["markdown"] }),
    );
    let out = bins::run_to_end(
        Command::new(bins::tool_contracts()).arg("schemas").arg(&contracts).current_dir(&dir),
        DEADLINE,
    );
    assert!(out.status.success(), "tool-contracts schemas: {}\n{}", out.stdout, out.stderr);
    let proxied = |extra: &[&str]| {
        let mut args: Vec<String> = vec!["proxy".into(), "--contracts".into(), contracts.display().to_string()];
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        args.push("--".into());
        args.extend(server.iter().cloned());
        json!({ "mcpServers": { "s": { "command": bins::tool_contracts(), "args": args, "env": env } } })
    };
    let enforce = proxied(&[]);
    let plain = direct(&server, &env);
    let url = json!({ "url": "https://example.com" });
    let key = "tool-contracts.dev/contract";
    for client in ["python", "typescript"] {
        let (scraped, log) = call_with(client, &dir, &enforce, "firecrawl_scrape", &url);
        let (unproxied, _) = call_with(client, &dir, &plain, "firecrawl_scrape", &url);
        assert_eq!(scraped["result"], unproxied["result"], "{client}: a valid result passes unchanged");
        assert!(scraped["result"]["structuredContent"]["markdown"].as_str().unwrap().starts_with("# Example Domain"));
        let definition = &scraped["definitions"]["firecrawl_scrape"];
        assert_eq!(definition["outputSchema"], unproxied["definitions"]["firecrawl_scrape"]["outputSchema"]);
        assert_eq!(definition["_meta"][key], json!({ "qualified": false }), "{client}: {definition}");
        assert_eq!(scraped["tools"].as_array().unwrap().len(), 29, "{client}");
        assert!(log.contains("the server publishes an outputSchema; the declared contract is not advertised"), "{log}");

        // Arguments that break the tool's inputSchema are refused before they are sent.
        let (refused, _) = call_with(client, &dir, &enforce, "firecrawl_scrape", &json!({ "url": 42 }));
        let body = error_body(&refused["result"]);
        assert_eq!(body["code"], "invalid_arguments", "{client}: {refused}");

        // Warn mode: exactly what the client sees without the proxy.
        let warn = proxied(&["--mode", "firecrawl_scrape=warn"]);
        let (warned, _) = call_with(client, &dir, &warn, "firecrawl_scrape", &url);
        assert_eq!(warned["result"], unproxied["result"], "{client}");
        assert_eq!(warned["definitions"]["firecrawl_scrape"], unproxied["definitions"]["firecrawl_scrape"], "{client}");
    }
}

#[test]
fn keys_firecrawl_mcp_drops_from_structured_content_are_logged_in_warn_mode_and_observed() {
    let dir = scratch("real-firecrawl-mismatch");
    let api = FakeApi::start();
    let env = json!({ "FIRECRAWL_API_KEY": "fc-test", "FIRECRAWL_API_URL": api.url });
    let server = bins::root().join("tests/interop/node_modules/firecrawl-mcp/dist/index.js");
    let observed = dir.join("observed.json");
    let args = json!([
        "proxy",
        "--observe",
        observed.display().to_string(),
        "--mode",
        "*=warn",
        "--",
        "node",
        server.display().to_string(),
    ]);
    let config = json!({ "mcpServers": { "s": { "command": bins::tool_contracts(), "args": args, "env": env } } });
    let notice = "the result's JSON text block and its structuredContent hold different keys (warn mode)";
    let (scraped, log) =
        call_with("typescript", &dir, &config, "firecrawl_scrape", &json!({ "url": "https://example.com" }));
    assert_ne!(scraped["result"]["isError"], true, "{scraped}");
    let line = log.lines().find(|l| l.contains(notice)).unwrap_or_else(|| panic!("the proxy says so:\n{log}"));
    assert!(line.contains("only_in_text=/cacheState, /creditsUsed") && line.contains("firecrawl_scrape"), "{line}");
    assert!(!line.contains("miss"), "no value is logged: {line}");
    // Clean control: the current credit view holds the same keys on both sides.
    let (credits, log) = call_with("typescript", &dir, &config, "firecrawl_credit_usage", &json!({}));
    assert_ne!(credits["result"]["isError"], true, "{credits}");
    assert!(!log.contains(notice), "{log}");

    let file: Value = serde_json::from_str(&std::fs::read_to_string(&observed).unwrap()).unwrap();
    assert_eq!(file["tools"]["firecrawl_scrape"]["only_in_text"], json!({ "/cacheState": 1, "/creditsUsed": 1 }));
    assert!(file["tools"]["firecrawl_credit_usage"].get("only_in_text").is_none(), "{file:#}");
    let out = bins::run_to_end(
        Command::new(bins::tool_contracts()).args(["schemas", "--suggest", "observed.json"]).current_dir(&dir),
        DEADLINE,
    );
    assert!(out.status.success(), "{}\n{}", out.stdout, out.stderr);
    let expected = "in the text block and not in structuredContent (a client reading structuredContent never sees \
                    them): /cacheState (1 results), /creditsUsed (1 results)";
    assert!(out.stdout.contains(expected), "{}", out.stdout);
}
