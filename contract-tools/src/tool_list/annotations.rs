//! The opt-in annotations manifest. The hints themselves are classified by safety by
//! `contract_runtime::evolution::tool::classify_annotations`: a client may auto-approve a
//! tool by its hints, so a hint that moves to the less safe value (or is removed where its
//! default is the less safe value) is breaking. MCP's defaults: `readOnlyHint` false,
//! `destructiveHint` true, `idempotentHint` false, `openWorldHint` true.

use serde_json::{Map, Value};

/// The opt-in annotations manifest inside `schemas/tools/`: kept for an app-store
/// submission, checked against the live tool list when it exists.
pub const MANIFEST: &str = "annotations.json";

pub use contract_runtime::evolution::hints::{Hint, HINTS};

/// The manifest's entry for one tool: every hint with the value a client reads.
pub(super) fn manifest_entry(annotations: Option<&Map<String, Value>>) -> Value {
    let mut out = Map::new();
    for hint in HINTS {
        match annotations.and_then(|m| m.get(hint.key)) {
            Some(Value::Bool(b)) => out.insert(hint.key.to_owned(), Value::Bool(*b)),
            // Spelled out as clients read it; a non-boolean is kept as it is, to be refused.
            None | Some(Value::Null) => out.insert(hint.key.to_owned(), Value::Bool(hint.default)),
            Some(other) => out.insert(hint.key.to_owned(), other.clone()),
        };
    }
    Value::Object(out)
}
