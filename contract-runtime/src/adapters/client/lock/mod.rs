//! Pinning a server's tools: the lock file, its two digests, the drift between a pinned
//! tool and the one a server lists now, and the policy that decides what drift is
//! allowed through.
//!
//! A [`Lock`] (by convention the file [`LOCK_FILE`], `tools.lock.json`) holds, per server
//! (its command line or URL, and the `serverInfo` it gave), every tool it listed when it
//! was pinned: the definition a model and a client rely on — `name`, `title`,
//! `description`, `inputSchema`, `outputSchema`, `annotations` and the contract identity
//! the server sent in its `_meta`, if any — and two SHA-256 [`Digests`]:
//!
//! - `text`: everything a model reads — the name, the title, the description, the
//!   annotations' title, and every `title` and `description` of both schemas, at every
//!   depth, by pointer;
//! - `shape`: everything else a client relies on — both schemas without those texts, the
//!   behaviour hints, and the contract identity.
//!
//! Each digest is the SHA-256 of the canonical JSON of its part (object keys sorted, two
//! spaces of indentation, a final newline; [`canonical_string`]), the form every
//! checked-in schema of this project is hashed in, so neither key order nor insignificant
//! whitespace on the wire changes a digest. Two spellings of one number (`1` and `1.0`)
//! do give two digests; the drift then classifies the change, and finds nothing.
//!
//! [`drift_of_server`] compares a pinned server with its live tool list and classifies
//! every difference with the one grader of a tool's change,
//! `contract_runtime::evolution::tool::classify_tool` (the one `cargo xtask schemas
//! --check` calls): output schemas for responses, input schemas for requests, texts as
//! text (with the instruction-like phrases a new text adds), hints by safety, tools added
//! and removed. A [`LockPolicy`] turns each tool's drift into an [`Action`].
//!
//! ```
//! use contract_runtime::client::lock::{drift_of_server, Action, LockPolicy, LockedServer, ServerSource};
//! use serde_json::json;
//!
//! let listed = json!({
//!     "name": "lookup",
//!     "description": "Returns the record with the given id.",
//!     "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
//!     "annotations": {"readOnlyHint": true}
//! });
//! let pinned = LockedServer::pin(ServerSource::Command(vec!["records-server".into()]), None, &[listed.clone()]);
//!
//! // Keys in another order: the same digests, no drift.
//! let reordered: serde_json::Value = serde_json::from_str(
//!     r#"{"annotations": {"readOnlyHint": true}, "inputSchema": {"required": ["id"],
//!         "properties": {"id": {"type": "string"}}, "type": "object"},
//!         "description": "Returns the record with the given id.", "name": "lookup"}"#,
//! ).unwrap();
//! assert!(drift_of_server(&pinned, &[reordered]).is_empty());
//!
//! // The hint flipped: breaking, so the default policy quarantines the tool.
//! let mut flipped = listed.clone();
//! flipped["annotations"]["readOnlyHint"] = json!(false);
//! let drift = drift_of_server(&pinned, &[flipped]);
//! assert_eq!(drift[0].changes()[0].kind(), "hint_less_safe");
//! assert_eq!(LockPolicy::default().judge(&drift[0]), Action::Quarantine);
//! ```

mod allow;
mod digest;
mod drift;
mod file;
mod published;

pub use allow::{Action, LockPolicy};
pub use digest::{content_hash, digests, jcs, pinned_definition, Digests};
pub use drift::{drift_of_server, drift_of_tool, DriftStatus, ToolDrift};
pub use file::{Lock, LockError, LockedServer, LockedTool, PinnedServerInfo, ServerSource, DIGEST_FORM, LOCK_FILE};
pub use published::{published_hash, sep3140_hash, PublishedHash, MAX_SHOWN_HASH_CHARS, PUBLISHED_HASH_KEY};

#[allow(unused_imports)] // The module documentation links it.
use crate::contract::schema::canonical_string;
