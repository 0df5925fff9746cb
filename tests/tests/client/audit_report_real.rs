//! How the findings of a call reach a reader, against real servers: the client harness's
//! notices (fastmcp 4.3.2 stripping undeclared keys from `structuredContent`), and the
//! audit's SARIF log (firecrawl-mcp 3.26.0 behind our fake Firecrawl API; the TypeScript
//! SDK fixture server for calls not made), checked against the audit's own JSON report of
//! the same server.

use std::collections::BTreeSet;
use std::process::Command;

use contract_runtime::client::CallOutcome;
use serde_json::{json, Value};

use super::audit_real::{audit, firecrawl, interop, node_server, scratch, set, strs};
use super::client_harness::{call, connect, runtime};
use crate::support::bins;
use crate::support::interop::FakeApi;

#[test]
fn the_harness_reports_the_keys_fastmcp_strips_from_structured_content() {
    let server = node_server("fastmcp");
    runtime().block_on(async {
        let (running, harness, _child) =
            connect(std::path::Path::new("node"), &[server[1].as_str(), server[2].as_str()]).await;
        let outcome = call(&harness, "extra_keys", json!({})).await;
        let CallOutcome::Success(success) = &outcome else { panic!("{outcome:?}") };
        // Valid against the declared schema: the keys are gone, not wrong.
        assert!(success.validated, "{outcome:?}");
        let mismatch = success.mismatch.as_deref().expect("a mismatch");
        let only_text: BTreeSet<String> = mismatch.only_in_text.iter().cloned().collect();
        assert_eq!(only_text, set(&["/cacheState", "/creditsUsed", "/metadata/statusCode"]));
        assert!(mismatch.only_in_structured.is_empty(), "{mismatch:?}");
        let notices = outcome.notices();
        assert!(notices.iter().all(|n| n.kind == "call-structured-text-mismatch"), "{notices:?}");
        let pointers: BTreeSet<String> = notices.iter().map(|n| n.pointer.clone()).collect();
        assert_eq!(pointers, only_text);
        assert!(notices[0].message.starts_with("only in the text block's JSON"), "{notices:?}");
        // The model sees the validated value, without the keys: the notices are how the
        // operator learns of them.
        assert!(outcome.model_view().get("creditsUsed").is_none());

        // Clean control: the same schema, the same keys on both sides.
        let outcome = call(&harness, "fine", json!({})).await;
        let CallOutcome::Success(success) = &outcome else { panic!("{outcome:?}") };
        assert!(success.mismatch.is_none(), "{outcome:?}");
        assert_eq!(outcome.notices(), vec![]);
        // A refusal of its own output is a notice too; the tool's own error is not.
        let refused = call(&harness, "wrong_type", json!({})).await;
        let notices = refused.notices();
        assert_eq!(notices.len(), 1, "{refused:?}");
        assert_eq!(notices[0].kind, "call-server-reported-violation");
        assert!(notices[0].message.starts_with("the server refused its own result (fastmcp 4.x): "), "{notices:?}");
        assert_eq!(call(&harness, "own_error", json!({})).await.notices(), vec![]);
        running.cancel().await.expect("close");
    });
}

/// The SARIF log's rule ids, in order, checking every result's `ruleIndex` against them.
fn rules_checked(log: &Value) -> Vec<String> {
    assert_eq!(log["version"], "2.1.0");
    assert_eq!(log["$schema"], "https://json.schemastore.org/sarif-2.1.0.json");
    let run = &log["runs"][0];
    let rules: Vec<String> =
        run["tool"]["driver"]["rules"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().into()).collect();
    for result in run["results"].as_array().unwrap() {
        let index = usize::try_from(result["ruleIndex"].as_u64().unwrap()).unwrap();
        assert_eq!(rules[index], result["ruleId"].as_str().unwrap(), "{result:#}");
        assert!(["error", "warning", "note", "none"].contains(&result["level"].as_str().unwrap()), "{result:#}");
        assert!(result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"].is_string(), "{result:#}");
    }
    rules
}

/// Each result as (rule, level, fully qualified name).
fn results(log: &Value) -> Vec<(String, String, String)> {
    log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let name = &r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"];
            (r["ruleId"].as_str().unwrap().into(), r["level"].as_str().unwrap().into(), name.as_str().unwrap().into())
        })
        .collect()
}

