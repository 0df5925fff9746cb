//! The `contract-audit` binary: the library's command line, parsed from the process arguments.

fn main() -> std::process::ExitCode {
    contract_audit::main()
}
