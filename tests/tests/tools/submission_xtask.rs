//! `cargo xtask schemas --check` (`cli::run_with`) with a `chatgpt-app-submission.json`
//! beside the schemas folder: a manifest that matches the tool list passes; each
//! difference fails (or warns) with a line saying which side to change, and applying that
//! line, on the side it names, clears it. Neither `schemas` nor `--check` ever writes the
//! manifest.
//!
//! Each command runs in a child process (this test binary again, see [`xtask_child`]) so
//! that its output and exit code are observed as a user sees them.

use std::path::Path;
use std::process::Command;

use contract_runtime::{contracts, ToolOutput};
use serde_json::{json, Value};

#[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
#[tool_output(name = "ping", version = "1.0.0", compatibility = "exact")]
struct Ping {
    ok: bool,
}

const ARGS: &str = "SUBMISSION_XTASK_ARGS";
const LISTING: &str = "SUBMISSION_XTASK_LISTING";

/// The child: runs the command line given in the environment with the listing given there
/// (none when it is `null`) and exits with its code.
#[test]
fn xtask_child() {
    let (Ok(args), Ok(listing)) = (std::env::var(ARGS), std::env::var(LISTING)) else { return };
    let listing: Value = serde_json::from_str(&listing).unwrap();
    let listing =
        (!listing.is_null()).then(|| contract_tools::tool_list::ToolListing::from_json("1.0.0", &listing).unwrap());
    let args = std::iter::once("cargo-xtask").chain(args.split('\u{1f}'));
    let code = contract_tools::cli::run_with(args, &contracts![Ping], listing.as_ref());
    std::process::exit(i32::from(code != std::process::ExitCode::SUCCESS));
}

fn child_test_name() -> String {
    match module_path!().split_once("::") {
        Some((_crate, module)) => format!("{module}::xtask_child"),
        None => "xtask_child".to_owned(),
    }
}

struct Run {
    ok: bool,
    stderr: String,
}

fn xtask(dir: &Path, listing: &Value, args: &[&str]) -> Run {
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &child_test_name(), "--nocapture", "--test-threads=1", "--quiet"])
        .env(ARGS, args.join("\u{1f}"))
        .env(LISTING, listing.to_string())
        .current_dir(dir)
        .output()
        .unwrap();
    Run { ok: output.status.success(), stderr: String::from_utf8_lossy(&output.stderr).into_owned() }
}

