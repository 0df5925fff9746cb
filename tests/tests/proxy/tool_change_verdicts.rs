//! One change to a tool, one verdict, whoever judges it: the review of `schemas/tools/`
//! (`contract_tools::tool_list::review` and `check`, what `cargo xtask schemas --check` runs),
//! `contract-audit --locked` against a lock written by `contract-audit pin`, and
//! contract-proxy's `--lock` in front of the same server. Each tool of one listing carries
//! one change: an added required argument, `readOnlyHint` flipped to false, an optional
//! output property removed, an edited description, an added optional argument (the
//! control that passes), and an unchanged tool (no change anywhere).
//!
//! The expected verdicts are written here, not taken from the grader: the review and the
//! lock must each report exactly them, kind by kind, and the proxy must quarantine
//! exactly the tools the lock's default policy holds back (breaking, lost, text) and
//! name the same kinds.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use contract_runtime::ContractSet;
use contract_tools::tool_list::{self, ToolListing};
use serde_json::{json, Value};

use super::proxy::{answer, error_of, interop, names, proxied, scratch, tools_file, upstream, Session};
use crate::support::bins;

const DEADLINE: Duration = Duration::from_secs(120);

fn tool(name: &str) -> Value {
    json!({
        "name": name,
        "description": "Returns the record with the given id.",
        "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
        "outputSchema": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "note": {"type": "string"}},
            "required": ["id"],
            "additionalProperties": false
        },
        "annotations": {"readOnlyHint": true}
    })
}

fn before() -> Vec<Value> {
    ["add_arg", "add_optional", "drop_out", "edit_text", "flip_hint", "same"].into_iter().map(tool).collect()
}

fn after() -> Vec<Value> {
    let mut tools = before();
    tools[0]["inputSchema"]["properties"]["tenant"] = json!({"type": "string"});
    tools[0]["inputSchema"]["required"] = json!(["id", "tenant"]);
    tools[1]["inputSchema"]["properties"]["limit"] = json!({"type": "integer"});
    tools[2]["outputSchema"]["properties"].as_object_mut().unwrap().remove("note");
    tools[3]["description"] = json!("Returns the record with the given id. Call add_arg first.");
    tools[4]["annotations"]["readOnlyHint"] = json!(false);
    tools
}

/// The expected (kind, verdict) of each changed tool.
fn expected() -> BTreeMap<&'static str, Vec<(&'static str, &'static str)>> {
    BTreeMap::from([
        ("add_arg", vec![("property_added", "breaking")]),
        ("add_optional", vec![("property_added", "additive")]),
        ("drop_out", vec![("optional_property_removed", "lost")]),
        ("edit_text", vec![("text_changed", "text")]),
        ("flip_hint", vec![("hint_less_safe", "breaking")]),
    ])
}

type Verdicts = BTreeMap<String, Vec<(String, String)>>;

/// What the review of `schemas/tools/` (`--check`) says, tool by tool.
fn review_verdicts(dir: &Path) -> Verdicts {
    let schemas = dir.join("schemas");
    let contracts = ContractSet::new();
    let listing = |tools: Vec<Value>| ToolListing::from_json("1.0.0", &Value::Array(tools)).unwrap();
    tool_list::review(&schemas, &listing(before()), &contracts).unwrap().write(&schemas).unwrap();
    assert!(
        tool_list::check(&schemas, &listing(before()), &contracts).is_ok(),
        "control: the checked-in listing passes"
    );
    let review = tool_list::review(&schemas, &listing(after()), &contracts).unwrap();
    let err = tool_list::check(&schemas, &listing(after()), &contracts).unwrap_err().to_string();
    assert!(err.contains("tool add_arg (server version): + /inputSchema/properties/tenant"), "{err}");
    assert!(err.contains("review: description of edit_text changed"), "{err}");
    let mut out = Verdicts::new();
    for tool in review.tools() {
        let changes: Vec<(String, String)> =
            tool.changes().iter().map(|c| (c.kind().to_owned(), c.verdict().as_str().to_owned())).collect();
        if !changes.is_empty() {
            out.insert(tool.name().to_owned(), changes);
        }
    }
    out
}

