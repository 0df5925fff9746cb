#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
//!
//! # Modules
//!
//! The runtime a server links; the build-time tooling (writing and checking `schemas/`,
//! classifying changes, the CLI) is the separate crate `contract-tools`.
//!
//! - [`contract`]: [`ToolOutput`], [`OutputContract`], [`ContractId`], [`Compatibility`]:
//!   the core, which knows nothing of the wire.
//! - [`schema`]: generation settings, closing objects, markers, lints, the canonical form
//!   and hashing, and the helpers for shapes schemars cannot express ([`keys`],
//!   [`FlatMap`], [`AllOrNone`], [`OpaqueMap`]).
//! - [`pointer`](mod@pointer): JSON pointers and the one local `$ref` resolver.
//! - [`validate`]: violation reports built from structure, never from values.
//! - [`fast`]: the fast path, validation fused into the one serialization pass.
//! - [`finite`]: the pass before conversion: NaN/±inf, depth and size limits.
//! - [`redact`]: masking by structure (sensitive pointers and keys) and sanitizing of
//!   free text.
//! - [`set`]: [`ContractSet`], the contracts a server publishes, bound to its tools.
//! - [`pipeline`]: handler → serialize → middleware → validate → cache → emit.
//! - [`wire`]: error codes, protocol eras and the result envelope (one file each).
//! - [`cache`]: the `ResultCache` trait and the bounded in-memory cache, bound to contract
//!   identities; a Redis-backed cache with feature `redis`.
//! - [`completeness`]: completeness metadata and its invariants.
//! - `rmcp` (feature `rmcp`): the adapter for rmcp servers and its `Json<T>`.
//! - `client` (feature `client`, its rmcp part with `rmcp-client`): the validating client
//!   harness.

pub mod cache;
#[cfg(feature = "redis")]
mod cache_redis;
#[cfg(feature = "client")]
pub mod client;
pub mod completeness;
pub mod contract;
pub mod fast;
pub mod finite;
pub mod pipeline;
pub mod pointer;
pub mod redact;
#[cfg(feature = "rmcp")]
pub mod rmcp;
pub mod schema;
pub mod set;
pub mod validate;
pub mod wire;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use completeness::{Completeness, Disposition, Truncation};
pub use contract::{Compatibility, ContractError, ContractId, OutputContract, ToolOutput};
/// Derives [`ToolOutput`]; see the crate documentation.
pub use contract_derive::ToolOutput;
pub use pipeline::{CallContext, Pipeline};
pub use schema::{keys, opaque, sensitive, AllOrNone, FlatMap, OpaqueMap};
pub use set::{Binding, ContractSet, SetError, SetProblem};
pub use validate::{Report, Violation};
pub use wire::{ErrorCode, ToolCallResult, ToolError, ToolFailure};
