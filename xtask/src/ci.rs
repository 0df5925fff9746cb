//! `cargo xtask ci`: every check CI runs, in the order that fails fastest.

use crate::run_cmd;

pub(crate) fn run(args: &[&str]) -> Result<(), String> {
    if !args.is_empty() {
        return Err(format!("`ci` takes no arguments, got `{}`", args.join(" ")));
    }
    run_cmd("cargo", &["fmt", "--all", "--", "--check"])?;
    crate::schemas::run(&["--check"])?;
    run_cmd("cargo", &["clippy", "--workspace", "--all-targets", "--all-features", "--", "-D", "warnings"])?;
    // Broken intra-doc links and other rustdoc warnings fail the build too.
    crate::run_cmd_env(
        "cargo",
        &["doc", "--no-deps", "--all-features", "-p", "contract-runtime", "-p", "contract-derive"],
        &[("RUSTDOCFLAGS", "-D warnings")],
    )?;
    // The interop tests drive the official TypeScript and Python MCP clients; install the
    // pinned versions first (idempotent, and fast when they are already there).
    run_cmd("bash", &["tests/interop/install.sh"])?;
    run_cmd("cargo", &["test", "--workspace", "--all-features"])?;
    println!("ci: all checks passed");
    Ok(())
}