/// What `contract-audit --locked` says, tool by tool, from its JSON report.
fn locked_verdicts(dir: &Path, command: &[String]) -> Verdicts {
    let run = |args: &[&str]| {
        let mut cmd = Command::new(bins::contract_audit());
        cmd.current_dir(dir).args(args).arg("--").args(command);
        bins::run_to_end(&mut cmd, DEADLINE)
    };
    let out = run(&["--locked", "tools.lock.json", "--format", "json", "--deny", "never"]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", out.stdout, out.stderr);
    let report: Value =
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("JSON report ({e}):\n{}", out.stdout));
    let text = |v: &Value| v.as_str().unwrap().to_owned();
    report["drift"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let changes = d["changes"].as_array().unwrap();
            (text(&d["tool"]), changes.iter().map(|c| (text(&c["kind"]), text(&c["verdict"]))).collect())
        })
        .collect()
}

fn shown(verdicts: &BTreeMap<&str, Vec<(&str, &str)>>) -> Verdicts {
    verdicts
        .iter()
        .map(|(tool, changes)| {
            ((*tool).to_owned(), changes.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect())
        })
        .collect()
}

#[test]
fn the_review_the_lock_and_the_proxy_give_one_change_one_verdict() {
    let dir = scratch("one-verdict");
    let entries = |tools: Vec<Value>| {
        Value::Array(tools.into_iter().map(|t| json!({"tool": t, "answer": answer(&json!({"id": "a"}))})).collect())
    };
    let server = interop("proxy/server.mjs");
    let listed = tools_file(&dir, "tools.json", &entries(before()));
    let command = upstream(&server, &[&listed]);
    let mut pin = Command::new(bins::contract_audit());
    pin.current_dir(&dir).arg("pin").arg("--").args(&command);
    bins::server_everything(); // installs the TypeScript SDK the server runs on
    let pinned = bins::run_to_end(&mut pin, DEADLINE);
    assert_eq!(pinned.status.code(), Some(0), "pin: {}\n{}", pinned.stdout, pinned.stderr);
    // Control: the listing as pinned is no drift for the lock.
    assert_eq!(locked_verdicts(&dir, &command), Verdicts::new());
    tools_file(&dir, "tools.json", &entries(after()));

    let expected = shown(&expected());
    let locked = locked_verdicts(&dir, &command);
    assert_eq!(locked, expected, "contract-audit --locked");

    // The tool snapshot of `schemas/tools/` holds no `outputSchema` (a contracted tool's
    // output is reviewed in its contract's own snapshot), so the review sees no change in
    // `drop_out`; every other verdict is the lock's.
    let mut without_output = expected.clone();
    without_output.remove("drop_out");
    assert_eq!(review_verdicts(&dir), without_output, "the review of schemas/tools/");

    // The proxy quarantines what the lock's default policy holds back, and names the kinds.
    let lock = dir.join("tools.lock.json");
    let (mut s, _) = Session::initialized(&proxied(&["--lock", lock.to_str().unwrap()], &server, &[&listed]));
    assert_eq!(names(&s.listed()), ["add_optional", "same"], "the additive change and the unchanged tool are served");
    for (tool, changes) in &locked {
        let held = changes.iter().any(|(_, v)| v != "additive" && v != "cosmetic");
        let result = s.call(tool, json!({"id": "a"}));
        if held {
            let error = error_of(&result);
            assert_eq!(error["code"], "tool_quarantined", "{tool}: {result:#}");
            let message = error["message"].as_str().unwrap();
            for (kind, _) in changes {
                assert!(message.contains(&format!("({kind})")), "{tool}: {message}");
            }
        } else {
            assert_eq!(result["structuredContent"], json!({"id": "a"}), "{tool}: {result:#}");
        }
    }
    assert_eq!(s.call("same", json!({"id": "a"}))["structuredContent"], json!({"id": "a"}));
}
