//! The audit's progress through its calls: a bar on stderr when stderr is a terminal (run
//! here under `script`, which gives the audit a pseudo-terminal), and nothing on a pipe or
//! under `--format json`, whose output stays the report alone.

use crate::support::bins;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::json;

const DEADLINE: Duration = Duration::from_secs(120);
const BAR: &str = "calling tools [";

fn fixture(dir: &Path) -> (String, String) {
    std::fs::create_dir_all(dir).unwrap();
    let tool = |name: &str| {
        json!({ "tool": { "name": name, "inputSchema": { "type": "object" } },
                "answer": { "content": [{ "type": "text", "text": "ok" }] } })
    };
    let tools = dir.join("tools.json");
    std::fs::write(&tools, json!([tool("first"), tool("second")]).to_string()).unwrap();
    let args = dir.join("args.json");
    std::fs::write(&args, json!({ "first": {}, "second": {} }).to_string()).unwrap();
    (tools.display().to_string(), args.display().to_string())
}

/// The audit's command line, as one shell word list.
fn audit_line(tools: &str, args: &str, extra: &str) -> String {
    let server = bins::root().join("tests/interop/fixture_server.mjs");
    format!("{} audit --args {args} {extra} -- node {} {tools}", bins::tool_contracts().display(), server.display())
}

#[test]
fn a_terminal_sees_the_calls_progress_and_a_pipe_or_json_does_not() {
    let dir = bins::root().join("target/audit-progress");
    let (tools, args) = fixture(&dir);
    let in_terminal = |extra: &str| {
        // `script` runs the command on a pseudo-terminal and copies what it writes there.
        let line = audit_line(&tools, &args, extra);
        let out = bins::run_to_end(Command::new("script").args(["-qfec", &line, "/dev/null"]), DEADLINE);
        assert!(out.status.success(), "{line}: {}\n{}", out.stdout, out.stderr);
        out.stdout
    };
    let table = in_terminal("");
    assert!(table.contains(BAR), "the bar is drawn on a terminal:\n{table}");
    assert!(table.contains("first") && table.contains("second"), "the report follows:\n{table}");
    let json_report = in_terminal("--format json");
    assert!(!json_report.contains(BAR), "no bar under --format json:\n{json_report}");

    // On a pipe: the report on stdout, nothing of the bar on stderr.
    let line = audit_line(&tools, &args, "");
    let out = bins::run_to_end(Command::new("sh").args(["-c", &line]), DEADLINE);
    assert!(out.status.success(), "{}", out.stderr);
    assert!(out.stdout.contains("second"), "{}", out.stdout);
    assert!(!out.stderr.contains(BAR) && !out.stdout.contains(BAR), "no bar on a pipe: {}", out.stderr);
}
