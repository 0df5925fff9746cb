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
//!
//! `contract-audit pin` writes the server's tools into a lock file (`tools.lock.json`);
//! `contract-audit --locked FILE` compares the live server with that pin and reports each
//! difference classified, as a table, JSON or SARIF 2.1.0.
//!
//! The library holds the command line ([`Cli`], and [`AuditArgs`] and [`PinArgs`] for a
//! command that makes `audit` and `pin` subcommands of its own) and its runs; the
//! `contract-audit` binary is [`main`].

mod audit;
mod lint;
mod lock;
mod published;
mod report;
mod sarif;
mod shown;
mod stderr;
mod submission;
mod synth;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use contract_runtime::client::lock::ServerSource;

use crate::lint::Level;

/// The findings, exit statuses and examples, as `--help` lists them: `audit` is how the
/// audit is run (`contract-audit`, `tool-contracts audit`), `pin` how a server is pinned.
#[must_use]
pub fn audit_help(audit: &str, pin: &str) -> String {
    let mut text = String::from("Findings (kind, level: what it does to a client):\n");
    for (kind, level, meaning) in lint::KINDS {
        let _ = writeln!(text, "  {kind:<31} {level:<5}  {meaning}");
    }
    text.push_str("\nWith --submission FILE (a ChatGPT app submission manifest), instead:\n");
    for (kind, level, meaning) in submission::KINDS {
        let _ = writeln!(text, "  {kind:<33} {level:<5}  {meaning}");
    }
    let _ = write!(
        text,
        "\nExit status:
  0  the audit ran and no finding reached the --deny level
  1  a finding reached the --deny level
  2  the audit could not run (bad command line, unreadable --args, a server that cannot be
     started, initialized or listed); for a stdio server, the tail of its stderr follows
     the error unless --stderr inherit or discard

With --locked FILE, each difference from the pinned tools is a finding, by its verdict:
  breaking  error  breaks a caller of the pinned tool, or a hint became less safe
  text      error  a name, title or description a model reads changed: read it again
  lost      error  an optional output property removed: a client that read it loses it
            (a note with --allow-lost-output)
  additive  info   safe for a caller of the pinned tool (a tool added is additive too)
  cosmetic  info   other bytes, the same meaning
and the exit status is 0 (nothing reached --deny), 1 (a difference did) or 2 (no
comparison: an unreadable or hand-edited lock, no entry for this URL or command line, a
server that cannot be listed). `{pin} --help` tells how to pin.

Examples:
  {audit} -- node dist/server.js
  {audit} --format json --deny warn --call http://127.0.0.1:8000/mcp
  {audit} --locked tools.lock.json -- node dist/server.js",
    );
    text
}

/// What `pin --help` adds: `audit` is how the audit is run, `pin` how a server is pinned.
#[must_use]
pub fn pin_help(audit: &str, pin: &str) -> String {
    format!(
        "The lock is written in canonical JSON (keys sorted, two-space indentation), atomically
(a temporary file renamed over it). Pin several servers by running pin once per server
with the same --lock. The entry's key is the URL or the command line exactly as given:
check with `{audit} --locked FILE` and the same URL or command line. With --name NAME the
key is the name (the command line is kept as information): `{audit} --locked FILE --name
NAME` finds it under any command line, and so does `{audit} --locked FILE` alone when
NAME's entry is the only one pinned by name for the server's serverInfo name.

Exit status:
  0  the lock was written
  2  it was not (bad command line, unreadable lock, a server that cannot be listed)

Example:
  {pin} --lock tools.lock.json -- node dist/server.js"
    )
}

/// Audit the tool contracts of an MCP server.
#[derive(Debug, Parser)]
#[command(
    name = "contract-audit",
    version,
    about,
    after_help = audit_help("contract-audit", "contract-audit pin"),
    subcommand_negates_reqs = true,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// Pin a server's tools into a lock file instead of auditing them.
    #[command(subcommand)]
    pin: Option<Sub>,

    /// The audit's options.
    #[command(flatten)]
    audit: AuditArgs,
}

