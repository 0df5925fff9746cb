//! `cargo xtask ci`: every check CI runs, in the order that fails fastest.

use std::process::{Command, ExitCode, Stdio};

use crate::run_cmd;

pub(crate) fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(2).collect();
    if !args.is_empty() {
        eprintln!("`ci` takes no arguments, got `{}`", args.join(" "));
        return ExitCode::from(2);
    }
    match run() {
        Ok(()) => {
            println!("ci: all checks passed");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    run_cmd("cargo", &["fmt", "--all", "--", "--check"])?;
    eprintln!("$ cargo xtask references");
    match crate::references::run()? {
        0 => {}
        found => return Err(format!("{found} line(s) cite documents outside the repository; write the fact instead")),
    }
    eprintln!("$ cargo xtask circles");
    match crate::circles::run()? {
        0 => {}
        found => return Err(format!("{found} module circle(s); move the shared piece into a module of its own")),
    }
    // What the tests need from the network and the system (the pinned MCP clients and
    // servers from npm and PyPI, `redis-server` from Debian's packages) installs while the
    // checks and the build run: it waits on the network, they on the CPU.
    let installs = Installs::start()?;
    run_cmd("cargo", &["clippy", "--workspace", "--all-targets", "--all-features", "--", "-D", "warnings"])?;
    // Broken intra-doc links and other rustdoc warnings fail the build too.
    crate::run_cmd_env(
        "cargo",
        &[
            "doc",
            "--no-deps",
            "--all-features",
            "-p",
            "contract-runtime",
            "-p",
            "contract-derive",
            "-p",
            "contract-tools",
        ],
        &[("RUSTDOCFLAGS", "-D warnings")],
    )?;
    run_tests(installs)
}

/// Every test of the workspace. With cargo-nextest installed (it is on the CI machine),
/// the test binaries run side by side, each test in a process of its own, grouped by
/// `.config/nextest.toml` where tests share a folder; doc tests, which nextest does not
/// run, follow with `cargo test --doc`. Without it, `cargo test` runs everything.
fn run_tests(installs: Installs) -> Result<(), String> {
    let nextest = Command::new("cargo")
        .args(["nextest", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !nextest {
        installs.wait()?;
        run_cmd("cargo", &["xtask", "schemas", "--check"])?;
        eprintln!("ci: cargo-nextest is not installed; running the tests with `cargo test`");
        return run_cmd("cargo", &["test", "--workspace", "--all-features"]);
    }
    let bins = build_bins()?;
    // The main job, `cargo xtask schemas --check`, on the binary the build just made:
    // no build of its own.
    let schemas = bins
        .get("qe-schemas")
        .and_then(serde_json::Value::as_str)
        .ok_or("the workspace build made no `qe-schemas` binary")?;
    run_cmd(schemas, &["schemas", "--check"])?;
    installs.wait()?;
    crate::run_cmd_env(
        "cargo",
        &["nextest", "run", "--workspace", "--all-features", "--no-fail-fast"],
        &[("CONTRACT_TESTS_BINS", &serde_json::Value::Object(bins).to_string())],
    )?;
    run_cmd("cargo", &["test", "--doc", "--workspace", "--all-features"])
}

/// Builds the workspace's binaries once, with the test run's packages and features (as
/// the tests' own `support::bins` would in each test process), and returns them, name to
/// path: the tests read them as a JSON object from `CONTRACT_TESTS_BINS`.
fn build_bins() -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let args = ["build", "--workspace", "--exclude", "xtask", "--all-features", "--tests", "--bins"];
    eprintln!("$ cargo {}", args.join(" "));
    let out = Command::new("cargo")
        .args(args)
        .arg("--message-format=json-render-diagnostics")
        .current_dir(crate::project_root())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run `cargo build`: {e}"))?;
    if !out.status.success() {
        return Err(format!("`cargo {}` failed ({})", args.join(" "), out.status));
    }
    let mut bins = serde_json::Map::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        let is_bin = message["reason"] == "compiler-artifact"
            && message["profile"]["test"] == false
            && message["target"]["kind"].as_array().is_some_and(|kinds| kinds.iter().any(|kind| kind == "bin"));
        if let (true, Some(name), Some(exe)) =
            (is_bin, message["target"]["name"].as_str(), message["executable"].as_str())
        {
            bins.insert(name.to_owned(), exe.into());
        }
    }
    Ok(bins)
}

/// The installs the tests need, running beside the checks and the build.
struct Installs(Vec<(&'static str, std::process::Child)>);

impl Installs {
    fn start() -> Result<Self, String> {
        let spawn = |what: &'static str, args: &[&str]| {
            eprintln!("$ bash {} &", args.join(" "));
            Command::new("bash")
                .args(args)
                .current_dir(crate::project_root())
                .spawn()
                .map(|child| (what, child))
                .map_err(|e| format!("cannot run `bash` for {what}: {e}"))
        };
        Ok(Self(vec![
            // The interop tests drive the official TypeScript and Python MCP clients, the
            // pinned versions (idempotent, and fast when they are already there).
            spawn("tests/interop/install.sh", &["tests/interop/install.sh"])?,
            // The Redis cache tests start their own `redis-server` on a free port; on a fresh
            // Debian machine (as root, as CI runs) the package is installed here.
            spawn(
                "redis-server",
                &[
                    "-c",
                    "command -v redis-server >/dev/null 2>&1 || { apt-get update -qq && \
                     DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server; }",
                ],
            )?,
        ]))
    }

    /// Waits for every install; fails on the first that failed.
    fn wait(mut self) -> Result<(), String> {
        for (what, child) in &mut self.0 {
            let status = child.wait().map_err(|e| format!("waiting for {what}: {e}"))?;
            if !status.success() {
                return Err(format!("installing {what} failed ({status})"));
            }
        }
        self.0.clear();
        Ok(())
    }
}

impl Drop for Installs {
    /// A check that failed first leaves no install running behind it.
    fn drop(&mut self) {
        for (_, child) in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
