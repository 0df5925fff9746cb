//! The `tool-contracts` command as a user runs it: the built binary, in a folder of its
//! own. `schemas` makes a contract folder from `contracts.json` and JSON Schema files
//! (hand-written, emitted by the pinned zod and by the pinned pydantic), the folder loads
//! with `ContractSet::load_dir` and is enforced by `tool-contracts proxy --contracts`;
//! `--check`, `--against` and every refusal are run with the fix they print applied, and
//! every bad input beside a clean control. `audit`, `pin` and `proxy` run once each.

use crate::support::bins;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use contract_runtime::ContractSet;
use serde_json::{json, Value};

const DEADLINE: Duration = Duration::from_secs(120);

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tool-contracts-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `tool-contracts args…` in `cwd`: (exit code, stdout, stderr).
fn tc(cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let out = bins::run_to_end(Command::new(bins::tool_contracts()).args(args).current_dir(cwd), DEADLINE);
    (out.status.code().unwrap_or(-1), out.stdout, out.stderr)
}

fn tcs(cwd: &Path, args: &[String]) -> (i32, String, String) {
    tc(cwd, &args.iter().map(String::as_str).collect::<Vec<_>>())
}

fn write_json(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A hand-written result schema: a count and a status.
fn report_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "count": { "type": "integer", "minimum": 0 },
            "status": { "type": "string", "enum": ["ok", "degraded"] },
        },
        "required": ["count", "status"],
    })
}

/// `root/contracts/` with one contract `report` (exact, 1.0.0) from `src/report.json`.
fn report_folder(root: &Path) -> PathBuf {
    let dir = root.join("contracts");
    write_json(
        &dir.join("contracts.json"),
        &json!({ "report": { "version": "1.0.0", "compatibility": "exact", "schema": "src/report.json" } }),
    );
    write_json(&dir.join("src/report.json"), &report_schema());
    dir
}

fn set_version(dir: &Path, name: &str, version: &str) {
    let mut manifest = read_json(&dir.join("contracts.json"));
    manifest[name]["version"] = json!(version);
    write_json(&dir.join("contracts.json"), &manifest);
}

/// The version a `fix: set "version": "X" (or later) for `name`` line names.
fn fixed_version(stderr: &str, name: &str) -> String {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("fix: set \"version\": ") && l.contains(&format!("for `{name}`")))
        .unwrap_or_else(|| panic!("a fix line for {name}:\n{stderr}"));
    line.split('"').nth(3).unwrap().to_owned()
}

// ------------------------------------------------------------------ the command

#[test]
fn version_and_help_of_each_subcommand_show_their_example() {
    let cwd = scratch("help");
    let (code, out, _) = tc(&cwd, &["--version"]);
    assert_eq!((code, out.trim()), (0, format!("tool-contracts {}", env!("CARGO_PKG_VERSION")).as_str()));
    let (code, out, _) = tc(&cwd, &["--help"]);
    assert_eq!(code, 0, "{out}");
    for line in
        ["Exit status, the same for every subcommand:", "  0  done", "  1  a finding or check failed", "  2  usage"]
    {
        assert!(out.contains(line), "top-level help has `{line}`:\n{out}");
    }
    for (sub, example) in [
        ("audit", "tool-contracts audit -- node dist/server.js"),
        ("pin", "tool-contracts pin --lock tools.lock.json -- node dist/server.js"),
        ("proxy", "tool-contracts proxy --contracts contracts --lock tools.lock.json -- node dist/server.js"),
        ("schemas", "tool-contracts schemas --check --against origin/main"),
    ] {
        let (code, out, err) = tc(&cwd, &[sub, "--help"]);
        assert_eq!(code, 0, "{sub} --help: {err}");
        assert!(out.contains(example), "{sub} --help shows `{example}`:\n{out}");
        assert!(out.contains("Exit status"), "{sub} --help lists its exit status:\n{out}");
    }
    // A usage error exits 2, and so does no subcommand at all.
    assert_eq!(tc(&cwd, &["schemas", "--against", "HEAD"]).0, 2, "--against needs --check");
    assert_eq!(tc(&cwd, &[]).0, 2);
}

