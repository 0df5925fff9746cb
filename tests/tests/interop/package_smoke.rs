//! Install the packed crates, call the server, compare the live inventory with the
//! checked-in one.
//!
//! `cargo package` packs contract-derive, contract-runtime and contract-tools into
//! `.crate` files as crates.io would receive them. The user workspace
//! `tests/fixtures/user-workspace` (an rmcp server with a contract of each root shape and
//! the one-line xtask, outside this workspace) is copied under `target/package-smoke/` and built against the
//! unpacked `.crate` contents through `[patch.crates-io]` — never through path
//! dependencies on this repository's sources. Then, in that workspace:
//!
//! 1. `cargo xtask schemas --check` passes on its checked-in `schemas/`;
//! 2. a drifted checked-in schema fails the check with the classified line;
//! 3. `--format json` prints a review that validates against the review schema checked
//!    in at `contract-tools/schemas/schemas_review.json`;
//! 4. the server's live `tools/list` over stdio advertises exactly the checked-in
//!    schemas, with the identities of the checked-in inventory, to a peer on 2026-07-28
//!    (every root as it is) and to one on 2025-11-25 (a root that is not an object
//!    wrapped as `{"result": …}`, every other schema as checked in); every tool's call
//!    passes its contract on both;
//! 5. `cargo tree` of the server shows no build-time tooling (`similar`, `clap`);
//! 6. the server's own test (its tools and its contract set agree) passes;
//! 7. with the tool list passed (`main_with`), a description edit fails `--check` and is
//!    listed for review, and a new required argument needs the contract's major bump
//!    ([`packaged_xtask_checks_the_tool_list`]).
//!
//! Everything builds in the tests' outside target directory, not the main one, so the
//! test neither waits on nor invalidates the main build (support/smoke.rs, support/bins.rs).

use crate::support::bins;
use crate::support::smoke;

use serde_json::{json, Value};
use smoke::{ok, read_json, run, Session, UserWorkspace};

/// The `{"result": …}` wrapper a peer before 2026-07-28 is shown for a root that is not
/// an object: `$schema` and `$defs` stay at the top. (The fixture's roots refer to
/// nothing but `$defs`, so no reference needs rewriting; asserted here.)
fn wrap(schema: &Value) -> Value {
    let text = schema.to_string();
    assert_eq!(text.matches("\"$ref\":\"#").count(), text.matches("\"$ref\":\"#/$defs/").count(), "{text}");
    let mut inner = schema.as_object().expect("an object schema").clone();
    let mut outer = serde_json::Map::new();
    for key in ["$schema", "$defs"] {
        if let Some(value) = inner.remove(key) {
            outer.insert(key.to_owned(), value);
        }
    }
    outer.insert("type".to_owned(), json!("object"));
    outer.insert("properties".to_owned(), json!({ "result": inner }));
    outer.insert("required".to_owned(), json!(["result"]));
    outer.insert("additionalProperties".to_owned(), json!(false));
    Value::Object(outer)
}

