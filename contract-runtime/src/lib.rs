//! Versioned, enforced output contracts for MCP tools: the result type is the single
//! source of truth. `#[derive(ToolOutput)]` turns it into a deterministic JSON Schema
//! 2020-12 contract with a version and a hash; the runtime validates every result against
//! it before anything is cached or sent, and the client side validates what any server
//! sends. The build-time tooling (writing and checking `schemas/`, classifying changes)
//! is the separate crate `contract-tools`.
//!
//! # Quickstart
//!
//! ```rust
//! use contract_runtime::ToolOutput;
//! use schemars::JsonSchema;
//! use serde::Serialize;
//!
//! /// Health of the agent fleet.
//! #[derive(Serialize, JsonSchema, ToolOutput)]
//! #[tool_output(version = "1.2.0", compatibility = "exact")]
//! pub struct FleetStatus {
//!     /// Agents that answered their last heartbeat.
//!     pub healthy: u32,
//!     /// What the coordinator reports, if anything.
//!     pub note: Option<String>,
//!     /// Where the coordinator listens; never shown in an error.
//!     #[tool_output(sensitive)]
//!     pub endpoint: String,
//! }
//!
//! let contract = FleetStatus::contract();
//! // The schema `tools/list` advertises and `schemas/fleet_status.json` holds:
//! assert_eq!(contract.schema(), &serde_json::json!({
//!     "$schema": "https://json-schema.org/draft/2020-12/schema",
//!     "title": "FleetStatus",
//!     "description": "Health of the agent fleet.",
//!     "type": "object",
//!     "properties": {
//!         "healthy": {
//!             "description": "Agents that answered their last heartbeat.",
//!             "type": "integer",
//!             "minimum": 0,
//!             "maximum": u32::MAX
//!         },
//!         "note": {
//!             "description": "What the coordinator reports, if anything.",
//!             "anyOf": [{ "type": "string" }, { "type": "null" }]
//!         },
//!         "endpoint": {
//!             "description": "Where the coordinator listens; never shown in an error.",
//!             "type": "string"
//!         }
//!     },
//!     "required": ["healthy", "note", "endpoint"],
//!     "additionalProperties": false
//! }));
//! // Its identity: name, version and the SHA-256 of the canonical bytes.
//! assert!(contract.id().to_string().starts_with("fleet_status@1.2.0+sha256:"));
//! assert_eq!(contract.sensitive_pointers(), ["/endpoint"]);
//!
//! // Every violation, with instance values masked.
//! let report = contract
//!     .validate(&serde_json::json!({ "healthy": "3", "endpoint": "10.0.0.7:9000" }))
//!     .unwrap_err();
//! let found: Vec<_> = report.violations().iter().map(|v| (v.pointer(), v.keyword())).collect();
//! assert_eq!(found, [("", "required"), ("/healthy", "type")]);
//! ```
//!
//! # Where to read on
//!
//! - [`contract`]: writing contracts — the derive's attributes, `exact` and `additive`,
//!   sensitive and opaque fields, the shapes schemars cannot describe.
//! - [`pipeline`]: enforcement at run time — the one path of every result, error codes,
//!   sanitizing, limits, completeness, protocol eras, the fast path.
//! - `rmcp` (feature `rmcp`): an rmcp server whose tools are contracted.
//! - [`cache`]: in-memory and Redis result caches bound to contract identities.
//! - [`observe`]: in production — report-only rollout, `tracing` events, counters.
//! - `client` (feature `client`): the validating client harness.
//! - [`set`]: [`ContractSet`], the one list a server serves and its xtask checks.
//! - `evolution` (feature `evolution`): the semantic diff of two schemas, for outputs
//!   and for arguments, and the version policy that follows from it.
#![warn(missing_docs)]
// The library reports through `tracing` events (`observe`), never on a process's own
// output streams, which a stdio server uses for protocol messages.
#![deny(clippy::print_stdout, clippy::print_stderr)]
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
//!    [`completeness`]; the semantic diff of two schemas (`evolution`, feature
//!    `evolution`). It knows nothing of serving or of MCP's wire.
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

// The derive's expansion names the crate `::contract_runtime`, in this crate too (the lock
// file's type derives its contract).
extern crate self as contract_runtime;

pub mod adapters;
pub mod contract;
pub mod serve;

pub use contract::{completeness, fast, finite, pointer, redact, schema, validate};
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
pub use contract::{Compatibility, ContractError, ContractId, OutputContract, ToolOutput};
/// Derives [`ToolOutput`]; see the crate documentation.
pub use contract_derive::ToolOutput;
pub use pipeline::{CallContext, Pipeline};
pub use schema::{keys, opaque, sensitive, AllOrNone, FlatMap, OpaqueMap};
pub use set::{Binding, ContractSet, SetError, SetProblem};
pub use validate::{Report, Violation};
pub use wire::{ErrorCode, ToolCallResult, ToolError, ToolFailure};
