//! Readings of a JSON Schema that are independent of the validator under test, shared by
//! the mutation suites (validate_mutations.rs, validate_mutation_generator.rs, through
//! `support/mutations.rs`) and by validate_search_tickets.rs: `could_accept` is lenient
//! (`false` only when a value is certainly invalid), `surely_accepts_null` strict (`true`
//! only when `null` is certainly valid), and `gather` lists the schema nodes that apply to
//! one instance location. They understand the keywords the contracts use, and only local
//! `$ref`s.

#![allow(dead_code, reason = "each test file that includes this module uses a part of it")]

use std::collections::BTreeSet;

use serde_json::Value;

pub(crate) fn resolve<'a>(root: &'a Value, reference: &str) -> &'a Value {
    reference
        .strip_prefix('#')
        .and_then(|p| root.pointer(p))
        .unwrap_or_else(|| panic!("only local `$ref`s are allowed, and `{reference}` must resolve"))
}

/// Keywords that never constrain a value.
pub(crate) const ANNOTATIONS: &[&str] =
    &["$schema", "$id", "$comment", "$defs", "title", "description", "default", "examples", "deprecated", "readOnly"];

pub(crate) fn constrains_nothing(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(obj) => obj.keys().all(|k| ANNOTATIONS.contains(&k.as_str())),
        _ => false,
    }
}

pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

pub(crate) fn type_set(schema: &Value) -> Option<BTreeSet<String>> {
    match schema.get("type")? {
        Value::String(t) => Some(BTreeSet::from([t.clone()])),
        Value::Array(ts) => Some(ts.iter().filter_map(Value::as_str).map(str::to_owned).collect()),
        _ => None,
    }
}

pub(crate) fn type_allows(types: &BTreeSet<String>, value: &Value) -> bool {
    let t = json_type(value);
    types.contains(t) || (t == "integer" && types.contains("number"))
}

pub(crate) fn branches<'a>(schema: &'a Value, keyword: &str) -> &'a [Value] {
    schema.get(keyword).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// Property names a schema (and everything it composes) declares; used for a lenient
/// reading of `unevaluatedProperties: false`.
pub(crate) fn declared_names(root: &Value, schema: &Value, names: &mut BTreeSet<String>, depth: usize) {
    assert!(depth < 64, "schema recursion too deep");
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        names.extend(props.keys().cloned());
    }
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        declared_names(root, resolve(root, reference), names, depth + 1);
    }
    for keyword in ["allOf", "anyOf", "oneOf"] {
        for branch in branches(schema, keyword) {
            declared_names(root, branch, names, depth + 1);
        }
    }
}

/// A lenient reading of the schema: `false` only when `value` is certainly invalid.
/// It understands the keywords the contracts use and accepts everything it does not
/// understand, so it can prove a mutation invalid but never hides a false accept.
pub(crate) fn could_accept(root: &Value, schema: &Value, value: &Value) -> bool {
    let obj = match schema {
        Value::Bool(b) => return *b,
        Value::Object(obj) => obj,
        _ => return true,
    };
    if let Some(reference) = obj.get("$ref").and_then(Value::as_str) {
        if !could_accept(root, resolve(root, reference), value) {
            return false;
        }
    }
    if type_set(schema).is_some_and(|types| !type_allows(&types, value)) {
        return false;
    }
    if obj.get("const").is_some_and(|c| c != value) {
        return false;
    }
    if obj.get("enum").and_then(Value::as_array).is_some_and(|e| !e.contains(value)) {
        return false;
    }
    if let (Some(n), Some(min)) = (value.as_f64(), obj.get("minimum").and_then(Value::as_f64)) {
        if n < min {
            return false;
        }
    }
    if let (Some(n), Some(max)) = (value.as_f64(), obj.get("maximum").and_then(Value::as_f64)) {
        if n > max {
            return false;
        }
    }
    if let Value::Object(map) = value {
        let required = obj.get("required").and_then(Value::as_array).into_iter().flatten();
        if required.filter_map(Value::as_str).any(|k| !map.contains_key(k)) {
            return false;
        }
        let props = obj.get("properties").and_then(Value::as_object);
        for (key, item) in map {
            if let Some(sub) = props.and_then(|p| p.get(key)) {
                if !could_accept(root, sub, item) {
                    return false;
                }
            } else if !obj.contains_key("patternProperties") {
                if let Some(additional) = obj.get("additionalProperties") {
                    if !could_accept(root, additional, item) {
                        return false;
                    }
                }
            }
        }
        if obj.get("unevaluatedProperties") == Some(&Value::Bool(false)) {
            let mut names = BTreeSet::new();
            declared_names(root, schema, &mut names, 0);
            if map.keys().any(|k| !names.contains(k)) && !obj.contains_key("patternProperties") {
                return false;
            }
        }
    }
    if let Value::Array(items) = value {
        let len = items.len() as u64;
        if obj.get("minItems").and_then(Value::as_u64).is_some_and(|min| len < min)
            || obj.get("maxItems").and_then(Value::as_u64).is_some_and(|max| len > max)
        {
            return false;
        }
        let prefix = branches(schema, "prefixItems");
        for (i, item) in items.iter().enumerate() {
            let item_schema = prefix.get(i).or_else(|| obj.get("items"));
            if item_schema.is_some_and(|sub| !could_accept(root, sub, item)) {
                return false;
            }
        }
    }
    if branches(schema, "allOf").iter().any(|b| !could_accept(root, b, value)) {
        return false;
    }
    for keyword in ["anyOf", "oneOf"] {
        let list = branches(schema, keyword);
        if !list.is_empty() && !list.iter().any(|b| could_accept(root, b, value)) {
            return false;
        }
    }
    true
}

