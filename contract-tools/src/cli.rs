//! The `schemas` command, for a project's xtask in one line.
//!
//! ```no_run
//! # mod my_server { pub fn contracts() -> contract_runtime::ContractSet { contract_runtime::ContractSet::new() } }
//! // xtask/src/main.rs
//! fn main() -> std::process::ExitCode {
//!     contract_tools::cli::main(my_server::contracts())
//! }
//! ```
//!
//! With the server's tool list too, every tool it lists (name, title, description,
//! `inputSchema`, annotations, its contract) is checked in under `schemas/tools/` and
//! classified (see [`crate::tool_list`]):
//!
//! ```no_run
//! # mod my_server {
//! #     pub fn contracts() -> contract_runtime::ContractSet { contract_runtime::ContractSet::new() }
//! #     pub fn tools() -> Vec<serde_json::Value> { Vec::new() }
//! # }
//! use contract_tools::tool_list::ToolListing;
//! fn main() -> std::process::ExitCode {
//!     contract_tools::cli::main_with(my_server::contracts(), ToolListing::from_tools(env!("CARGO_PKG_VERSION"), my_server::tools()))
//! }
//! ```
//!
//! With `[alias] xtask = "run --package xtask --"` in `.cargo/config.toml` this gives:
//!
//! ```text
//! cargo xtask schemas                         regenerate schemas/ (refuses a too-small version bump)
//! cargo xtask schemas --check                 fail on drift, each change classified (CI)
//! cargo xtask schemas --check --against REV   also judge every change since git revision REV
//! cargo xtask schemas --format json           the review as JSON, for pull-request bots
//! cargo xtask schemas --check --runtime-dir schemas/dynamic
//!                                             also check a run-time contract folder
//! cargo xtask schemas --check                 with the tool list and a
//!                                             chatgpt-app-submission.json beside the
//!                                             schemas folder: also check the manifest
//! cargo xtask --help
//! ```
//!
//! Exit codes: 0 when the command succeeded, 1 when the check failed or a write was
//! refused, 2 for a usage error.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use clap::{Parser, Subcommand, ValueEnum};
use contract_runtime::ContractSet;

use crate::schemas::{self, SnapshotError};
use crate::tool_list::{self, ToolListing};

/// Command-line arguments of the tool.
#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    about = "Versioned output contracts: write and check the checked-in schemas/ folder.",
    disable_version_flag = true
)]
struct Cli {
    #[command(subcommand)]
    command: Commands,
}

#[derive(Debug, Subcommand)]
enum Commands {
    /// Regenerate schemas/ from the contracted result types; with --check, fail when it
    /// differs (for CI), printing a unified diff and every change classified as breaking,
    /// additive or cosmetic with the version bump it needs.
    Schemas(SchemasArgs),
}

/// Arguments of `schemas`.
#[derive(Debug, clap::Args)]
struct SchemasArgs {
    /// Compare instead of writing; fail on drift or an insufficient version bump. With
    /// the server's tool list, a `chatgpt-app-submission.json` beside the schemas folder
    /// (the workspace root by default) is checked against it too, and never written.
    #[arg(long)]
    check: bool,
    /// Also judge every change since this git revision (for example origin/main), so a
    /// regenerated or hand-edited schemas/ cannot hide a change.
    #[arg(long, value_name = "REV", requires = "check")]
    against: Option<String>,
    /// How to print the review.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// The schemas folder [default: schemas/ in the workspace root].
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Also check this folder of run-time contracts (checked-in files that
    /// `ContractSet::load_dir` reads, for tools registered at run time): canonical form,
    /// each SHA-256 against its inventory.json, no silent {}. Never written. Repeatable;
    /// relative to the workspace root.
    #[arg(long = "runtime-dir", value_name = "DIR")]
    runtime_dirs: Vec<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Lines for people.
    Text,
    /// The review as JSON (its schema: contract-tools/schemas/schemas_review.json).
    Json,
}

/// Runs the command line of this process against `contracts` and returns the exit
/// code: what an xtask's `main` returns.
#[must_use]
// By value so that `main(my_server::contracts())` reads as one line.
#[allow(clippy::needless_pass_by_value)]
pub fn main(contracts: ContractSet) -> ExitCode {
    run(std::env::args_os(), &contracts)
}

/// [`main`] with the server's tool list: `schemas/tools/` is written and checked too.
/// `listing` is what [`ToolListing::from_tools`] or [`ToolListing::from_json`] returns
/// (its error is printed and the command fails).
#[must_use]
#[allow(clippy::needless_pass_by_value)]
pub fn main_with(contracts: ContractSet, listing: Result<ToolListing, SnapshotError>) -> ExitCode {
    match listing {
        Ok(listing) => run_with(std::env::args_os(), &contracts, Some(&listing)),
        Err(err) => {
            eprintln!("cannot read the server's tool list: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Runs `args` (the first is the program name) against `contracts`, printing to stdout
/// and stderr; returns the exit code.
pub fn run<I, T>(args: I, contracts: &ContractSet) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    run_with(args, contracts, None)
}

/// [`run`] with the server's tool list, when there is one.
pub fn run_with<I, T>(args: I, contracts: &ContractSet, listing: Option<&ToolListing>) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) => {
            // Help and usage errors print themselves; help exits 0, mistakes exit 2.
            let _ = err.print();
            return ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2));
        }
    };
    let Commands::Schemas(args) = cli.command;
    let root = workspace_root();
    let job = Job {
        dir: args.dir.clone().unwrap_or_else(|| root.join("schemas")),
        root,
        check: args.check,
        against: args.against.as_deref(),
        json: args.format == Format::Json,
        runtime_dirs: &args.runtime_dirs,
        manifest: None,
    };
    match schemas(&job, contracts, listing) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

