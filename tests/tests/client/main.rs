//! The client side: the client harness and its lock, contract-audit and its lock, and the
//! rug-pull fixtures (servers that change their tools after a pin).
//! One binary: each module is one file of this folder; the helpers they share are the
//! `support` module (`tests/tests/support/`), included once.

#[path = "../support/mod.rs"]
mod support;

pub mod audit;
pub mod audit_lock;
pub mod audit_progress;
pub mod audit_real;
pub mod audit_report_real;
pub mod client_harness;
pub mod client_lock;
pub mod lock_lost_real;
pub mod lock_name_real;
pub mod published_hash;
pub mod rugpull_fixtures;
pub mod rugpull_lock;
pub mod submission_real;
