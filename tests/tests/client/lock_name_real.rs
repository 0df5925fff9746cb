//! A lock that travels: `pin --name` keys the real `firecrawl-mcp` 3.26.0 by a name, so
//! `--locked` finds it under another command line (a wrapper, another path), by that name
//! or by its `serverInfo` name; the command line it was pinned from stays as information.

use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use super::audit_real::{firecrawl, interop, scratch};
use crate::support::bins;
use crate::support::interop::FakeApi;

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

/// Every `contentHash` of the committed server-everything lock is the SHA-256 of the RFC
/// 8785 form of its definition as node computes it (keys sorted by UTF-16 code units,
/// `JSON.stringify` for everything else: an implementation of its own); an edited hash is
/// refused with its pointer.
#[test]
fn content_hashes_are_the_sha256_of_the_jcs_form_node_computes() {
    use contract_runtime::client::lock::Lock;

    let path = bins::root().join("tests/interop/server-everything.lock.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let script = r"
const fs = require('fs'), crypto = require('crypto');
const jcs = (v) => Array.isArray(v) ? '[' + v.map(jcs).join(',') + ']'
  : (v !== null && typeof v === 'object')
    ? '{' + Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + jcs(v[k])).join(',') + '}'
    : JSON.stringify(v);
const lock = JSON.parse(fs.readFileSync(process.argv[1], 'utf8'));
for (const t of lock.servers[0].tools) {
  console.log(t.name + ' sha256:' + crypto.createHash('sha256').update(jcs(t.definition)).digest('hex'));
}";
    let out = bins::run_to_end(Command::new("node").args(["-e", script]).arg(&path), DEADLINE);
    assert!(out.status.success(), "{}", out.stderr);
    let lock = Lock::parse(&text, "server-everything.lock.json").expect("the committed lock reads");
    let ours: Vec<String> = lock.servers[0]
        .tools
        .iter()
        .map(|t| format!("{} {}", t.name, t.content_hash.as_deref().expect("a content hash")))
        .collect();
    let node: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(ours.len(), 13);
    assert_eq!(ours, node);

    // An edited hash is refused, naming where; the untouched file is the control above.
    let recorded = lock.servers[0].tools[2].content_hash.clone().unwrap();
    let edited = text.replacen(&recorded, &format!("sha256:{}", "0".repeat(64)), 1);
    let err = Lock::parse(&edited, "server-everything.lock.json").unwrap_err();
    assert_eq!(err.pointer(), Some("/servers/0/tools/2/contentHash"), "{err}");
}
