//! Binaries and installed servers shared by the tests that spawn them: built or installed
//! once per test process, with deadlines on every wait.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The workspace root.
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ sits in the workspace").to_path_buf()
}

/// The binaries the tests spawn, by name, built once per test process by one
/// `cargo build --workspace --all-features --tests --bin …`: the packages, features and
/// dependency builds of `cargo test --workspace --all-features` (`--tests` turns on the
/// dev-dependencies' features as the test run does), so that in that run the
/// dependencies are fresh and only the binaries themselves are compiled. Building each
/// binary alone, with its package's own features, compiled tokio, rmcp, jsonschema and
/// the runtime again for each feature set.
///
/// `cargo xtask ci` runs that build once before the tests and names the binaries in
/// `CONTRACT_TESTS_BINS` (a JSON object, name to path): under cargo-nextest every test is a
/// process of its own, and each would otherwise run cargo again.
fn workspace_bins() -> &'static BTreeMap<String, PathBuf> {
    static BINS: OnceLock<BTreeMap<String, PathBuf>> = OnceLock::new();
    BINS.get_or_init(|| {
        if let Ok(built) = std::env::var("CONTRACT_TESTS_BINS") {
            let map: BTreeMap<String, PathBuf> =
                serde_json::from_str(&built).expect("CONTRACT_TESTS_BINS is a JSON object of binary paths");
            for path in map.values() {
                assert!(path.is_file(), "CONTRACT_TESTS_BINS names {}, which is not a file", path.display());
            }
            return map;
        }
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let out = Command::new(cargo)
            .current_dir(root())
            .args(["build", "--workspace", "--all-features", "--tests"])
            .args([
                "--bin",
                "qe-server",
                "--bin",
                "contract-audit",
                "--bin",
                "contract-proxy",
                "--bin",
                "tool-contracts",
            ])
            .arg("--message-format=json-render-diagnostics")
            .stderr(Stdio::inherit())
            .output()
            .expect("cargo runs");
        assert!(out.status.success(), "building the workspace's binaries failed");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|msg| msg["reason"] == "compiler-artifact" && msg["profile"]["test"] == false)
            .filter_map(|msg| {
                let name = msg["target"]["name"].as_str()?.to_owned();
                Some((name, PathBuf::from(msg["executable"].as_str()?)))
            })
            .collect()
    })
}

/// The target directory of every build the tests make outside this workspace: its copies
/// (`cargo xtask` end to end), the user workspaces built against the packed crates, the
/// `cargo install`s of them and the wheel and npm packages. One folder, so that the
/// dependencies they share compile once; the tests that build there share one nextest
/// group (`.config/nextest.toml`), so no build overwrites a binary another is about to
/// run.
pub(crate) fn outside_target() -> PathBuf {
    root().join("target/outside")
}

/// The environment of such a build: [`outside_target`], and neither debug information nor
/// incremental state, which these builds would only write to disk.
pub(crate) fn outside_env(command: &mut Command) -> &mut Command {
    command.env("CARGO_TARGET_DIR", outside_target()).env("CARGO_INCREMENTAL", "0").env("CARGO_PROFILE_DEV_DEBUG", "0")
}

/// The binary `name`, one of those [`workspace_bins`] builds.
fn bin(name: &str) -> &'static Path {
    workspace_bins().get(name).unwrap_or_else(|| panic!("cargo reports no `{name}` executable"))
}

/// The qe-server binary (the demo server, every feature: stdio, HTTP, the Redis cache).
#[allow(dead_code)]
pub(crate) fn qe_server() -> &'static Path {
    bin("qe-server")
}

/// The qe-server binary with the Redis result cache (`QE_SERVER_CACHE=redis://…`): the
/// same build as [`qe_server`], named for the tests that need its Redis cache.
#[allow(dead_code)]
pub(crate) fn qe_server_redis() -> &'static Path {
    bin("qe-server")
}

/// The contract-audit binary.
#[allow(dead_code)]
pub(crate) fn contract_audit() -> &'static Path {
    bin("contract-audit")
}

/// The contract-proxy binary.
#[allow(dead_code)]
pub(crate) fn contract_proxy() -> &'static Path {
    bin("contract-proxy")
}

/// The tool-contracts binary (audit, pin, proxy and schemas in one command).
#[allow(dead_code)]
pub(crate) fn tool_contracts() -> &'static Path {
    bin("tool-contracts")
}

/// The entry point of the pinned `@modelcontextprotocol/server-everything`, installed by
/// `tests/interop/install.sh` (idempotent) on first use.
pub(crate) fn server_everything() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let script = root().join("tests/interop/install.sh");
        let out = run_to_end(Command::new("bash").arg(script), Duration::from_secs(600));
        assert!(out.status.success(), "tests/interop/install.sh failed:\n{}", out.stderr);
        let entry = root().join("tests/interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
        assert!(entry.is_file(), "install.sh did not install server-everything at {}", entry.display());
        entry
    })
}

/// A finished process.
#[allow(dead_code)]
pub(crate) struct Finished {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs a command to completion, killing it at `deadline`.
pub(crate) fn run_to_end(cmd: &mut Command, deadline: Duration) -> Finished {
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not finish within {deadline:?}");
        }
        thread::sleep(Duration::from_millis(20));
    };
    Finished { status, stdout: stdout.join().unwrap_or_default(), stderr: stderr.join().unwrap_or_default() }
}