/// One run of `schemas`: where, and what to do.
pub(crate) struct Job<'a> {
    /// Where git runs for `--against`, and what relative runtime folders are relative to.
    pub(crate) root: PathBuf,
    /// The folder written or checked.
    pub(crate) dir: PathBuf,
    pub(crate) check: bool,
    pub(crate) against: Option<&'a str>,
    pub(crate) json: bool,
    pub(crate) runtime_dirs: &'a [PathBuf],
    /// For contracts declared in a source manifest: the manifest as shown and the command
    /// that writes the folder, for the fix lines.
    pub(crate) manifest: Option<(String, String)>,
}

impl Job<'_> {
    /// The review of `dir` against `contracts`, with the fix lines of the job's origin.
    fn review(&self, dir: &Path, contracts: &ContractSet) -> Result<schemas::Review, String> {
        let review = schemas::review(dir, contracts).map_err(|e| e.to_string())?;
        Ok(match &self.manifest {
            Some((manifest, command)) => review.for_manifest(manifest, command),
            None => review,
        })
    }
}

/// Writes or checks `job.dir`, printing the review; `Err` is the message of a failed
/// check or a refused write.
pub(crate) fn schemas(job: &Job<'_>, contracts: &ContractSet, listing: Option<&ToolListing>) -> Result<(), String> {
    let root = &job.root;
    let dir = job.dir.clone();
    let json = job.json;
    if let Some(rev) = job.against {
        // The checked-in files can be regenerated or edited in the same change they
        // judge; the base revision cannot. Its schemas are the old side of the policy.
        let base = BaseSchemas::export(root, &dir, rev)?;
        let review = job.review(base.path(), contracts)?.shown_as(&shown(&dir));
        for line in review.lines() {
            eprintln!("against {rev}: {line}");
        }
        let mut ok = review.policy_ok();
        if let Some(listing) = listing {
            let tools =
                tool_list::review(base.path(), listing, contracts).map_err(|e| e.to_string())?.shown_as(&shown(&dir));
            // Text changes need no bump but are listed, so a bot can ask for a reviewer.
            for line in tools.lines() {
                eprintln!("against {rev}: {line}");
            }
            ok &= tools.policy_ok();
        }
        if !ok {
            return Err(format!(
                "against {rev}: a declared version does not cover the change since {rev}; bump it as the lines above say"
            ));
        }
        eprintln!("against {rev}: every change since {rev} is covered by its version bump");
    }
    for runtime_dir in job.runtime_dirs {
        let runtime_dir = if runtime_dir.is_absolute() { runtime_dir.clone() } else { root.join(runtime_dir) };
        let count = schemas::check_runtime_dir(&runtime_dir).map_err(|e| e.to_string())?;
        if !json {
            println!("{} is sound ({count} run-time contracts)", shown(&runtime_dir));
        }
    }
    let review = job.review(&dir, contracts)?;
    let tools = listing.map(|l| tool_list::review(&dir, l, contracts)).transpose().map_err(|e| e.to_string())?;
    if json {
        // The report goes to stdout whatever the outcome; the exit code says pass or
        // fail. A closed pipe (`| head`) is the reader's choice, not an error.
        let mut report = review.report();
        if let Some(tools) = &tools {
            let tools = tools.report();
            report.ok &= tools.up_to_date && tools.policy_ok;
            report.tools = Some(tools);
        }
        let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), report.to_canonical_string().as_bytes());
    }
    if job.check {
        let mut problems = Vec::new();
        if let Err(e) = review.check() {
            problems.push(e.to_string());
        }
        if let Some(Err(e)) = tools.as_ref().map(tool_list::ToolsReview::check) {
            problems.push(e.to_string());
        }
        if json && !problems.is_empty() {
            problems = vec![format!("{} is not up to date (see the JSON report)", dir.display())];
        }
        problems.extend(submission(&dir, listing)?);
        if !problems.is_empty() {
            return Err(problems.join("\n"));
        }
        if !json {
            let listed = tools.as_ref().map_or_else(String::new, |t| format!(", {} tools", t.tools().len()));
            println!("{} is up to date ({} contracts{listed})", shown(&dir), contracts.contracts().len());
        }
        return Ok(());
    }
    // Both folders are judged before either is written: a refused write writes nothing.
    let mut refusals = Vec::new();
    if !review.policy_ok() {
        refusals.extend(review.write(&dir).err().map(|e| e.to_string()));
    }
    if let Some(tools) = tools.as_ref().filter(|t| !t.policy_ok()) {
        refusals.extend(tools.write(&dir).err().map(|e| e.to_string()));
    }
    if !refusals.is_empty() {
        return Err(refusals.join("\n"));
    }
    let summary = review.write(&dir).map_err(|e| e.to_string())?;
    let tool_summary = tools.as_ref().map(|t| t.write(&dir)).transpose().map_err(|e| e.to_string())?;
    if !json {
        for line in review.lines() {
            println!("{line}");
        }
        for line in tools.iter().flat_map(tool_list::ToolsReview::lines) {
            println!("{line}");
        }
        let mut unchanged = summary.unchanged.len();
        for summary in std::iter::once(&summary).chain(tool_summary.as_ref()) {
            for name in &summary.written {
                println!("wrote {}/{name}", shown(&dir));
            }
            for name in &summary.removed {
                println!("removed {}/{name}", shown(&dir));
            }
        }
        unchanged += tool_summary.as_ref().map_or(0, |s| s.unchanged.len());
        println!("{unchanged} unchanged");
    }
    Ok(())
}