/// The options of an audit (`contract-audit` without `pin`, `tool-contracts audit`).
#[derive(Debug, clap::Args)]
#[allow(clippy::struct_excessive_bools)]
pub struct AuditArgs {
    /// The server to audit.
    #[command(flatten)]
    pub(crate) target: Target,

    /// Output format (`sarif`: SARIF 2.1.0, for code scanning: a result per finding, and
    /// with --locked a result per difference, placed in the lock file).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub(crate) format: Format,

    /// Exit with status 1 when any finding reaches this level.
    #[arg(long, value_enum, default_value_t = Deny::Error)]
    pub(crate) deny: Deny,

    /// Compare the server with its entry in this lock file (written by `contract-audit
    /// pin`) and report every difference, classified, instead of auditing it.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["call", "args", "skip"])]
    pub(crate) locked: Option<PathBuf>,

    /// With --locked, accept output properties the server no longer declares (an error by
    /// default: a client that read one loses it) as notes.
    #[arg(long, requires = "locked")]
    pub(crate) allow_lost_output: bool,

    /// Call every tool, with arguments from --args or synthesized from its inputSchema
    /// (a minimal valid instance). On synthesized arguments only tools annotated
    /// `readOnlyHint: true` are called (see --call-unsafe); the others are reported as
    /// not called, with why. Calls have side effects on real servers.
    #[arg(long)]
    pub(crate) call: bool,

    /// With --call, call tools that are not annotated read-only on synthesized arguments
    /// too. A tool annotated `destructiveHint: true` is still called only with arguments
    /// from --args.
    #[arg(long, requires = "call")]
    pub(crate) call_unsafe: bool,

    /// A JSON object mapping tool names to argument objects; the named tools are called.
    #[arg(long, value_name = "FILE")]
    pub(crate) args: Option<PathBuf>,

    /// A tool not to call (repeatable).
    #[arg(long, value_name = "TOOL")]
    pub(crate) skip: Vec<String>,

    /// Check a ChatGPT app submission manifest (`chatgpt-app-submission.json`) against
    /// the server instead of auditing it: hints that differ (graded by safety) or are not
    /// set, tools missing from either side, test cases naming unknown tools, missing output
    /// schemas, inputs soliciting sensitive data; each says which side to change.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["locked", "call", "args", "skip", "contracts"])]
    pub(crate) submission: Option<PathBuf>,

    /// A `contracts.json` whose tools' `opaque` pointers declare values open on purpose:
    /// for a server that does not say so itself, those are `info:opaque`, not
    /// `warn:permissive`.
    #[arg(long, value_name = "FILE", conflicts_with = "locked")]
    pub(crate) contracts: Option<PathBuf>,
}

/// The subcommands.
#[derive(Debug, clap::Subcommand)]
enum Sub {
    /// List a server's tools and pin them into a lock file (added, or replacing the
    /// entry of the same URL or command line); prints what it pinned and, for a server
    /// pinned before, what changed since.
    #[command(after_help = pin_help("contract-audit", "contract-audit pin"))]
    Pin(PinArgs),
}

/// The options of `contract-audit pin` (`tool-contracts pin`).
#[derive(Debug, clap::Args)]
pub struct PinArgs {
    /// The lock file to write or update.
    #[arg(long, value_name = "FILE", default_value = contract_runtime::client::lock::LOCK_FILE)]
    pub(crate) lock: PathBuf,

    /// The server to pin.
    #[command(flatten)]
    pub(crate) target: Target,
}

/// How to reach the server, and how long to wait for it.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct Target {
    /// A streamable HTTP endpoint, such as http://127.0.0.1:8000/mcp.
    #[arg(conflicts_with = "command", required_unless_present = "command")]
    pub(crate) url: Option<String>,

    /// The server's command line, for stdio: `contract-audit -- npx some-server`.
    #[arg(last = true, num_args = 1..)]
    pub(crate) command: Vec<String>,

    /// With `pin` or --locked: key the server in the lock by this name instead of its URL
    /// or command line, so that the lock holds under another path, wrapper or machine (the
    /// command line is kept as information).
    #[arg(long, value_name = "NAME")]
    pub(crate) name: Option<String>,

    /// Seconds one request may take.
    #[arg(long, default_value_t = 30)]
    pub(crate) timeout: u64,

    /// What becomes of a stdio server's stderr: `tail` keeps its last lines (at most
    /// 8 KiB) and prints them, escaped, under a failure to audit; `inherit` passes it
    /// through; `discard` drops it.
    #[arg(long, value_enum, value_name = "MODE", default_value_t = StderrMode::Tail)]
    pub(crate) stderr: StderrMode,
}

