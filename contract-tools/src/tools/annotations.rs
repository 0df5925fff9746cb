//! Tool annotations classified by safety, and the opt-in annotations manifest.
//!
//! A client may auto-approve a tool by its hints, so a hint that moves to the less safe
//! value (or is removed where its default is the less safe value) is breaking: a client
//! that approved must ask again. MCP's defaults: `readOnlyHint` false, `destructiveHint`
//! true, `idempotentHint` false, `openWorldHint` true.

use serde_json::{Map, Value};

use super::review::{ToolArea, ToolChange, ToolVerdict};

/// The opt-in annotations manifest inside `schemas/tools/`: kept for an app-store
/// submission, checked against the live tool list when it exists.
pub const MANIFEST: &str = "annotations.json";

/// One of the four behaviour hints of MCP tool annotations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hint {
    /// The key, such as `readOnlyHint`.
    pub key: &'static str,
    /// Its value when absent.
    pub default: bool,
    /// Its safe value: the one a client may auto-approve on.
    pub safe: bool,
}

/// The four hints, with their defaults and safe values.
pub const HINTS: [Hint; 4] = [
    Hint { key: "readOnlyHint", default: false, safe: true },
    Hint { key: "destructiveHint", default: true, safe: false },
    Hint { key: "idempotentHint", default: false, safe: true },
    Hint { key: "openWorldHint", default: true, safe: false },
];

/// The hint's value as a client reads it: the declared boolean, or the default.
/// `Err` for a value that is not a boolean.
fn effective(hint: Hint, map: Option<&Map<String, Value>>) -> Result<bool, ()> {
    match map.and_then(|m| m.get(hint.key)) {
        None | Some(Value::Null) => Ok(hint.default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(()),
    }
}

/// Classifies every change from `old` annotations to `new` (`None` when absent): each
/// hint by safety, `title` as text, any other key as unclassified (breaking).
#[must_use]
pub fn classify_annotations(old: Option<&Map<String, Value>>, new: Option<&Map<String, Value>>) -> Vec<ToolChange> {
    let mut out = Vec::new();
    let get = |m: Option<&Map<String, Value>>, k: &str| m.and_then(|m| m.get(k)).cloned();
    for hint in HINTS {
        let (a, b) = (get(old, hint.key), get(new, hint.key));
        if a == b {
            continue;
        }
        let pointer = format!("/annotations/{}", hint.key);
        let shown =
            |v: &Option<Value>| v.as_ref().map_or_else(|| format!("absent ({})", hint.default), Value::to_string);
        let (verdict, kind, why) = match (effective(hint, old), effective(hint, new)) {
            (Ok(x), Ok(y)) if x == y => (ToolVerdict::Cosmetic, "hint_spelled_out", "the same for clients".to_owned()),
            (Ok(_), Ok(y)) if y == hint.safe => {
                (ToolVerdict::Additive, "hint_safer", "safer: clients may ask less".to_owned())
            }
            (Ok(_), Ok(_)) => (
                ToolVerdict::Breaking,
                "hint_less_safe",
                "less safe: a client that auto-approved the tool must ask again".to_owned(),
            ),
            _ => (ToolVerdict::Breaking, "hint_unclassified", "not a boolean, so assumed unsafe".to_owned()),
        };
        let line = format!("~ {pointer} ({} → {}, {why})", shown(&a), shown(&b));
        out.push(ToolChange::new(ToolArea::Annotation, kind, verdict, pointer, line, b.is_none()));
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