#[test]
fn packaged_crates_serve_a_user_workspace() {
    let root = smoke::workspace();
    // The user workspace, copied so that the drift below never touches the repository.
    let ws = UserWorkspace::new("user-workspace", "user-workspace");
    let in_ws = |args: &[&str]| ws.cargo(args);

    // 1. The one-line xtask passes on the checked-in schemas.
    let out = ok(in_ws(&["xtask", "schemas", "--check"]), "cargo xtask schemas --check");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("is up to date (6 contracts)"), "{stdout}");
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

    // 4. The live tools/list equals the checked-in schemas and inventory, on each era.
    ok(in_ws(&["build", "--quiet", "-p", "weather-server"]), "cargo build -p weather-server");
    let exe = ws.exe("weather-server");
    let inventory = read_json(&ws.dir.join("schemas/inventory.json"));
    let entries = inventory["contracts"].as_array().expect("inventory contracts");
    let mut wrapped_tools = Vec::new();
    for protocol in ["2026-07-28", "2025-11-25"] {
        let mut server = Session::start(&exe, &[], protocol);
        let listed = server.request(2, "tools/list", json!({}));
        let tools = listed["result"]["tools"].as_array().unwrap_or_else(|| panic!("tools/list: {listed}"));
        assert_eq!(tools.len(), entries.len(), "{protocol}: one tool per contract: {listed}");
        for (n, entry) in (10..).zip(entries) {
            let name = entry["name"].as_str().expect("a name");
            let tool =
                tools.iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("tool `{name}` is not listed"));
            let file = read_json(&ws.dir.join("schemas").join(entry["file"].as_str().expect("a file")));
            let object_root = file["type"] == "object";
            let expected = if protocol == "2026-07-28" || object_root { file.clone() } else { wrap(&file) };
            assert_eq!(
                tool["outputSchema"], expected,
                "{protocol} {name}: the live outputSchema is the checked-in schema"
            );
            if !object_root && protocol != "2026-07-28" {
                wrapped_tools.push(name.to_owned());
            }
            let identity = &tool["_meta"]["tool-contracts.dev/contract"];
            assert_eq!(identity["qualified"], true, "{name}: contract identity in _meta: {tool}");
            assert_eq!(identity["sha256"], entry["sha256"], "{name}: live sha256 = inventory");
            assert_eq!(identity["version"], entry["version"], "{name}: live version = inventory");
            // Each tool's call goes through its contract, in the advertised shape.
            let arguments =
                if name == "forecast" { json!({"city": "Oslo", "days": 2}) } else { json!({"city": "Oslo"}) };
            let call = server.request(n, "tools/call", json!({"name": name, "arguments": arguments}));
            assert_eq!(call["result"]["isError"], false, "{protocol} {name}: {call}");
            let structured = &call["result"]["structuredContent"];
            let validator = jsonschema::validator_for(&expected).expect("the advertised schema compiles");
            assert!(
                validator.is_valid(structured),
                "{protocol} {name}: the result matches what was advertised: {call}"
            );
            if name == "forecast" {
                assert_eq!(structured["days"].as_array().map(Vec::len), Some(2), "{call}");
            }
        }
    }
    // Every root shape is there: only the array root is not an object.
    assert_eq!(wrapped_tools, ["readings"], "the roots that old peers see wrapped");
    let roots: Vec<Value> = entries
        .iter()
        .map(|e| {
            let file = read_json(&ws.dir.join("schemas").join(e["file"].as_str().expect("a file")));
            json!([e["name"], file.get("$ref").is_some(), file.get("oneOf").is_some()])
        })
        .collect();
    for shape in [json!(["station", true, false]), json!(["region", true, false]), json!(["alert", false, true])] {
        assert!(roots.contains(&shape), "{shape} among {roots:?}");
    }

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

