//! The TypeScript walkthrough of `tool-contracts-cli/README.md` ("A TypeScript server from
//! zero"), run as written: its zod expression, its emit script, its `contracts.json` and
//! its commands are read from the README itself and run in a fresh project with the
//! pinned zod; the printed output is compared with the README's; the proxy command is
//! driven by the official TypeScript SDK v2 client through a client configuration; the
//! CI command is run in a git repository, then after a breaking change, then with the
//! fix it prints applied.

use crate::support::bins;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

const DEADLINE: Duration = Duration::from_secs(120);

fn readme() -> String {
    std::fs::read_to_string(bins::root().join("tool-contracts-cli/README.md")).unwrap()
}

/// The text of the README's section that starts with the heading `heading`.
fn section<'a>(readme: &'a str, heading: &str) -> &'a str {
    let start = readme.find(heading).unwrap_or_else(|| panic!("the README has a section `{heading}`"));
    let rest = &readme[start + heading.len()..];
    let end = rest.find("\n### ").or_else(|| rest.find("\n## ")).unwrap_or(rest.len());
    &rest[..end]
}

/// The first fenced block of `lang` in `text`.
fn block<'a>(text: &'a str, lang: &str) -> &'a str {
    let open = format!("```{lang}\n");
    let start = text.find(&open).unwrap_or_else(|| panic!("a ```{lang} block in:\n{text}")) + open.len();
    let end = text[start..].find("```").unwrap();
    &text[start..start + end]
}

/// The `$ tool-contracts …` command lines of a console block, as arguments.
fn commands(console: &str) -> Vec<Vec<String>> {
    console
        .lines()
        .filter_map(|line| line.strip_prefix("$ tool-contracts "))
        .map(|line| line.split_whitespace().map(str::to_owned).collect())
        .collect()
}

fn run(project: &Path, program: &Path, args: &[String]) -> (i32, String, String) {
    let out = bins::run_to_end(Command::new(program).args(args).current_dir(project), DEADLINE);
    (out.status.code().unwrap_or(-1), out.stdout, out.stderr)
}

fn git(project: &Path, args: &[&str]) {
    let out = bins::run_to_end(
        Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(project),
        DEADLINE,
    );
    assert!(out.status.success(), "git {args:?}: {}", out.stderr);
}

