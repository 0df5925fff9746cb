#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
//!
//! # Layers
//!
//! The runtime a server links; the build-time tooling (writing and checking `schemas/`,
//! classifying changes, the CLI) is the separate crate `contract-tools`. Its folders are
//! its layers, and imports run downward only (a test fails on an import that runs up):
//!
//! 1. [`contract`] — what a contract is: [`ToolOutput`], [`OutputContract`],
//!    [`ContractId`], [`Compatibility`]; [`schema`] generation, closing, lints and the
//!    canonical form; [`validate`] and the [`fast`] plan; limits ([`finite`]);
//!    [`redact`]ion; JSON [`pointer`](mod@pointer)s and the one `$ref` resolver;
//!    [`completeness`]. It knows nothing of serving or of MCP's wire.
//! 2. [`serve`] — serving a result: the [`pipeline`], the [`cache`]s (in-memory; Redis
//!    with feature `redis`), the [`wire`] envelope, codes and protocol eras, and the
//!    contract [`set`].
//! 3. [`adapters`] — the rmcp server adapter (`rmcp`, feature `rmcp`) and the
//!    validating client harness (`client`, feature `client`; its rmcp part with
//!    `rmcp-client`).
//!
//! Each module is also reachable at the crate root (`contract_runtime::schema`,
//! `contract_runtime::pipeline`, `contract_runtime::rmcp`, …), the paths user code
//! writes.

pub mod adapters;
pub mod contract;
pub mod serve;

pub use contract::{completeness, fast, finite, pointer, redact, schema, validate};
pub use serve::{cache, pipeline, set, wire};

#[cfg(feature = "client")]
pub use adapters::client;
#[cfg(feature = "rmcp")]
pub use adapters::rmcp;

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
