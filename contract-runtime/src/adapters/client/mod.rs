//! The client side: a validating harness for agents that call MCP servers (feature
//! `client`).
//!
//! An agent that calls tools sits at a trust boundary: the model's arguments go out to a
//! server, and the server's JSON comes back into the model's context. This module treats
//! the two schemas a server publishes in `tools/list` as gates at that boundary:
//!
//! - [`Catalog`] holds every listed tool, keyed by name and by the SHA-256 of its
//!   schemas, with one compiled 2020-12 validator per schema. It is rebuilt from all
//!   `tools/list` pages, and marked stale on `notifications/tools/list_changed` or a
//!   reconnect; a rebuild reuses the validators of tools whose schemas did not change.
//! - [`Catalog::check_arguments`] validates the model's arguments against `inputSchema`
//!   before `tools/call` (the root is an object; unions live inside it).
//! - [`Catalog::check_result`] turns a `tools/call` result into a [`CallOutcome`]: a
//!   validated value, a declared error with its code, or a contract failure whose
//!   violations carry JSON pointers and keywords but never values. A success also
//!   reports keys that `structuredContent` and its JSON text block do not share
//!   ([`structured_text_mismatch`]) and a value that says it failed without `isError`
//!   ([`false_success`]); a declared error says whether it is the server's SDK refusing
//!   the tool's own output ([`self_refusal`]). [`CallOutcome::notices`] reads these as
//!   lines for a report (a kind, a pointer, a sentence); the rmcp harness logs them.
//! - The catalog holds the server to a pin of its tools ([`lock`]): a lock file's, or the
//!   first listing. A tool that drifted in a way the [`lock::LockPolicy`] holds back is
//!   quarantined: refused before `tools/call` ([`FailureKind::Quarantined`]) and left out
//!   of [`Catalog::model_tools`] until it is approved.
//! - [`submission`] compares a ChatGPT app submission manifest with a tool list.
//!
//! The core is transport-agnostic: it reads tool definitions and results as JSON. The
//! rmcp integration (feature `rmcp-client`) lives in the `rmcp` submodule.
//!
//! # Examples
//!
//! ```
//! use contract_runtime::client::{Catalog, CallOutcome};
//! use serde_json::json;
//!
//! let mut catalog = Catalog::new();
//! catalog.refresh([json!({
//!     "name": "count",
//!     "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
//!     "outputSchema": {"type": "integer", "minimum": 0}
//! })]);
//!
//! assert!(catalog.check_arguments("count", &json!({"q": "bugs"})).is_ok());
//! assert!(catalog.check_arguments("count", &json!({"q": 7})).is_err());
//!
//! let ok = catalog.check_result("count", &json!({"content": [], "structuredContent": 3}));
//! assert!(matches!(ok, CallOutcome::Success(_)));
//! let bad = catalog.check_result("count", &json!({"content": [], "structuredContent": -1}));
//! assert!(matches!(bad, CallOutcome::ContractFailure(_)));
//! ```
//!
#![doc = include_str!("../../../docs/client.md")]

mod catalog;
mod contract_meta;
pub mod lock;
mod notice;
mod outcome;
#[cfg(feature = "rmcp-client")]
pub mod rmcp;
mod signals;
pub mod submission;

pub use catalog::{Catalog, RefreshReport, ToolEntry, MAX_UNDECLARED_NAMED};
pub use contract_meta::ContractInfo;
pub use notice::Notice;
pub use outcome::{self_refusal, CallOutcome, ContractFailure, DeclaredError, FailureKind, Success};
pub use signals::{
    false_success, structured_text_mismatch, FalseSuccess, KeyMismatch, RefusalPattern, SelfRefusal,
    MAX_FALSE_SUCCESS_MESSAGE_CHARS, MAX_KEY_CHARS, MAX_MISMATCHED_KEYS, SELF_REFUSALS,
};