impl Target {
    /// The key of this server in a lock: its `--name`, else its URL or its command line
    /// as given.
    pub(crate) fn source(&self) -> ServerSource {
        match &self.name {
            Some(name) => ServerSource::Name(name.clone()),
            None => self.launch(),
        }
    }

    /// How the server is reached: its URL, or its command line as given.
    pub(crate) fn launch(&self) -> ServerSource {
        match &self.url {
            Some(url) => ServerSource::Url(url.clone()),
            None => ServerSource::Command(self.command.clone()),
        }
    }
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
    /// SARIF 2.1.0, for code scanning (GitHub and others).
    Sarif,
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

/// Parses the command line from the process arguments and runs it: the `contract-audit`
/// binary.
#[must_use]
pub fn main() -> ExitCode {
    run(Cli::parse())
}

/// Runs a parsed `contract-audit` command line: the audit, `--locked` or `pin`.
#[must_use]
pub fn run(cli: Cli) -> ExitCode {
    match cli.pin {
        Some(Sub::Pin(pin)) => run_pin(&pin),
        None => run_audit(&cli.audit),
    }
}

/// Pins a server's tools into the lock: exit status 0 when the lock was written, 2 when
/// it was not.
#[must_use]
pub fn run_pin(pin: &PinArgs) -> ExitCode {
    finish(runtime().and_then(|runtime| runtime.block_on(lock::pin(pin))).map(|text| (text, None)), Deny::Never)
}

/// Runs the audit (or, with `--locked`, the comparison with the lock): exit status 0
/// when no finding reached `--deny`, 1 when one did, 2 when it could not run.
#[must_use]
pub fn run_audit(args: &AuditArgs) -> ExitCode {
    let outcome = runtime().and_then(|runtime| match &args.locked {
        Some(file) => runtime.block_on(lock::compare(&args.target, file, args.allow_lost_output)).map(|c| {
            let text = match args.format {
                Format::Table => lock::table(&c),
                Format::Json => lock::json(&c) + "\n",
                Format::Sarif => sarif::locked(&c) + "\n",
            };
            (text, c.worst())
        }),
        None => match &args.submission {
            Some(file) => runtime
                .block_on(submission::check(&args.target, file))
                .map(|c| (submission::render(&c, args.format), c.worst())),
            None => runtime.block_on(audit_report(args)),
        },
    });
    finish(outcome, args.deny)
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| format!("cannot start the async runtime: {err}"))
}

/// Prints the report (or the error) and returns the exit status.
fn finish(outcome: Result<(String, Option<Level>), String>, deny: Deny) -> ExitCode {
    let (text, worst) = match outcome {
        Ok(outcome) => outcome,
        Err(err) => {
            eprintln!("contract-audit: {err}");
            return ExitCode::from(2);
        }
    };
    print!("{text}");
    match (deny.level(), worst) {
        (Some(deny), Some(worst)) if worst >= deny => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    }
}

/// The ordinary audit: its report and the worst level of its findings.
async fn audit_report(args: &AuditArgs) -> Result<(String, Option<Level>), String> {
    let open = args.contracts.as_deref().map(audit::declared_open).transpose()?;
    let calls = audit::Calls {
        all: args.call,
        unsafe_too: args.call_unsafe,
        file: args.args.as_deref(),
        skip: &args.skip,
        progress: matches!(args.format, Format::Table),
        declared_open: open.as_ref(),
    };
    let audit = audit::run(&args.target, calls).await?;
    let text = match args.format {
        Format::Json => report::json(&audit) + "\n",
        Format::Sarif => sarif::audit(&audit) + "\n",
        Format::Table => report::table(&audit),
    };
    let worst = audit.tools.iter().flat_map(|t| &t.findings).map(|f| f.level).max();
    Ok((text, worst))
}
