//! Project automation: `cargo xtask schemas [--check] [--against REV] [--format json]`
//! (the one-line CLI every user workspace gets from contract-tools), `cargo xtask references`
//! (no line cites a document outside the repository), `cargo xtask circles` (no module
//! circle in any crate) and `cargo xtask ci`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

mod ci;
mod circles;
mod references;

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some("ci") {
        return ci::main();
    }
    if std::env::args().nth(1).as_deref() == Some("references") {
        return references::main();
    }
    if std::env::args().nth(1).as_deref() == Some("circles") {
        return circles::main();
    }
    let tools =
        contract_tools::tool_list::ToolListing::from_tools(qe_server::VERSION, qe_server::server::listed_tools());
    contract_tools::cli::main_with(qe_server::all_contracts(), tools)
}

/// The workspace root, whatever directory cargo was started from.
fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask sits in the workspace").to_path_buf()
}

/// Runs a command in the workspace root, echoing it, and fails if it fails.
fn run_cmd(program: &str, args: &[&str]) -> Result<(), String> {
    run_cmd_env(program, args, &[])
}

/// [`run_cmd`] with extra environment variables.
fn run_cmd_env(program: &str, args: &[&str], envs: &[(&str, &str)]) -> Result<(), String> {
    let shown: Vec<String> = envs.iter().map(|(k, v)| format!("{k}={v} ")).collect();
    eprintln!("$ {}{program} {}", shown.concat(), args.join(" "));
    let status = Command::new(program)
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(project_root())
        .status()
        .map_err(|e| format!("cannot run `{program}`: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{program} {}` failed ({status})", args.join(" ")))
    }
}
