//! A lock that travels: `pin --name` keys the real `firecrawl-mcp` 3.26.0 by a name, so
//! `--locked` finds it under another command line (a wrapper, another path), by that name
//! or by its `serverInfo` name; the command line it was pinned from stays as information.

use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use super::audit_real::{firecrawl, interop, scratch, FakeApi};
use crate::support::bins;

const DEADLINE: Duration = Duration::from_secs(240);

#[test]
fn a_server_pinned_by_name_is_found_under_another_command_line() {
    let dir = scratch("pin-name");
    let api = FakeApi::start();
    let run = |args: &[&str], server: &[String]| {
        let mut cmd = Command::new(bins::contract_audit());
        cmd.current_dir(&dir).args(args).arg("--").args(server);
        cmd.env("FIRECRAWL_API_KEY", "fc-test").env("FIRECRAWL_API_URL", &api.url);
        let out = bins::run_to_end(&mut cmd, DEADLINE);
        (out.status.code().expect("an exit code"), out.stdout, out.stderr)
    };
    let pinned_from = firecrawl();
    let (code, out, err) = run(&["pin", "--name", "firecrawl"], &pinned_from);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("pinned 29 tools of firecrawl-fastmcp 3.26.0 (the server named `firecrawl`)"), "{out}");
    let lock: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("tools.lock.json")).unwrap()).unwrap();
    assert_eq!(lock["servers"][0]["source"], json!({"name": "firecrawl"}));
    assert_eq!(lock["servers"][0]["launched"], json!({"command": pinned_from}));

    // Another command line for the same server: through `env`, from another directory.
    let entry = interop().join("node_modules/firecrawl-mcp/dist/index.js");
    let elsewhere: Vec<String> = ["env", "node", entry.to_str().unwrap()].iter().map(|s| (*s).to_owned()).collect();
    let (code, out, err) = run(&["--locked", "tools.lock.json", "--name", "firecrawl"], &elsewhere);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("every tool is as pinned"), "{out}");
    // Without --name: the one entry pinned by name for serverInfo `firecrawl-fastmcp`.
    let (code, out, err) = run(&["--locked", "tools.lock.json"], &elsewhere);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("every tool is as pinned"), "{out}");

    // Clean controls: another name, and another server, are not in the lock.
    let (code, _, err) = run(&["--locked", "tools.lock.json", "--name", "other"], &elsewhere);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("pins no server for the server named `other`"), "{err}");
    let tools = dir.join("tools.json");
    std::fs::write(
        &tools,
        json!([{"tool": {"name": "t", "inputSchema": {"type": "object"}}, "answer": "exit"}]).to_string(),
    )
    .unwrap();
    let fixture: Vec<String> = ["node".to_owned(), interop().join("fixture_server.mjs").to_str().unwrap().to_owned()]
        .into_iter()
        .chain([tools.to_str().unwrap().to_owned()])
        .collect();
    let (code, _, err) = run(&["--locked", "tools.lock.json"], &fixture);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("pins no server for stdio `node "), "{err}");
    assert!(err.contains("  the server named `firecrawl`"), "it lists what it pins: {err}");
    let _ = std::fs::remove_dir_all(dir);
}
