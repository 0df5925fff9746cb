//! The shapes real rmcp servers give their results, served through the packaged crates.
//!
//! `tests/fixtures/real-shapes` is a user workspace (support/smoke.rs packs the crates
//! and patches them in) whose server has one tool per shape: a generic envelope used
//! through type aliases (`goal`, `plan`) around an untagged enum of structs with `f32` and
//! `f64` scores, a transparent newtype around `serde_json::Value` with a hand-written
//! "any JSON value" schema declared opaque (`lookup`), a struct whose only field is a
//! flattened map of values (`get_document`), and HTTP API client models with
//! `skip_serializing_if`, `default`, a format-removing transform and attributes inside
//! `cfg_attr` (`list_issues`). Every contract is checked twice, `exact` (the default) and
//! `additive` (the fixture's feature of that name), each against its own checked-in
//! folder, `schemas/exact` and `schemas/additive`:
//!
//! 1. `schemas` writes the checked-in files byte for byte, and `--check` passes;
//! 2. the server's own test (its tools and its contract set agree) passes;
//! 3. its live `tools/list` advertises exactly the checked-in schemas and identities;
//! 4. every tool called over stdio with realistic arguments (objects, arrays, nested
//!    values) succeeds, its `structuredContent` and text exactly what serde writes for
//!    the same result (the server's `--serde` mode, which bypasses the contract runtime);
//! 5. a NaN score is a `serialization_error` naming its pointer, with a finite control;
//! 6. a middleware that breaks `goal` results (`--broken`) gets them refused as
//!    `output_contract_violation`, while the same server's other tools still pass;
//! 7. `contract-audit --call` finds nothing to report at warning level or above.

use crate::support::bins;
use crate::support::smoke;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use smoke::{assert_listing_matches, ok, read_json, Session, UserWorkspace};

/// The protocol of the peer the tests speak as.
const PROTOCOL: &str = "2026-07-28";

/// The contracts of the fixture server, one per tool.
const TOOLS: [&str; 5] = ["goal", "plan", "lookup", "get_document", "list_issues"];

/// Realistic calls that must succeed, several per tool.
fn valid_calls() -> Vec<(&'static str, Value)> {
    let order = json!({
        "id": "A-17",
        "lines": [{ "sku": "kb-01", "qty": 2, "price": 49.5 }, { "sku": "ms-02", "qty": 1, "price": null }],
        "customer": { "name": "Ada", "tags": ["vip"], "address": { "city": "Oslo", "zip": "0150" } },
        "paid": false
    });
    vec![
        // One goal: its mean score and a confidence (f64 and f32).
        ("goal", json!({ "goals": [{ "name": "ship 4.2", "scores": [0.5, 0.75, 0.875, 1.0] }] })),
        // Few scores: a warning rides along.
        ("goal", json!({ "goals": [{ "name": "cut latency", "scores": [0.1] }] })),
        // Several goals: ranked, the other branch of the untagged enum.
        (
            "goal",
            json!({ "goals": [
                { "name": "docs", "scores": [0.2, 0.4] },
                { "name": "tests", "scores": [0.9, 0.7, 0.8] },
                { "name": "perf", "scores": [0.25] }
            ] }),
        ),
        // No goals: `ok: false`, `data: null`, an error text.
        ("goal", json!({ "goals": [] })),
        (
            "plan",
            json!({ "goal": "release 4.2", "steps": [
                { "title": "freeze", "hours": 0.5 },
                { "title": "changelog", "hours": 1.25, "after": [0] },
                { "title": "tag", "hours": 0.1, "after": [0, 1] }
            ] }),
        ),
        // A dangling dependency: a warning.
        ("plan", json!({ "goal": "migrate", "steps": [{ "title": "copy", "hours": 3.0, "after": [4] }] })),
        ("plan", json!({ "goal": "nothing", "steps": [] })),
        // The value found is an object, an array, a nested scalar, `null`, and nothing.
        ("lookup", json!({ "document": order, "pointer": "" })),
        ("lookup", json!({ "document": order, "pointer": "/customer" })),
        ("lookup", json!({ "document": order, "pointer": "/lines" })),
        ("lookup", json!({ "document": order, "pointer": "/lines/0/price" })),
        ("lookup", json!({ "document": order, "pointer": "/lines/1/price" })),
        ("lookup", json!({ "document": order, "pointer": "/customer/phone" })),
        ("lookup", json!({ "document": [1, "two", [3], { "four": 4 }], "pointer": "/3" })),
        ("lookup", json!({ "document": "just text", "pointer": "" })),
        // Metadata with nested objects and arrays, with numbers, and empty.
        ("get_document", json!({ "id": "handbook" })),
        ("get_document", json!({ "id": "release-notes" })),
        ("get_document", json!({ "id": "draft" })),
        // Optional members left out, empty lists and `false` flags left out, a cursor.
        ("list_issues", json!({ "repository": "acme/api" })),
        ("list_issues", json!({ "repository": "acme/api", "state": "open", "per_page": 1 })),
        ("list_issues", json!({ "repository": "acme/api", "state": "open", "per_page": 1, "cursor": "1" })),
        ("list_issues", json!({ "repository": "acme/api", "labels": ["bug"], "state": "closed" })),
        ("list_issues", json!({ "repository": "acme/api", "labels": ["wontfix"] })),
    ]
}

