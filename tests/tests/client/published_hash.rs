//! A tool that publishes its own `contentHash` (the draft SEP-3140: SHA-256 over the RFC
//! 8785 JSON of its declaration without `contentHash`, `sha256-<base64url>`): the audit
//! recomputes it from the declaration as the server wrote it and reports a hash that is
//! not the declaration's, and one it cannot read. The fixture server
//! (`tests/interop/published_hash_server.mjs`, raw JSON-RPC) computes the right hashes in
//! node with its own canonicalizer; a tool publishing one passes, and so does a tool that
//! publishes none. `pin` says so and `--locked` reports it beside the drift (exit 1),
//! with the same clean control.

use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use super::audit_real::{interop, scratch};
use crate::support::bins;

const DEADLINE: Duration = Duration::from_secs(120);

fn declaration(name: &str) -> Value {
    json!({
        "name": name,
        "title": "Look up an order",
        "description": "Finds an order by id. Ünïcode, \"quotes\" and 1e21 stay exact.",
        "version": "3",
        "inputSchema": {"type": "object", "properties": {"id": {"type": "string", "maxLength": 64}}, "required": ["id"]},
        "outputSchema": {"type": "object", "properties": {"total": {"type": "number", "maximum": 1e21}}, "required": ["total"]},
        "annotations": {"readOnlyHint": true, "openWorldHint": false, "destructiveHint": false},
        "_meta": {"example.com/owner": "orders"}
    })
}

/// The audit's JSON report of the fixture serving `tools`, its exit code and its output.
fn audit(name: &str, tools: &Value, extra: &[&str]) -> (i32, Value, String) {
    let dir = scratch(name);
    let run = audit_in(&dir, tools, extra);
    let _ = std::fs::remove_dir_all(&dir);
    run
}

fn audit_in(dir: &std::path::Path, tools: &Value, extra: &[&str]) -> (i32, Value, String) {
    let file = dir.join("tools.json");
    std::fs::write(&file, tools.to_string()).unwrap();
    let mut cmd = Command::new(bins::contract_audit());
    // The same command line every time: the lock keys the server by it.
    cmd.current_dir(dir).args(extra).args(["--", "node"]);
    cmd.arg(interop().join("published_hash_server.mjs")).arg("tools.json");
    let out = bins::run_to_end(&mut cmd, DEADLINE);
    (out.status.code().unwrap(), serde_json::from_str(&out.stdout).unwrap_or(Value::Null), out.stdout + &out.stderr)
}

/// (tool, kind, level, pointer) of each `published-hash-*` finding.
fn published(report: &Value) -> Vec<(String, String, String, String)> {
    let mut out = Vec::new();
    for tool in report["tools"].as_array().unwrap() {
        for f in tool["findings"].as_array().unwrap() {
            let kind = f["kind"].as_str().unwrap();
            if kind.starts_with("published-hash-") {
                let s = |k: &str| f[k].as_str().unwrap().to_owned();
                out.push((tool["name"].as_str().unwrap().to_owned(), kind.to_owned(), s("level"), s("pointer")));
            }
        }
    }
    out
}

/// The clean control: the right hash, and no hash at all, pass with exit status 0.
#[test]
fn a_server_publishing_the_right_hash_passes() {
    let tools = json!([{"tool": declaration("orders_get"), "hash": "right"}, {"tool": declaration("orders_plain")}]);
    let (code, report, out) = audit("published-right", &tools, &["--format", "json"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(published(&report), [], "{report:#}");
}

#[test]
fn a_hash_that_is_not_the_declarations_is_an_error_and_an_unreadable_one_a_warning() {
    let tools = json!([
        {"tool": declaration("orders_get"), "hash": "right"},
        {"tool": declaration("orders_edited"), "hash": "stale"},
        {"tool": declaration("orders_md5"), "hash": "md5-1B2M2Y8AsgTpgAmY7PhCfg"},
        {"tool": declaration("orders_bad"), "hash": format!("sha256-{}\u{1b}[2J", "x".repeat(5000))},
    ]);
    let (code, report, out) = audit("published-wrong", &tools, &["--format", "json"]);
    assert_eq!(code, 1, "{out}");
    let row = |t: &str, k: &str, l: &str| (t.to_owned(), k.to_owned(), l.to_owned(), "/contentHash".to_owned());
    // In the report's order: by tool name.
    assert_eq!(
        published(&report),
        [
            row("orders_bad", "published-hash-unreadable", "warn"),
            row("orders_edited", "published-hash-mismatch", "error"),
            row("orders_md5", "published-hash-unreadable", "warn"),
        ],
        "{report:#}"
    );
    // The table names the tool and both hashes; a hostile value is cut and escaped.
    let (_, _, table) = audit("published-wrong-table", &tools, &[]);
    assert!(table.contains("published-hash-mismatch"), "{table}");
    assert!(table.contains("hashes to sha256-"), "{table}");
    assert!(!table.contains('\u{1b}') && !table.contains(&"x".repeat(200)), "{table}");
}

/// `pin` notes a hash that does not verify and still pins what was listed; `--locked`
/// reports it (exit 1) even when every tool is as pinned; the right hash passes both.
#[test]
fn the_lock_reports_a_published_hash_that_does_not_verify() {
    let dir = scratch("published-lock");
    let right = json!([{"tool": declaration("orders_get"), "hash": "right"}]);
    let (code, _, out) = audit_in(&dir, &right, &["pin"]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("contentHash (draft SEP-3140) does not verify"), "{out}");
    let (code, report, out) = audit_in(&dir, &right, &["--locked", "tools.lock.json", "--format", "json"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(report["published_hashes"], json!([]), "{report:#}");

    let stale = json!([{"tool": declaration("orders_get"), "hash": "stale"}]);
    let (code, _, out) = audit_in(&dir, &stale, &["pin"]);
    assert_eq!(code, 0, "the lock pins what was listed: {out}");
    assert!(out.contains("does not verify") && out.contains("orders_get: published-hash-mismatch"), "{out}");
    // Now every tool is as pinned, and the published hash still does not verify.
    let (code, _, table) = audit_in(&dir, &stale, &["--locked", "tools.lock.json"]);
    assert_eq!(code, 1, "{table}");
    assert!(table.contains("every tool is as pinned"), "{table}");
    assert!(table.contains("error orders_get: published-hash-mismatch (at /contentHash)"), "{table}");
    let (code, report, out) = audit_in(&dir, &stale, &["--locked", "tools.lock.json", "--format", "json"]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(report["published_hashes"][0]["kind"], "published-hash-mismatch", "{report:#}");
    assert_eq!(report["summary"]["errors"], 1, "{report:#}");
    // SARIF: a result of the audit's rule, in the live tool.
    let (code, log, out) = audit_in(&dir, &stale, &["--locked", "tools.lock.json", "--format", "sarif"]);
    assert_eq!(code, 1, "{out}");
    let run = &log["runs"][0];
    let result = &run["results"][0];
    assert_eq!(result["ruleId"], "published-hash-mismatch", "{log:#}");
    assert_eq!(result["level"], "error", "{log:#}");
    let index = usize::try_from(result["ruleIndex"].as_u64().unwrap()).unwrap();
    assert_eq!(run["tool"]["driver"]["rules"][index]["id"], "published-hash-mismatch", "{log:#}");
    assert_eq!(result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"], "orders_get/contentHash");
    let _ = std::fs::remove_dir_all(&dir);
}
