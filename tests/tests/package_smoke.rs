//! The packaged crates installed in a user workspace: call the slice, compare the live
//! inventory with the source.
//!
//! `cargo package` packs contract-derive, contract-runtime and contract-tools into
//! `.crate` files as crates.io would receive them. The user workspace
//! `tests/fixtures/user-workspace` (a two-contract rmcp server and the one-line xtask,
//! outside this workspace) is copied under `target/package-smoke/` and built against the
//! unpacked `.crate` contents through `[patch.crates-io]` — never through path
//! dependencies on this repository's sources. Then, in that workspace:
//!
//! 1. `cargo xtask schemas --check` passes on its checked-in `schemas/`;
//! 2. a drifted checked-in schema fails the check with the classified line;
//! 3. `--format json` prints a review that validates against the review schema checked
//!    in at `contract-tools/schemas/schemas_review.json`;
//! 4. the server's live `tools/list` over stdio advertises exactly the checked-in
//!    schemas, with the identities of the checked-in inventory;
//! 5. `cargo tree` of the server shows no build-time tooling (`similar`, `clap`);
//! 6. the server's own test (its tools and its contract set agree) passes.
//!
//! Everything builds in `target/package-smoke/target`, a target directory of its own,
//! so the test neither waits on nor invalidates the main build (support/smoke.rs).

#[path = "support/smoke.rs"]
mod smoke;

use serde_json::{json, Value};
use smoke::{assert_listing_matches, ok, read_json, run, Session, UserWorkspace};

#[test]
fn packaged_crates_serve_a_user_workspace() {
    let root = smoke::workspace();
    let ws = UserWorkspace::new("user-workspace", "user-workspace");
    let in_ws = |args: &[&str]| ws.cargo(args);

    // 1. The one-line xtask passes on the checked-in schemas.
    let out = ok(in_ws(&["xtask", "schemas", "--check"]), "cargo xtask schemas --check");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("is up to date (2 contracts)"), "{stdout}");
    let help = ok(in_ws(&["xtask", "--help"]), "cargo xtask --help");
    assert!(String::from_utf8_lossy(&help.stdout).contains("schemas"), "--help names the command");

    // 6. The server's tools and its contract set agree.
    ok(in_ws(&["test", "--quiet", "-p", "weather-server"]), "cargo test -p weather-server");

    // 5. No build-time tooling in what the server links.
    let tree = ok(in_ws(&["tree", "-p", "weather-server", "-e", "normal", "--prefix", "none"]), "cargo tree");
    let tree = String::from_utf8_lossy(&tree.stdout);
    assert!(tree.contains("contract-runtime v0.1.0"), "the server links the runtime:\n{tree}");
    for tooling in ["contract-tools ", "similar ", "clap "] {
        assert!(!tree.lines().any(|l| l.starts_with(tooling)), "the server links `{tooling}`:\n{tree}");
    }

    // 4. The live tools/list equals the checked-in schemas and inventory.
    ok(in_ws(&["build", "--quiet", "-p", "weather-server"]), "cargo build -p weather-server");
    let mut server = Session::start(&ws.exe("weather-server"), &[]);
    assert_listing_matches(&mut server, 2, &ws.dir.join("schemas"));
    // A call goes through the contract.
    server.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "forecast", "arguments": {"city": "Oslo", "days": 2}}}));
    let call = server.answer(3);
    assert_eq!(call["result"]["isError"], false, "{call}");
    assert_eq!(call["result"]["structuredContent"]["days"].as_array().map(Vec::len), Some(2), "{call}");
    drop(server);

    // 3. The JSON review validates against the checked-in review schema.
    let out = ok(in_ws(&["xtask", "schemas", "--check", "--format", "json"]), "--format json");
    let review: Value = serde_json::from_slice(&out.stdout).expect("the review is JSON");
    let review_schema = read_json(&root.join("contract-tools/schemas/schemas_review.json"));
    let validator = jsonschema::validator_for(&review_schema).expect("the review schema compiles");
    assert!(validator.is_valid(&review), "review against its schema: {review}");
    assert_eq!(review["ok"], true);

    // 2. A drift fails with the classified line (an enum value the checked-in schema
    // lacks is breaking for exact `weather` 1.0.0).
    let weather = ws.dir.join("schemas/weather.json");
    let text = std::fs::read_to_string(&weather).unwrap();
    let drifted = text.replacen("\"cloudy\",\n", "", 1);
    assert_ne!(drifted, text, "the fixture's weather schema lists `cloudy`");
    std::fs::write(&weather, drifted).unwrap();
    let out = run(in_ws(&["xtask", "schemas", "--check"]), "check after drift");
    assert_eq!(out.status.code(), Some(1), "a drift fails the check");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("weather 1.0.0 (unchanged): + /properties/sky/enum (value \"cloudy\"): BREAKING, needs 2.0.0"),
        "{stderr}"
    );
    assert!(!stderr.contains("SnapshotError"), "no Debug dump: {stderr}");
    let out = run(in_ws(&["xtask", "schemas", "--check", "--format", "json"]), "--format json after drift");
    assert_eq!(out.status.code(), Some(1));
    let review: Value = serde_json::from_slice(&out.stdout).expect("the review is JSON");
    assert!(validator.is_valid(&review), "a failing review still matches its schema: {review}");
    assert_eq!(review["ok"], false);
}
