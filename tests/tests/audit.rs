//! `contract-audit` (issue 11) against real servers over stdio and streamable HTTP: our
//! qe-server (clean, and with `--broken`: the broken tool is reported) and the pinned
//! `@modelcontextprotocol/server-everything`, a server we did not write. Bad command
//! lines get a clear error and exit status 2.

#[path = "support/bins.rs"]
mod bins;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use serde_json::Value;

const DEADLINE: Duration = Duration::from_secs(120);

/// Runs the audit with `args` and returns (exit code, stdout, stderr).
fn audit(args: &[&str]) -> (i32, String, String) {
    let out = bins::run_to_end(Command::new(bins::contract_audit()).args(args), DEADLINE);
    (out.status.code().expect("an exit code"), out.stdout, out.stderr)
}

/// Runs the audit with `--format json` and parses its report.
fn audit_json(args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = audit(&all);
    let report = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("JSON report ({e}):\n{stdout}\n{stderr}"));
    (code, report)
}

fn tool<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == name))
        .unwrap_or_else(|| panic!("{name} in the report"))
}

fn kinds(tool: &Value) -> Vec<String> {
    tool["findings"].as_array().unwrap().iter().map(|f| f["kind"].as_str().unwrap().to_owned()).collect()
}

fn names(report: &Value, filter: impl Fn(&Value) -> bool) -> Vec<String> {
    report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| filter(t))
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn qe_server_clean_over_stdio() {
    let server = bins::qe_server().to_str().unwrap();
    let (code, report) = audit_json(&["--", server]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["server"]["name"], "qe-server");
    assert_eq!(report["server"]["transport"], "stdio");
    assert_eq!(names(&report, |t| t["output_schema"] == false), ["server_version"]);
    assert!(kinds(tool(&report, "server_version")).contains(&"uncontracted".to_owned()));
    let tickets = tool(&report, "search_tickets");
    assert_eq!(tickets["contract"]["qualified"], true);
    assert_eq!(tickets["contract"]["name"], "search_tickets");
    assert_eq!(report["summary"]["errors"], 0);
    // The opaque `metadata` of scrape_page is a declared hole, and the audit shows it.
    let scrape = tool(&report, "scrape_page");
    let permissive: Vec<&str> = scrape["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "permissive")
        .map(|f| f["pointer"].as_str().unwrap())
        .collect();
    assert!(permissive.contains(&"/properties/metadata"), "{scrape:#}");
}

#[test]
fn qe_server_broken_tool_is_reported_with_a_failing_exit() {
    let server = bins::qe_server().to_str().unwrap();
    let dir = std::env::temp_dir().join(format!("contract-audit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let args = dir.join("args.json");
    std::fs::write(&args, r#"{"broken_fleet_status": {}, "fleet_status": {}, "search_tickets": {"query": "bug"}}"#)
        .unwrap();
    let (code, report) = audit_json(&["--args", args.to_str().unwrap(), "--", server, "--broken"]);
    assert_eq!(code, 1, "an error finding fails the default --deny error: {report:#}");
    let broken = tool(&report, "broken_fleet_status");
    assert_eq!(broken["call"]["result"], "declared-error");
    assert_eq!(broken["call"]["code"], "output_contract_violation");
    assert!(kinds(broken).contains(&"call-server-reported-violation".to_owned()));
    // Controls: the sound tools called in the same run are valid, and only the named tools were called.
    assert_eq!(tool(&report, "fleet_status")["call"]["result"], "valid");
    assert_eq!(tool(&report, "search_tickets")["call"]["result"], "valid");
    assert!(tool(&report, "task_status")["call"].is_null());
    // The human table names the tool and the finding.
    let (code, table, stderr) = audit(&["--args", args.to_str().unwrap(), "--", server, "--broken"]);
    assert_eq!(code, 1);
    assert!(table.contains("error broken_fleet_status: call-server-reported-violation"), "{table}");
    assert!(stderr.contains("calling broken_fleet_status"), "progress on stderr: {stderr}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn qe_server_over_streamable_http_lists_what_stdio_lists() {
    let mut child = Command::new(bins::qe_server())
        .args(["--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn qe-server --http");
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("qe-server: listening on ") {
                let _ = tx.send(url.to_owned());
            }
        }
    });
    let url = rx.recv_timeout(Duration::from_secs(30)).expect("the server announces its address");
    let (code, over_http) = audit_json(&["--call", &url]);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(code, 0, "{over_http:#}");
    assert_eq!(over_http["server"]["transport"], "streamable-http");
    assert_eq!(tool(&over_http, "fleet_status")["call"]["result"], "valid");
    let (_, over_stdio) = audit_json(&["--", bins::qe_server().to_str().unwrap()]);
    assert_eq!(names(&over_http, |_| true), names(&over_stdio, |_| true));
}

#[test]
fn server_everything_findings_and_calls() {
    let entry = bins::server_everything().to_str().unwrap();
    let skip = [
        "--skip",
        "trigger-long-running-operation",
        "--skip",
        "simulate-research-query",
        "--skip",
        "gzip-file-as-resource",
    ];
    let mut args = vec!["--call", "--timeout", "20"];
    args.extend_from_slice(&skip);
    args.extend_from_slice(&["--", "node", entry, "stdio"]);
    let (code, report) = audit_json(&args);
    assert_eq!(code, 0, "no errors: {report:#}");
    assert_eq!(report["server"]["name"], "mcp-servers/everything");
    assert_eq!(names(&report, |t| t["output_schema"] == true), ["get-structured-content"]);
    for name in ["echo", "get-sum", "get-env", "get-tiny-image"] {
        let t = tool(&report, name);
        assert!(kinds(t).contains(&"no-output-schema".to_owned()), "{t:#}");
        assert!(kinds(t).contains(&"uncontracted".to_owned()), "{t:#}");
    }
    // Calls with synthesized arguments: the declared schema holds; the others are unvalidated.
    let structured = tool(&report, "get-structured-content");
    assert_eq!(structured["call"]["arguments"], "synthesized");
    assert_eq!(structured["call"]["result"], "valid");
    assert_eq!(tool(&report, "echo")["call"]["result"], "unvalidated");
    assert_eq!(tool(&report, "get-sum")["call"]["result"], "unvalidated");
    assert!(tool(&report, "trigger-long-running-operation")["call"].is_null(), "skipped");
    // Twelve tools without an outputSchema are warnings: --deny warn fails the run.
    let (code, _, _) = audit(&["--deny", "warn", "--", "node", entry, "stdio"]);
    assert_eq!(code, 1);
}

#[test]
fn bad_command_lines_get_a_clear_error() {
    let (code, _, stderr) = audit(&[]);
    assert_eq!(code, 2, "{stderr}");
    let (code, _, stderr) = audit(&["--", "/nonexistent/mcp-server"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot start `/nonexistent/mcp-server`"), "{stderr}");
    let server = bins::qe_server().to_str().unwrap();
    let (code, _, stderr) = audit(&["--args", "/nonexistent/args.json", "--", server]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot read /nonexistent/args.json"), "{stderr}");
    // A port nobody listens on: bind one, note it, close it.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (code, _, stderr) = audit(&["--timeout", "10", &format!("http://127.0.0.1:{port}/mcp")]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot connect"), "{stderr}");
    // A process that is not an MCP server.
    let (code, _, stderr) = audit(&["--timeout", "10", "--", "true"]);
    assert_eq!(code, 2, "{stderr}");
}