#[test]
fn the_audits_sarif_has_a_result_for_every_finding_of_firecrawl_mcp() {
    let dir = scratch("sarif-firecrawl");
    let api = FakeApi::start();
    let env = [("FIRECRAWL_API_KEY", "fc-test"), ("FIRECRAWL_API_URL", api.url.as_str())];
    let calls = json!({"firecrawl_scrape": {"url": "https://example.com"}, "firecrawl_credit_usage": {}});
    let server = firecrawl();
    let sarif = audit(&dir, &env, &["--format", "sarif"], &calls, &strs(&server));
    assert_eq!(sarif.code, 0, "{}\n{}", sarif.stdout, sarif.stderr);
    let log = sarif.json();
    let rules = rules_checked(&log);
    for kind in ["call-structured-text-mismatch", "call-false-success", "call-arguments-invalid", "call-not-called"] {
        assert!(rules.iter().any(|r| r == kind), "{kind} in {rules:?}");
    }
    let found = results(&log);
    let mismatched: BTreeSet<String> =
        found.iter().filter(|r| r.0 == "call-structured-text-mismatch").map(|r| r.2.clone()).collect();
    assert_eq!(mismatched, set(&["firecrawl_scrape/call/cacheState", "firecrawl_scrape/call/creditsUsed"]));
    assert!(found.iter().all(|r| r.0 != "call-structured-text-mismatch" || r.1 == "warning"), "{found:?}");
    // Clean control: the credit view's call has no result.
    assert!(!found.iter().any(|r| r.2.starts_with("firecrawl_credit_usage/call")), "{found:?}");

    // The oracle: the JSON report of the same server has the same findings, one for one.
    let report = audit(&dir, &env, &["--format", "json"], &calls, &strs(&server)).json();
    let mut expected: Vec<(String, String, String)> = Vec::new();
    for tool in report["tools"].as_array().unwrap() {
        for f in tool["findings"].as_array().unwrap() {
            let level = match f["level"].as_str().unwrap() {
                "error" => "error",
                "warn" => "warning",
                _ => "note",
            };
            let name = format!(
                "{}/{}{}",
                tool["name"].as_str().unwrap(),
                f["site"].as_str().unwrap(),
                f["pointer"].as_str().unwrap()
            );
            expected.push((f["kind"].as_str().unwrap().into(), level.into(), name));
        }
    }
    let (mut found, mut expected) = (found, expected);
    found.sort();
    expected.sort();
    assert!(expected.len() > 50, "{}", expected.len());
    assert_eq!(found, expected);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_audits_sarif_says_which_calls_were_not_made_and_why() {
    let dir = scratch("sarif-not-called");
    let tool = |name: &str, annotations: Value| {
        json!({"tool": {"name": name, "inputSchema": {"type": "object"}, "annotations": annotations},
            "answer": {"content": [{"type": "text", "text": "done"}]}})
    };
    let tools = json!([tool("reader", json!({"readOnlyHint": true})), tool("writer", json!({}))]);
    let file = dir.join("tools.json");
    std::fs::write(&file, tools.to_string()).unwrap();
    let script = interop().join("fixture_server.mjs");
    let mut cmd = Command::new(bins::contract_audit());
    cmd.args(["--call", "--format", "sarif", "--"]).arg("node").arg(&script).arg(&file);
    let out = bins::run_to_end(&mut cmd, std::time::Duration::from_secs(120));
    assert_eq!(out.status.code(), Some(0), "{}\n{}", out.stdout, out.stderr);
    let log: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout));
    rules_checked(&log);
    let skipped: Vec<&Value> =
        log["runs"][0]["results"].as_array().unwrap().iter().filter(|r| r["ruleId"] == "call-not-called").collect();
    assert_eq!(skipped.len(), 1, "{log:#}");
    assert_eq!(skipped[0]["kind"], "notApplicable");
    assert_eq!(skipped[0]["properties"]["tool"], "writer");
    let text = skipped[0]["message"]["text"].as_str().unwrap();
    assert!(text.starts_with("writer: not called: not annotated readOnlyHint: true"), "{text}");
    let _ = std::fs::remove_dir_all(dir);
}

/// The (kind, pointer) of a tool's static findings in a JSON report.
fn static_findings(report: &Value, name: &str) -> Vec<(String, String)> {
    super::audit_real::tool(report, name)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["site"] != "call")
        .map(|f| (f["kind"].as_str().unwrap().to_owned(), f["pointer"].as_str().unwrap().to_owned()))
        .collect()
}