/// The submission manifest beside `dir`, when there is one, against the tool list: each
/// finding printed on stderr; `Some` is the problem when one is an error. The manifest
/// is never written.
fn submission(dir: &Path, listing: Option<&ToolListing>) -> Result<Option<String>, String> {
    let file = schemas::submission::manifest_path(dir);
    let Some(listing) = listing else {
        if file.is_file() {
            eprintln!(
                "{}: not checked: the xtask passes no tool list (call `contract_tools::cli::main_with` with the server's tools)",
                shown(&file)
            );
        }
        return Ok(None);
    };
    let Some(check) = schemas::submission::SubmissionCheck::run(dir, listing)? else { return Ok(None) };
    let name = shown(&check.file);
    for line in check.lines(&name) {
        eprintln!("{line}");
    }
    let errors = check.errors();
    Ok((errors > 0).then(|| {
        format!(
            "{name}: {errors} errors: the submission manifest and the server's tools disagree; change the side each `fix:` line above names (the manifest is never written)"
        )
    }))
}

/// The folder as messages show it: relative to the current directory when inside it.
pub(crate) fn shown(dir: &Path) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    dir.strip_prefix(&cwd).map_or_else(|_| dir.display().to_string(), |p| p.display().to_string())
}

/// The workspace root as cargo sees it from the current directory (the xtask runs with
/// the caller's directory), else the current directory.
fn workspace_root() -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_default();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let located = Command::new(cargo)
        .args(["locate-project", "--workspace", "--message-format", "plain"])
        .current_dir(&cwd)
        .output();
    match located {
        Ok(out) if out.status.success() => {
            let manifest = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            manifest.parent().map_or(cwd, Path::to_path_buf)
        }
        _ => cwd,
    }
}

/// The schemas folder as it is at a git revision, exported into a temporary folder
/// that is removed on drop.
pub(crate) struct BaseSchemas(PathBuf);

impl BaseSchemas {
    fn export(root: &Path, dir: &Path, rev: &str) -> Result<Self, String> {
        let git = |args: &[&str]| -> Result<Vec<u8>, String> {
            let out = Command::new("git")
                .args(args)
                .current_dir(root)
                .output()
                .map_err(|e| format!("cannot run git: {e}"))?;
            if out.status.success() {
                Ok(out.stdout)
            } else {
                Err(format!("`git {}` failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
            }
        };
        git(&["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")])
            .map_err(|_| format!("`--against {rev}`: not a git revision here"))?;
        // The folder's path inside the repository, with `/` separators as git writes them.
        let top = PathBuf::from(String::from_utf8_lossy(&git(&["rev-parse", "--show-toplevel"])?).trim());
        let absolute = if dir.is_absolute() { dir.to_path_buf() } else { root.join(dir) };
        let inside = absolute
            .strip_prefix(&top)
            .map_err(|_| format!("{} is not inside the git repository at {}", absolute.display(), top.display()))?;
        let prefix: Vec<String> = inside.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        let prefix = format!("{}/", prefix.join("/"));
        let out = std::env::temp_dir().join(format!("contract-tools-against-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
        let exported = Self(out);
        let listing = git(&["ls-tree", "-r", "--full-tree", "--name-only", "-z", rev, &prefix])?;
        for path in listing.split(|b| *b == 0).filter(|p| !p.is_empty()) {
            let path = String::from_utf8_lossy(path).into_owned();
            // The folder's own files, and the tool snapshots in its `tools/` folder.
            let Some(name) = path.strip_prefix(&prefix).filter(|n| {
                let inside = n.strip_prefix(&format!("{}/", tool_list::TOOLS_DIR)).unwrap_or(n);
                !inside.contains('/') && Path::new(n).extension().is_some_and(|e| e == "json")
            }) else {
                continue;
            };
            let bytes = git(&["show", &format!("{rev}:{path}")])?;
            let file = exported.0.join(name);
            if let Some(parent) = file.parent() {
                std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
            }
            std::fs::write(&file, bytes).map_err(|e| format!("{}: {e}", file.display()))?;
        }
        Ok(exported)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for BaseSchemas {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
