//! Helpers the test binaries share, one home for each: every binary's `main.rs` includes
//! this module once (`#[path = "../support/mod.rs"] mod support;`) and its files name what
//! they use as `crate::support::…`.

#![allow(
    dead_code,
    unused_imports,
    unused_macros,
    unreachable_pub,
    reason = "each binary uses a part of the shared support"
)]

pub(crate) mod arguments;
pub(crate) mod bins;
pub(crate) mod capture;
pub(crate) mod corpus;
pub(crate) mod evolution;
pub(crate) mod fast_path;
pub(crate) mod http_front;
pub(crate) mod interop;
pub(crate) mod lenient;
pub(crate) mod lint_types;
pub(crate) mod lints;
pub(crate) mod mutations;
pub(crate) mod reencoding_relay;
pub(crate) mod rmcp_paths;
pub(crate) mod rollout_probe;
pub(crate) mod rugpull;
pub(crate) mod smoke;