/// What serde writes for `tool`'s result with `arguments`, from the server's `--serde`
/// mode (no contract runtime involved).
fn serde_writes(exe: &Path, tool: &str, arguments: &Value) -> String {
    let mut child = Command::new(exe)
        .args(["--serde", tool])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("{}: {err}", exe.display()));
    child.stdin.take().expect("piped stdin").write_all(arguments.to_string().as_bytes()).expect("writes the arguments");
    let out = child.wait_with_output().expect("the serde mode ends");
    assert!(out.status.success(), "--serde {tool} {arguments}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8").trim_end().to_owned()
}

/// `tools/call` of `tool` with `arguments`; returns the result.
fn call(server: &mut Session, id: &mut i64, tool: &str, arguments: &Value) -> Value {
    *id += 1;
    let answer = server.request(*id, "tools/call", json!({"name": tool, "arguments": arguments}));
    answer.get("result").cloned().unwrap_or_else(|| panic!("{tool} {arguments}: no result: {answer}"))
}

/// The `error` object of an `isError` result.
fn error_of(result: &Value) -> Value {
    assert_eq!(result["isError"], true, "{result}");
    assert!(result.get("structuredContent").is_none(), "no structuredContent on an error: {result}");
    let text = result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("a text block: {result}"));
    serde_json::from_str::<Value>(text).unwrap_or_else(|err| panic!("error text is JSON ({err}): {text}"))["error"]
        .clone()
}

/// Asserts that a result succeeded with exactly what serde writes: the same JSON in
/// `structuredContent` and the text block, and, on a server without middleware (whose
/// text is written from the typed value), serde's very bytes.
fn assert_served_as_written(result: &Value, written: &str, bytes: bool, what: &str) {
    assert_eq!(result["isError"], false, "{what}: {result}");
    let expected: Value = serde_json::from_str(written).expect("serde wrote JSON");
    assert_eq!(result["structuredContent"], expected, "{what}: structuredContent is what serde writes");
    let text = result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{what}: a text block: {result}"));
    if bytes {
        assert_eq!(text, written, "{what}: the text block is serde's bytes");
    } else {
        assert_eq!(serde_json::from_str::<Value>(text).ok(), Some(expected), "{what}: the text block is the same JSON");
    }
}

