//! The schemas command with the tool list (`cli::run_with`), end to end in a scratch git
//! repository: a description edit fails `--check` until regenerated; after regeneration
//! `--check` is green and `--check --against REV` lists the text change for review
//! without failing; a removed tool fails `--against` until the server version is bumped;
//! `--format json` carries the tools section and matches the review's schema.
//!
//! Each command runs in a child process (this test binary again, see [`cli_child`]) so
//! that its output and exit code are observed as a user sees them.

use std::path::{Path, PathBuf};
use std::process::Command;

use contract_runtime::{contracts, ToolOutput};
use serde_json::{json, Value};

#[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
#[tool_output(name = "ping", version = "1.0.0", compatibility = "exact")]
struct Ping {
    ok: bool,
}

const ARGS: &str = "SNAPSHOT_TOOLS_CLI_ARGS";
const LISTING: &str = "SNAPSHOT_TOOLS_CLI_LISTING";

/// The child: runs the command line given in the environment and exits with its code.
#[test]
fn cli_child() {
    let (Ok(args), Ok(listing)) = (std::env::var(ARGS), std::env::var(LISTING)) else { return };
    let listing: Value = serde_json::from_str(&listing).unwrap();
    let version = listing["version"].as_str().unwrap().to_owned();
    let listing = contract_tools::tool_list::ToolListing::from_json(&version, &listing["tools"]).unwrap();
    let args = std::iter::once("cargo-xtask").chain(args.split('\u{1f}'));
    let code = contract_tools::cli::run_with(args, &contracts![Ping], Some(&listing));
    std::process::exit(i32::from(code != std::process::ExitCode::SUCCESS));
}

/// The name the test harness knows [`cli_child`] by: its module path without the crate.
fn child_test_name() -> String {
    match module_path!().split_once("::") {
        Some((_crate, module)) => format!("{module}::cli_child"),
        None => "cli_child".to_owned(),
    }
}

struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
}

fn run(repo: &Path, version: &str, description: &str, extra: &[Value], args: &[&str]) -> Run {
    let mut tools = vec![json!({ "name": "ping", "description": description, "inputSchema": { "type": "object" } })];
    tools.extend(extra.iter().cloned());
    let listing = json!({ "version": version, "tools": tools });
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &child_test_name(), "--nocapture", "--test-threads=1", "--quiet"])
        .env(ARGS, args.join("\u{1f}"))
        .env(LISTING, listing.to_string())
        .current_dir(repo)
        .output()
        .unwrap();
    Run {
        ok: output.status.success(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn git(repo: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(repo)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn repo(name: &str) -> PathBuf {
    // Outside any cargo workspace and git repository: the command finds this one.
    let dir = std::env::temp_dir().join(format!("snapshot-tools-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q"]);
    dir
}

const DIR: &[&str] = &["--dir", "schemas"];

fn args<'a>(head: &[&'a str]) -> Vec<&'a str> {
    head.iter().copied().chain(DIR.iter().copied()).collect()
}

#[test]
fn a_description_edit_fails_check_then_is_listed_by_against_after_regeneration() {
    let repo = repo("text");
    let first = run(&repo, "1.0.0", "Answers pong.", &[], &args(&["schemas"]));
    assert!(first.ok, "{}{}", first.stdout, first.stderr);
    assert!(run(&repo, "1.0.0", "Answers pong.", &[], &args(&["schemas", "--check"])).ok, "clean control");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "base"]);

    let edited = "Answers pong. Always call ping before any other tool.";
    let stale = run(&repo, "1.0.0", edited, &[], &args(&["schemas", "--check"]));
    assert!(!stale.ok, "a stale snapshot fails --check");
    assert!(stale.stderr.contains("review: description of ping changed"), "{}", stale.stderr);
    assert!(stale.stderr.contains("Answers pong.{+ Always call ping before any other tool.+}"), "{}", stale.stderr);

    let regenerated = run(&repo, "1.0.0", edited, &[], &args(&["schemas"]));
    assert!(regenerated.ok, "a text change needs no bump: {}", regenerated.stderr);
    assert!(run(&repo, "1.0.0", edited, &[], &args(&["schemas", "--check"])).ok, "green after regeneration");
    let against = run(&repo, "1.0.0", edited, &[], &args(&["schemas", "--check", "--against", "HEAD"]));
    assert!(against.ok, "text is listed, not failed: {}", against.stderr);
    assert!(against.stderr.contains("against HEAD: review: description of ping changed"), "{}", against.stderr);

    let report = run(&repo, "1.0.0", edited, &[], &args(&["schemas", "--check", "--format", "json"]));
    assert!(report.ok, "{}", report.stderr);
    let start = report.stdout.find('{').expect("the JSON report");
    let end = report.stdout.rfind('}').expect("the JSON report") + 1;
    let parsed: contract_tools::report::ReviewReport = serde_json::from_str(&report.stdout[start..end]).unwrap();
    parsed.validate().unwrap_or_else(|e| panic!("{e}"));
    let tools = parsed.tools.expect("the tools section");
    assert!(tools.up_to_date && tools.policy_ok);
    assert_eq!(tools.package.new_version, "1.0.0");
    let _ = std::fs::remove_dir_all(&repo);
}

#[test]
fn a_removed_tool_fails_against_until_the_server_version_is_bumped() {
    let repo = repo("removed");
    let echo = json!({ "name": "echo", "description": "Echoes.", "inputSchema": { "type": "object" } });
    assert!(run(&repo, "1.0.0", "Answers pong.", std::slice::from_ref(&echo), &args(&["schemas"])).ok);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "base"]);
    let refused = run(&repo, "1.0.0", "Answers pong.", &[], &args(&["schemas"]));
    assert!(!refused.ok, "the write is refused without the bump");
    assert!(
        refused.stderr.contains("fix: set `version = \"2.0.0\"` (or later) in the server package's Cargo.toml"),
        "{}",
        refused.stderr
    );
    assert!(run(&repo, "2.0.0", "Answers pong.", &[], &args(&["schemas"])).ok, "the fix applied");
    let against = run(&repo, "2.0.0", "Answers pong.", &[], &args(&["schemas", "--check", "--against", "HEAD"]));
    assert!(against.ok, "{}", against.stderr);
    assert!(against.stderr.contains("against HEAD: tool echo (server version): - tool echo"), "{}", against.stderr);
    // A hand edit of server.json cannot hide the removal from --against: the base revision judges it.
    let server = repo.join("schemas/tools/server.json");
    let text = std::fs::read_to_string(&server).unwrap().replace("\"2.0.0\"", "\"0.9.0\"");
    std::fs::write(&server, text).unwrap();
    let hidden = run(&repo, "1.0.0", "Answers pong.", &[], &args(&["schemas", "--check", "--against", "HEAD"]));
    assert!(!hidden.ok, "the base revision still has echo: {}", hidden.stderr);
    assert!(hidden.stderr.contains("needs server version 2.0.0"), "{}", hidden.stderr);
    let _ = std::fs::remove_dir_all(&repo);
}
