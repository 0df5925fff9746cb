//! `tool-contracts`: one command for MCP servers written in any language.
//!
//! - `tool-contracts audit`: audit a server's tool contracts (the `contract-audit` library).
//! - `tool-contracts pin`: pin a server's tools into a lock file.
//! - `tool-contracts proxy`: put an enforcing proxy in front of a server (the
//!   `contract-proxy` library).
//! - `tool-contracts schemas`: write and check a contract folder from `contracts.json`
//!   and JSON Schema files (`contract_tools::manifest`).
//!
//! Each subcommand takes the options of the tool it runs, and `--help` on it shows them
//! with an example. The exit status means the same for every subcommand (see
//! [`EXIT_STATUS`]).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// What every subcommand's exit status means, as the top-level `--help` and the README
/// list it.
const EXIT_STATUS: &str = "Exit status, the same for every subcommand:
  0  done: no finding reached --deny (audit), the lock was written (pin), the
     client disconnected (proxy), the folder was written or is up to date (schemas)
  1  a finding or check failed: a finding or a difference from the lock reached --deny
     (audit); the upstream server exited or closed the connection (proxy); drift or a
     version bump too small, nothing written (schemas)
  2  usage error, or the command could not run: a bad command line, an unreadable file
     (a lock, contracts.json, a schema), a server that cannot be started, initialized
     or listed

`tool-contracts <COMMAND> --help` shows each command's options, its exit status in
detail and an example.";

const PROXY_HELP: &str = "Refused calls and results are isError results whose one text block is
{\"error\": {\"code\", \"message\", \"retryable\", \"violations\"?}}, with code
invalid_arguments, output_contract_violation or tool_quarantined; a result that breaks its
contract and matches the error shape contracts.json declares beside it is the server's
error, tool_execution_error with the server's message (sanitized). Declared isError
results pass unchanged.

Exit status:
  0  the client disconnected
  1  the upstream server exited or closed the connection
  2  the proxy could not start (bad command line, unreadable --contracts or --lock, an
     upstream that cannot be started, initialized or listed)

Examples:
  tool-contracts proxy -- node dist/server.js
  tool-contracts proxy --contracts contracts --lock tools.lock.json -- node dist/server.js
  tool-contracts proxy --http 127.0.0.1:9000 --upstream-url http://127.0.0.1:8000/mcp";

/// Versioned, enforced output contracts for MCP tools, for servers in any language.
#[derive(Debug, Parser)]
#[command(name = "tool-contracts", version, about, after_help = EXIT_STATUS, subcommand_required = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Audit a server's tool contracts: declared outputSchemas, permissive or
    /// non-portable schemas, unresolvable $refs and, with --call, real results validated;
    /// with --locked FILE, compare the server with its pin.
    #[command(after_help = contract_audit::audit_help("tool-contracts audit", "tool-contracts pin"))]
    Audit(contract_audit::AuditArgs),

    /// List a server's tools and pin them into a lock file (added, or replacing the entry
    /// of the same URL or command line); prints what it pinned and what changed since.
    #[command(after_help = contract_audit::pin_help("tool-contracts audit", "tool-contracts pin"))]
    Pin(contract_audit::PinArgs),

    /// Put an enforcing MCP proxy in front of any MCP server: arguments, results, declared
    /// contracts (--contracts) and the tools lock (--lock) are enforced on the wire.
    #[command(after_help = PROXY_HELP)]
    Proxy(contract_proxy::Cli),

    /// Write DIR (default: contracts/) from DIR/contracts.json and JSON Schema files: a
    /// canonical schema per contract and inventory.json, what `proxy --contracts DIR`
    /// loads; with --check, fail when it drifted, each change classified.
    #[command(after_help = contract_tools::manifest::SCHEMAS_HELP)]
    Schemas(contract_tools::manifest::SchemasArgs),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Audit(args) => contract_audit::run_audit(&args),
        Command::Pin(args) => contract_audit::run_pin(&args),
        Command::Proxy(cli) => contract_proxy::run_cli(cli),
        Command::Schemas(args) => contract_tools::manifest::run(&args, "tool-contracts schemas"),
    }
}
