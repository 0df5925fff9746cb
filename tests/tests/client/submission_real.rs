//! `audit --submission FILE`: a ChatGPT app submission manifest checked against the real
//! `firecrawl-mcp` 3.26.0 (behind our fake Firecrawl API), its manifest written from the
//! server's own hints and then edited: `firecrawl_scrape`'s `readOnlyHint` as it was before
//! the server flipped it, a tool on one side only, a test case naming an unknown tool; and
//! against a fixture server for hints it does not set, a missing output schema and an input
//! that asks for a credential.

use std::process::Command;
use std::time::Duration;

use serde_json::{json, Map, Value};

use super::audit_real::{firecrawl, interop, scratch};
use super::lock_lost_real::firecrawl_definitions;
use crate::support::bins;
use crate::support::interop::FakeApi;

const DEADLINE: Duration = Duration::from_secs(240);
const HINTS: [&str; 3] = ["readOnlyHint", "openWorldHint", "destructiveHint"];

/// A manifest declaring every tool with its live hints.
fn manifest_of(tools: &[Value]) -> Value {
    let mut declared = Map::new();
    for tool in tools {
        let hints: Map<String, Value> =
            HINTS.iter().map(|h| ((*h).to_owned(), tool["annotations"][*h].clone())).collect();
        declared.insert(tool["name"].as_str().unwrap().to_owned(), json!({"annotations": hints}));
    }
    json!({
        "schema_version": 1,
        "tools": declared,
        "justifications": {},
        "test_cases": [{"prompt": "Scrape example.com", "tools_triggered": ["firecrawl_scrape"]}],
        "negative_test_cases": [{"prompt": "What is 2 + 2?"}],
    })
}

/// The (kind, level, side, pointer) of each finding of a JSON report.
fn findings(report: &Value) -> Vec<(String, String, String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or_default().to_owned();
            (s("kind"), s("level"), s("side"), s("pointer"))
        })
        .collect()
}

fn row(kind: &str, level: &str, side: &str, pointer: &str) -> (String, String, String, String) {
    (kind.to_owned(), level.to_owned(), side.to_owned(), pointer.to_owned())
}

