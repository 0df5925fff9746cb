//! Reading schema nodes: `$ref` resolution, inlining, typed views of keywords.

#[allow(clippy::wildcard_imports)] // One unit split by concern: the parent holds the shared vocabulary.
use super::*;

/// RFC 6901 escaping of one pointer token.
pub(super) fn escape(token: &str) -> String {
    contract_runtime::pointer::escape(token)
}

pub(super) fn ref_of(node: &Value) -> Option<&str> {
    node.get("$ref").and_then(Value::as_str)
}

/// Follows a local `$ref` (the runtime's one resolver).
pub(super) fn lookup<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    contract_runtime::pointer::resolve_ref(root, reference)
}

/// The node with its `$ref` chain followed: the target's keywords, overlaid with the
/// keywords written beside the `$ref` (those are closer to the use, such as a
/// description or an `unevaluatedProperties: false` added where the target is used).
///
/// Best effort: a chain that is too long or does not resolve gives the node itself. Where that matters for a verdict, use [`try_resolve`].
pub(super) fn resolve<'a>(root: &Value, node: &'a Value) -> Cow<'a, Value> {
    try_resolve(root, node).unwrap_or(Cow::Borrowed(node))
}

/// [`resolve`], or why the chain could not be followed to its end: longer than
/// [`MAX_REF_CHAIN`], or a `$ref` that is not local or names nothing in the document.
pub(super) fn try_resolve<'a>(root: &Value, node: &'a Value) -> Result<Cow<'a, Value>, String> {
    let mut current = Cow::Borrowed(node);
    for _ in 0..MAX_REF_CHAIN {
        let Some(reference) = ref_of(&current) else { return Ok(current) };
        let Some(target) = lookup(root, reference) else {
            return Err(format!("behind `$ref` `{reference}`, which does not resolve in this document"));
        };
        let mut merged = match target {
            Value::Object(map) => map.clone(),
            Value::Bool(true) => Map::new(),
            other => return Ok(Cow::Owned(other.clone())),
        };
        if let Value::Object(siblings) = current.as_ref() {
            for (key, value) in siblings.iter().filter(|(k, _)| *k != "$ref") {
                merged.insert(key.clone(), value.clone());
            }
        }
        current = Cow::Owned(Value::Object(merged));
    }
    if ref_of(&current).is_some() {
        return Err(format!("behind a `$ref` chain longer than {MAX_REF_CHAIN}"));
    }
    Ok(current)
}

/// A resolved node as keywords: `true` has none, `false` (and anything that is not a
/// schema) gives `None` for `false` only.
pub(super) fn as_map(node: &Value) -> Option<Cow<'_, Map<String, Value>>> {
    match node {
        Value::Object(map) => Some(Cow::Borrowed(map)),
        Value::Bool(false) => None,
        _ => Some(Cow::Owned(Map::new())),
    }
}

/// A copy of `value` with every `$ref` replaced by its target, for whole-keyword
/// comparison. Recursion stops at [`MAX_INLINE_DEPTH`] (16 property levels) and at a
/// `$ref` that cannot be followed; `cut` then says why, so that the caller does not take
/// the shortened copies for the whole.
pub(super) fn inline(root: &Value, value: &Value, depth: usize, cut: &mut Option<String>) -> Value {
    match value {
        Value::Object(_) | Value::Array(_) if depth > MAX_INLINE_DEPTH => {
            cut.get_or_insert_with(|| {
                format!("more than {} property levels deep ({MAX_INLINE_DEPTH} nesting levels)", MAX_INLINE_DEPTH / 2)
            });
            value.clone()
        }
        Value::Object(_) => match try_resolve(root, value) {
            Ok(resolved) => match resolved.into_owned() {
                Value::Object(map) => {
                    Value::Object(map.iter().map(|(k, v)| (k.clone(), inline(root, v, depth + 1, cut))).collect())
                }
                other => other,
            },
            Err(why) => {
                cut.get_or_insert(why);
                value.clone()
            }
        },
        Value::Array(list) => Value::Array(list.iter().map(|v| inline(root, v, depth + 1, cut)).collect()),
        other => other.clone(),
    }
}

/// Whether two subschemas are the same text and every `$ref` they reach (transitively)
/// has the same target text in both documents: the fail-closed comparison for what the
/// walk cannot classify. Iterative, so that it works however deep the schema is.
pub(super) fn plainly_equal(old_root: &Value, old: &Value, new_root: &Value, new: &Value) -> bool {
    if old != new {
        return false;
    }
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut todo: Vec<&Value> = vec![old];
    while let Some(node) = todo.pop() {
        match node {
            Value::Object(map) => {
                if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                    if seen.insert(reference) {
                        let (a, b) = (lookup(old_root, reference), lookup(new_root, reference));
                        if a != b {
                            return false;
                        }
                        todo.extend(a);
                    }
                }
                todo.extend(map.values());
            }
            Value::Array(list) => todo.extend(list),
            _ => {}
        }
    }
    true
}

/// How the new bound compares with the old one (`Greater`: the new one is larger),
/// exactly for integers of any size; `None` when the two differ but cannot be ordered
/// exactly (an integer beyond 2^53 against a fraction that `f64` rounds onto it).
pub(super) fn compare_numbers(old: Option<&Value>, new: Option<&Value>) -> Option<std::cmp::Ordering> {
    let (Some(Value::Number(a)), Some(Value::Number(b))) = (old, new) else { return None };
    let exact = |n: &serde_json::Number| n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from));
    if let (Some(x), Some(y)) = (exact(a), exact(b)) {
        return Some(y.cmp(&x));
    }
    let (x, y) = (a.as_f64()?, b.as_f64()?);
    match y.partial_cmp(&x)? {
        // Equal as `f64` but not the same number: rounding hid the difference.
        std::cmp::Ordering::Equal
            if a != b && (exact(a).is_some() || exact(b).is_some()) && x.abs() >= 9_007_199_254_740_992.0 =>
        {
            None
        }
        order => Some(order),
    }
}

