//! `cargo xtask ci`: every check CI runs, in the order that fails fastest.

use std::process::ExitCode;

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
    run_cmd("cargo", &["xtask", "schemas", "--check"])?;
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
    // The interop tests drive the official TypeScript and Python MCP clients; install the
    // pinned versions first (idempotent, and fast when they are already there).
    run_cmd("bash", &["tests/interop/install.sh"])?;
    // The Redis cache tests start their own `redis-server` on a free port; on a fresh
    // Debian machine (as root, as CI runs) the package is installed here.
    run_cmd(
        "bash",
        &[
            "-c",
            "command -v redis-server >/dev/null 2>&1 || { apt-get update -qq && \
             DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server; }",
        ],
    )?;
    run_cmd("cargo", &["test", "--workspace", "--all-features"])?;
    Ok(())
}
