//! What a `tools/call` result says beside its validity, judged from the result alone:
//!
//! - [`structured_text_mismatch`]: keys present in `structuredContent` and not in the one
//!   JSON text block, or the other way round. A server whose SDK strips undeclared keys
//!   from `structuredContent` (fastmcp parses it with zod, which drops every key the
//!   output schema does not name) still sends them in the text: a client reading
//!   `structuredContent` never sees them, a model reading the text does.
//! - [`self_refusal`](super::self_refusal): an `isError` result that is the server's SDK refusing the tool's
//!   own output (its output validation failed), not the tool reporting an error. The
//!   recognizers are one table, [`SELF_REFUSALS`], each with the SDK it belongs to.
//! - [`false_success`]: a result without `isError` whose value says it failed
//!   (`success: false`, `ok: false`, `status: "error"`, or nothing but an `error`): a
//!   client and a model that trust `isError` take it for a success.
//!
//! Nothing here quotes a value the server sent, except an error message, which is
//! sanitized ([`crate::redact::sanitize`]) and bounded. Key names are server-chosen text:
//! they appear only as escaped, bounded pointer tokens, and only so many of them.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::{Map, Value};

/// The most keys a [`KeyMismatch`] lists (both sides together); the rest are counted in
/// [`KeyMismatch::more`].
pub const MAX_MISMATCHED_KEYS: usize = 16;

/// The longest key name kept in a pointer token, in characters; a longer one is cut and
/// marked with `…`.
pub const MAX_KEY_CHARS: usize = 64;

/// The longest error message a [`FalseSuccess`] keeps, in characters.
pub const MAX_FALSE_SUCCESS_MESSAGE_CHARS: usize = 200;

/// How deep [`structured_text_mismatch`] compares nested objects and arrays.
const MAX_DEPTH: usize = 32;

/// Keys in one of `structuredContent` and the JSON text block and not in the other, as
/// JSON pointers into the value (escaped, each token at most [`MAX_KEY_CHARS`]
/// characters, control characters written as `\u{..}`), never their values.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct KeyMismatch {
    /// Keys the text block's JSON has and `structuredContent` lacks: what a client that
    /// reads `structuredContent` never sees.
    pub only_in_text: Vec<String>,
    /// Keys `structuredContent` has and the text block's JSON lacks.
    pub only_in_structured: Vec<String>,
    /// How many more differences were found than are listed.
    #[serde(skip_serializing_if = "is_zero")]
    pub more: usize,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` hands a reference.
fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl KeyMismatch {
    /// Every listed pointer with the side it is on: `(pointer, true)` when only the text
    /// has the key, `(pointer, false)` when only `structuredContent` has it.
    pub fn keys(&self) -> impl Iterator<Item = (&str, bool)> {
        self.only_in_text
            .iter()
            .map(|p| (p.as_str(), true))
            .chain(self.only_in_structured.iter().map(|p| (p.as_str(), false)))
    }
}

/// Compares `structuredContent` with the result's one text block, when there is exactly
/// one text block and it parses as JSON, and returns the keys found on one side only, at
/// any depth (objects are compared key by key, arrays item by item up to the shorter
/// one's length). `None` when there is nothing to compare or no key differs.
///
/// A `structuredContent` of the single key `result` whose text is not an object with
/// that key is compared by its `result`: that is how the Python SDK wraps a tool's
/// non-object return value.
///
/// # Examples
///
/// ```
/// use contract_runtime::client::structured_text_mismatch;
/// use serde_json::json;
///
/// // fastmcp dropped `creditsUsed` from structuredContent; the text still has it.
/// let result = json!({
///     "content": [{"type": "text", "text": r#"{"markdown": "hi", "creditsUsed": 1}"#}],
///     "structuredContent": {"markdown": "hi"},
/// });
/// let mismatch = structured_text_mismatch(&result).unwrap();
/// assert_eq!(mismatch.only_in_text, ["/creditsUsed"]);
/// assert!(mismatch.only_in_structured.is_empty());
///
/// // The same keys on both sides: nothing to report, whatever the values.
/// let clean = json!({
///     "content": [{"type": "text", "text": r#"{"markdown": "hello"}"#}],
///     "structuredContent": {"markdown": "hi"},
/// });
/// assert!(structured_text_mismatch(&clean).is_none());
/// ```
#[must_use]
pub fn structured_text_mismatch(result: &Value) -> Option<KeyMismatch> {
    let structured = result.get("structuredContent").filter(|v| !v.is_null())?;
    let text = only_json_text(result)?;
    let structured = match structured.as_object() {
        Some(map) if map.len() == 1 && map.contains_key("result") && text.get("result").is_none() => &map["result"],
        _ => structured,
    };
    let mut mismatch = KeyMismatch::default();
    compare(structured, &text, &mut mismatch);
    (!mismatch.only_in_text.is_empty() || !mismatch.only_in_structured.is_empty() || mismatch.more > 0)
        .then_some(mismatch)
}

