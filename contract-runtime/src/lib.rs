#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
//!
//! # Modules
//!
//! - [`contract`]: [`ToolOutput`], [`OutputContract`], [`ContractId`], [`Compatibility`].
//! - [`schema`]: generation settings, markers, the canonical form and hashing.
//! - [`validate`]: violation reports.
//! - [`set`]: [`ContractSet`], the contracts a server publishes, bound to its tools.
//! - [`pipeline`]: handler → serialize → middleware → validate → cache → emit.
//! - [`wire`]: the MCP result envelope, error codes, protocol eras.
//! - [`cache`]: result caches bound to contract identities (Redis with feature `redis`).
//! - [`redact`]: sanitizing of error results.
//! - [`completeness`]: completeness metadata and its invariants.
//! - `client` (feature `client`): the validating client harness.

pub mod cache;
#[cfg(feature = "redis")]
mod cache_redis;
#[cfg(feature = "client")]
pub mod client;
pub mod completeness;
pub mod contract;
pub mod finite;
pub mod pipeline;
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
