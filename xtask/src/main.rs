//! Project automation: `cargo xtask schemas [--check] [--against REV] [--format json]`
//! (contract-tools' schemas command over the demo server, run as its `qe-schemas` binary so
//! that this crate links nothing heavy), `cargo xtask references`
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
    schemas(std::env::args().skip(1))
}

/// Runs the demo server's `qe-schemas` with `args`, and exits as it does.
fn schemas(args: impl Iterator<Item = String>) -> ExitCode {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["run", "--quiet", "--package", "qe-server", "--features", "schemas", "--bin", "qe-schemas", "--"])
        .args(args)
        .status();
    match status {
        Ok(status) => status.code().and_then(|code| u8::try_from(code).ok()).map_or(ExitCode::FAILURE, ExitCode::from),
        Err(err) => {
            eprintln!("xtask: cannot run `cargo run --package qe-server --bin qe-schemas`: {err}");
            ExitCode::from(2)
        }
    }
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
