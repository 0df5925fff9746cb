//! A TypeScript server that answers one JSON text block and publishes no `outputSchema`
//! (the common shape, Agentic QE's among them), behind `tool-contracts proxy --contracts`,
//! driven by the official Python SDK and TypeScript SDK v2 clients through a client
//! configuration (tests/interop/packages/config_client.*):
//!
//! - a declared contract lifts the JSON text into `structuredContent` by default, validated,
//!   the text unchanged; a text that is not JSON, and a wrong type, are refusals that say so;
//! - `--mode TOOL=warn` is invisible: each client sees exactly what the server sent directly
//!   (no schema advertised, nothing added) while the proxy logs the failure by pointer and
//!   keyword, never the value; deleting the option enforces again;
//! - a tool named by an option that the server does not list is a warning naming it and
//!   what the server lists, and a run naming only listed tools has none.

use crate::support::bins;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

const DEADLINE: Duration = Duration::from_secs(120);

pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = bins::root().join("target/proxy-user-servers").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub(crate) fn write_json(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
}

pub(crate) fn text_result(text: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": text }] })
}

/// A fixture server's tools (no `outputSchema` anywhere, every answer one text block) and
/// a contract folder written by `tool-contracts schemas` from a hand-written schema.
fn setup(dir: &Path) -> (PathBuf, PathBuf) {
    let input = json!({ "type": "object", "properties": {} });
    let tool = |name: &str, answer: Value| json!({ "tool": { "name": name, "inputSchema": input }, "answer": answer });
    let tools = dir.join("tools.json");
    write_json(
        &tools,
        &json!([
            tool("fleet", text_result(r#"{"healthy": 3, "status": "ok"}"#)),
            tool("fleet_broken", text_result(r#"{"healthy": "three-secret", "status": "ok"}"#)),
            tool("fleet_prose", text_result("all agents are fine")),
            tool("echo", text_result("hello")),
        ]),
    );
    let contracts = dir.join("contracts");
    write_json(
        &contracts.join("contracts.json"),
        &json!({ "fleet": { "version": "1.0.0", "compatibility": "exact", "schema": "src/fleet.json" } }),
    );
    write_json(
        &contracts.join("src/fleet.json"),
        &json!({
            "type": "object",
            "properties": {
                "healthy": { "type": "integer", "minimum": 0 },
                "status": { "type": "string", "enum": ["ok", "degraded"] },
            },
            "required": ["healthy", "status"],
        }),
    );
    let out = bins::run_to_end(
        Command::new(bins::tool_contracts()).arg("schemas").arg(&contracts).current_dir(dir),
        DEADLINE,
    );
    assert!(out.status.success(), "tool-contracts schemas: {}\n{}", out.stdout, out.stderr);
    (tools, contracts)
}

/// The proxy's arguments for the fixture: the contract bound to the three fleet tools.
fn proxied(tools: &Path, contracts: &Path, extra: &[&str]) -> Value {
    let mut args: Vec<String> = vec!["proxy".into(), "--contracts".into(), contracts.display().to_string()];
    for tool in ["fleet_broken", "fleet_prose"] {
        args.extend(["--bind".into(), format!("{tool}=fleet")]);
    }
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args.extend(["--".into(), "node".into()]);
    args.push(bins::root().join("tests/interop/fixture_server.mjs").display().to_string());
    args.push(tools.display().to_string());
    json!({ "mcpServers": { "s": { "command": bins::tool_contracts(), "args": args } } })
}

fn direct(tools: &Path) -> Value {
    let server = bins::root().join("tests/interop/fixture_server.mjs");
    json!({ "mcpServers": { "s": { "command": "node", "args": [server, tools] } } })
}

/// One client session: list, call `tool`; the client's summary and its stderr (where a
/// stdio server's stderr, the proxy's log, goes).
pub(crate) fn call(client: &str, dir: &Path, config: &Value, tool: &str) -> (Value, String) {
    call_with(client, dir, config, tool, &json!({}))
}

/// [`call`] with the call's `arguments` (a configuration's `env` adds to the server's
/// environment, as in a client's own configuration).
pub(crate) fn call_with(client: &str, dir: &Path, config: &Value, tool: &str, arguments: &Value) -> (Value, String) {
    let file = dir.join(format!("config-{client}-{tool}.json"));
    write_json(&file, config);
    let interop = bins::root().join("tests/interop");
    let mut cmd = if client == "python" {
        let mut cmd = Command::new(interop.join(".venv/bin/python"));
        cmd.arg(interop.join("packages/config_client.py"));
        cmd
    } else {
        let mut cmd = Command::new("node");
        cmd.arg(interop.join("packages/config_client.mjs"));
        cmd
    };
    cmd.arg(&file).args(["s", tool]).arg(arguments.to_string()).current_dir(dir);
    let out = bins::run_to_end(&mut cmd, DEADLINE);
    assert!(out.status.success(), "{client} client, {tool}: {}\n{}", out.stdout, out.stderr);
    let summary = serde_json::from_str(out.stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|err| panic!("{client} printed JSON ({err}): {}", out.stdout));
    (summary, out.stderr)
}

pub(crate) fn error_text(result: &Value) -> String {
    assert_eq!(result["isError"], true, "a refusal: {result}");
    assert!(result.get("structuredContent").is_none(), "a refusal has no structuredContent: {result}");
    result["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn a_declared_contract_lifts_one_json_text_block_and_refuses_what_it_cannot_lift() {
    let dir = scratch("lift");
    let (tools, contracts) = setup(&dir);
    let config = proxied(&tools, &contracts, &[]);
    for client in ["python", "typescript"] {
        let (ok, _) = call(client, &dir, &config, "fleet");
        let result = &ok["result"];
        assert_ne!(result["isError"], true, "{client}: {result}");
        assert_eq!(result["structuredContent"], json!({ "healthy": 3, "status": "ok" }), "{client}: lifted");
        assert_eq!(result["content"][0]["text"], r#"{"healthy": 3, "status": "ok"}"#, "{client}: the text unchanged");
        assert!(ok["definitions"]["fleet"]["outputSchema"].is_object(), "{client}: the contract is advertised");

        let (broken, _) = call(client, &dir, &config, "fleet_broken");
        let text = error_text(&broken["result"]);
        assert!(text.contains("output_contract_violation") && text.contains("/healthy"), "{client}: {text}");
        assert!(!text.contains("three-secret"), "{client}: the value stays out: {text}");

        let (prose, _) = call(client, &dir, &config, "fleet_prose");
        let text = error_text(&prose["result"]);
        assert!(text.contains("its one text block is not JSON"), "{client}: {text}");

        // A tool without a contract passes as it came.
        let (echo, _) = call(client, &dir, &config, "echo");
        assert_eq!(echo["result"]["content"][0]["text"], "hello", "{client}: {echo}");
        assert!(echo["result"].get("structuredContent").is_none(), "{client}: nothing lifted for echo");
    }
}

#[test]
fn warn_mode_is_invisible_to_clients_and_one_flag_from_enforcing() {
    let dir = scratch("warn");
    let (tools, contracts) = setup(&dir);
    let warn = proxied(&tools, &contracts, &["--mode", "fleet_broken=warn"]);
    for client in ["python", "typescript"] {
        let (plain, _) = call(client, &dir, &direct(&tools), "fleet_broken");
        let (seen, log) = call(client, &dir, &warn, "fleet_broken");
        assert_eq!(seen["result"], plain["result"], "{client}: the result as the server sent it");
        assert_eq!(
            seen["definitions"]["fleet_broken"], plain["definitions"]["fleet_broken"],
            "{client}: the tool as the server lists it, no schema advertised"
        );
        assert!(log.contains("contract failure let through (warn mode)") && log.contains("fleet_broken"), "{log}");
        assert!(log.contains("/healthy"), "the pointer is logged: {log}");
        assert!(!log.contains("three-secret"), "no value is logged: {log}");
        // The other tools keep enforcing in the same run.
        let (enforced, _) = call(client, &dir, &warn, "fleet_prose");
        error_text(&enforced["result"]);
        // Deleting the option enforces.
        let (refused, _) = call(client, &dir, &proxied(&tools, &contracts, &[]), "fleet_broken");
        error_text(&refused["result"]);
    }
}

#[test]
fn a_tool_an_option_names_that_the_server_does_not_list_is_a_warning() {
    let dir = scratch("names");
    let (tools, contracts) = setup(&dir);
    let config = proxied(&tools, &contracts, &["--mode", "nosuch=warn", "--lift-text", "ghost"]);
    let (_, log) = call("typescript", &dir, &config, "echo");
    for (name, option) in [("nosuch", "--mode"), ("ghost", "--lift-text")] {
        let line = log
            .lines()
            .find(|line| line.contains(&format!("`{name}`, which the server does not list")))
            .unwrap_or_else(|| panic!("a warning names `{name}`:\n{log}"));
        assert!(line.contains(option), "{line}");
        assert!(line.contains("it lists: echo, fleet, fleet_broken, fleet_prose"), "{line}");
    }
    // Control: naming only listed tools warns of nothing.
    let config = proxied(&tools, &contracts, &["--mode", "echo=warn", "--lift-text", "fleet"]);
    let (_, log) = call("typescript", &dir, &config, "echo");
    assert!(!log.contains("which the server does not list"), "{log}");
}

#[test]
fn every_tool_without_a_contract_is_marked_unqualified_in_the_listing_and_the_audit() {
    let dir = scratch("qualified");
    let (tools, contracts) = setup(&dir);
    let key = "tool-contracts.dev/contract";
    let config = proxied(&tools, &contracts, &["--mode", "fleet_broken=warn"]);
    for client in ["python", "typescript"] {
        let (seen, _) = call(client, &dir, &config, "echo");
        let definitions = &seen["definitions"];
        assert_eq!(definitions["echo"]["_meta"][key], json!({ "qualified": false }), "{client}: {definitions:#}");
        assert_eq!(seen["result"]["content"][0]["text"], "hello", "{client}: the call still works");
        // Control: a declared contract carries its identity, and a tool in warn mode nothing.
        let fleet = &definitions["fleet"]["_meta"][key];
        assert_eq!(fleet["qualified"], true, "{client}: {fleet}");
        assert!(fleet["id"].as_str().unwrap().starts_with("fleet@1.0.0+sha256:"), "{client}: {fleet}");
        assert!(definitions["fleet_broken"].get("_meta").is_none(), "{client}: {definitions:#}");
        // Without the proxy, nothing is marked.
        let (plain, _) = call(client, &dir, &direct(&tools), "echo");
        assert!(plain["definitions"]["echo"].get("_meta").is_none(), "{client}: {plain:#}");
    }

    // The audit's table shows it, through the proxy, in its CONTRACT column.
    let Value::Array(args) = &config["mcpServers"]["s"]["args"] else { panic!("{config}") };
    let args: Vec<&str> = args.iter().map(|a| a.as_str().unwrap()).collect();
    let out = bins::run_to_end(
        Command::new(bins::tool_contracts())
            .args(["audit", "--"])
            .arg(bins::tool_contracts())
            .args(&args)
            .current_dir(&dir),
        DEADLINE,
    );
    let row = |tool: &str| {
        out.stdout
            .lines()
            .find(|line| line.split_whitespace().next() == Some(tool))
            .unwrap_or_else(|| panic!("a row for {tool}:\n{}\n{}", out.stdout, out.stderr))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(row("echo")[2], "unqualified", "{}", out.stdout);
    assert_eq!(row("fleet_prose")[2], "fleet@1.0.0", "{}", out.stdout);
    assert_eq!(row("fleet")[2], "fleet@1.0.0", "{}", out.stdout);
}
