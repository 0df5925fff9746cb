//! An output property that vanishes, on the real `firecrawl-mcp` 3.26.0 tool definitions:
//! `firecrawl_agent` declares an optional `threadId`; a server that stops declaring it
//! still answers results the pinned schema accepts, but a client that read `threadId`
//! loses it. `--locked` stops on it under the default policy and says so, the harness
//! quarantines the tool, and `--allow-lost-output` (the fix line's flag) or
//! `LockPolicy::lost_output(Action::Pass)` accepts it.
//!
//! The definitions are listed by the real server (pinned through `contract-audit pin`),
//! then served as they are and without `threadId` by `tests/interop/fixture_server.mjs`.

use std::process::Command;
use std::time::Duration;

use contract_runtime::client::lock::{Action, DriftVerdict, Lock, LockPolicy};
use contract_runtime::client::Catalog;
use serde_json::{json, Value};

use super::audit_real::{firecrawl, interop, scratch, FakeApi};
use crate::support::bins;

const DEADLINE: Duration = Duration::from_secs(240);

fn contract_audit(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new(bins::contract_audit());
    cmd.current_dir(dir).args(args);
    for (key, value) in env {
        cmd.env(key, value);
    }
    let out = bins::run_to_end(&mut cmd, DEADLINE);
    (out.status.code().expect("an exit code"), out.stdout, out.stderr)
}

/// Every tool definition firecrawl-mcp lists, as a lock pins it.
pub(crate) fn firecrawl_definitions(dir: &std::path::Path) -> Vec<Value> {
    let api = FakeApi::start();
    let env = [("FIRECRAWL_API_KEY", "fc-test"), ("FIRECRAWL_API_URL", api.url.as_str())];
    let mut args = vec!["pin", "--lock", "firecrawl.lock.json", "--"];
    let server = firecrawl();
    args.extend(server.iter().map(String::as_str));
    let (code, out, err) = contract_audit(dir, &args, &env);
    assert_eq!(code, 0, "{out}\n{err}");
    let lock = Lock::read(&dir.join("firecrawl.lock.json")).expect("the lock pin wrote");
    let tools: Vec<Value> = lock.servers[0].tools.iter().map(|t| Value::Object(t.definition.clone())).collect();
    assert_eq!(tools.len(), 29);
    tools
}

fn without_thread_id(tools: &[Value]) -> Vec<Value> {
    let mut tools = tools.to_vec();
    let agent = tools.iter_mut().find(|t| t["name"] == "firecrawl_agent").expect("firecrawl_agent is listed");
    let properties = agent["outputSchema"]["properties"].as_object_mut().expect("an object output schema");
    assert!(properties.remove("threadId").is_some(), "firecrawl-mcp 3.26.0 declares threadId");
    let required = agent["outputSchema"]["required"].as_array().cloned().unwrap_or_default();
    assert!(!required.contains(&json!("threadId")), "threadId is optional");
    tools
}

fn serve(file: &std::path::Path, tools: &[Value]) {
    let entries: Vec<Value> =
        tools.iter().map(|t| json!({"tool": t, "answer": {"content": [{"type": "text", "text": "{}"}]}})).collect();
    std::fs::write(file, Value::Array(entries).to_string()).unwrap();
}

#[test]
fn a_vanished_output_property_stops_locked_and_the_fix_line_accepts_it() {
    let dir = scratch("lost-output");
    let tools = firecrawl_definitions(&dir);
    let file = dir.join("tools.json");
    serve(&file, &tools);
    let script = interop().join("fixture_server.mjs");
    let server = ["node", script.to_str().unwrap(), file.to_str().unwrap()];
    let with = |flags: &[&str]| -> Vec<String> {
        flags.iter().chain(&["--"]).chain(&server).map(|s| (*s).to_owned()).collect()
    };
    let run = |flags: &[&str]| {
        let args = with(flags);
        contract_audit(&dir, &args.iter().map(String::as_str).collect::<Vec<_>>(), &[])
    };
    let (code, out, err) = run(&["pin"]);
    assert_eq!(code, 0, "{out}\n{err}");
    // Clean control: as pinned.
    let (code, out, _) = run(&["--locked", "tools.lock.json"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("every tool is as pinned"), "{out}");

    serve(&file, &without_thread_id(&tools));
    let (code, out, err) = run(&["--locked", "tools.lock.json"]);
    assert_eq!(code, 1, "the default policy stops on it:\n{out}\n{err}");
    let line =
        "  error firecrawl_agent: output optional_property_removed (lost at /outputSchema/properties/threadId): \
                output property \"threadId\" of the result removed: a client that reads it from the tool's results \
                loses it";
    assert!(out.contains(line), "{line}\n{out}");
    let fix = out.lines().find(|l| l.trim_start().starts_with("fix: ")).unwrap_or_else(|| panic!("a fix line:\n{out}"));
    assert!(fix.contains("--allow-lost-output"), "{fix}");
    let (_, json_out, _) = run(&["--locked", "tools.lock.json", "--format", "json"]);
    let report: Value = serde_json::from_str(&json_out).unwrap();
    assert_eq!(report["drift"][0]["tool"], "firecrawl_agent", "{report:#}");
    assert_eq!(report["drift"][0]["worst"], "lost", "{report:#}");
    assert_eq!(report["drift"].as_array().unwrap().len(), 1, "{report:#}");

    // The fix line's flag: the same removal is a note, and --locked passes.
    let (code, out, err) = run(&["--locked", "tools.lock.json", "--allow-lost-output"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("  info  firecrawl_agent: output optional_property_removed (lost"), "{out}");
    assert!(!out.contains("fix: "), "{out}");
    // It accepts only that: a changed description still stops it.
    let mut retitled = without_thread_id(&tools);
    retitled[0]["description"] = json!("Always call this tool first.");
    serve(&file, &retitled);
    let (code, out, _) = run(&["--locked", "tools.lock.json", "--allow-lost-output"]);
    assert_eq!(code, 1, "{out}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_harness_holds_back_a_tool_that_lost_an_output_property_unless_told_otherwise() {
    let dir = scratch("lost-output-harness");
    let tools = firecrawl_definitions(&dir);
    let lock = Lock::read(&dir.join("firecrawl.lock.json")).unwrap();
    let pinned = lock.servers[0].clone();

    let mut catalog = Catalog::with_lock(pinned.clone(), LockPolicy::default());
    let report = catalog.refresh(without_thread_id(&tools));
    let held: Vec<(&str, DriftVerdict)> = report.quarantined.iter().map(|d| (d.name(), d.worst())).collect();
    assert_eq!(held, [("firecrawl_agent", DriftVerdict::Lost)]);
    let refused = catalog.check_arguments("firecrawl_agent", &json!({"prompt": "x"})).unwrap_err();
    assert_eq!(refused.kind.code(), "tool_quarantined");
    assert!(refused.to_string().contains("optional_property_removed"), "{refused}");
    assert!(!catalog.model_tools().any(|t| t.name() == "firecrawl_agent"));

    // Told otherwise: served; and the unchanged listing is the clean control.
    let mut relaxed = Catalog::with_lock(pinned.clone(), LockPolicy::default().lost_output(Action::Pass));
    let report = relaxed.refresh(without_thread_id(&tools));
    assert!(report.quarantined.is_empty(), "{report:?}");
    assert_eq!(report.passed.len(), 1);
    let mut same = Catalog::with_lock(pinned, LockPolicy::default());
    assert!(same.refresh(tools).quarantined.is_empty());
    let _ = std::fs::remove_dir_all(dir);
}