#[test]
fn a_submission_manifest_is_checked_against_firecrawl_mcp() {
    let dir = scratch("submission");
    let tools = firecrawl_definitions(&dir);
    let api = FakeApi::start();
    let file = dir.join("chatgpt-app-submission.json");
    let run = |manifest: &Value, format: &str| {
        std::fs::write(&file, serde_json::to_string_pretty(manifest).unwrap()).unwrap();
        let mut cmd = Command::new(bins::contract_audit());
        cmd.current_dir(&dir).args(["--submission", "chatgpt-app-submission.json", "--format", format, "--"]);
        cmd.args(firecrawl()).env("FIRECRAWL_API_KEY", "fc-test").env("FIRECRAWL_API_URL", &api.url);
        let out = bins::run_to_end(&mut cmd, DEADLINE);
        (out.status.code().expect("an exit code"), out.stdout, out.stderr)
    };
    // Clean control: the server's own hints.
    let clean = manifest_of(&tools);
    let (code, out, err) = run(&clean, "table");
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("the manifest and the server agree"), "{out}");

    // The manifest as written before firecrawl_scrape's readOnlyHint flipped to false.
    assert_eq!(clean["tools"]["firecrawl_scrape"]["annotations"]["readOnlyHint"], false);
    let mut before = clean.clone();
    before["tools"]["firecrawl_scrape"]["annotations"]["readOnlyHint"] = json!(true);
    before["tools"]["firecrawl_map"]["annotations"]["destructiveHint"] = json!(null);
    // A safer hint on the server's side than declared: a warning.
    assert_eq!(clean["tools"]["firecrawl_search"]["annotations"]["readOnlyHint"], true);
    before["tools"]["firecrawl_search"]["annotations"]["readOnlyHint"] = json!(false);
    before["tools"].as_object_mut().unwrap().remove("firecrawl_credit_usage");
    before["tools"]["firecrawl_crawl_v0"] = json!({"annotations": {"readOnlyHint": true}});
    before["test_cases"][0]["tools_triggered"] = json!(["firecrawl_scrape", "firecrawl_crawl_v0"]);
    let (code, out, err) = run(&before, "json");
    assert_eq!(code, 1, "{out}\n{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let mut found = findings(&report);
    found.sort();
    let mut expected = vec![
        row("submission-hint-less-safe", "error", "manifest", "/tools/firecrawl_scrape/annotations/readOnlyHint"),
        row("submission-hint-not-set", "error", "manifest", "/tools/firecrawl_map/annotations/destructiveHint"),
        row("submission-hint-safer", "warn", "manifest", "/tools/firecrawl_search/annotations/readOnlyHint"),
        row("submission-tool-not-in-manifest", "error", "manifest", "/tools"),
        row("submission-tool-not-served", "error", "manifest", "/tools/firecrawl_crawl_v0"),
        row("submission-unknown-tool-triggered", "error", "manifest", "/test_cases/0/tools_triggered/1"),
    ];
    expected.sort();
    assert_eq!(found, expected, "{report:#}");
    let scrape = report["findings"].as_array().unwrap().iter().find(|f| f["tool"] == "firecrawl_scrape").unwrap();
    assert_eq!(
        scrape["message"],
        "`readOnlyHint`: manifest true → server false: the tool is less safe than was declared for review"
    );
    assert!(scrape["fix"]
        .as_str()
        .unwrap()
        .starts_with("server: restore `readOnlyHint`, or manifest: declare the new value"));

    // SARIF: a rule per kind, each result placed in the manifest.
    let (_, out, _) = run(&before, "sarif");
    let log: Value = serde_json::from_str(&out).unwrap();
    let run0 = &log["runs"][0];
    let rules: Vec<&str> =
        run0["tool"]["driver"]["rules"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    let results = run0["results"].as_array().unwrap();
    assert_eq!(results.len(), expected.len());
    for result in results {
        let index = usize::try_from(result["ruleIndex"].as_u64().unwrap()).unwrap();
        assert_eq!(rules[index], result["ruleId"].as_str().unwrap());
        assert_eq!(
            result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "chatgpt-app-submission.json"
        );
    }

    // The fixes applied (the manifest side): the server's values, the tools as listed.
    let mut fixed = before.clone();
    fixed["tools"]["firecrawl_scrape"]["annotations"]["readOnlyHint"] = json!(false);
    fixed["tools"]["firecrawl_map"]["annotations"]["destructiveHint"] = json!(false);
    fixed["tools"]["firecrawl_search"]["annotations"]["readOnlyHint"] = json!(true);
    fixed["tools"]["firecrawl_credit_usage"] = clean["tools"]["firecrawl_credit_usage"].clone();
    fixed["tools"].as_object_mut().unwrap().remove("firecrawl_crawl_v0");
    fixed["test_cases"][0]["tools_triggered"] = json!(["firecrawl_scrape"]);
    let (code, out, _) = run(&fixed, "table");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("the manifest and the server agree"), "{out}");
    // A manifest that is not one is refused.
    let (code, _, err) = run(&json!({"schema_version": 2, "tools": {}}), "table");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`/schema_version` must be 1"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn hints_not_set_missing_output_schemas_and_sensitive_inputs_on_the_servers_side() {
    let dir = scratch("submission-server");
    let tool = |name: &str, annotations: Value, input: Value, output: Option<Value>| {
        let mut t = json!({"name": name, "inputSchema": input, "annotations": annotations});
        if let Some(output) = output {
            t["outputSchema"] = output;
        }
        json!({"tool": t, "answer": {"content": []}})
    };
    let all = json!({"readOnlyHint": true, "openWorldHint": false, "destructiveHint": false});
    let out_schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
    let tools = json!([
        tool(
            "login",
            json!({"readOnlyHint": true}),
            json!({"type": "object", "properties": {
                "username": {"type": "string"},
                "password": {"type": "string"},
                "otp": {"type": "string", "description": "The six-digit code from your authenticator app"}
            }}),
            None
        ),
        tool(
            "lookup",
            all.clone(),
            json!({"type": "object", "properties": {
                "url": {"type": "string", "description": "The page to read"},
                "byApiKey": {"type": "boolean"}
            }}),
            Some(out_schema)
        ),
    ]);
    let file = dir.join("tools.json");
    std::fs::write(&file, tools.to_string()).unwrap();
    let manifest =
        json!({"schema_version": 1, "tools": {"login": {"annotations": all}, "lookup": {"annotations": all}}});
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
    let mut cmd = Command::new(bins::contract_audit());
    cmd.current_dir(&dir).args(["--submission", "manifest.json", "--format", "json", "--", "node"]);
    cmd.arg(interop().join("fixture_server.mjs")).arg(&file);
    let out = bins::run_to_end(&mut cmd, DEADLINE);
    assert_eq!(out.status.code(), Some(1), "{}\n{}", out.stdout, out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let mut found = findings(&report);
    found.sort();
    let mut expected = vec![
        row("submission-hint-not-set", "error", "server", "/annotations/openWorldHint"),
        row("submission-hint-not-set", "error", "server", "/annotations/destructiveHint"),
        row("submission-no-output-schema", "warn", "server", "/outputSchema"),
        row("submission-sensitive-input", "error", "server", "/inputSchema/properties/password"),
        row("submission-sensitive-input", "error", "server", "/inputSchema/properties/otp"),
    ];
    expected.sort();
    // The clean control is `lookup`: every hint set, an output schema, ordinary inputs.
    assert_eq!(found, expected, "{report:#}");
    assert!(report["findings"].as_array().unwrap().iter().all(|f| f["tool"] == "login"), "{report:#}");
    let _ = std::fs::remove_dir_all(dir);
}
