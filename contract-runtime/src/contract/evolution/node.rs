//! Reading schema nodes: `$ref` resolution, inlining, typed views of keywords.

#[allow(clippy::wildcard_imports)] // One unit split by concern: the parent holds the shared vocabulary.
use super::*;

/// RFC 6901 escaping of one pointer token.
pub(super) fn escape(token: &str) -> String {
    crate::contract::pointer::escape(token)
}

pub(super) fn ref_of(node: &Value) -> Option<&str> {
    node.get("$ref").and_then(Value::as_str)
}

/// Follows a local `$ref` (the runtime's one resolver).
pub(super) fn lookup<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    crate::contract::pointer::resolve_ref(root, reference)
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

/// Where the node at a pointer into the dereferenced schema is written in `root`: the
/// same path with each `$ref` on the way replaced by the place its target is written
/// (a keyword written beside a `$ref` is taken from beside it). `None` when `root` has
/// no node there.
pub(super) fn physical_pointer(root: &Value, logical: &str) -> Option<String> {
    let mut node = root;
    let mut at = String::new();
    for token in crate::contract::pointer::tokens(logical) {
        let mut hops = 0;
        while let Some(reference) =
            node.as_object().filter(|map| !map.contains_key(&token)).and_then(|map| map.get("$ref")?.as_str())
        {
            hops += 1;
            if hops > MAX_REF_CHAIN {
                return None;
            }
            node = lookup(root, reference)?;
            at = match reference.strip_prefix('#') {
                Some(fragment) if fragment.starts_with('/') && root.pointer(fragment).is_some() => fragment.to_owned(),
                _ => path_of(root, node, String::new())?,
            };
        }
        node = match node {
            Value::Object(map) => map.get(&token)?,
            Value::Array(list) => list.get(token.parse::<usize>().ok()?)?,
            _ => return None,
        };
        at = crate::contract::pointer::push(&at, &token);
    }
    Some(at)
}

/// The pointer of `target` (by identity) inside `node`, which is at `at`.
fn path_of(node: &Value, target: &Value, at: String) -> Option<String> {
    if std::ptr::eq(node, target) {
        return Some(at);
    }
    match node {
        Value::Object(map) => {
            map.iter().find_map(|(key, child)| path_of(child, target, crate::contract::pointer::push(&at, key)))
        }
        Value::Array(list) => {
            list.iter().enumerate().find_map(|(i, child)| path_of(child, target, format!("{at}/{i}")))
        }
        _ => None,
    }
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
                if let Some(reference) = map.get("$ref").and_then(Value::as_str)
                    && seen.insert(reference)
                {
                    let (a, b) = (lookup(old_root, reference), lookup(new_root, reference));
                    if a != b {
                        return false;
                    }
                    todo.extend(a);
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

/// What identifies a branch across versions for certain: its tag properties
/// (`state = "queued"`), its single required property (externally tagged enums) or its
/// `const`. Two branches with different discriminants are never the same branch.
fn discriminant(root: &Value, map: &Map<String, Value>) -> Option<String> {
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
        if let [only] = schema_list(map, "required")
            && props.len() == 1
        {
            return Some(format!("property {only}"));
        }
    }
    map.get("const").map(|c| format!("const {c}"))
}

/// What a branch of `anyOf`/`oneOf` (or an `allOf` entry) looks like once resolved: what
/// pairs it with its counterpart across versions, and how a review names it.
pub(super) struct Shape {
    /// The discriminant, if it has one (see [`discriminant`]).
    key: Option<String>,
    /// `{"type": "null"}`: pairs only with another null branch.
    null: bool,
    types: Option<BTreeSet<String>>,
    properties: BTreeSet<String>,
    /// Keywords, type names, property names (required or not) and the same one level
    /// down (union branches, `items`): what the similarity of two shapes is measured on.
    facets: BTreeSet<String>,
    /// How the review names the branch, such as `state = "paused"` or
    /// `type "object" with properties seconds, confidence`.
    pub(super) label: String,
}

impl Shape {
    pub(super) fn of(root: &Value, branch: &Value) -> Self {
        let resolved = resolve(root, branch);
        let empty = Map::new();
        let map = resolved.as_object().unwrap_or(&empty);
        let key = discriminant(root, map);
        let types = type_set(map).map(|t| t.into_iter().map(str::to_owned).collect::<BTreeSet<String>>());
        let properties: BTreeSet<String> =
            map.get("properties").and_then(Value::as_object).map(|p| p.keys().cloned().collect()).unwrap_or_default();
        let mut facets = BTreeSet::new();
        add_facets(map, "", &mut facets);
        for keyword in ["anyOf", "oneOf", "allOf"] {
            for sub in schema_list(map, keyword) {
                if let Some(sub) = resolve(root, sub).as_object() {
                    add_facets(sub, keyword, &mut facets);
                }
            }
        }
        if let Some(items) = map.get("items")
            && let Some(items) = resolve(root, items).as_object()
        {
            add_facets(items, "items", &mut facets);
        }
        let label = match &key {
            Some(key) => key.clone(),
            None => describe(map, types.as_ref(), &properties),
        };
        Shape { key, null: is_null_schema(root, branch), types, properties, facets, label }
    }

    /// How alike two branches are, from 0 (nothing in common) up; `None` when they cannot
    /// be the same branch: different discriminants, a null branch against another, two
    /// objects that share fewer than half of their property names, or types no value has
    /// in both.
    pub(super) fn similarity(&self, other: &Shape) -> Option<f64> {
        let same_key = match (&self.key, &other.key) {
            (Some(a), Some(b)) if a != b => return None,
            (Some(_), Some(_)) => true,
            _ => false,
        };
        if self.null != other.null {
            return None;
        }
        if !self.properties.is_empty() && !other.properties.is_empty() {
            // Fewer names in common than not: another variant, not this one edited.
            let shared = self.properties.intersection(&other.properties).count();
            if 2 * shared < self.properties.union(&other.properties).count() {
                return None;
            }
        }
        if let (Some(a), Some(b)) = (&self.types, &other.types) {
            let (a, b): (BTreeSet<&str>, BTreeSet<&str>) =
                (a.iter().map(String::as_str).collect(), b.iter().map(String::as_str).collect());
            if !a.iter().any(|t| accepts(&b, t)) && !b.iter().any(|t| accepts(&a, t)) {
                return None;
            }
        }
        let shared = self.facets.intersection(&other.facets).count();
        let all = self.facets.union(&other.facets).count();
        #[allow(clippy::cast_precision_loss)] // Facet counts are small.
        let overlap = if all == 0 { 1.0 } else { shared as f64 / all as f64 };
        Some(if same_key { 2.0 + overlap } else { overlap })
    }
}

fn add_facets(map: &Map<String, Value>, prefix: &str, facets: &mut BTreeSet<String>) {
    for (keyword, value) in map.iter().filter(|(k, _)| !ANNOTATIONS.contains(&k.as_str())) {
        facets.insert(format!("{prefix}:{keyword}"));
        match keyword.as_str() {
            "properties" => {
                if let Some(props) = value.as_object() {
                    facets.extend(props.keys().map(|name| format!("{prefix}:property {name}")));
                }
            }
            "required" => {
                facets.extend(
                    schema_list(map, "required")
                        .iter()
                        .filter_map(Value::as_str)
                        .map(|name| format!("{prefix}:required {name}")),
                );
            }
            "type" => {
                if let Some(types) = type_set(map) {
                    facets.extend(types.into_iter().map(|t| format!("{prefix}:type {t}")));
                }
            }
            "const" | "enum" | "format" | "pattern" => {
                facets.insert(format!("{prefix}:{keyword} {value}"));
            }
            _ => {}
        }
    }
}

/// Names a branch without a discriminant by its type and property names.
fn describe(map: &Map<String, Value>, types: Option<&BTreeSet<String>>, properties: &BTreeSet<String>) -> String {
    const SHOWN: usize = 4;
    let mut parts = Vec::new();
    if let Some(t) = map.get("type").filter(|_| types.is_some()) {
        parts.push(format!("type {t}"));
    }
    if !properties.is_empty() {
        let mut names: Vec<&str> = properties.iter().map(String::as_str).take(SHOWN).collect();
        if properties.len() > SHOWN {
            names.push("…");
        }
        parts.push(format!("with properties {}", names.join(", ")));
    }
    if let Some(keyword) = union_keyword(map).or_else(|| map.get("allOf").is_some().then_some("allOf")) {
        let what = if keyword == "allOf" { "entries" } else { "branches" };
        parts.push(format!("`{keyword}` of {} {what}", schema_list(map, keyword).len()));
    }
    if parts.is_empty() {
        let mut keywords: Vec<&str> =
            map.keys().map(String::as_str).filter(|k| !ANNOTATIONS.contains(k)).take(SHOWN).collect();
        if keywords.is_empty() {
            return "that allows any value".to_owned();
        }
        keywords.sort_unstable();
        return format!("with {}", keywords.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", "));
    }
    parts.join(" ")
}

