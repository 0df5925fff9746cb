//! Build-time tooling of tool-contracts: what `cargo xtask schemas [--check]` runs.
//!
//! A server depends on `contract-runtime` only; this crate is for the project's xtask
//! and CI, so the diff, classification and command-line code never reach a server's
//! binary. One line gives a workspace the whole command:
//!
//! ```no_run
//! # mod my_server { pub fn contracts() -> contract_runtime::ContractSet { contract_runtime::ContractSet::new() } }
//! fn main() -> std::process::ExitCode {
//!     contract_tools::cli::main(my_server::contracts())
//! }
//! ```
//!
//! # Modules
//!
//! - [`cli`]: the `schemas` command (write, `--check`, `--against REV`, `--format json`).
//! - [`manifest`]: `tool-contracts schemas`: the same folder from `contracts.json` and
//!   JSON Schema files, for servers in any language.
//! - [`suggest`]: `tool-contracts schemas --suggest`: contracts suggested from the
//!   results `tool-contracts proxy --observe` recorded, for review.
//! - [`schemas`]: writing and checking the checked-in `schemas/` folder, the review.
//! - [`evolution`]: the semantic diff of two schemas, change kinds, the version policy.
//! - [`tool_list`]: the snapshots of the whole tool list under `schemas/tools/`, classified.
//! - [`report`]: the typed `inventory.json` and the JSON review, with the review's schema.
//!
#![doc = include_str!("../docs/xtask.md")]
#![warn(missing_docs)]

pub mod cli;
pub mod manifest;
pub use contract_runtime::evolution;
pub mod report;
pub mod schemas;
pub mod suggest;
pub mod tool_list;