fn check(ws: &UserWorkspace, compatibility: &str) {
    let features: &[&str] = if compatibility == "additive" { &["--features", "additive"] } else { &[] };
    let with = |base: &[&str], rest: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(features);
        args.extend_from_slice(rest);
        ws.cargo(&args)
    };
    let folder = format!("schemas/{compatibility}");
    let checked_in = smoke::workspace().join("tests/fixtures/real-shapes").join(&folder);

    // 1. A fresh `schemas` run writes the checked-in files, and `--check` passes on them.
    let written = ws.dir.join(&folder);
    std::fs::remove_dir_all(&written).unwrap();
    ok(with(&["run", "--quiet", "-p", "xtask"], &["--", "schemas", "--dir", &folder]), "xtask schemas");
    for entry in std::fs::read_dir(&checked_in).unwrap() {
        let name = entry.unwrap().file_name().into_string().expect("a UTF-8 file name");
        let fresh = std::fs::read(written.join(&name)).unwrap_or_else(|e| panic!("{folder}/{name} not written: {e}"));
        assert!(fresh == std::fs::read(checked_in.join(&name)).unwrap(), "{folder}/{name}: written = checked in");
    }
    assert_eq!(std::fs::read_dir(&written).unwrap().count(), TOOLS.len() + 1, "one schema per tool and the inventory");
    let out = ok(with(&["run", "--quiet", "-p", "xtask"], &["--", "schemas", "--check", "--dir", &folder]), "--check");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("is up to date ({} contracts)", TOOLS.len())), "{stdout}");
    let inventory = read_json(&written.join("inventory.json"));
    for entry in inventory["contracts"].as_array().expect("inventory contracts") {
        assert_eq!(entry["compatibility"], compatibility, "{entry}");
    }

    // 2. The server's tools and its contract set agree.
    ok(with(&["test", "--quiet", "-p", "shapes-server"], &[]), "cargo test -p shapes-server");

    // 3. The live listing is the checked-in folder.
    ok(with(&["build", "--quiet", "-p", "shapes-server"], &[]), "cargo build -p shapes-server");
    let exe = ws.exe("shapes-server");
    let mut server = Session::start(&exe, &[], PROTOCOL);
    let tools = assert_listing_matches(&mut server, 2, &written);
    let mut listed: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    listed.sort_unstable();
    let mut expected = TOOLS.to_vec();
    expected.sort_unstable();
    assert_eq!(listed, expected);

    // 4. Realistic values pass, exactly as serde writes them.
    let mut id = 2;
    for (tool, arguments) in valid_calls() {
        let result = call(&mut server, &mut id, tool, &arguments);
        let what = format!("{compatibility} {tool} {arguments}");
        assert_served_as_written(&result, &serde_writes(&exe, tool, &arguments), true, &what);
    }
    // What serde leaves out is left out: no `null` for an absent body, no empty labels,
    // no `locked: false`; the wire names of the `wire` feature.
    let page = call(&mut server, &mut id, "list_issues", &json!({ "repository": "acme/api", "per_page": 2 }));
    let issues = &page["structuredContent"]["issues"];
    assert_eq!(page["structuredContent"]["nextCursor"], "2", "{page}");
    assert!(issues[1].get("body").is_none() && issues[1].get("assignee").is_none(), "{page}");
    assert!(issues[0].get("locked").is_none() && issues[1]["labels"][0].get("color").is_some(), "{page}");
    assert_eq!(issues[0]["html_url"], "https://tracker.example/acme/api/issues/1", "{page}");
    assert_eq!(issues[0]["reactions"]["+1"], 3, "{page}");
    let all = call(&mut server, &mut id, "list_issues", &json!({ "repository": "acme/api", "state": "closed" }));
    let closed = &all["structuredContent"]["issues"];
    assert_eq!(closed[0]["locked"], true, "{all}");
    assert!(closed[0].get("labels").is_none(), "{all}");

    // 5. A NaN score is a serialization error naming where it is; a finite one passes.
    for (arguments, pointer) in [
        (json!({ "goals": [{ "name": "unscored", "scores": [] }] }), "/data/score"),
        (
            json!({ "goals": [{ "name": "a", "scores": [0.5] }, { "name": "b", "scores": [] }] }),
            "/data/ranking/1/score",
        ),
    ] {
        let result = call(&mut server, &mut id, "goal", &arguments);
        let error = error_of(&result);
        assert_eq!(error["code"], "serialization_error", "{compatibility} {arguments}: {result}");
        let message = error["message"].as_str().expect("a message");
        assert!(message.contains(&format!("`{pointer}`")), "{compatibility} {arguments}: names {pointer}: {message}");
    }
    let control = json!({ "goals": [{ "name": "a", "scores": [0.5] }, { "name": "b", "scores": [0.25] }] });
    let result = call(&mut server, &mut id, "goal", &control);
    assert_served_as_written(&result, &serde_writes(&exe, "goal", &control), true, "finite control");
    drop(server);

    // 6. A broken value is refused; the same server's untouched tools still pass.
    let mut broken = Session::start(&exe, &["--broken"], PROTOCOL);
    let mut id = 1;
    for (tool, arguments) in valid_calls() {
        let result = call(&mut broken, &mut id, tool, &arguments);
        if tool == "goal" {
            let error = error_of(&result);
            assert_eq!(error["code"], "output_contract_violation", "{compatibility} broken {arguments}: {result}");
            let violations = error["violations"].as_array().expect("violations");
            assert!(violations.iter().any(|v| v["keyword"] == "required" && v["pointer"] == ""), "{error}");
        } else {
            assert_served_as_written(
                &result,
                &serde_writes(&exe, tool, &arguments),
                false,
                "broken server, other tool",
            );
        }
    }
    drop(broken);

    // 7. The audit calls every tool, with realistic arguments: every result valid, no
    // error, and no warning but one. contract-audit reports the flattened map declared
    // opaque with `contract_runtime::OpaqueMap` (its values are listed as opaque) as an
    // `open-object` under `exact`; this pins that finding until the audit tells a
    // declared opaque map from an open object.
    let arguments = ws.dir.join(format!("audit-arguments-{compatibility}.json"));
    let by_tool: serde_json::Map<String, Value> = [
        ("goal", json!({ "goals": [{ "name": "ship", "scores": [0.5, 1.0] }] })),
        ("plan", json!({ "goal": "ship", "steps": [{ "title": "tag", "hours": 0.5 }] })),
        ("lookup", json!({ "document": { "a": [1, { "b": null }] }, "pointer": "/a" })),
        ("get_document", json!({ "id": "release-notes" })),
        ("list_issues", json!({ "repository": "acme/api", "state": "open" })),
    ]
    .into_iter()
    .map(|(tool, args)| (tool.to_owned(), args))
    .collect();
    std::fs::write(&arguments, Value::Object(by_tool).to_string()).unwrap();
    let exe = exe.to_str().expect("a UTF-8 path");
    let args = arguments.to_str().expect("a UTF-8 path");
    let audit = bins::run_to_end(
        Command::new(bins::contract_audit()).args(["--format", "json", "--call", "--args", args, "--", exe]),
        Duration::from_secs(180),
    );
    let report: Value = serde_json::from_str(&audit.stdout)
        .unwrap_or_else(|err| panic!("audit report ({err}):\n{}\n{}", audit.stdout, audit.stderr));
    assert_eq!(audit.status.code(), Some(0), "{compatibility}: {report:#}\n{}", audit.stderr);
    assert_eq!(report["summary"]["errors"], 0, "{report:#}");
    let mut warnings = Vec::new();
    for tool in TOOLS {
        let entry = report["tools"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["name"] == tool))
            .unwrap_or_else(|| panic!("{tool} in the audit: {report:#}"));
        assert_eq!(entry["contract"]["qualified"], true, "{tool}: {entry:#}");
        assert_eq!(entry["call"]["result"], "valid", "{tool}: {entry:#}");
        for finding in entry["findings"].as_array().expect("findings") {
            if finding["level"] != "info" {
                warnings.push(format!("{tool} {} {} {}", finding["level"], finding["kind"], finding["pointer"]));
            }
        }
    }
    // `Metadata` is a map whose values are declared opaque: the map itself is open under
    // `exact`, and said so. `JsonValue` (`lookup`'s any-value) is declared opaque itself,
    // so its object branch is no finding.
    let expected: &[&str] =
        if compatibility == "exact" { &[r#"get_document "warn" "open-object" "/$defs/Metadata""#] } else { &[] };
    assert_eq!(warnings, expected, "{compatibility}: {report:#}");
}

#[test]
fn real_server_shapes_hold_under_both_compatibilities() {
    let started = Instant::now();
    let ws = UserWorkspace::new("real-shapes", "real-shapes");
    for compatibility in ["exact", "additive"] {
        check(&ws, compatibility);
    }
    eprintln!("real_shapes: {:.1} s", started.elapsed().as_secs_f64());
}
