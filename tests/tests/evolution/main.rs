//! The schema evolution tests: the rule and policy tables over the fixture pairs, request
//! (argument) evolution, unions, file locations, the review report with its insta snapshots
//! (snapshots-evolution/), fail-closed verdicts, and `cargo xtask schemas` end to end on a
//! copy of the workspace.
//! One binary: each module is one file of this folder; the helpers they share are the
//! `support` module (`tests/tests/support/`), included once.

#[path = "../support/mod.rs"]
mod support;

pub mod evolution_fail_closed;
pub mod evolution_locations;
pub mod evolution_policy;
pub mod evolution_request_fixtures;
pub mod evolution_request_grid;
pub mod evolution_request_rules;
pub mod evolution_request_unions;
pub mod evolution_review;
pub mod evolution_rules;
pub mod evolution_spelling;
pub mod evolution_unions;
pub mod evolution_xtask;