/// `cargo install` of the packed contract-audit and contract-proxy gives working binaries.
///
/// contract-derive, contract-runtime, contract-tools, contract-audit and contract-proxy
/// are packed as crates.io would receive them (one `cargo package` for all); the unpacked
/// contract-audit and contract-proxy are installed with `cargo install --path` into a
/// fresh root, each resolved by the lock file it ships (`--locked`) and offline, with the
/// packed contract-runtime, contract-derive and contract-tools patched in for the
/// crates.io versions they name (`--config patch.crates-io…` on the command line). They
/// build with the dev profile (`--debug`) in the smoke's target directory, so a rerun
/// rebuilds only what changed. The installed contract-audit prints its help and audits
/// the demo server: clean, and with its deliberately broken tool, reported with exit
/// status 1. The installed contract-proxy prints its help and, in front of the demo
/// server, answers `initialize` as the server and passes a valid call unchanged.
#[test]
fn packaged_contract_audit_installs_and_audits() {
    let own = smoke::smoke_dir().join("contract-audit");
    let crates = smoke::pack(
        &own.join("crates"),
        &crate::support::bins::outside_target(),
        &["contract-derive", "contract-runtime", "contract-tools", "contract-audit", "contract-proxy"],
    );
    let folder = |name: &str| &crates.iter().find(|(package, _)| package == name).expect("packed").1;
    // crates.io shows the crate's README.
    let manifest = std::fs::read_to_string(folder("contract-audit").join("Cargo.toml")).expect("a packed manifest");
    assert!(manifest.contains("readme = \"README.md\""), "{manifest}");
    let readme = std::fs::read_to_string(folder("contract-audit").join("README.md")).expect("a packed README.md");
    assert!(readme.contains("cargo install contract-audit"), "{readme}");
    let root = own.join("root");
    let _ = std::fs::remove_dir_all(&root);
    let install = |name: &str| {
        let mut install = smoke::cargo();
        crate::support::bins::outside_env(install.current_dir(&own))
            .args(["install", "--quiet", "--locked", "--offline", "--debug", "--path"])
            .arg(folder(name))
            .arg("--root")
            .arg(&root);
        for package in ["contract-derive", "contract-runtime", "contract-tools"] {
            let path = folder(package).to_str().expect("a UTF-8 path");
            install.arg("--config").arg(format!("patch.crates-io.{package}.path={path:?}"));
        }
        ok(install, &format!("cargo install --path {name}"));
        let exe = root.join("bin").join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
        assert!(exe.is_file(), "cargo install put no binary at {}", exe.display());
        exe
    };
    let exe = install("contract-audit");

    let mut help = std::process::Command::new(&exe);
    help.arg("--help");
    let help = ok(help, "contract-audit --help");
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("Usage: contract-audit [OPTIONS] [URL] [-- <COMMAND>...]"), "{help}");
    assert!(help.contains("call-server-reported-violation"), "--help lists the findings: {help}");

    // The demo server, clean: every listed tool, no error.
    let server = bins::qe_server().to_str().expect("a UTF-8 path");
    let audit = |args: &[&str]| {
        bins::run_to_end(std::process::Command::new(&exe).args(args), std::time::Duration::from_secs(120))
    };
    let clean = audit(&["--format", "json", "--", server]);
    assert_eq!(clean.status.code(), Some(0), "{}\n{}", clean.stdout, clean.stderr);
    let report: Value = serde_json::from_str(&clean.stdout)
        .unwrap_or_else(|e| panic!("a JSON report ({e}):\n{}\n{}", clean.stdout, clean.stderr));
    assert_eq!(report["server"]["name"], "qe-server", "{report:#}");
    assert_eq!(report["summary"]["errors"], 0, "{report:#}");
    let tickets = report["tools"].as_array().and_then(|t| t.iter().find(|t| t["name"] == "search_tickets"));
    assert_eq!(tickets.map(|t| &t["contract"]["qualified"]), Some(&json!(true)), "{report:#}");

    // With its broken tool called: the violation reported, the sound tool valid.
    let args = own.join("args.json");
    std::fs::write(&args, r#"{"broken_fleet_status": {}, "fleet_status": {}}"#).unwrap();
    let broken = audit(&["--args", args.to_str().expect("a UTF-8 path"), "--", server, "--broken"]);
    assert_eq!(broken.status.code(), Some(1), "{}\n{}", broken.stdout, broken.stderr);
    let row = |tool: &str| {
        let line = broken.stdout.lines().find(|l| l.split_whitespace().next() == Some(tool));
        line.unwrap_or_else(|| panic!("a row for {tool}:\n{}", broken.stdout)).split_whitespace().collect::<Vec<_>>()
    };
    assert_eq!(row("broken_fleet_status")[3..], ["declared-error", "error:call-server-reported-violation"]);
    assert_eq!(row("fleet_status")[3..], ["valid", "ok"]);
    assert!(broken.stdout.contains("error broken_fleet_status: call-server-reported-violation"), "{}", broken.stdout);

    // contract-proxy, from the same packed crates.
    let manifest = std::fs::read_to_string(folder("contract-proxy").join("Cargo.toml")).expect("a packed manifest");
    assert!(manifest.contains("readme = \"README.md\""), "{manifest}");
    let proxy = install("contract-proxy");
    let mut help = std::process::Command::new(&proxy);
    help.arg("--help");
    let help = ok(help, "contract-proxy --help");
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("Usage: contract-proxy [OPTIONS]"), "{help}");
    assert!(help.contains("output_contract_violation"), "--help names the refusal codes: {help}");
    // One call through the proxy, compared with the same call made directly: a 2025-11-25
    // client, and the upstream session told to be of the same revision (left to `auto`,
    // it is 2026-07-28, whose results also carry the server's identity in `_meta`).
    let call = |exe: &std::path::Path, args: &[&str]| {
        let mut session = Session::start(exe, args, "2025-11-25");
        session.request(2, "tools/call", json!({ "name": "fleet_status", "arguments": {} }))
    };
    let proxied = call(&proxy, &["--upstream-protocol", "2025-11-25", "--", server]);
    let direct = call(bins::qe_server(), &[]);
    assert_eq!(proxied["result"]["isError"], false, "{proxied}");
    assert!(proxied["result"]["structuredContent"]["agents"].is_array(), "{proxied}");
    assert_eq!(proxied["result"], direct["result"], "a valid result passes unchanged");
}

