//! `contract-audit`: an audit of any MCP server's tool contracts.
//!
//! Connects over stdio (a command line after `--`) or streamable HTTP (a URL), lists every
//! tool over all `tools/list` pages, and reports per tool whether it declares an
//! `outputSchema`, whether its schemas are permissive or non-portable, whether every
//! `$ref` resolves, and whether the server says it enforces a contract. With `--call`
//! (or `--args FILE`) it also calls tools and validates each result with the client
//! harness of `contract-runtime`. A human table by default, `--format json` for CI; the
//! exit status is 1 when a finding reaches the `--deny` level, 2 when the audit could
//! not run.

mod audit;
mod lint;
mod report;
mod stderr;
mod synth;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use crate::lint::Level;

/// The findings and exit statuses, as `--help` lists them.
fn after_help() -> String {
    let mut text = String::from("Findings (kind, level: what it does to a client):\n");
    for (kind, level, meaning) in lint::KINDS {
        let _ = writeln!(text, "  {kind:<31} {level:<5}  {meaning}");
    }
    text.push_str(
        "\nExit status:
  0  the audit ran and no finding reached the --deny level
  1  a finding reached the --deny level
  2  the audit could not run (bad command line, unreadable --args, a server that cannot be
     started, initialized or listed); for a stdio server, the tail of its stderr follows
     the error unless --stderr inherit or discard",
    );
    text
}

/// Audit the tool contracts of an MCP server.
#[derive(Debug, Parser)]
#[command(name = "contract-audit", version, about, after_help = after_help())]
#[allow(clippy::struct_excessive_bools)]
pub(crate) struct Cli {
    /// A streamable HTTP endpoint, such as http://127.0.0.1:8000/mcp.
    #[arg(conflicts_with = "command", required_unless_present = "command")]
    pub(crate) url: Option<String>,

    /// The server's command line, for stdio: `contract-audit -- npx some-server`.
    #[arg(last = true, num_args = 1..)]
    pub(crate) command: Vec<String>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub(crate) format: Format,

    /// Exit with status 1 when any finding reaches this level.
    #[arg(long, value_enum, default_value_t = Deny::Error)]
    pub(crate) deny: Deny,

    /// Call every tool, with arguments from --args or synthesized from its inputSchema
    /// (a minimal valid instance). Calls have side effects on real servers.
    #[arg(long)]
    pub(crate) call: bool,

    /// A JSON object mapping tool names to argument objects; the named tools are called.
    #[arg(long, value_name = "FILE")]
    pub(crate) args: Option<PathBuf>,

    /// A tool not to call (repeatable).
    #[arg(long, value_name = "TOOL")]
    pub(crate) skip: Vec<String>,

    /// Seconds one request may take.
    #[arg(long, default_value_t = 30)]
    pub(crate) timeout: u64,

    /// What becomes of a stdio server's stderr: `tail` keeps its last lines (at most
    /// 8 KiB) and prints them, escaped, under a failure to audit; `inherit` passes it
    /// through; `discard` drops it.
    #[arg(long, value_enum, value_name = "MODE", default_value_t = StderrMode::Tail)]
    pub(crate) stderr: StderrMode,
}

/// What becomes of a stdio server's stderr.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum StderrMode {
    /// Keep the last lines, show them when the audit cannot run.
    Tail,
    /// Pass it through to this process's stderr.
    Inherit,
    /// Drop it.
    Discard,
}

/// How the report is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// A table for people.
    Table,
    /// One JSON document for CI.
    Json,
}

/// The lowest level that fails the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Deny {
    /// Fail on any finding.
    Info,
    /// Fail on warnings and errors.
    Warn,
    /// Fail on errors only.
    Error,
    /// Never fail on findings.
    Never,
}

impl Deny {
    fn level(self) -> Option<Level> {
        match self {
            Self::Info => Some(Level::Info),
            Self::Warn => Some(Level::Warn),
            Self::Error => Some(Level::Error),
            Self::Never => None,
        }
    }
}

fn main() -> ExitCode {
    let args = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("contract-audit: cannot start the async runtime: {err}");
            return ExitCode::from(2);
        }
    };
    let audit = match runtime.block_on(audit::run(&args)) {
        Ok(audit) => audit,
        Err(err) => {
            eprintln!("contract-audit: {err}");
            return ExitCode::from(2);
        }
    };
    match args.format {
        Format::Table => print!("{}", report::table(&audit)),
        Format::Json => println!("{}", report::json(&audit)),
    }
    let worst = audit.tools.iter().flat_map(|t| &t.findings).map(|f| f.level).max();
    match (args.deny.level(), worst) {
        (Some(deny), Some(worst)) if worst >= deny => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    }
}
