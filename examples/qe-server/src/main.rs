//! `qe-server`: the demo slice as a runnable MCP server.
//!
//! ```text
//! qe-server                      serve one client over stdio (the default)
//! qe-server --http [ADDR]        serve streamable HTTP at http://ADDR/mcp (default 127.0.0.1:8000;
//!                                port 0 picks a free port; loopback addresses only)
//! qe-server --broken             also serve `broken_fleet_status`, whose handler drops a required
//!                                field (or set QE_SERVER_BROKEN=1)
//! ```
//!
//! The result cache and the contract version come from the environment
//! (`QE_SERVER_CACHE`, `QE_SERVER_CONTRACT_NEXT`): see `qe_server::replica`.

use std::net::SocketAddr;
use std::process::ExitCode;

const USAGE: &str = "usage: qe-server [--http [ADDR]] [--broken]";
const DEFAULT_HTTP: &str = "127.0.0.1:8000";

#[derive(Debug)]
struct Options {
    http: Option<SocketAddr>,
    broken: bool,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let broken_env = std::env::var("QE_SERVER_BROKEN").is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"));
    let mut options = Options { http: None, broken: broken_env };
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
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
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
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
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
        None => qe_server::server::serve_stdio(server).await,
        Some(addr) => {
            let listener = qe_server::server::bind(addr).await?;
            // The tests read this line to learn the port when ADDR ends in `:0`.
            eprintln!("qe-server: listening on http://{}/mcp", listener.local_addr()?);
            qe_server::server::serve_http(server, listener).await
        }
    }
}
