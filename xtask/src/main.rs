//! Project automation. `cargo xtask schemas [--check]`, `cargo xtask ci`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

mod ci;
mod schemas;

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  schemas            regenerate schemas/ from the contracted result types; refuses a
                     change whose declared version bump is too small
  schemas --check    fail if schemas/ differs from what the types produce (CI), with a
                     unified diff and each change classified
  schemas --check --against REV
                     also judge every change since git revision REV (for example
                     origin/main) by the version policy: a regenerated or edited
                     schemas/ cannot hide a change from it
  --format json      with either: print the machine-readable review (for PR bots)
  ci                 run every check: fmt, schemas --check, clippy, rustdoc, tests (with doc tests)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["schemas", rest @ ..] => schemas::run(rest),
        ["ci", rest @ ..] => ci::run(rest),
        ["help" | "--help" | "-h"] | [] => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => Err(format!("unknown command `{}`\n\n{USAGE}", args.join(" "))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("{msg}");
            ExitCode::FAILURE
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
