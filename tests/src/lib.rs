//! Test-only crate; the tests live in `tests/tests/`. Helpers shared by several of them
//! live here.

use serde_json::Value;

/// Every `format` keyword's string value anywhere in `value` (a schema, or a whole
/// `tools/list` result), in document order.
#[must_use]
pub fn formats(value: &Value) -> Vec<String> {
    fn walk(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, v) in map {
                    match (key.as_str(), v) {
                        ("format", Value::String(f)) => out.push(f.clone()),
                        _ => walk(v, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(value, &mut out);
    out
}
