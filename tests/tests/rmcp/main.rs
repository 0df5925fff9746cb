//! The rmcp adapter in process and in qe-server: every path a result takes, arguments, JSON
//! listings, runtime-loaded contracts, the server's identity in results, and report-only
//! rollout.
//! One binary: each module is one file of this folder; the helpers they share are the
//! `support` module (`tests/tests/support/`), included once.

#[path = "../support/mod.rs"]
mod support;

pub mod report_only_rmcp;
pub mod rmcp_adapter;
pub mod rmcp_adapter_paths;
pub mod rmcp_adapter_probe;
pub mod rmcp_arguments;
pub mod rmcp_json_listing;
pub mod rmcp_runtime_contracts;
pub mod rmcp_server_info;