/// The JSON of the result's text block, when it has exactly one and it parses.
fn only_json_text(result: &Value) -> Option<Value> {
    let mut texts = result
        .get("content")?
        .as_array()?
        .iter()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"));
    let first = texts.next()?;
    if texts.next().is_some() {
        return None;
    }
    let text = first.get("text")?.as_str()?;
    // Only a text that looks like a JSON document is parsed: most plain text fails at
    // its first character, but this keeps prose such as `42 results` out.
    let trimmed = text.trim_start();
    if !trimmed.starts_with('{') && !trimmed.starts_with('[') {
        return None;
    }
    serde_json::from_str(text).ok()
}

/// Walks both values side by side with an explicit stack (a hostile text may be deep).
fn compare(structured: &Value, text: &Value, out: &mut KeyMismatch) {
    let mut stack: Vec<(&Value, &Value, String, usize)> = vec![(structured, text, String::new(), 0)];
    while let Some((s, t, pointer, depth)) = stack.pop() {
        match (s, t) {
            (Value::Object(s), Value::Object(t)) => {
                one_side(s, t, &pointer, false, out);
                one_side(t, s, &pointer, true, out);
                if depth < MAX_DEPTH {
                    // Reversed, so that the stack pops them in key order.
                    for (key, sv) in s.iter().rev() {
                        if let Some(tv) = t.get(key) {
                            stack.push((sv, tv, format!("{pointer}/{}", token(key)), depth + 1));
                        }
                    }
                }
            }
            (Value::Array(s), Value::Array(t)) if depth < MAX_DEPTH => {
                for (i, (sv, tv)) in s.iter().zip(t).enumerate().rev() {
                    stack.push((sv, tv, format!("{pointer}/{i}"), depth + 1));
                }
            }
            _ => {}
        }
    }
}

/// Records the keys of `have` that `lack` does not have.
fn one_side(have: &Map<String, Value>, lack: &Map<String, Value>, pointer: &str, text: bool, out: &mut KeyMismatch) {
    for key in have.keys().filter(|k| !lack.contains_key(k.as_str())) {
        if out.only_in_text.len() + out.only_in_structured.len() >= MAX_MISMATCHED_KEYS {
            out.more += 1;
            continue;
        }
        let at = format!("{pointer}/{}", token(key));
        if text {
            out.only_in_text.push(at);
        } else {
            out.only_in_structured.push(at);
        }
    }
}

/// A key as a pointer token: escaped (RFC 6901), control characters written out, cut to
/// [`MAX_KEY_CHARS`] characters.
fn token(key: &str) -> String {
    let mut out = String::new();
    for (i, c) in key.chars().enumerate() {
        if i == MAX_KEY_CHARS {
            out.push('…');
            break;
        }
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c if c.is_control() => out.push_str(&c.escape_unicode().to_string()),
            c => out.push(c),
        }
    }
    out
}

/// A server's SDK refusing a tool's own result: which SDK, by the recognizer that matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SelfRefusal {
    /// The SDK (or library) whose message this is, such as `fastmcp 4.x`.
    pub sdk: &'static str,
}

