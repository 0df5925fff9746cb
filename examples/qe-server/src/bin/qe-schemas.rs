//! `qe-schemas schemas [--check] [--against REV] [--format json] [--dir DIR]`: contract-tools' one
//! schemas command over this server's contracts and its real tool list (rmcp's router
//! through the contracted server, not a copy of it). The repository's `cargo xtask
//! schemas` runs it; a workspace of your own calls `contract_tools::cli::main_with` from
//! its xtask the same way.

use std::process::ExitCode;

fn main() -> ExitCode {
    let tools =
        contract_tools::tool_list::ToolListing::from_tools(qe_server::VERSION, qe_server::server::listed_tools());
    contract_tools::cli::main_with(qe_server::all_contracts(), tools)
}