#[test]
fn firecrawl_mcps_findings_are_grouped_and_its_empty_object_outputs_found() {
    let dir = scratch("grouped");
    let api = FakeApi::start();
    let env = [("FIRECRAWL_API_KEY", "fc-test"), ("FIRECRAWL_API_URL", api.url.as_str())];
    let server = firecrawl();
    let calls = json!({"firecrawl_scrape": {"url": "https://example.com"}});
    let report = audit(&dir, &env, &["--format", "json"], &calls, &strs(&server)).json();
    let tools = report["tools"].as_array().unwrap();
    let with = |kind: &str| -> Vec<&Value> {
        tools.iter().flat_map(|t| t["findings"].as_array().unwrap()).filter(|f| f["kind"] == kind).collect()
    };
    // 25 of firecrawl-mcp 3.26.0's 29 output schemas require no property.
    let empty = with("output-accepts-empty-object");
    assert_eq!((empty.len(), tools.len()), (25, 29), "{report:#}");

    let run = audit(&dir, &env, &[], &calls, &strs(&server));
    let table = run.stdout;
    let line = "  warn  output-accepts-empty-object (outputSchema): an object that requires no property: `{}` is a \
                valid result: 25 in 25 tools";
    assert!(table.contains(line), "{line}\n{table}");
    // A finding about whole schemas lists its tools on one line, without pointers.
    let tools_line = format!("{line}\n          firecrawl_agent, firecrawl_agent_status, ");
    assert!(table.contains(&tools_line), "{table}");
    // One line per kind and message, with the tools and pointers under it; every finding
    // of the JSON report is counted in it.
    let permissive = with("permissive");
    assert!(permissive.len() > 50, "{}", permissive.len());
    let heads: Vec<&str> = table.lines().filter(|l| l.starts_with("  warn  permissive (outputSchema): ")).collect();
    assert!(!heads.is_empty() && heads.len() <= 2, "{table}");
    let counted: usize =
        heads.iter().map(|l| l.rsplit(": ").next().unwrap().split(' ').next().unwrap().parse::<usize>().unwrap()).sum();
    assert_eq!(counted, permissive.len(), "{table}");
    assert!(!table.contains("firecrawl_scrape: permissive"), "no line per finding:\n{table}");
    // A finding alone keeps its one line.
    assert!(
        table.contains("  warn  firecrawl_scrape: call-structured-text-mismatch (call at /cacheState)")
            || table.contains("  warn  call-structured-text-mismatch (call): "),
        "{table}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_contracts_json_declares_a_third_party_servers_open_values() {
    let dir = scratch("declared-open");
    let api = FakeApi::start();
    let env = [("FIRECRAWL_API_KEY", "fc-test"), ("FIRECRAWL_API_URL", api.url.as_str())];
    let server = firecrawl();
    let metadata = ("permissive".to_owned(), "/properties/metadata".to_owned());
    let report = audit(&dir, &env, &["--format", "json"], &json!({}), &strs(&server)).json();
    assert!(static_findings(&report, "firecrawl_scrape").contains(&metadata), "{report:#}");

    let contracts = dir.join("contracts.json");
    std::fs::write(&contracts, json!({"firecrawl_scrape": {"version": "1.0.0", "opaque": ["/metadata"]}}).to_string())
        .unwrap();
    let flags = ["--format", "json", "--contracts", contracts.to_str().unwrap()];
    let report = audit(&dir, &env, &flags, &json!({}), &strs(&server)).json();
    let found = static_findings(&report, "firecrawl_scrape");
    assert!(!found.contains(&metadata), "{found:?}");
    assert!(found.contains(&("opaque".to_owned(), "/properties/metadata".to_owned())), "{found:?}");
    // Only that tool: another tool's open values stay permissive.
    let other = static_findings(&report, "firecrawl_search");
    assert!(other.iter().all(|f| f.0 != "opaque"), "{other:?}");

    // A pointer that is not one is refused, naming where.
    std::fs::write(&contracts, json!({"firecrawl_scrape": {"opaque": ["metadata"]}}).to_string()).unwrap();
    let run = audit(&dir, &env, &flags, &json!({}), &strs(&server));
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("`/firecrawl_scrape/opaque` must list JSON pointers"), "{}", run.stderr);
    let _ = std::fs::remove_dir_all(dir);
}