/// How a recognizer reads an `isError` result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefusalPattern {
    /// The error text (all text blocks, joined by newlines) matches this regular
    /// expression, anchored at its start.
    Text(&'static str),
    /// The error envelope (`{"error": {"code": …}}`) carries this code.
    Code(&'static str),
}

/// Every recognized way a server refuses its own output, with the SDK it belongs to; each
/// is proven against the pinned package in the tests (`tests/tests/client/audit_real.rs`).
///
/// - fastmcp 4.x (4.3.2) validates `structuredContent` with the tool's Standard Schema
///   and answers `Tool '<name>' structured output validation failed: …`.
/// - The TypeScript SDK v1 (`@modelcontextprotocol/sdk` 1.32.2) `McpServer` answers
///   `MCP error -32602: Output validation error: …` (a wrong `structuredContent`, or none
///   under an `outputSchema`).
/// - The TypeScript SDK v2 (`@modelcontextprotocol/server` 2.4.0) `McpServer` answers
///   `Output validation error: …` with the same two reasons.
/// - A tool-contracts server answers with our envelope and the code
///   `output_contract_violation` or `false_completeness`.
///
/// The Python SDK (mcp 2.3.0) refuses a wrong result too, but with `Error executing tool
/// <name>`, the message of any crash in the tool: it is not recognized, so as not to call
/// every crash a refusal.
pub const SELF_REFUSALS: &[(&str, RefusalPattern)] = &[
    ("fastmcp 4.x", RefusalPattern::Text(r"Tool '[^']*' structured output validation failed: ")),
    ("TypeScript SDK v1", RefusalPattern::Text(r"MCP error -32602: Output validation error: ")),
    ("TypeScript SDK v2", RefusalPattern::Text(r"Output validation error: ")),
    ("tool-contracts", RefusalPattern::Code("output_contract_violation")),
    ("tool-contracts", RefusalPattern::Code("false_completeness")),
];

fn refusal_regexes() -> &'static [(usize, Regex)] {
    static COMPILED: OnceLock<Vec<(usize, Regex)>> = OnceLock::new();
    COMPILED.get_or_init(|| {
        SELF_REFUSALS
            .iter()
            .enumerate()
            .filter_map(|(i, (_, pattern))| match pattern {
                RefusalPattern::Text(re) => {
                    Some((i, Regex::new(&format!("^(?:{re})")).expect("refusal patterns compile")))
                }
                RefusalPattern::Code(_) => None,
            })
            .collect()
    })
}

/// The SDK whose refusal of a tool's own output a declared error is, from its envelope's
/// code when it has one, else from its message ([`SELF_REFUSALS`]); see
/// [`self_refusal`](super::self_refusal).
pub(super) fn refusal_of(code: Option<&str>, message: &str) -> Option<SelfRefusal> {
    // An envelope's code is the whole answer: its message is the tool's own text.
    if let Some(code) = code {
        let by_code = SELF_REFUSALS.iter().find(|(_, p)| matches!(p, RefusalPattern::Code(c) if *c == code));
        return by_code.map(|(sdk, _)| SelfRefusal { sdk });
    }
    refusal_regexes().iter().find(|(_, re)| re.is_match(message)).map(|(i, _)| SelfRefusal { sdk: SELF_REFUSALS[*i].0 })
}

/// A result without `isError` whose value says the call failed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FalseSuccess {
    /// Where the value was read: `structuredContent`, or `text` (the one JSON text block,
    /// when there is no `structuredContent`).
    pub source: &'static str,
    /// The member that says so, as a JSON pointer into that value (`/success`, `/ok`,
    /// `/status` or `/error`).
    pub pointer: String,
    /// What it says: `success: false`, `ok: false`, `status: "error"` or `only an error`.
    pub signal: &'static str,
    /// The error message, when the value carries one (`error` as a string or an object's
    /// `message`, else `message`): sanitized and at most
    /// [`MAX_FALSE_SUCCESS_MESSAGE_CHARS`] characters.
    pub message: Option<String>,
}