/// The two nodes in one spelling of a type union. The canonical form writes a `type`
/// array as `anyOf` with one single-`type` branch per type (schemas checked in before
/// that have the array): when one side has a `type` array and the other a union
/// (`anyOf`/`oneOf`) and no `type` array, the array is written as the canonical form
/// writes it ([`crate::schema::split_type_list`], the values accepted are the
/// same), so the walk compares branch with branch. Two `type` arrays, or an array and a
/// node without a union, are compared as they are (the type rules read arrays).
pub(super) fn same_spelling<'o, 'n>(old: Cow<'o, Value>, new: Cow<'n, Value>) -> (Cow<'o, Value>, Cow<'n, Value>) {
    let type_array = |v: &Value| v.get("type").is_some_and(Value::is_array);
    let union = |v: &Value| v.as_object().and_then(union_keyword).is_some();
    let split = |v: Cow<'_, Value>| {
        let mut owned = v.into_owned();
        crate::contract::schema::split_type_list(&mut owned);
        owned
    };
    if type_array(&old) && !type_array(&new) && union(&new) {
        (Cow::Owned(split(old)), new)
    } else if type_array(&new) && !type_array(&old) && union(&old) {
        (old, Cow::Owned(split(new)))
    } else {
        (old, new)
    }
}

/// Whether `schema` has a spelling the canonical form no longer writes: a `type` array
/// (see [`same_spelling`]), or `{}` for the members of an object whose values may be
/// anything (now `true`, which the walk reads the same).
pub(super) fn in_an_older_spelling(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => {
            map.get("type").is_some_and(Value::is_array)
                || ["additionalProperties", "unevaluatedProperties"]
                    .iter()
                    .any(|k| map.get(*k).and_then(Value::as_object).is_some_and(Map::is_empty))
                || map.values().any(in_an_older_spelling)
        }
        Value::Array(items) => items.iter().any(in_an_older_spelling),
        _ => false,
    }
}