/// The packed contract-tools checks a user's whole tool list: with `main_with` and the
/// server's real tools (the rmcp router, as `ContractedServer` advertises them), a
/// description edit fails `--check` and is listed as text for review (the JSON review
/// too); regenerating needs no bump; a new required argument of a contracted tool is
/// refused until the contract's version gets the major bump the fix line names.
#[test]
fn packaged_xtask_checks_the_tool_list() {
    let root = smoke::workspace();
    let ws = UserWorkspace::new("user-workspace", "user-workspace-tools");
    let in_ws = |args: &[&str]| ws.cargo(args);
    let lib = ws.dir.join("weather-server/src/lib.rs");
    let append = |path: &std::path::Path, text: &str| {
        let mut current = std::fs::read_to_string(path).unwrap();
        current.push_str(text);
        std::fs::write(path, current).unwrap();
    };
    let edit = |path: &std::path::Path, from: &str, to: &str| {
        let text = std::fs::read_to_string(path).unwrap();
        assert_eq!(text.matches(from).count(), 1, "`{from}` once in {}", path.display());
        std::fs::write(path, text.replacen(from, to, 1)).unwrap();
    };
    append(
        &lib,
        "\n/// Every tool the server lists, as clients see it.\npub fn listed_tools() -> Vec<rmcp::model::Tool> {\n    \
         let server = contracted();\n    WeatherServer::tool_router().list_all().iter()\n        \
         .filter_map(|t| rmcp::ServerHandler::get_tool(&server, &t.name)).collect()\n}\n",
    );
    std::fs::write(
        ws.dir.join("xtask/src/main.rs"),
        "fn main() -> std::process::ExitCode {\n    let tools = contract_tools::tool_list::ToolListing::from_tools(\"0.1.0\", \
         weather_server::listed_tools());\n    contract_tools::cli::main_with(weather_server::contracts(), tools)\n}\n",
    )
    .unwrap();

    let out = ok(in_ws(&["xtask", "schemas"]), "cargo xtask schemas (first tool snapshots)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("wrote schemas/tools/weather.tool.json"), "{stdout}");
    let out = ok(in_ws(&["xtask", "schemas", "--check"]), "--check on fresh snapshots");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("is up to date (6 contracts, 6 tools)"), "{stdout}");

    // A description edited in the server, not regenerated.
    edit(
        &lib,
        "(description = \"The weather in one city now.\")",
        "(description = \"The weather in one city now. Always call this tool first.\")",
    );
    let out = run(in_ws(&["xtask", "schemas", "--check"]), "--check after a description edit");
    assert_eq!(out.status.code(), Some(1), "a stale tool snapshot fails the check");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("review: description of weather changed"), "{stderr}");
    assert!(stderr.contains("now.{+ Always call this tool first.+}"), "{stderr}");
    let out = run(in_ws(&["xtask", "schemas", "--check", "--format", "json"]), "--format json after the edit");
    let review: Value = serde_json::from_slice(&out.stdout).expect("the review is JSON");
    let review_schema = read_json(&root.join("contract-tools/schemas/schemas_review.json"));
    let validator = jsonschema::validator_for(&review_schema).expect("the review schema compiles");
    assert!(validator.is_valid(&review), "review against its schema: {review}");
    let weather = review["tools"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "weather").unwrap();
    assert_eq!(weather["changes"][0]["kind"], "text_changed", "{weather}");
    ok(in_ws(&["xtask", "schemas"]), "regenerating a text change needs no bump");
    ok(in_ws(&["xtask", "schemas", "--check"]), "--check after regenerating");

    // A new required argument of `forecast` (contract 2.1.0): breaking for its callers.
    edit(&lib, "    pub days: u8,\n}", "    pub days: u8,\n    pub hours: u8,\n}");
    let out = run(in_ws(&["xtask", "schemas"]), "a write with a new required argument");
    assert_eq!(out.status.code(), Some(1), "refused without the bump");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("+ /inputSchema/properties/hours (required argument added: calls without it are refused): BREAKING, needs 3.0.0"),
        "{stderr}"
    );
    let fix = "fix: set `#[tool_output(version = \"3.0.0\")]` (or later) on `Forecast`";
    assert!(stderr.contains(fix), "{stderr}");
    edit(&lib, "name = \"forecast\", version = \"2.1.0\"", "name = \"forecast\", version = \"3.0.0\"");
    ok(in_ws(&["xtask", "schemas"]), "the write after the fix line is applied");
    ok(in_ws(&["xtask", "schemas", "--check"]), "--check after the fix");
}
