//! `qe-server`: the demo slice as a runnable MCP server.
//!
//! ```text
//! qe-server                      serve one client over stdio (the default)
//! qe-server --http [ADDR]        serve streamable HTTP at http://ADDR/mcp (default 127.0.0.1:8000;
//!                                port 0 picks a free port; loopback addresses only)
//! qe-server --broken             also serve `broken_fleet_status` and `broken_security_scan` (a task,
//!                                like `security_scan`), whose handlers drop a required field (or set
//!                                QE_SERVER_BROKEN=1)
//!
//! HTTP limits (see `contract_runtime::http::HttpLimits` for what each answers):
//!   --max-sessions N             open sessions at most; one more `initialize` gets 503 (default 256)
//!   --session-idle SECONDS       close a session after this long without traffic (default 300)
//!   --max-body BYTES             largest request body, chunked or not (default 262144)
//!   --max-connections N          connections served at once (default 1024)
//! ```
//!
//! The result cache and the contract version come from the environment
//! (`QE_SERVER_CACHE`, `QE_SERVER_CONTRACT_NEXT`): see `qe_server::replica`.
//! `QE_SERVER_LOG=warn|info` writes the runtime's operator events (violations,
//! refusals, cache outages) on stderr, one line each; unset or `off`, only errors.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use qe_server::http::HttpLimits;

mod events;

const USAGE: &str = "usage: qe-server [--http [ADDR]] [--broken] [--max-sessions N] [--session-idle SECONDS] \
                     [--max-body BYTES] [--max-connections N]";
const DEFAULT_HTTP: &str = "127.0.0.1:8000";

#[derive(Debug)]
struct Options {
    http: Option<SocketAddr>,
    broken: bool,
    limits: HttpLimits,
}

/// The value after a flag, as a positive integer.
fn positive(flag: &str, value: Option<&String>) -> Result<usize, String> {
    let value = value.ok_or_else(|| format!("`{flag}` needs a value\n{USAGE}"))?;
    match value.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("`{flag} {value}`: expected a positive whole number")),
    }
}

fn parse(args: &[String]) -> Result<Options, String> {
    let broken_env = std::env::var("QE_SERVER_BROKEN").is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"));
    let mut options = Options { http: None, broken: broken_env, limits: HttpLimits::default() };
    let mut args = args.iter().peekable();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--broken" => options.broken = true,
            "--http" => {
                let addr = match args.peek() {
                    Some(next) if !next.starts_with("--") => args.next().map_or(DEFAULT_HTTP, String::as_str),
                    _ => DEFAULT_HTTP,
                };
                let addr: SocketAddr =
                    addr.parse().map_err(|_| format!("`--http {addr}`: expected an address such as {DEFAULT_HTTP}"))?;
                if !addr.ip().is_loopback() {
                    return Err(format!(
                        "`--http {addr}`: only loopback addresses are served (a local MCP server must not be \
                         reachable from other machines)"
                    ));
                }
                options.http = Some(addr);
            }
            "--max-sessions" => options.limits.max_sessions = positive(arg, args.next())?,
            "--session-idle" => {
                let seconds = positive(arg, args.next())?;
                options.limits.session_idle = Duration::from_secs(seconds as u64);
            }
            "--max-body" => options.limits.max_body_bytes = positive(arg, args.next())?,
            "--max-connections" => options.limits.max_connections = positive(arg, args.next())?,
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    if let Err(msg) = events::install() {
        eprintln!("qe-server: {msg}");
        return ExitCode::from(2);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let options = match parse(&args) {
        Ok(options) => options,
        Err(msg) => {
            eprintln!("{msg}");
            return ExitCode::from(2);
        }
    };
    // One client over stdio needs one thread; HTTP serves many clients at once, so it
    // gets a worker per core.
    let builder = if options.http.is_some() {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    let runtime = match { builder }.enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("qe-server: cannot start the runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("qe-server: {err}");
            ExitCode::FAILURE
        }
    }
}

async fn run(options: Options) -> Result<(), Box<dyn std::error::Error>> {
    let server = qe_server::replica::contracted(options.broken, &qe_server::replica::ReplicaOptions::from_env())?;
    match options.http {
        None => {
            contract_runtime::rmcp::serve_stdio(server).await?;
            Ok(())
        }
        Some(addr) => {
            let listener = qe_server::http::bind(addr).await?;
            // The tests read this line to learn the port when ADDR ends in `:0`.
            eprintln!("qe-server: listening on http://{}/mcp", listener.local_addr()?);
            qe_server::http::serve(server, listener, options.limits).await;
            Ok(())
        }
    }
}
