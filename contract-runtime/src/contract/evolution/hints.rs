//! Tool annotations classified by safety.
//!
//! A client may auto-approve a tool by its behaviour hints, so a hint that moves to the
//! less safe value (or is removed where its default is the less safe value) is breaking:
//! a client that approved the tool must ask again. The other direction is additive. MCP's
//! defaults: `readOnlyHint` false, `destructiveHint` true, `idempotentHint` false,
//! `openWorldHint` true.
//!
//! ```
//! use contract_runtime::evolution::hints::hint_changes;
//! use contract_runtime::evolution::Verdict;
//! use serde_json::json;
//!
//! let old = json!({"readOnlyHint": true});
//! let new = json!({"readOnlyHint": false});
//! let changes = hint_changes(old.as_object(), new.as_object());
//! assert_eq!(changes[0].verdict(), Verdict::Breaking);
//! assert_eq!(changes[0].kind(), "hint_less_safe");
//! // Back again: safer, so additive.
//! assert_eq!(hint_changes(new.as_object(), old.as_object())[0].verdict(), Verdict::Additive);
//! ```

use serde_json::{Map, Value};

use super::Verdict;

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

/// How one hint changed between two annotation objects.
#[derive(Clone, Debug, PartialEq)]
pub struct HintChange {
    hint: Hint,
    old: Option<Value>,
    new: Option<Value>,
    kind: &'static str,
    verdict: Verdict,
    why: &'static str,
}

impl HintChange {
    /// The hint.
    #[must_use]
    pub fn hint(&self) -> Hint {
        self.hint
    }

    /// The old value as declared (`None`: absent).
    #[must_use]
    pub fn old(&self) -> Option<&Value> {
        self.old.as_ref()
    }

    /// The new value as declared (`None`: absent).
    #[must_use]
    pub fn new_value(&self) -> Option<&Value> {
        self.new.as_ref()
    }

    /// `hint_spelled_out` (the same for clients), `hint_safer`, `hint_less_safe` or
    /// `hint_unclassified` (a value that is not a boolean).
    #[must_use]
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// Cosmetic, additive (safer) or breaking (less safe, or not a boolean).
    #[must_use]
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// Why, in a few words: `less safe: a client that auto-approved the tool must ask again`.
    #[must_use]
    pub fn why(&self) -> &'static str {
        self.why
    }

    /// `~ /annotations/readOnlyHint (true → false, less safe: …)`: the review line.
    #[must_use]
    pub fn line(&self) -> String {
        let shown =
            |v: &Option<Value>| v.as_ref().map_or_else(|| format!("absent ({})", self.hint.default), Value::to_string);
        format!("~ /annotations/{} ({} → {}, {})", self.hint.key, shown(&self.old), shown(&self.new), self.why)
    }
}

/// The hint's value as a client reads it: the declared boolean, or the default.
/// `None` for a value that is not a boolean.
#[must_use]
pub fn effective(hint: Hint, annotations: Option<&Map<String, Value>>) -> Option<bool> {
    match annotations.and_then(|m| m.get(hint.key)) {
        None | Some(Value::Null) => Some(hint.default),
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => None,
    }
}

/// Every hint that differs from `old` annotations to `new` (`None` when absent), in the
/// order of [`HINTS`], classified by safety. Other keys (`title`, unknown ones) are the
/// caller's: a title is text, an unknown key is not classified here.
#[must_use]
pub fn hint_changes(old: Option<&Map<String, Value>>, new: Option<&Map<String, Value>>) -> Vec<HintChange> {
    let get = |m: Option<&Map<String, Value>>, k: &str| m.and_then(|m| m.get(k)).cloned();
    let mut out = Vec::new();
    for hint in HINTS {
        let (a, b) = (get(old, hint.key), get(new, hint.key));
        if a == b {
            continue;
        }
        let (verdict, kind, why) = match (effective(hint, old), effective(hint, new)) {
            (Some(x), Some(y)) if x == y => (Verdict::Cosmetic, "hint_spelled_out", "the same for clients"),
            (Some(_), Some(y)) if y == hint.safe => (Verdict::Additive, "hint_safer", "safer: clients may ask less"),
            (Some(_), Some(_)) => {
                (Verdict::Breaking, "hint_less_safe", "less safe: a client that auto-approved the tool must ask again")
            }
            _ => (Verdict::Breaking, "hint_unclassified", "not a boolean, so assumed unsafe"),
        };
        out.push(HintChange { hint, old: a, new: b, kind, verdict, why });
    }
    out
}