/// Keywords that only constrain objects, arrays, strings or numbers: a null passes them.
pub(crate) const VACUOUS_FOR_NULL: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "unevaluatedProperties",
    "patternProperties",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
];

/// A strict reading: `true` only when `null` is certainly valid against `schema`.
pub(crate) fn surely_accepts_null(root: &Value, schema: &Value) -> bool {
    let obj = match schema {
        Value::Bool(b) => return *b,
        Value::Object(obj) => obj,
        _ => return false,
    };
    obj.iter().all(|(key, sub)| match key.as_str() {
        k if ANNOTATIONS.contains(&k) || VACUOUS_FOR_NULL.contains(&k) => true,
        "type" => type_set(schema).is_some_and(|t| t.contains("null")),
        "const" => sub.is_null(),
        "enum" => sub.as_array().is_some_and(|e| e.contains(&Value::Null)),
        "$ref" => sub.as_str().is_some_and(|r| surely_accepts_null(root, resolve(root, r))),
        "allOf" => branches(schema, key).iter().all(|b| surely_accepts_null(root, b)),
        "anyOf" => branches(schema, key).iter().any(|b| surely_accepts_null(root, b)),
        "oneOf" => {
            let list = branches(schema, key);
            list.iter().filter(|b| surely_accepts_null(root, b)).count() == 1
                && list.iter().filter(|b| could_accept(root, b, &Value::Null)).count() == 1
        }
        _ => false,
    })
}

/// Every schema node that applies to `value` at one instance location: the node itself,
/// `$ref` targets, `allOf` members and the single `oneOf`/`anyOf` branch that fits.
/// Where several branches could fit, none is descended and the reason is noted.
pub(crate) fn gather<'a>(
    root: &'a Value,
    schema: &'a Value,
    value: &Value,
    at: &str,
    out: &mut Vec<&'a Value>,
    notes: &mut Vec<String>,
) {
    assert!(out.len() < 256, "schema recursion too deep at {at}");
    out.push(schema);
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        gather(root, resolve(root, reference), value, at, out, notes);
    }
    for branch in branches(schema, "allOf") {
        gather(root, branch, value, at, out, notes);
    }
    for keyword in ["oneOf", "anyOf"] {
        let list = branches(schema, keyword);
        let fitting: Vec<&Value> = list.iter().filter(|b| could_accept(root, b, value)).collect();
        match fitting.as_slice() {
            [] if list.is_empty() => {}
            [branch] => gather(root, branch, value, at, out, notes),
            _ => notes.push(format!(
                "{at}: {} of {} `{keyword}` branches may fit the sample; branch-specific fields not walked",
                fitting.len(),
                list.len()
            )),
        }
    }
}