/// A fresh project: the pinned packages, ESM, and the README's zod result type.
fn project(readme: &str) -> PathBuf {
    bins::server_everything(); // installs tests/interop/node_modules (zod, the SDKs)
    let dir = std::env::temp_dir().join(format!("tool-contracts-walkthrough-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::os::unix::fs::symlink(bins::root().join("tests/interop/node_modules"), dir.join("node_modules")).unwrap();
    std::fs::write(dir.join("package.json"), r#"{"type": "module", "private": true}"#).unwrap();
    let step = section(readme, "### 1. Emit the result's JSON Schema");
    let sentence = step.find("If `CoverageGaps` is\n`").expect("the README names the zod schema");
    let expression = step[sentence..].split('`').nth(3).expect("the zod expression in backticks");
    assert!(expression.starts_with("z.object("), "{expression}");
    std::fs::write(
        dir.join("src/results.js"),
        format!("import {{ z }} from 'zod';\nexport const CoverageGaps = {expression};\n"),
    )
    .unwrap();
    dir
}

#[test]
fn the_typescript_walkthrough_runs_as_written() {
    let readme = readme();
    let dir = project(&readme);
    let tc = bins::tool_contracts();

    // 1. The emit script, as written.
    let step = section(&readme, "### 1. Emit the result's JSON Schema");
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(dir.join("scripts/emit-schemas.mjs"), block(step, "js")).unwrap();
    let out = bins::run_to_end(Command::new("node").arg("scripts/emit-schemas.mjs").current_dir(&dir), DEADLINE);
    assert!(out.status.success(), "the emit script: {}", out.stderr);
    let emitted: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("contracts/src/coverage_gaps.json")).unwrap()).unwrap();
    assert!(emitted["$schema"].as_str().unwrap().contains("2020-12"), "{emitted:#}");

    // 2. contracts.json, as written.
    let step = section(&readme, "### 2. Declare the contract in `contracts/contracts.json`");
    std::fs::write(dir.join("contracts/contracts.json"), block(step, "json")).unwrap();

    // 3. The command and what it prints.
    let step = section(&readme, "### 3. Write the folder");
    let console = block(step, "console");
    let mut expected = console.lines().filter(|l| !l.starts_with('$')).collect::<Vec<_>>().join("\n");
    expected.push('\n');
    for args in commands(console) {
        let (code, stdout, stderr) = run(&dir, tc, &args);
        assert_eq!(code, 0, "{args:?}: {stdout}\n{stderr}");
        assert_eq!(stdout, expected, "what `tool-contracts {}` prints", args.join(" "));
    }

    // 4. The proxy command in front of a server whose tool answers as the README says.
    let step = section(&readme, "### 4. Enforce it in front of the server");
    let proxy_args = commands(block(step, "console")).remove(0);
    assert_eq!(proxy_args.last().map(String::as_str), Some("dist/server.js"), "{proxy_args:?}");
    let gaps = json!({ "gaps": [{ "file": "src/a.ts", "line": 3, "severity": "high" }], "total": 1 });
    let broken = json!({ "gaps": [{ "file": "src/a.ts", "line": 0, "severity": "high" }], "total": 1 });
    let answer = |value: &Value| json!({ "content": [{ "type": "text", "text": value.to_string() }], "structuredContent": value });
    let input = json!({ "type": "object", "properties": {} });
    std::fs::write(
        dir.join("tools.json"),
        json!([
            { "tool": { "name": "coverage_gaps", "inputSchema": input }, "answer": answer(&gaps) },
            { "tool": { "name": "coverage_gaps_next", "inputSchema": input }, "answer": answer(&broken) },
        ])
        .to_string(),
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("dist")).unwrap();
    let fixture = bins::root().join("tests/interop/fixture_server.mjs");
    std::fs::write(
        dir.join("dist/server.js"),
        format!(
            "process.argv[2] = new URL('../tools.json', import.meta.url).pathname;\nawait import({:?});\n",
            fixture.display().to_string()
        ),
    )
    .unwrap();
    let mut args = proxy_args.clone();
    // `--bind`, as the README says, gives the contract to the tool of another name.
    args.splice(1..1, ["--bind".to_owned(), "coverage_gaps_next=coverage_gaps".to_owned()]);
    let config = json!({ "mcpServers": { "s": { "command": tc, "args": args } } });
    std::fs::write(dir.join("client.json"), config.to_string()).unwrap();
    let client = |tool: &str| {
        let out = bins::run_to_end(
            Command::new("node")
                .arg(bins::root().join("tests/interop/packages/config_client.mjs"))
                .args(["client.json", "s", tool])
                .current_dir(&dir),
            DEADLINE,
        );
        assert!(out.status.success(), "{tool}: {}\n{}", out.stdout, out.stderr);
        serde_json::from_str::<Value>(out.stdout.lines().last().unwrap()).unwrap()
    };
    let ok = client("coverage_gaps");
    assert_eq!(ok["result"]["structuredContent"], gaps, "{ok:#}");
    assert_eq!(ok["definitions"]["coverage_gaps"]["outputSchema"]["required"], json!(["gaps", "total"]), "advertised");
    let refused = client("coverage_gaps_next");
    assert_eq!(refused["result"]["isError"], true, "{refused:#}");
    let text = refused["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("output_contract_violation") && text.contains("/gaps/0/line"), "{text}");

    // 5. The CI command: clean, then after a breaking change, then with its fix applied.
    let step = section(&readme, "### 5. Keep versions honest in CI");
    let ci = commands(block(step, "console")).remove(0);
    assert!(ci.contains(&"--against".to_owned()), "{ci:?}");
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "contracts"]);
    git(&dir, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
    let (code, stdout, stderr) = run(&dir, tc, &ci);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let results = std::fs::read_to_string(dir.join("src/results.js")).unwrap();
    std::fs::write(
        dir.join("src/results.js"),
        results.replace("total: z.number().int().nonnegative()", "total: z.string()"),
    )
    .unwrap();
    let out = bins::run_to_end(Command::new("node").arg("scripts/emit-schemas.mjs").current_dir(&dir), DEADLINE);
    assert!(out.status.success(), "{}", out.stderr);
    let write = commands(block(section(&readme, "### 3. Write the folder"), "console")).remove(0);
    let (code, _, stderr) = run(&dir, tc, &write);
    assert_eq!(code, 1, "a breaking change without its bump is refused: {stderr}");
    let fix = "fix: set \"version\": \"2.0.0\" (or later) for `coverage_gaps` in contracts/contracts.json";
    assert!(stderr.contains(fix), "{stderr}");
    let mut manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("contracts/contracts.json")).unwrap()).unwrap();
    manifest["coverage_gaps"]["version"] = json!("2.0.0");
    std::fs::write(dir.join("contracts/contracts.json"), manifest.to_string()).unwrap();
    let (code, stdout, stderr) = run(&dir, tc, &write);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let (code, stdout, stderr) = run(&dir, tc, &ci);
    assert_eq!(code, 0, "the bumped change passes CI: {stdout}\n{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