// ------------------------------------------------------------------ schemas → load_dir → proxy

/// The proxy on raw JSON-RPC lines.
struct Session {
    child: std::process::Child,
    lines: mpsc::Receiver<Value>,
    next: u64,
}

impl Session {
    fn start(argv: &[String]) -> Self {
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn the proxy");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(value) = serde_json::from_str::<Value>(&line) {
                    let _ = tx.send(value);
                }
            }
        });
        let mut session = Self { child, lines, next: 1 };
        session.request(
            "initialize",
            &json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "raw", "version": "0" } }),
        );
        session.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        session
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: &Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let message = self.lines.recv_timeout(DEADLINE).unwrap_or_else(|_| panic!("no answer to {method}"));
            if message["id"] == json!(id) {
                return message["result"].clone();
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The error object of an `isError` result's text block.
fn error_of(result: &Value) -> Value {
    assert_eq!(result["isError"], true, "an error result: {result:#}");
    let text = result["content"][0]["text"].as_str().unwrap();
    serde_json::from_str::<Value>(text).unwrap()["error"].clone()
}

#[test]
fn a_hand_written_folder_is_written_loaded_and_enforced_by_the_proxy() {
    let root = scratch("proxy");
    let dir = report_folder(&root);
    // DIR defaults to contracts/.
    let (code, out, err) = tc(&root, &["schemas"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("wrote contracts/report.json") && out.contains("wrote contracts/inventory.json"), "{out}");
    // The canonical file, beside the untouched sources.
    let canonical = std::fs::read_to_string(dir.join("report.json")).unwrap();
    assert_eq!(canonical, contract_runtime::schema::canonical_string(&serde_json::from_str(&canonical).unwrap()));
    assert_eq!(read_json(&dir.join("src/report.json")), report_schema());
    let inventory = read_json(&dir.join("inventory.json"));
    assert_eq!(inventory["contracts"][0]["name"], "report");
    assert_eq!(inventory["contracts"][0]["type"], "src/report.json");

    let set = ContractSet::load_dir(&dir).unwrap_or_else(|e| panic!("load_dir reads the folder: {e}"));
    let contract = set.get("report").unwrap();
    assert!(contract.is_valid(&json!({ "count": 3, "status": "ok" })));
    assert!(!contract.is_valid(&json!({ "count": 3 })), "status is required");
    assert!(!contract.is_valid(&json!({ "count": 3, "status": "ok", "extra": 1 })), "closed under exact");

    // The proxy in front of a TypeScript SDK server whose tools publish no outputSchema.
    bins::server_everything(); // installs the pinned SDK the fixture runs on
    let tools = root.join("tools.json");
    let tool = |name: &str| json!({ "name": name, "inputSchema": { "type": "object" } });
    let answer = |value: Value| json!({ "content": [{ "type": "text", "text": value.to_string() }], "structuredContent": value });
    write_json(
        &tools,
        &json!([
            { "tool": tool("report"), "answer": answer(json!({ "count": 3 })) },
            { "tool": tool("report_ok"), "answer": answer(json!({ "count": 3, "status": "ok" })) },
        ]),
    );
    let server = bins::root().join("tests/interop/fixture_server.mjs");
    let argv: Vec<String> = [
        bins::tool_contracts().to_str().unwrap(),
        "proxy",
        "--contracts",
        dir.to_str().unwrap(),
        "--bind",
        "report_ok=report",
        "--",
        "node",
        server.to_str().unwrap(),
        tools.to_str().unwrap(),
    ]
    .map(str::to_owned)
    .to_vec();
    let mut session = Session::start(&argv);
    let listed = session.request("tools/list", &json!({}));
    let report = listed["tools"].as_array().unwrap().iter().find(|t| t["name"] == "report").unwrap().clone();
    assert_eq!(report["outputSchema"], serde_json::from_str::<Value>(&canonical).unwrap(), "{report:#}");
    let refused = session.request("tools/call", &json!({ "name": "report", "arguments": {} }));
    let error = error_of(&refused);
    assert_eq!(error["code"], "output_contract_violation", "{refused:#}");
    assert!(error["violations"].to_string().contains("\\\"status\\\" is a required property"), "{refused:#}");
    // Control: the conforming result passes unchanged.
    let passed = session.request("tools/call", &json!({ "name": "report_ok", "arguments": {} }));
    assert_eq!(passed["structuredContent"], json!({ "count": 3, "status": "ok" }), "{passed:#}");
    assert_ne!(passed["isError"], true);
}

// ------------------------------------------------------------------ zod and pydantic

/// A schema emitted by the pinned zod 4 (`z.toJSONSchema`), run with node.
fn zod_schema(root: &Path) -> Value {
    bins::server_everything(); // installs tests/interop/node_modules, zod with it
    let script = root.join("emit.mjs");
    let package = bins::root().join("tests/interop/package.json");
    std::fs::write(
        &script,
        format!(
            "import {{ createRequire }} from 'node:module';
const {{ z }} = createRequire({package:?})('zod');
const Gap = z.object({{ file: z.string(), line: z.number().int().min(1), severity: z.enum(['low', 'high']) }});
const Gaps = z.object({{ gaps: z.array(Gap), total: z.number().int().nonnegative(), note: z.string().optional() }});
console.log(JSON.stringify(z.toJSONSchema(Gaps)));
",
            package = package.display().to_string()
        ),
    )
    .unwrap();
    let out = bins::run_to_end(Command::new("node").arg(&script), DEADLINE);
    assert!(out.status.success(), "zod: {}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap()
}

/// A schema emitted by the pinned pydantic (`model_json_schema`), run in tests/interop/.venv.
fn pydantic_schema() -> Value {
    bins::server_everything(); // installs tests/interop/.venv, pydantic with it
    let python = bins::root().join("tests/interop/.venv/bin/python");
    let script = "
import json
from typing import Literal, Optional
from pydantic import BaseModel, Field
class Gap(BaseModel):
    file: str
    line: int = Field(ge=1)
    severity: Literal['low', 'high']
class Gaps(BaseModel):
    gaps: list[Gap]
    total: int = Field(ge=0)
    note: Optional[str] = None
print(json.dumps(Gaps.model_json_schema()))
";
    let out = bins::run_to_end(Command::new(python).args(["-c", script]), DEADLINE);
    assert!(out.status.success(), "pydantic: {}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap()
}

#[test]
fn schemas_emitted_by_zod_and_pydantic_become_contracts() {
    let root = scratch("emitted");
    let dir = root.join("contracts");
    let zod = zod_schema(&root);
    let pydantic = pydantic_schema();
    assert!(zod["$schema"].as_str().unwrap().contains("2020-12"), "zod emits 2020-12: {zod:#}");
    assert!(pydantic["$defs"]["Gap"].is_object(), "pydantic emits $defs: {pydantic:#}");
    write_json(&dir.join("src/gaps.zod.json"), &zod);
    write_json(&dir.join("src/gaps.pydantic.json"), &pydantic);
    write_json(
        &dir.join("contracts.json"),
        &json!({
            "qe/coverage_gaps": { "version": "1.0.0", "compatibility": "exact", "schema": "src/gaps.zod.json" },
            "py_gaps": { "version": "0.3.0", "compatibility": "additive", "schema": "src/gaps.pydantic.json" },
        }),
    );
    let (code, out, err) = tc(&root, &["schemas", "contracts"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("wrote contracts/qe__coverage_gaps.json"), "a `/` is written `__`: {out}");
    assert!(out.contains("wrote contracts/py_gaps.json"), "{out}");
    let set = ContractSet::load_dir(&dir).unwrap_or_else(|e| panic!("{e}"));
    let good = json!({ "gaps": [{ "file": "a.ts", "line": 3, "severity": "high" }], "total": 1 });
    let bad_enum = json!({ "gaps": [{ "file": "a.ts", "line": 3, "severity": "medium" }], "total": 1 });
    let bad_bound = json!({ "gaps": [], "total": -1 });
    let extra = json!({ "gaps": [{ "file": "a.ts", "line": 3, "severity": "low", "col": 2 }], "total": 1 });
    for name in ["qe/coverage_gaps", "py_gaps"] {
        let contract = set.get(name).unwrap();
        assert!(contract.is_valid(&good), "{name} accepts a conforming result");
        assert!(contract.is_valid(&json!({ "gaps": [], "total": 0, "note": "none" })), "{name}");
        assert!(!contract.is_valid(&bad_enum), "{name} keeps the enum");
        assert!(!contract.is_valid(&bad_bound), "{name} keeps the bound");
    }
    // exact closes every object, nested ones too; additive leaves them open.
    assert!(!set.get("qe/coverage_gaps").unwrap().is_valid(&extra));
    assert!(set.get("py_gaps").unwrap().is_valid(&extra));
    // The pydantic nullable note: null passes, a number does not.
    let py = set.get("py_gaps").unwrap();
    assert!(py.is_valid(&json!({ "gaps": [], "total": 0, "note": null })));
    assert!(!py.is_valid(&json!({ "gaps": [], "total": 0, "note": 5 })));
    let (code, out, err) = tc(&root, &["schemas", "--check", "contracts"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("contracts is up to date (2 contracts)"), "{out}");
}

// ------------------------------------------------------------------ --check and the version policy

#[test]
fn check_fails_on_a_breaking_change_until_the_fix_line_is_applied() {
    let root = scratch("check");
    let dir = report_folder(&root);
    // --check before anything is written fails: the files are missing.
    let (code, _, err) = tc(&root, &["schemas", "--check"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("contracts/report.json is missing (new contract report 1.0.0)"), "{err}");
    assert!(err.contains("run `tool-contracts schemas` and commit"), "{err}");
    assert_eq!(tc(&root, &["schemas"]).0, 0);
    let (code, out, err) = tc(&root, &["schemas", "--check"]);
    assert_eq!(code, 0, "a fresh folder passes: {err}");
    assert!(out.contains("contracts is up to date (1 contracts)"), "{out}");
    let written = std::fs::read_to_string(dir.join("report.json")).unwrap();

    // A breaking source change: `count` becomes a string.
    let mut schema = report_schema();
    schema["properties"]["count"] = json!({ "type": "string" });
    write_json(&dir.join("src/report.json"), &schema);
    let (code, _, err) = tc(&root, &["schemas", "--check"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("contracts/report.json is not up to date"), "{err}");
    assert!(err.contains("report 1.0.0 (unchanged): ") && err.contains("BREAKING, needs 2.0.0"), "{err}");
    assert!(
        err.contains("fix: set \"version\": \"2.0.0\" (or later) for `report` in contracts/contracts.json"),
        "{err}"
    );
    // The JSON review says the same to a bot.
    let (code, out, _) = tc(&root, &["schemas", "--check", "--format", "json"]);
    assert_eq!(code, 1);
    let review: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(review["ok"], false);
    assert_eq!(review["contracts"][0]["policy"], "too_small", "{review:#}");
    assert_eq!(review["contracts"][0]["needs"], "2.0.0", "{review:#}");
    // Writing is refused too, and writes nothing.
    let (code, _, err) = tc(&root, &["schemas"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("nothing was written"), "{err}");
    assert_eq!(std::fs::read_to_string(dir.join("report.json")).unwrap(), written);
    // An additive-only bump is not enough either.
    set_version(&dir, "report", "1.1.0");
    assert_eq!(tc(&root, &["schemas"]).0, 1);

    // The fix line, applied.
    let (_, _, err) = tc(&root, &["schemas", "--check"]);
    let version = fixed_version(&err, "report");
    assert_eq!(version, "2.0.0");
    set_version(&dir, "report", &version);
    let (code, out, err) = tc(&root, &["schemas"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("report 1.0.0 → 2.0.0"), "{out}");
    assert_eq!(tc(&root, &["schemas", "--check"]).0, 0);
    let loaded = ContractSet::load_dir(&dir).unwrap();
    assert_eq!(loaded.get("report").unwrap().version().to_string(), "2.0.0");
    assert!(loaded.get("report").unwrap().is_valid(&json!({ "count": "3", "status": "ok" })));

    // A new optional field in an object `exact` closes is breaking too (a client that
    // holds the closed schema refuses the key); the refusal's fix line, applied.
    schema["properties"]["detail"] = json!({ "type": "string" });
    write_json(&dir.join("src/report.json"), &schema);
    let (code, _, err) = tc(&root, &["schemas"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("+ /properties/detail (optional, closed object): BREAKING, needs 3.0.0"), "{err}");
    let version = fixed_version(&err, "report");
    assert_eq!(version, "3.0.0", "{err}");
    set_version(&dir, "report", &version);
    assert_eq!(tc(&root, &["schemas"]).0, 0);
    assert_eq!(tc(&root, &["schemas", "--check"]).0, 0);
}

fn git(dir: &Path, args: &[&str]) {
    let out = bins::run_to_end(
        Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .current_dir(dir),
        DEADLINE,
    );
    assert!(out.status.success(), "git {args:?}: {}", out.stderr);
}

#[test]
fn against_judges_every_change_since_a_git_revision() {
    let root = scratch("against");
    let dir = report_folder(&root);
    git(&root, &["init", "-q"]);
    assert_eq!(tc(&root, &["schemas"]).0, 0);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "contracts 1.0.0"]);
    let (code, _, err) = tc(&root, &["schemas", "--check", "--against", "HEAD"]);
    assert_eq!(code, 0, "nothing changed since HEAD: {err}");
    assert!(err.contains("against HEAD: every change since HEAD is covered"), "{err}");

    // A breaking change hidden by writing the folder afresh: the local check cannot see
    // it (no old version), the base revision can.
    let mut schema = report_schema();
    schema["required"] = json!(["count"]);
    write_json(&dir.join("src/report.json"), &schema);
    std::fs::remove_file(dir.join("report.json")).unwrap();
    std::fs::remove_file(dir.join("inventory.json")).unwrap();
    assert_eq!(tc(&root, &["schemas"]).0, 0, "a fresh folder is written");
    assert_eq!(tc(&root, &["schemas", "--check"]).0, 0, "and is up to date on its own");
    let (code, _, err) = tc(&root, &["schemas", "--check", "--against", "HEAD"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("against HEAD: report 1.0.0 (unchanged): ") && err.contains("BREAKING, needs 2.0.0"), "{err}");
    // Run from elsewhere, with the folder's path: the same verdict.
    let (code, _, _) = tc(&std::env::temp_dir(), &["schemas", "--check", "--against", "HEAD", dir.to_str().unwrap()]);
    assert_eq!(code, 1);

    set_version(&dir, "report", "2.0.0");
    assert_eq!(tc(&root, &["schemas"]).0, 0);
    let (code, _, err) = tc(&root, &["schemas", "--check", "--against", "HEAD"]);
    assert_eq!(code, 0, "the bump covers the change: {err}");

    let (code, _, err) = tc(&root, &["schemas", "--check", "--against", "no-such-rev"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("`--against no-such-rev`: not a git revision here"), "{err}");
}

// ------------------------------------------------------------------ lints and bad input

#[test]
fn a_silent_any_is_refused_with_its_pointer_until_declared_opaque() {
    let root = scratch("opaque");
    let dir = report_folder(&root);
    let mut schema = report_schema();
    schema["properties"]["raw"] = json!({ "description": "whatever the upstream API returned" });
    write_json(&dir.join("src/report.json"), &schema);
    let (code, _, err) = tc(&root, &["schemas"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("contracts/src/report.json: at `/properties/raw`: accepts any JSON value (a silent `{}`)"),
        "{err}"
    );
    assert!(err.contains("declare `/raw` opaque"), "{err}");
    assert!(!dir.join("inventory.json").exists(), "nothing was written");

    // The fix, applied: the instance pointer in the contract's `opaque` list.
    let mut manifest = read_json(&dir.join("contracts.json"));
    manifest["report"]["opaque"] = json!(["/raw"]);
    write_json(&dir.join("contracts.json"), &manifest);
    let (code, out, err) = tc(&root, &["schemas"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(read_json(&dir.join("inventory.json"))["contracts"][0]["opaque"], json!(["/raw"]));
    let set = ContractSet::load_dir(&dir).unwrap();
    let contract = set.get("report").unwrap();
    assert!(contract.is_valid(&json!({ "count": 1, "status": "ok", "raw": { "any": [1, "thing"] } })));
    assert!(!contract.is_valid(&json!({ "count": 1, "status": "ok", "other": 1 })), "the rest stays closed");

    // A pointer that describes nothing is refused, and so is a silent root.
    manifest["report"]["opaque"] = json!(["/raw", "/nowhere"]);
    write_json(&dir.join("contracts.json"), &manifest);
    let (code, _, err) = tc(&root, &["schemas"]);
    assert_eq!(code, 2);
    assert!(err.contains("declares `/nowhere` opaque, but no subschema describes a value"), "{err}");
    manifest["report"].as_object_mut().unwrap().remove("opaque");
    write_json(&dir.join("contracts.json"), &manifest);
    write_json(&dir.join("src/report.json"), &json!({ "description": "anything" }));
    let (code, _, err) = tc(&root, &["schemas"]);
    assert_eq!(code, 2);
    assert!(err.contains("contracts/src/report.json: at the root: the root schema accepts any JSON value"), "{err}");
}

/// Each bad input, applied to a clean folder: the message it must print (file and
/// pointer), and nothing written.
#[test]
fn every_bad_input_is_named_with_its_file_and_pointer() {
    type Break = fn(&Path);
    fn edit(dir: &Path, key: &str, value: Value) {
        let mut manifest = read_json(&dir.join("contracts.json"));
        manifest["report"][key] = value;
        write_json(&dir.join("contracts.json"), &manifest);
    }
    let cases: &[(&str, Break, &str)] = &[
        ("manifest-json", |d| std::fs::write(d.join("contracts.json"), "{\"report\": ").unwrap(), "contracts/contracts.json: line 1 column 11: not valid JSON"),
        ("manifest-missing", |d| std::fs::remove_file(d.join("contracts.json")).unwrap(), "contracts/contracts.json: not found: list each contract there"),
        ("manifest-array", |d| write_json(&d.join("contracts.json"), &json!([])), "contracts/contracts.json: at the root: expected an object mapping each contract name"),
        ("schema-json", |d| std::fs::write(d.join("src/report.json"), "{\"type\": \"object\",}").unwrap(), "contracts/src/report.json: line 1 column 19: not valid JSON"),
        ("schema-array", |d| write_json(&d.join("src/report.json"), &json!([{ "type": "object" }])), "contracts/src/report.json: at the root: expected a JSON Schema object, found an array"),
        ("schema-missing", |d| std::fs::remove_file(d.join("src/report.json")).unwrap(), "contracts/contracts.json: at `/report/schema` (line 4): contracts/src/report.json does not exist"),
        ("compatibility", |d| edit(d, "compatibility", json!("strict")), "contracts/contracts.json: at `/report/compatibility` (line 3): unknown compatibility `strict`"),
        ("semver", |d| edit(d, "version", json!("1.2")), "contracts/contracts.json: at `/report/version` (line 5): `1.2` is not a semver version"),
        ("unknown-key", |d| edit(d, "versions", json!("1.0.0")), "contracts/contracts.json: at `/report/versions` (line 6): unknown key `versions`"),
        ("ref", |d| {
            let mut schema = report_schema();
            schema["properties"]["count"] = json!({ "$ref": "#/$defs/Count" });
            write_json(&d.join("src/report.json"), &schema);
        }, "contracts/src/report.json: at `/properties/count/$ref` (line 4): `#/$defs/Count` does not resolve"),
        ("dialect", |d| {
            let mut schema = report_schema();
            schema["$schema"] = json!("http://json-schema.org/draft-07/schema#");
            write_json(&d.join("src/report.json"), &schema);
        }, "contracts/src/report.json: at `/$schema`: \"http://json-schema.org/draft-07/schema#\" is not JSON Schema 2020-12"),
        ("beside", |d| {
            std::fs::rename(d.join("src/report.json"), d.join("source.json")).unwrap();
            edit(d, "schema", json!("source.json"));
        }, "contracts/source.json sits in contracts itself, where the canonical files are written: move it to a subfolder"),
        ("inventory-name", |d| {
            let mut manifest = read_json(&d.join("contracts.json"));
            manifest["inventory"] = manifest["report"].clone();
            write_json(&d.join("contracts.json"), &manifest);
        }, "contracts/contracts.json: at `/inventory` (line 2): a contract named `inventory` would be written over contracts/inventory.json"),
    ];
    for (name, break_it, expected) in cases {
        let root = scratch(&format!("bad-{name}"));
        let dir = report_folder(&root);
        // The clean control: the same folder, unbroken, is written.
        let (code, _, err) = tc(&root, &["schemas", "--check"]);
        assert_eq!(code, 1, "{name}: the clean folder reads, only its files are missing: {err}");
        break_it(&dir);
        let (code, _, err) = tc(&root, &["schemas"]);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains(expected), "{name}: expected `{expected}` in:\n{err}");
        assert!(err.contains("contracts: nothing was written"), "{name}: {err}");
        assert!(!dir.join("inventory.json").exists(), "{name}: nothing was written");
    }
}

// ------------------------------------------------------------------ audit and pin

#[test]
fn audit_and_pin_run_as_contract_audit_does() {
    bins::server_everything(); // installs the pinned SDK the fixture runs on
    let root = scratch("audit");
    let tools = root.join("tools.json");
    let schema = report_schema();
    write_json(
        &tools,
        &json!([{
            "tool": { "name": "report", "inputSchema": { "type": "object" }, "outputSchema": schema },
            "answer": { "content": [], "structuredContent": { "count": 1, "status": "ok" } },
        }]),
    );
    let server = bins::root().join("tests/interop/fixture_server.mjs");
    let upstream = ["--", "node", server.to_str().unwrap(), tools.to_str().unwrap()];
    let with = |head: &[&str]| -> Vec<String> { head.iter().chain(&upstream).map(|s| (*s).to_owned()).collect() };
    let (code, out, err) = tcs(&root, &with(&["audit", "--format", "json", "--call"]));
    assert!(code == 0 || code == 1, "the audit ran: {err}");
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let audited = report["tools"].as_array().unwrap();
    assert_eq!(audited.len(), 1, "{report:#}");
    assert_eq!(audited[0]["name"], "report");
    // The alias prints the same report for the same server.
    let alias = bins::run_to_end(
        Command::new(bins::contract_audit()).args(with(&["--format", "json", "--call"])).current_dir(&root),
        DEADLINE,
    );
    assert_eq!(alias.status.code(), Some(code));
    assert_eq!(serde_json::from_str::<Value>(&alias.stdout).unwrap(), report);

    let lock = root.join("tools.lock.json");
    let (code, out, err) = tcs(&root, &with(&["pin", "--lock", lock.to_str().unwrap()]));
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(read_json(&lock)["servers"][0]["tools"].to_string().contains("report"), "the lock pins report");
    let (code, out, err) = tcs(&root, &with(&["audit", "--locked", lock.to_str().unwrap()]));
    assert_eq!(code, 0, "the same server matches its pin: {out}\n{err}");
    // An unreadable lock is a run that could not happen: 2.
    std::fs::write(&lock, "not json").unwrap();
    assert_eq!(tcs(&root, &with(&["audit", "--locked", lock.to_str().unwrap()])).0, 2);
}
