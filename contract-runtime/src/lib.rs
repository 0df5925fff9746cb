//! Versioned, enforced output contracts for MCP tools: the result type is the single
//! source of truth. `#[derive(ToolOutput)]` turns it into a deterministic JSON Schema
//! 2020-12 contract with a version and a hash; the runtime validates every result against
//! it before anything is cached or sent, and the client side validates what any server
//! sends. The build-time tooling (writing and checking `schemas/`, classifying changes)
//! is the separate crate `contract-tools`.
//!
//! # Quickstart
//!
//! The README's example (a test keeps the two the same):
//!
#![doc = include_str!("../docs/quickstart.md")]
//!
//! # Where to read on
//!
//! - [`ToolOutput`]: writing contracts — the derive's attributes, `exact` and `additive`,
//!   sensitive and opaque fields, the shapes schemars cannot describe.
//! - [`pipeline`]: enforcement at run time — the one path of every result, error codes,
//!   sanitizing, limits, completeness, protocol eras, the fused path.
//! - `rmcp` (feature `rmcp`): an rmcp server whose tools are contracted.
//! - `http` (feature `http`): rmcp's streamable HTTP behind a hardened front, for axum.
//! - [`cache`]: in-memory and Redis result caches bound to contract identities.
//! - [`observe`]: in production — report-only rollout, `tracing` events, counters.
//! - `client` (feature `client`): the validating client harness.
//! - [`set`]: [`ContractSet`], the one list a server serves and its xtask checks.
//! - `evolution` (feature `evolution`): the semantic diff of two schemas, for outputs
//!   and for arguments, and the version policy that follows from it.
//!
//! # Layers
//!
//! Every module has one public path, at the crate root. Behind them the source is cut in
//! three layers (private folders), and imports run downward only (a test fails on an
//! import that runs up):
//!
//! 1. `contract/` — what a contract is: [`ToolOutput`], [`OutputContract`],
//!    [`ContractId`], [`Compatibility`], contracts loaded from files ([`Declared`]);
//!    [`schema`] generation, closing, lints and the canonical form; [`validate`] and the
//!    [`fused`] plan; size and depth [`limits`]; [`redact`]ion; JSON
//!    [`pointer`](mod@pointer)s and the one `$ref` resolver; [`completeness`]; the
//!    semantic diff of two schemas (`evolution`, feature `evolution`). It knows nothing of
//!    serving or of MCP's wire.
//! 2. `serve/` — serving a result: the [`pipeline`], the [`cache`]s (in-memory; Redis
//!    with feature `redis`), the [`wire`] envelope, codes and protocol eras, the contract
//!    [`set`], and what results looked like ([`observed`]).
//! 3. `adapters/` — the rmcp server adapter (`rmcp`, feature `rmcp`), its streamable
//!    HTTP front (`http`, feature `http`) and the validating client harness (`client`,
//!    feature `client`; its rmcp part with `rmcp-client`).
#![warn(missing_docs)]
// The library reports through `tracing` events (`observe`), never on a process's own
// output streams, which a stdio server uses for protocol messages.
#![deny(clippy::print_stdout, clippy::print_stderr)]

// The derive's expansion names the crate `::contract_runtime`, in this crate too (the lock
// file's type derives its contract).
extern crate self as contract_runtime;

mod adapters;
mod contract;
mod serve;

pub use contract::{completeness, fused, limits, pointer, redact, scan, schema, validate};
pub use serve::{cache, observe, observed, pipeline, set, wire};

#[cfg(feature = "client")]
pub use adapters::client;
#[cfg(feature = "http")]
pub use adapters::http;
#[cfg(feature = "rmcp")]
pub use adapters::rmcp;
#[cfg(feature = "evolution")]
pub use contract::evolution;

// The README's examples run as doc tests too, so the front page cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use completeness::{Completeness, Disposition, Truncation};
pub use contract::{
    Compatibility, ContractError, ContractErrorKind, ContractId, Declared, ErrorShape, LoadError, LoadProblem,
    OutputContract, ToolOutput, INVENTORY_FILE, MANIFEST_FILE,
};
/// Derives [`ToolOutput`]; see the trait for the attributes.
pub use contract_derive::ToolOutput;
pub use pipeline::{CallContext, Pipeline};
pub use schema::{keys, opaque, sensitive, AllOrNone, FlatMap, OpaqueMap};
pub use set::{Binding, ContractSet, SetError, SetProblem};
pub use validate::{Report, Violation};
pub use wire::{ErrorCode, ToolCallResult, ToolError, ToolFailure};