/// Whether a result that is not `isError` looks like an error: its `structuredContent`
/// (or, when it has none, its one JSON text block) is an object whose `success` or `ok` is
/// `false`, whose `status` is `"error"`, or whose only member is a non-null `error`.
///
/// # Examples
///
/// ```
/// use contract_runtime::client::false_success;
/// use serde_json::json;
///
/// let result = json!({"content": [{"type": "text", "text": r#"{"success": false, "error": "Task not found: x"}"#}]});
/// let found = false_success(&result).unwrap();
/// assert_eq!((found.source, found.pointer.as_str(), found.signal), ("text", "/success", "success: false"));
/// assert_eq!(found.message.as_deref(), Some("Task not found: x"));
///
/// // A real success, and an error the server declared, are not false successes.
/// assert!(false_success(&json!({"content": [], "structuredContent": {"success": true}})).is_none());
/// assert!(false_success(&json!({"isError": true, "content": [{"type": "text", "text": r#"{"success": false}"#}]})).is_none());
/// ```
#[must_use]
pub fn false_success(result: &Value) -> Option<FalseSuccess> {
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    let parsed;
    let (source, value) = if let Some(value) = result.get("structuredContent").filter(|v| !v.is_null()) {
        ("structuredContent", value)
    } else {
        parsed = only_json_text(result)?;
        ("text", &parsed)
    };
    let object = value.as_object()?;
    let (pointer, signal) = if object.get("success") == Some(&Value::Bool(false)) {
        ("/success", "success: false")
    } else if object.get("ok") == Some(&Value::Bool(false)) {
        ("/ok", "ok: false")
    } else if object.get("status").and_then(Value::as_str).is_some_and(|s| s.eq_ignore_ascii_case("error")) {
        ("/status", "status: \"error\"")
    } else if object.len() == 1 && object.get("error").is_some_and(|e| !e.is_null() && *e != Value::Bool(false)) {
        ("/error", "only an error")
    } else {
        return None;
    };
    Some(FalseSuccess { source, pointer: pointer.to_owned(), signal, message: error_message(object) })
}

