//! A minimal instance of an `inputSchema`, to call a tool without an arguments file.
//!
//! The instance is only a candidate: the caller keeps it only if the tool's own compiled
//! validator accepts it, so a schema this module misreads costs a skipped call, never
//! an invalid one.

use serde_json::{json, Map, Value};

use crate::lint::resolve;

/// How deep `$ref`s and nesting are followed before giving up.
const MAX_DEPTH: usize = 16;

/// Candidates for the arguments of a tool: one per branch of a root `oneOf`/`anyOf`
/// (unions live inside the object root), else one.
pub(crate) fn candidates(schema: &Value) -> Vec<Value> {
    let Some(object) = schema.as_object() else { return vec![json!({})] };
    for union in ["oneOf", "anyOf"] {
        if let Some(Value::Array(branches)) = object.get(union) {
            return branches
                .iter()
                .filter_map(|branch| {
                    let mut merged = object.clone();
                    merged.remove(union);
                    if let Value::Object(extra) = branch {
                        merged.extend(extra.clone());
                    }
                    minimal(schema, &Value::Object(merged), 0)
                })
                .collect();
        }
    }
    minimal(schema, schema, 0).into_iter().collect()
}

/// The smallest value `node` plausibly accepts.
fn minimal(root: &Value, node: &Value, depth: usize) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    let object = match node {
        Value::Bool(true) => return Some(Value::Null),
        Value::Object(object) => object,
        _ => return None,
    };
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        let target = resolve(root, reference.strip_prefix('#')?)?;
        return minimal(root, target, depth + 1);
    }
    if let Some(value) = object.get("const") {
        return Some(value.clone());
    }
    if let Some(first) = object.get("enum").and_then(Value::as_array).and_then(|e| e.first()) {
        return Some(first.clone());
    }
    if let Some(default) = object.get("default") {
        return Some(default.clone());
    }
    for union in ["oneOf", "anyOf"] {
        if let Some(first) = object.get(union).and_then(Value::as_array).and_then(|b| b.first()) {
            return minimal(root, first, depth + 1);
        }
    }
    if let Some(Value::Array(parts)) = object.get("allOf") {
        let mut merged = Map::new();
        for part in parts {
            if let Value::Object(fields) = minimal(root, part, depth + 1)? {
                merged.extend(fields);
            }
        }
        return Some(Value::Object(merged));
    }
    let kind = match object.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).find(|k| *k != "null").unwrap_or("null"),
        _ if object.contains_key("properties") || object.contains_key("required") => "object",
        _ => return Some(Value::Null),
    };
    match kind {
        "object" => {
            let properties = object.get("properties").and_then(Value::as_object);
            let mut out = Map::new();
            for name in object.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str)
            {
                let schema = properties.and_then(|p| p.get(name)).unwrap_or(&Value::Bool(true));
                out.insert(name.to_owned(), minimal(root, schema, depth + 1)?);
            }
            Some(Value::Object(out))
        }
        "array" => {
            let count = object.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            let items = object.get("items").unwrap_or(&Value::Bool(true));
            let mut out = Vec::new();
            for _ in 0..count.min(64) {
                out.push(minimal(root, items, depth + 1)?);
            }
            Some(Value::Array(out))
        }
        "string" => Some(Value::String(string(object))),
        "integer" | "number" => Some(number(object, kind == "integer")),
        "boolean" => Some(Value::Bool(false)),
        _ => Some(Value::Null),
    }
}

fn string(object: &Map<String, Value>) -> String {
    let sample = match object.get("format").and_then(Value::as_str) {
        Some("date-time") => "2026-01-01T00:00:00Z",
        Some("date") => "2026-01-01",
        Some("time") => "00:00:00Z",
        Some("email") => "a@example.com",
        Some("uri" | "iri" | "uri-reference" | "iri-reference") => "https://example.com/",
        Some("uuid") => "00000000-0000-4000-8000-000000000000",
        Some("hostname") => "example.com",
        Some("ipv4") => "127.0.0.1",
        Some("ipv6") => "::1",
        _ => "",
    };
    let min = usize::try_from(object.get("minLength").and_then(Value::as_u64).unwrap_or(0)).unwrap_or(0).min(4096);
    let mut text = sample.to_owned();
    while text.chars().count() < min {
        text.push('a');
    }
    text
}

fn number(object: &Map<String, Value>, integer: bool) -> Value {
    let bound = |key: &str| object.get(key).and_then(Value::as_f64);
    let mut value = 0.0_f64;
    if let Some(min) = bound("minimum") {
        value = value.max(min);
    }
    if let Some(min) = bound("exclusiveMinimum") {
        if value <= min {
            value = if integer { min.floor() + 1.0 } else { min + 1.0 };
        }
    }
    if let Some(max) = bound("maximum") {
        value = value.min(max);
    }
    if integer {
        value = value.ceil();
        // The bounds above are small in every schema worth calling; saturating is fine.
        #[allow(clippy::cast_possible_truncation)]
        let whole = value as i64;
        Value::from(whole)
    } else {
        json!(value)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::candidates;

    #[test]
    fn required_fields_with_their_bounds() {
        let schema = json!({"type": "object", "properties": {
            "query": {"type": "string", "minLength": 3},
            "limit": {"type": "integer", "minimum": 1},
            "mode": {"enum": ["fast", "slow"]},
            "optional": {"type": "string"}
        }, "required": ["query", "limit", "mode"]});
        assert_eq!(candidates(&schema), vec![json!({"query": "aaa", "limit": 1, "mode": "fast"})]);
    }

    #[test]
    fn a_root_union_gives_one_candidate_per_branch() {
        let schema = json!({"type": "object", "oneOf": [
            {"properties": {"mode": {"const": "by_id"}, "ticket_id": {"type": "string"}}, "required": ["mode", "ticket_id"]},
            {"properties": {"mode": {"const": "search"}, "query": {"type": "string", "minLength": 1}}, "required": ["mode", "query"]}
        ]});
        assert_eq!(
            candidates(&schema),
            vec![json!({"mode": "by_id", "ticket_id": ""}), json!({"mode": "search", "query": "a"})]
        );
    }

    #[test]
    fn local_refs_are_followed_and_broken_ones_give_nothing() {
        let schema = json!({"type": "object", "properties": {"p": {"$ref": "#/$defs/P"}}, "required": ["p"],
            "$defs": {"P": {"type": "array", "minItems": 1, "items": {"type": "boolean"}}}});
        assert_eq!(candidates(&schema), vec![json!({"p": [false]})]);
        let broken = json!({"type": "object", "properties": {"p": {"$ref": "#/$defs/Q"}}, "required": ["p"]});
        assert_eq!(candidates(&broken), Vec::<serde_json::Value>::new());
    }
}