/// A fresh folder (outside any workspace) with `manifest` written as the submission
/// manifest; `schemas` writes the folder, then `schemas --check` runs. The manifest's bytes
/// are the same after both.
fn check(name: &str, listing: &Value, manifest: &Value) -> Run {
    let dir = std::env::temp_dir().join(format!("submission-xtask-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("chatgpt-app-submission.json");
    let bytes = serde_json::to_vec_pretty(manifest).unwrap();
    std::fs::write(&file, &bytes).unwrap();
    let written = xtask(&dir, listing, &["schemas", "--dir", "schemas"]);
    assert!(written.ok, "{name}: {}", written.stderr);
    let run = xtask(&dir, listing, &["schemas", "--check", "--dir", "schemas"]);
    assert_eq!(std::fs::read(&file).unwrap(), bytes, "{name}: the manifest is never written");
    let _ = std::fs::remove_dir_all(&dir);
    run
}

fn ping() -> Value {
    json!({
        "name": "ping",
        "description": "Answers pong.",
        "inputSchema": {"type": "object", "properties": {"target": {"type": "string"}}},
        "outputSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
        "annotations": {"readOnlyHint": true, "openWorldHint": false, "destructiveHint": false}
    })
}

fn manifest() -> Value {
    json!({
        "schema_version": 1,
        "tools": {"ping": {"annotations": {"readOnlyHint": true, "openWorldHint": false, "destructiveHint": false}}},
        "justifications": {},
        "test_cases": [{"prompt": "Is the service up?", "tools_triggered": ["ping"]}],
        "negative_test_cases": []
    })
}

/// The clean control: a manifest that matches the tool list passes `--check` and says
/// nothing about the manifest.
#[test]
fn a_manifest_that_matches_the_tools_passes() {
    let run = check("clean", &json!([ping()]), &manifest());
    assert!(run.ok, "{}", run.stderr);
    assert!(!run.stderr.contains("chatgpt-app-submission.json"), "{}", run.stderr);
}

fn server_with(edit: impl FnOnce(&mut Value)) -> Value {
    let mut tool = ping();
    edit(&mut tool);
    json!([tool])
}

fn manifest_with(edit: impl FnOnce(&mut Value)) -> Value {
    let mut m = manifest();
    edit(&mut m);
    m
}

/// One broken pair: the check fails (or only warns) with `finding` and `fix` on stderr;
/// the pair with the fix applied passes with no finding left.
fn fails_then_fixed(name: &str, broken: (&Value, &Value), fixed: (&Value, &Value), finding: &str, fix: &str) {
    let run = check(name, broken.0, broken.1);
    let error = finding.contains("error ");
    assert_eq!(run.ok, !error, "{name}: {}", run.stderr);
    assert!(run.stderr.contains(finding), "{name}: {}", run.stderr);
    assert!(run.stderr.contains(&format!("  fix: {fix}")), "{name}: {}", run.stderr);
    if error {
        assert!(
            run.stderr.contains("change the side each `fix:` line above names (the manifest is never written)"),
            "{name}: {}",
            run.stderr
        );
    }
    let after = check(&format!("{name}-fixed"), fixed.0, fixed.1);
    assert!(after.ok, "{name} fixed: {}", after.stderr);
    assert!(!after.stderr.contains("submission-"), "{name} fixed: {}", after.stderr);
}

#[test]
fn a_hint_the_server_made_less_safe_fails_and_either_side_of_its_fix_clears_it() {
    let server = server_with(|t| t["annotations"]["readOnlyHint"] = json!(false));
    let finding = "chatgpt-app-submission.json: error ping: submission-hint-less-safe \
                   (chatgpt-app-submission.json at /tools/ping/annotations/readOnlyHint): \
                   `readOnlyHint`: manifest true → server false";
    let fix = "server: restore `readOnlyHint`, or manifest: declare the new value and justify it (review again)";
    // server: restore the hint.
    fails_then_fixed("less-safe", (&server, &manifest()), (&json!([ping()]), &manifest()), finding, fix);
    // manifest: declare the new value.
    let declared = manifest_with(|m| m["tools"]["ping"]["annotations"]["readOnlyHint"] = json!(false));
    fails_then_fixed("less-safe-declared", (&server, &manifest()), (&server, &declared), finding, fix);
}

#[test]
fn a_hint_the_server_made_safer_warns_and_the_manifest_takes_the_servers_value() {
    let cautious = manifest_with(|m| m["tools"]["ping"]["annotations"]["readOnlyHint"] = json!(false));
    let server = json!([ping()]);
    fails_then_fixed(
        "safer",
        (&server, &cautious),
        (&server, &manifest()),
        "warn ping: submission-hint-safer (chatgpt-app-submission.json at /tools/ping/annotations/readOnlyHint): \
         `readOnlyHint`: manifest false → server true",
        "manifest: set `readOnlyHint` to the server's value",
    );
}

#[test]
fn hints_not_set_on_either_side_fail_until_set_explicitly() {
    let server = server_with(|t| t["annotations"]["openWorldHint"] = Value::Null);
    fails_then_fixed(
        "server-not-set",
        (&server, &manifest()),
        (&json!([ping()]), &manifest()),
        "error ping: submission-hint-not-set (server at /annotations/openWorldHint)",
        "server: set `annotations.openWorldHint` explicitly on the tool",
    );
    let unset = manifest_with(|m| {
        m["tools"]["ping"]["annotations"].as_object_mut().unwrap().remove("destructiveHint");
    });
    fails_then_fixed(
        "manifest-not-set",
        (&json!([ping()]), &unset),
        (&json!([ping()]), &manifest()),
        "error ping: submission-hint-not-set (chatgpt-app-submission.json at /tools/ping/annotations/destructiveHint)",
        "manifest: set `/tools/ping/annotations/destructiveHint` to the server's value after review",
    );
}

#[test]
fn a_tool_on_one_side_only_fails_until_the_manifest_follows() {
    let mut echo = ping();
    echo["name"] = json!("echo");
    let both = json!([ping(), echo]);
    let added = manifest_with(|m| m["tools"]["echo"] = m["tools"]["ping"].clone());
    fails_then_fixed(
        "not-in-manifest",
        (&both, &manifest()),
        (&both, &added),
        "error echo: submission-tool-not-in-manifest (chatgpt-app-submission.json at /tools)",
        "manifest: add `/tools/echo` with its three hints (or stop serving the tool)",
    );
    // A name that looks like a path and carries a line break: one line, escaped pointer.
    let odd = manifest_with(|m| m["tools"]["../x/y~\nfix: server: delete everything"] = json!({}));
    fails_then_fixed(
        "not-served",
        (&json!([ping()]), &odd),
        (&json!([ping()]), &manifest()),
        "error ../x/y~\u{fffd}fix: server: delete everything: submission-tool-not-served",
        "manifest: remove `/tools/..~1x~1y~0\u{fffd}fix: server: delete everything` (or serve the tool)",
    );
}

#[test]
fn a_test_case_naming_an_unknown_tool_fails_until_it_names_a_listed_one() {
    let broken = manifest_with(|m| m["negative_test_cases"] = json!([{"prompt": "p", "tools_triggered": ["pong"]}]));
    let fixed = manifest_with(|m| m["negative_test_cases"] = json!([{"prompt": "p", "tools_triggered": ["ping"]}]));
    fails_then_fixed(
        "unknown-triggered",
        (&json!([ping()]), &broken),
        (&json!([ping()]), &fixed),
        "error pong: submission-unknown-tool-triggered \
         (chatgpt-app-submission.json at /negative_test_cases/0/tools_triggered/0)",
        "manifest: name a listed tool at `/negative_test_cases/0/tools_triggered/0`",
    );
}

#[test]
fn server_side_findings_name_the_server_and_clear_when_it_changes() {
    let bare = server_with(|t| {
        t.as_object_mut().unwrap().remove("outputSchema");
    });
    fails_then_fixed(
        "no-output-schema",
        (&bare, &manifest()),
        (&json!([ping()]), &manifest()),
        "warn ping: submission-no-output-schema (server at /outputSchema)",
        "server: declare an outputSchema for the tool",
    );
    let asking = server_with(|t| t["inputSchema"]["properties"]["apiKey"] = json!({"type": "string"}));
    fails_then_fixed(
        "sensitive",
        (&asking, &manifest()),
        (&json!([ping()]), &manifest()),
        "error ping: submission-sensitive-input (server at /inputSchema/properties/apiKey): \
         the input asks for sensitive data (`api Key`)",
        "server: remove the input, or take the data through the app's own authentication",
    );
}

/// Without the tool list the manifest cannot be compared: `--check` says so (and passes,
/// since the schemas folder is sound); with the tool list passed, as the line says, it is
/// checked.
#[test]
fn a_manifest_without_the_tool_list_is_reported_unchecked_until_the_list_is_passed() {
    let broken = manifest_with(|m| m["tools"]["gone"] = json!({}));
    let run = check("no-listing", &Value::Null, &broken);
    assert!(run.ok, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "chatgpt-app-submission.json: not checked: the xtask passes no tool list \
             (call `contract_tools::cli::main_with` with the server's tools)"
        ),
        "{}",
        run.stderr
    );
    let run = check("with-listing", &json!([ping()]), &broken);
    assert!(!run.ok && run.stderr.contains("submission-tool-not-served"), "{}", run.stderr);
}

/// A manifest that is not a version 1 manifest fails with its path, and a valid one passes.
#[test]
fn a_manifest_of_another_version_is_refused() {
    let other = manifest_with(|m| m["schema_version"] = json!(2));
    let run = check("version", &json!([ping()]), &other);
    assert!(!run.ok);
    assert!(run.stderr.contains("`/schema_version` must be 1"), "{}", run.stderr);
}