/// The error message an error-like object carries, sanitized and bounded.
fn error_message(object: &Map<String, Value>) -> Option<String> {
    let text = match object.get("error") {
        Some(Value::String(text)) => Some(text.as_str()),
        Some(Value::Object(error)) => error.get("message").and_then(Value::as_str),
        _ => None,
    }
    .or_else(|| object.get("message").and_then(Value::as_str))?;
    let clean: String = crate::contract::redact::sanitize(text, &[])
        .chars()
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect();
    Some(match clean.char_indices().nth(MAX_FALSE_SUCCESS_MESSAGE_CHARS) {
        Some((cut, _)) => format!("{}…", &clean[..cut]),
        None => clean,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    fn with_text(structured: Option<Value>, text: &str) -> Value {
        let mut result = json!({"content": [{"type": "text", "text": text}]});
        if let Some(structured) = structured {
            result["structuredContent"] = structured;
        }
        result
    }

    #[test]
    fn mismatched_keys_at_any_depth_with_escaped_pointers() {
        let text = json!({"a": 1, "x/y": 2, "nested": {"keep": 1, "lost~": 2, "list": [{"k": 1, "extra": 0}]}});
        let structured = json!({"a": 1, "nested": {"keep": 1, "added": 3, "list": [{"k": 1}]}});
        let m = structured_text_mismatch(&with_text(Some(structured), &text.to_string())).unwrap();
        assert_eq!(m.only_in_text, ["/x~1y", "/nested/lost~0", "/nested/list/0/extra"]);
        assert_eq!(m.only_in_structured, ["/nested/added"]);
        assert_eq!(m.more, 0);
    }

    #[test]
    fn mismatch_is_bounded_in_count_and_length_and_escapes_control_characters() {
        let mut text = serde_json::Map::new();
        for i in 0..40 {
            text.insert(format!("k{i:02}"), json!(i));
        }
        text.insert("\u{1b}[2J".to_owned(), json!(0));
        text.insert("n".repeat(500), json!(0));
        let m = structured_text_mismatch(&with_text(Some(json!({})), &Value::Object(text).to_string())).unwrap();
        assert_eq!(m.only_in_text.len(), MAX_MISMATCHED_KEYS);
        assert_eq!(m.more, 42 - MAX_MISMATCHED_KEYS);
        let all = structured_text_mismatch(&with_text(
            Some(json!({})),
            &json!({"\u{1b}[2J": 0, "n".repeat(500): 0}).to_string(),
        ))
        .unwrap();
        assert_eq!(all.only_in_text, ["/\\u{1b}[2J".to_owned(), format!("/{}…", "n".repeat(MAX_KEY_CHARS))]);
    }

    #[test]
    fn no_mismatch_without_one_json_text_block() {
        let structured = Some(json!({"a": 1}));
        // Same keys, different values: nothing.
        assert!(structured_text_mismatch(&with_text(structured.clone(), r#"{"a": 2}"#)).is_none());
        // Prose, no structuredContent, two text blocks: nothing to compare.
        assert!(structured_text_mismatch(&with_text(structured.clone(), "a is 1")).is_none());
        assert!(structured_text_mismatch(&with_text(None, r#"{"a": 1, "b": 2}"#)).is_none());
        let two = json!({"content": [{"type": "text", "text": "{}"}, {"type": "text", "text": "{}"}], "structuredContent": {"a": 1}});
        assert!(structured_text_mismatch(&two).is_none());
        // The Python SDK's wrapping of a non-object result is compared by its `result`.
        assert!(structured_text_mismatch(&with_text(Some(json!({"result": [{"a": 1}]})), r#"[{"a": 1}]"#)).is_none());
        // A deep text cannot exhaust the stack.
        let deep = "[".repeat(10_000) + &"]".repeat(10_000);
        assert!(structured_text_mismatch(&with_text(Some(json!([])), &deep)).is_none());
    }

    #[test]
    fn false_successes_by_signal_and_clean_controls() {
        let found = |structured: Option<Value>, text: &str| {
            false_success(&with_text(structured, text)).map(|f| (f.source, f.pointer, f.signal, f.message))
        };
        let s = |v: Value| Some(v);
        assert_eq!(
            found(s(json!({"success": false, "error": {"message": "quota hit"}})), ""),
            Some(("structuredContent", "/success".to_owned(), "success: false", Some("quota hit".to_owned())))
        );
        assert_eq!(found(s(json!({"ok": false})), "").map(|f| f.2), Some("ok: false"));
        assert_eq!(
            found(s(json!({"status": "error", "message": "boom"})), "").map(|f| (f.2, f.3)),
            Some(("status: \"error\"", Some("boom".to_owned())))
        );
        assert_eq!(found(None, r#"{"error": "nope"}"#).map(|f| (f.0, f.2)), Some(("text", "only an error")));
        // The message is sanitized and bounded.
        let long = format!("token=abc123 at /home/ci/x {}", "y".repeat(500));
        let message = found(None, &json!({"success": false, "error": long}).to_string()).unwrap().3.unwrap();
        assert!(!message.contains("abc123") && !message.contains("/home/ci"), "{message}");
        assert_eq!(message.chars().count(), MAX_FALSE_SUCCESS_MESSAGE_CHARS + 1);
        // Clean controls.
        assert_eq!(found(s(json!({"success": true, "error": null})), ""), None);
        assert_eq!(found(s(json!({"error": null})), ""), None);
        assert_eq!(found(s(json!({"status": "done", "error": "old"})), ""), None);
        assert_eq!(found(s(json!({"data": [], "error": "partial"})), ""), None);
        assert_eq!(found(None, "success: false"), None);
        // structuredContent is read first: a text that disagrees is the other finding's.
        assert_eq!(found(s(json!({"success": true})), r#"{"success": false}"#), None);
    }
}
