//! Tool annotations classified by safety, and the opt-in annotations manifest.
//!
//! A client may auto-approve a tool by its hints, so a hint that moves to the less safe
//! value (or is removed where its default is the less safe value) is breaking: a client
//! that approved must ask again. MCP's defaults: `readOnlyHint` false, `destructiveHint`
//! true, `idempotentHint` false, `openWorldHint` true.

use serde_json::{Map, Value};

use contract_runtime::evolution::hints::hint_changes;

use super::review::{ToolArea, ToolChange, ToolVerdict};

/// The opt-in annotations manifest inside `schemas/tools/`: kept for an app-store
/// submission, checked against the live tool list when it exists.
pub const MANIFEST: &str = "annotations.json";

pub use contract_runtime::evolution::hints::{Hint, HINTS};

/// Classifies every change from `old` annotations to `new` (`None` when absent): each
/// hint by safety, `title` as text, any other key as unclassified (breaking).
#[must_use]
pub fn classify_annotations(old: Option<&Map<String, Value>>, new: Option<&Map<String, Value>>) -> Vec<ToolChange> {
    let mut out = Vec::new();
    let get = |m: Option<&Map<String, Value>>, k: &str| m.and_then(|m| m.get(k)).cloned();
    for change in hint_changes(old, new) {
        let pointer = format!("/annotations/{}", change.hint().key);
        out.push(ToolChange::new(
            ToolArea::Annotation,
            change.kind(),
            ToolVerdict::of(change.verdict()),
            pointer,
            change.line(),
            change.new_value().is_none(),
        ));
    }
    let a = get(old, "title").and_then(|v| v.as_str().map(str::to_owned));
    let b = get(new, "title").and_then(|v| v.as_str().map(str::to_owned));
    if a != b {
        out.push(ToolChange::text("/annotations/title", "annotations.title", a.as_deref(), b.as_deref()));
    }
    let known = |k: &str| k == "title" || HINTS.iter().any(|h| h.key == k);
    let mut keys: Vec<&String> =
        old.into_iter().chain(new).flat_map(Map::keys).filter(|k| !known(k)).collect::<Vec<_>>();
    keys.sort();
    keys.dedup();
    for key in keys {
        let (a, b) = (get(old, key), get(new, key));
        if a != b {
            let pointer = format!("/annotations/{}", contract_runtime::pointer::escape(key));
            let line = format!("~ {pointer} (an annotation this review does not know, so assumed unsafe)");
            out.push(ToolChange::new(
                ToolArea::Annotation,
                "annotation_unclassified",
                ToolVerdict::Breaking,
                pointer,
                line,
                b.is_none(),
            ));
        }
    }
    out
}

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