/// Why a resolved node cannot be classified: a keyword the walk reads has a JSON type it
/// does not understand (an `enum` that is not a list, a bound that is not a number, …).
pub(super) fn ill_typed(node: &Value) -> Option<String> {
    let map = match node {
        Value::Object(map) => map,
        Value::Bool(_) => return None,
        other => {
            return Some(format!(
                "{} instead of an object or a boolean, a form the classifier does not understand",
                kind_of(other)
            ))
        }
    };
    map.iter().find_map(|(keyword, value)| {
        let fine = match keyword.as_str() {
            "type" => value.is_string() || value.as_array().is_some_and(|l| l.iter().all(Value::is_string)),
            "required" => value.as_array().is_some_and(|l| l.iter().all(Value::is_string)),
            "enum" | "allOf" | "anyOf" | "oneOf" | "prefixItems" => value.is_array(),
            "properties" | "$defs" | "definitions" => value.is_object(),
            "additionalProperties" | "unevaluatedProperties" | "items" => value.is_object() || value.is_boolean(),
            "$ref" | "pattern" | "format" => value.is_string(),
            "uniqueItems" => value.is_boolean(),
            "multipleOf" => value.is_number(),
            k if UPPER_BOUNDS.contains(&k) || LOWER_BOUNDS.contains(&k) => value.is_number(),
            _ => true,
        };
        (!fine).then(|| format!("using `{keyword}` in a form the classifier does not understand"))
    })
}

pub(super) fn union_keyword(map: &Map<String, Value>) -> Option<&'static str> {
    ["oneOf", "anyOf"].into_iter().find(|k| map.get(*k).is_some_and(Value::is_array))
}

/// Whether a node is nothing but a union (plus annotations).
pub(super) fn only_union(map: &Map<String, Value>, keyword: &str) -> bool {
    map.keys().all(|k| k == keyword || ANNOTATIONS.contains(&k.as_str()))
}

/// Whether a resolved node has no keyword but annotations (it accepts every value).
pub(super) fn constrains_nothing(map: &Map<String, Value>) -> bool {
    map.keys().all(|k| ANNOTATIONS.contains(&k.as_str()))
}

pub(super) fn own_annotations(raw: &Value) -> Map<String, Value> {
    raw.as_object()
        .map(|m| {
            m.iter().filter(|(k, _)| ANNOTATIONS.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect()
        })
        .unwrap_or_default()
}

pub(super) fn strip_annotations(raw: &Value) -> Value {
    match raw {
        Value::Object(m) => Value::Object(
            m.iter().filter(|(k, _)| !ANNOTATIONS.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect(),
        ),
        other => other.clone(),
    }
}

pub(super) fn indexed<'a>(map: &'a Map<String, Value>, keyword: &str, path: &str) -> Vec<(String, &'a Value)> {
    schema_list(map, keyword).iter().enumerate().map(|(i, b)| (format!("{path}/{keyword}/{i}"), b)).collect()
}

pub(super) fn schema_list<'a>(map: &'a Map<String, Value>, keyword: &str) -> &'a [Value] {
    map.get(keyword).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// The keyword that closes this object itself, if any.
pub(super) fn closing_keyword(map: &Map<String, Value>) -> Option<&'static str> {
    ["additionalProperties", "unevaluatedProperties"].into_iter().find(|k| map.get(*k) == Some(&Value::Bool(false)))
}

pub(super) fn required_set(map: &Map<String, Value>) -> BTreeSet<&str> {
    schema_list(map, "required").iter().filter_map(Value::as_str).collect()
}

pub(super) fn type_set(map: &Map<String, Value>) -> Option<BTreeSet<&str>> {
    match map.get("type")? {
        Value::String(t) => Some(BTreeSet::from([t.as_str()])),
        Value::Array(list) => Some(list.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

/// Whether a type list accepts every instance of type `t` (`number` accepts integers).
pub(super) fn accepts(set: &BTreeSet<&str>, t: &str) -> bool {
    set.contains(t) || (t == "integer" && set.contains("number"))
}

/// Whether a branch is `{"type": "null"}` (annotations aside).
pub(super) fn is_null_schema(root: &Value, branch: &Value) -> bool {
    let resolved = resolve(root, branch);
    let Some(map) = resolved.as_object() else { return false };
    type_set(map).is_some_and(|t| t.len() == 1 && t.contains("null"))
        && map.keys().all(|k| k == "type" || ANNOTATIONS.contains(&k.as_str()))
}

/// What identifies a branch across versions: its tag properties (`state = "queued"`), its
/// single required property (externally tagged enums), its `const`, or its type.
pub(super) fn branch_key(root: &Value, branch: &Value) -> Option<String> {
    let resolved = resolve(root, branch);
    let map = resolved.as_object()?;
    if let Some(props) = map.get("properties").and_then(Value::as_object) {
        let mut names: Vec<&String> = props.keys().collect();
        names.sort();
        let tags: Vec<String> = names
            .iter()
            .filter_map(|name| {
                let prop = resolve(root, &props[name.as_str()]);
                prop.get("const").map(|c| format!("{name} = {c}"))
            })
            .collect();
        if !tags.is_empty() {
            return Some(tags.join(", "));
        }
        if let [only] = schema_list(map, "required") {
            if props.len() == 1 {
                return Some(format!("property {only}"));
            }
        }
    }
    if let Some(c) = map.get("const") {
        return Some(format!("const {c}"));
    }
    map.get("type").map(|t| format!("type {t}"))
}
