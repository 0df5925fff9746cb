//! Binaries and installed servers shared by the client-side tests (client_harness.rs,
//! audit.rs): built or installed once per test process, with deadlines on every wait.

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

/// Builds `bin` of `package` with `features` and returns the executable's path.
fn build(package: &str, bin: &str, features: &[&str]) -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root()).args(["build", "-p", package, "--bin", bin, "--message-format=json-render-diagnostics"]);
    if !features.is_empty() {
        cmd.args(["--features", &features.join(",")]);
    }
    let out = cmd.stderr(Stdio::inherit()).output().expect("cargo runs");
    assert!(out.status.success(), "building {bin} failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|msg| msg["reason"] == "compiler-artifact" && msg["target"]["name"] == bin)
        .find_map(|msg| msg["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("cargo reports the {bin} executable"))
}

/// The qe-server binary (the demo server, with its `server` feature).
#[allow(dead_code)]
pub(crate) fn qe_server() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| build("qe-server", "qe-server", &["server"]))
}

/// The qe-server binary with the Redis result cache (features `server` and `redis`).
#[allow(dead_code)]
pub(crate) fn qe_server_redis() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| build("qe-server", "qe-server", &["server", "redis"]))
}

/// The contract-audit binary.
#[allow(dead_code)]
pub(crate) fn contract_audit() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| build("contract-audit", "contract-audit", &[]))
}

/// The contract-proxy binary.
#[allow(dead_code)]
pub(crate) fn contract_proxy() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| build("contract-proxy", "contract-proxy", &[]))
}

/// The tool-contracts binary (audit, pin, proxy and schemas in one command).
#[allow(dead_code)]
pub(crate) fn tool_contracts() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| build("tool-contracts", "tool-contracts", &[]))
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
