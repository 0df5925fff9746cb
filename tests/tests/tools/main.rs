//! The build-time tests of contract-tools and the contract set: tool-listing snapshots
//! (annotations, inputs, the CLI, qe-server's), the snapshot check, the contract set and
//! runtime-loaded contracts, and lock drift.
//! One binary: each module is one file of this folder; the helpers they share are the
//! `support` module (`tests/tests/support/`), included once.

#[path = "../support/mod.rs"]
mod support;

pub mod cli;
pub mod contract_set;
pub mod lock_drift;
pub mod runtime_contracts_load;
pub mod snapshot_check;
pub mod snapshot_tools;
pub mod snapshot_tools_annotations;
pub mod snapshot_tools_cli;
pub mod snapshot_tools_inputs;
pub mod snapshot_tools_qe_server;
pub mod submission_xtask;
pub mod walkthrough;
