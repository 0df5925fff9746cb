//! Evidence before tightening: `tool-contracts proxy --observe FILE` records, per tool and
//! instance pointer, how many results carried each property, of which types, and whether
//! the schema names it (counts and names, never values), across client sessions; and
//! `tool-contracts schemas --suggest FILE` lists the optional properties present in every
//! result and the keys the schema does not name, and writes suggested contracts to review,
//! which `tool-contracts schemas` makes into a folder the proxy enforces. Driven by the
//! TypeScript SDK v2 and Python SDK clients through a client configuration.

use crate::proxy_error_shape::error_body;
use crate::proxy_user_servers::{call, scratch, text_result, write_json};
use crate::support::bins;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

const DEADLINE: Duration = Duration::from_secs(120);

/// A scrape tool shaped like Firecrawl's (every output property optional and nullable,
/// and a key its schema does not name), a status tool with no outputSchema whose text is
/// JSON, one that breaks what the status results showed, and one holding a secret.
fn tools(dir: &Path) -> PathBuf {
    let input = json!({ "type": "object", "properties": {} });
    let nullable = json!({ "type": ["string", "null"] });
    let page = json!({ "markdown": "# Example Domain", "title": "Example", "creditsUsed": 1 });
    let scrape = json!({
        "tool": { "name": "scrape", "inputSchema": input, "outputSchema": {
            "type": "object", "properties": { "markdown": nullable, "title": nullable, "links": nullable },
        } },
        "answer": { "content": [{ "type": "text", "text": page.to_string() }], "structuredContent": page },
    });
    let tool = |name: &str, answer: Value| json!({ "tool": { "name": name, "inputSchema": input }, "answer": answer });
    let file = dir.join("tools.json");
    write_json(
        &file,
        &json!([
            scrape,
            tool("status", text_result(r#"{"healthy": 3, "status": "ok", "agents": [{"id": "a-1"}]}"#)),
            tool("status_broken", text_result(r#"{"healthy": "three", "agents": []}"#)),
            tool("secret", text_result(r#"{"token": "sk-live-abcdef123456", "n": 1}"#)),
        ]),
    );
    file
}

fn config(tools: &Path, proxy_args: &[String]) -> Value {
    let mut args: Vec<String> = vec!["proxy".into()];
    args.extend(proxy_args.iter().cloned());
    args.extend(["--".into(), "node".into()]);
    args.push(bins::root().join("tests/interop/fixture_server.mjs").display().to_string());
    args.push(tools.display().to_string());
    json!({ "mcpServers": { "s": { "command": bins::tool_contracts(), "args": args } } })
}

fn tc(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = bins::run_to_end(Command::new(bins::tool_contracts()).args(args).current_dir(dir), DEADLINE);
    (out.status.code().unwrap_or(-1), out.stdout, out.stderr)
}

#[test]
fn observed_results_become_suggested_contracts_that_the_proxy_enforces() {
    let dir = scratch("observe");
    let tools = tools(&dir);
    let observed = dir.join("observed.json");
    let observing =
        config(&tools, &["--observe".into(), observed.display().to_string(), "--mode".into(), "secret=off".into()]);
    // Each client session is a proxy run of its own: the file adds them up.
    for client in ["python", "typescript"] {
        for tool in ["scrape", "status", "secret"] {
            let (seen, _) = call(client, &dir, &observing, tool);
            assert_ne!(seen["result"]["isError"], true, "{client} {tool}: {seen}");
        }
    }
    let text = std::fs::read_to_string(&observed).unwrap();
    let file: Value = serde_json::from_str(&text).unwrap();
    let scrape = &file["tools"]["scrape"];
    assert_eq!(scrape["results"], 2, "{text}");
    assert_eq!(scrape["pointers"]["/markdown"]["count"], 2, "{text}");
    assert_eq!(scrape["pointers"]["/markdown"]["schema"], "optional", "{text}");
    assert_eq!(scrape["pointers"]["/creditsUsed"]["schema"], "undeclared", "{text}");
    assert_eq!(scrape["pointers"]["/creditsUsed"]["types"], json!({ "integer": 2 }), "{text}");
    assert!(scrape["pointers"].get("/links").is_none(), "{text}");
    assert_eq!(file["tools"]["status"]["pointers"]["/agents/*/id"]["count"], 2, "{text}");
    // Never a value; a tool in `off` mode is not recorded at all.
    for value in ["Example Domain", "a-1", "\"ok\"", "sk-live", "three"] {
        assert!(!text.contains(value), "{value} is not in the file: {text}");
    }
    assert!(file["tools"].get("secret").is_none(), "{text}");

    let contracts = dir.join("contracts");
    let (code, stdout, stderr) = tc(&dir, &["schemas", "--suggest", "observed.json", "contracts"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("scrape: 2 results observed"), "{stdout}");
    assert!(stdout.contains("optional in the schema, present in every result: /markdown, /title"), "{stdout}");
    assert!(stdout.contains("not named by the schema: /creditsUsed (2 of 2)"), "{stdout}");
    assert!(stdout.contains("SUGGESTIONS TO REVIEW"), "{stdout}");
    let suggested = contracts.join("suggested");
    let status: Value =
        serde_json::from_str(&std::fs::read_to_string(suggested.join("src/status.json")).unwrap()).unwrap();
    assert_eq!(status["required"], json!(["agents", "healthy", "status"]), "{status:#}");
    assert!(status["$comment"].as_str().unwrap().contains("a suggestion to review"), "{status:#}");

    // The suggestion is a source `tool-contracts schemas` makes into a folder as it is.
    let (code, stdout, stderr) = tc(&dir, &["schemas", "contracts/suggested"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let enforcing = config(
        &tools,
        &["--contracts".into(), suggested.display().to_string(), "--bind".into(), "status_broken=status".into()],
    );
    for client in ["python", "typescript"] {
        // Clean control: the results it was made from pass, lifted.
        let (ok, _) = call(client, &dir, &enforcing, "status");
        assert_eq!(ok["result"]["structuredContent"]["healthy"], 3, "{client}: {ok}");
        assert!(ok["definitions"]["status"]["outputSchema"].is_object(), "{client}: advertised");
        // A result that breaks what every observed result kept is refused.
        let (broken, _) = call(client, &dir, &enforcing, "status_broken");
        let body = error_body(&broken["result"]);
        assert_eq!(body["code"], "output_contract_violation", "{client}: {broken}");
        assert!(!body.to_string().contains("three"), "{client}: {body}");
    }
}

#[test]
fn a_file_that_is_not_an_observation_is_refused_and_left_alone() {
    let dir = scratch("observe-refused");
    let tools = tools(&dir);
    let notes = dir.join("notes.json");
    std::fs::write(&notes, r#"{"mine": true}"#).unwrap();
    // The proxy will not start over a file of something else.
    let mut args = vec!["proxy".to_owned(), "--observe".to_owned(), notes.display().to_string(), "--".to_owned()];
    args.extend(["node".to_owned(), bins::root().join("tests/interop/fixture_server.mjs").display().to_string()]);
    args.push(tools.display().to_string());
    let out = bins::run_to_end(Command::new(bins::tool_contracts()).args(&args).current_dir(&dir), DEADLINE);
    assert_eq!(out.status.code(), Some(2), "{}\n{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("holds something other than observations"), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), r#"{"mine": true}"#);
    // Nor will --suggest read it.
    let (code, _, stderr) = tc(&dir, &["schemas", "--suggest", "notes.json", "contracts"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("not a file `tool-contracts proxy --observe` writes"), "{stderr}");
    assert!(!dir.join("contracts").exists());
    // Control: an empty observation file is read, and suggests nothing.
    std::fs::write(dir.join("empty.json"), "{\"about\": \"x\", \"tools\": {}}").unwrap();
    let (code, stdout, stderr) = tc(&dir, &["schemas", "--suggest", "empty.json", "contracts"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(std::fs::read_to_string(dir.join("contracts/suggested/contracts.json")).unwrap(), "{}\n");
}
