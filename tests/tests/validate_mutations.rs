//! Seed 000, validation experiments 1–3, and seed 001's four samples.
//!
//! Nothing here is written per contract. For every contract in
//! `qe_server::all_contracts()` the test walks the contract's canonical schema (resolving
//! local `$ref`s, descending `allOf` and the one `oneOf`/`anyOf` branch the instance
//! takes) alongside real serialized instances from `qe_server::samples`, and generates:
//!
//! - mutations, each of which must be rejected by `contract.validate()`: delete each
//!   required field present, change each typed value's JSON type, put an unknown value in
//!   each `enum`/`const`, and (under `exact`) add an unknown key to each object;
//! - clean controls, each of which must be accepted: the samples themselves, an unknown
//!   key in each object (under `additive`), the samples with every object's keys
//!   reversed, an empty array where the schema allows one, `null` where the schema allows
//!   null, and each present non-required field deleted.
//!
//! A mutation only counts when it really is invalid: a small, deliberately lenient
//! checker (`could_accept`) must prove that the schema rejects it, which matters where a
//! changed value could land in another `oneOf`/`anyOf` branch. Mutations it cannot
//! prove invalid are skipped and listed with the reason. Clean controls are only
//! generated where the schema surely accepts them (`surely_accepts_null`, …), and the
//! lenient checker must agree with each of them too.
//!
//! The counts (cases, false accepts, false rejects) are printed per contract and in
//! total; run with `-- --nocapture` to see them. Both must be zero. A mutation that is
//! rejected only for a reason unrelated to the mutated location (no violation at that
//! location or one of its ancestors) counts as misattributed, which must be zero too.

use std::collections::{BTreeMap, BTreeSet};

use contract_runtime::{Compatibility, OutputContract, ToolOutput};
use serde_json::{json, Map, Value};

#[path = "support/fast.rs"]
mod fast_path;

// ------------------------------------------------------------------------- samples

/// The real serialized instances of every contract, by contract name.
fn samples() -> BTreeMap<&'static str, Vec<Value>> {
    use qe_server::samples as s;
    fn values<T: serde::Serialize>(items: &[T]) -> Vec<Value> {
        items.iter().map(|item| serde_json::to_value(item).expect("a sample serializes")).collect()
    }
    BTreeMap::from([
        ("fleet_status", values(&[s::fleet_status()])),
        ("task_status", values(&s::task_statuses())),
        ("pipeline_status", values(&[s::pipeline_status()])),
        ("quality_assess", values(&[s::quality_assess()])),
        ("security_scan", values(&[s::security_scan()])),
        ("qe/coverage_gaps", values(&[s::coverage_gaps()])),
        ("search_tickets", values(&[s::search_tickets()])),
        ("search_tickets_page", values(&[s::ticket_page()])),
        ("scrape_page", values(&[s::scrape_page()])),
    ])
}

fn contracts() -> Vec<&'static OutputContract> {
    let set = qe_server::all_contracts();
    set.check().unwrap_or_else(|err| panic!("{err}"));
    set.contracts()
}

// ------------------------------------------------------------------ instance paths

#[derive(Clone, Debug, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index(usize),
}

fn pointer(path: &[Seg]) -> String {
    path.iter()
        .map(|seg| match seg {
            Seg::Key(k) => format!("/{}", k.replace('~', "~0").replace('/', "~1")),
            Seg::Index(i) => format!("/{i}"),
        })
        .collect()
}

fn at_mut<'v>(value: &'v mut Value, path: &[Seg]) -> &'v mut Value {
    path.iter().fold(value, |v, seg| match seg {
        Seg::Key(k) => &mut v[k.as_str()],
        Seg::Index(i) => &mut v[*i],
    })
}

/// A copy of `instance` with `edit` applied to the value at `path`.
fn edited(instance: &Value, path: &[Seg], edit: impl FnOnce(&mut Value)) -> Value {
    let mut copy = instance.clone();
    edit(at_mut(&mut copy, path));
    copy
}

/// Whether `ancestor` is `pointer` itself or one of its ancestors.
fn is_ancestor_or_self(ancestor: &str, pointer: &str) -> bool {
    pointer == ancestor || (pointer.starts_with(ancestor) && pointer[ancestor.len()..].starts_with('/'))
}

// ------------------------------------------------------------------- schema access

fn resolve<'a>(root: &'a Value, reference: &str) -> &'a Value {
    reference
        .strip_prefix('#')
        .and_then(|p| root.pointer(p))
        .unwrap_or_else(|| panic!("only local `$ref`s are allowed, and `{reference}` must resolve"))
}

/// Keywords that never constrain a value.
const ANNOTATIONS: &[&str] =
    &["$schema", "$id", "$comment", "$defs", "title", "description", "default", "examples", "deprecated", "readOnly"];

fn constrains_nothing(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(obj) => obj.keys().all(|k| ANNOTATIONS.contains(&k.as_str())),
        _ => false,
    }
}

fn json_type(value: &Value) -> &'static str {
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

fn type_set(schema: &Value) -> Option<BTreeSet<String>> {
    match schema.get("type")? {
        Value::String(t) => Some(BTreeSet::from([t.clone()])),
        Value::Array(ts) => Some(ts.iter().filter_map(Value::as_str).map(str::to_owned).collect()),
        _ => None,
    }
}

fn type_allows(types: &BTreeSet<String>, value: &Value) -> bool {
    let t = json_type(value);
    types.contains(t) || (t == "integer" && types.contains("number"))
}

fn branches<'a>(schema: &'a Value, keyword: &str) -> &'a [Value] {
    schema.get(keyword).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// Property names a schema (and everything it composes) declares; used for a lenient
/// reading of `unevaluatedProperties: false`.
fn declared_names(root: &Value, schema: &Value, names: &mut BTreeSet<String>, depth: usize) {
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
fn could_accept(root: &Value, schema: &Value, value: &Value) -> bool {
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
const VACUOUS_FOR_NULL: &[&str] = &[
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
fn surely_accepts_null(root: &Value, schema: &Value) -> bool {
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
fn gather<'a>(
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

// ---------------------------------------------------------------- case generation

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    Reject,
    Accept,
}

#[derive(Debug)]
struct Case {
    kind: &'static str,
    /// The instance location the case changes (`""` for the root).
    at: String,
    expect: Expect,
    value: Value,
}

struct Gen<'a> {
    root: &'a Value,
    compatibility: Compatibility,
    instance: &'a Value,
    cases: Vec<Case>,
    skipped: BTreeSet<String>,
}

/// Values of other JSON types than `value`, following the seed's examples first
/// (integer→string, string→number, boolean→string, array→object, object→array, …),
/// that `types` does not allow.
fn retyped(value: &Value, types: &BTreeSet<String>) -> Vec<Value> {
    let as_text = Value::String(value.to_string());
    let as_array = match value {
        Value::Object(map) => Value::Array(map.values().cloned().collect()),
        other => json!([other]),
    };
    let as_object = match value {
        Value::Array(items) => {
            Value::Object(items.iter().enumerate().map(|(i, v)| (i.to_string(), v.clone())).collect())
        }
        other => json!({ "value": other }),
    };
    let candidates = match value {
        Value::Number(_) => vec![as_text, json!(true), as_array, as_object],
        Value::String(_) => vec![json!(42), json!(true), as_array, as_object],
        Value::Bool(_) => vec![as_text, json!(1), as_array, as_object],
        Value::Array(_) => vec![as_object, json!("[]"), json!(0)],
        Value::Object(_) => vec![as_array, json!("{}"), json!(0)],
        Value::Null => vec![json!("null"), json!(0), json!(false), json!([]), json!({})],
    };
    candidates.into_iter().filter(|c| !type_allows(types, c)).collect()
}

impl<'a> Gen<'a> {
    /// A mutation; kept only if the lenient checker proves it invalid.
    fn mutation(&mut self, kind: &'static str, path: &[Seg], value: Value) {
        let at = pointer(path);
        if could_accept(self.root, self.root, &value) {
            self.skipped.insert(format!("{kind} at {at}: not provably invalid (another branch may accept it)"));
        } else {
            self.cases.push(Case { kind, at, expect: Expect::Reject, value });
        }
    }

    fn control(&mut self, kind: &'static str, path: &[Seg], value: Value) {
        self.cases.push(Case { kind, at: pointer(path), expect: Expect::Accept, value });
    }

    /// Walks the instance location `path` whose value is `value`, where `schemas` apply.
    fn walk(&mut self, schemas: &[&'a Value], value: &Value, path: &mut Vec<Seg>) {
        let root = self.root;
        let at = pointer(path);
        let mut view = Vec::new();
        let mut notes = Vec::new();
        for schema in schemas {
            gather(root, schema, value, &at, &mut view, &mut notes);
        }
        self.skipped.extend(notes);

        if !value.is_null() && schemas.iter().all(|s| surely_accepts_null(root, s)) {
            self.control("null-where-allowed", path, edited(self.instance, path, |v| *v = Value::Null));
        }
        if view.iter().all(|s| constrains_nothing(s)) {
            // An opaque pass-through value: the contract does not own its shape.
            return;
        }

        let types = view.iter().filter_map(|s| type_set(s)).reduce(|a, b| a.intersection(&b).cloned().collect());
        if let Some(types) = &types {
            // The first retyped value the schema provably rejects: under an `anyOf` the
            // seed's preferred type may be another branch's (an untagged `u64 | String`).
            let candidates = retyped(value, types);
            let mutated = candidates
                .into_iter()
                .map(|other| edited(self.instance, path, |v| *v = other))
                .find(|mutated| !could_accept(root, root, mutated));
            match mutated {
                Some(mutated) => self.mutation("change-type", path, mutated),
                None => {
                    self.skipped.insert(format!("change-type at {at}: no other JSON type is provably invalid"));
                }
            }
        }
        if let Some(allowed) = view.iter().find_map(|s| allowed_values(s)) {
            let unknown = unknown_value(value, &allowed);
            let mutated = edited(self.instance, path, |v| *v = unknown);
            self.mutation("unknown-enum", path, mutated);
        }

        match value {
            Value::Object(map) => self.walk_object(&view, map, path),
            Value::Array(items) => self.walk_array(&view, items, path),
            _ => {}
        }
    }

    fn walk_object(&mut self, view: &[&'a Value], map: &Map<String, Value>, path: &mut Vec<Seg>) {
        let at = pointer(path);
        let mut properties: BTreeMap<&str, Vec<&'a Value>> = BTreeMap::new();
        let mut required = BTreeSet::new();
        let mut additional: Vec<&'a Value> = Vec::new();
        for schema in view {
            for (name, sub) in schema.get("properties").and_then(Value::as_object).into_iter().flatten() {
                properties.entry(name.as_str()).or_default().push(sub);
            }
            required.extend(
                schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str),
            );
            if let Some(sub) = schema.get("additionalProperties").filter(|s| s.is_object()) {
                additional.push(sub);
            }
        }
        let composed = view.iter().any(|s| s.get("oneOf").is_some() || s.get("anyOf").is_some());
        let map_like = !additional.is_empty() || view.iter().any(|s| s.get("patternProperties").is_some());
        let struct_like = !properties.is_empty() && !map_like;

        for key in map.keys() {
            let key_path = [path.as_slice(), &[Seg::Key(key.clone())]].concat();
            if required.contains(key.as_str()) {
                let mutated = edited(self.instance, path, |v| {
                    v.as_object_mut().expect("an object").remove(key);
                });
                self.mutation("delete-required", &key_path, mutated);
            } else if properties.contains_key(key.as_str()) {
                if composed {
                    // Dropping a field may make the object fit another branch as well.
                    self.skipped.insert(format!("delete-optional at {at}/{key}: inside a oneOf/anyOf"));
                } else {
                    let mutated = edited(self.instance, path, |v| {
                        v.as_object_mut().expect("an object").remove(key);
                    });
                    self.control("delete-optional", &key_path, mutated);
                }
            }
        }

        if struct_like {
            // A key no contract will ever name; under `exact` every object is closed, under
            // `additive` every object is open (DESIGN.md decision 3). The expectation comes
            // from the declared policy, not from the schema, so a missing
            // `additionalProperties: false` shows up as a false accept.
            let unknown = "x_unknown_key_from_mutation_test";
            assert!(!properties.contains_key(unknown), "the unknown key is declared at {at}");
            let mutated = edited(self.instance, path, |v| {
                v.as_object_mut().expect("an object").insert(unknown.to_owned(), json!("extra"));
            });
            match self.compatibility {
                Compatibility::Exact => self.cases.push(Case {
                    kind: "unknown-key-exact",
                    at: at.clone(),
                    expect: Expect::Reject,
                    value: mutated,
                }),
                Compatibility::Additive if view.iter().any(|s| is_variant_envelope(s)) => {
                    // `{"variant": {…}}` of an externally tagged enum: the key is the
                    // discriminant, serde writes exactly one, and schemars closes it even
                    // under `additive` (discriminants stay strict).
                    self.skipped.insert(format!("unknown-key-additive at {at}: externally tagged enum envelope"));
                }
                Compatibility::Additive => self.control("unknown-key-additive", path, mutated),
            }
        }

        for (key, item) in map {
            let schemas = match properties.get(key.as_str()) {
                Some(schemas) => schemas.clone(),
                None if !additional.is_empty() => additional.clone(),
                None => continue,
            };
            path.push(Seg::Key(key.clone()));
            self.walk(&schemas, item, path);
            path.pop();
        }
    }

    fn walk_array(&mut self, view: &[&'a Value], items: &[Value], path: &mut Vec<Seg>) {
        let at = pointer(path);
        let restricts_length = view.iter().any(|s| {
            ["oneOf", "anyOf", "not", "contains", "prefixItems"].iter().any(|k| s.get(*k).is_some())
                || s.get("minItems").and_then(Value::as_u64).is_some_and(|n| n > 0)
        });
        if !items.is_empty() {
            if restricts_length {
                self.skipped.insert(format!("empty-array at {at}: the schema may require items"));
            } else {
                self.control("empty-array", path, edited(self.instance, path, |v| *v = json!([])));
            }
        }
        let item_schemas: Vec<&'a Value> = view.iter().filter_map(|s| s.get("items")).collect();
        for (i, item) in items.iter().enumerate() {
            let schemas: Vec<&'a Value> = view
                .iter()
                .filter_map(|s| s.get("prefixItems").and_then(|p| p.get(i)))
                .chain(item_schemas.iter().copied())
                .collect();
            path.push(Seg::Index(i));
            self.walk(&schemas, item, path);
            path.pop();
        }
    }
}

/// Whether `schema` is the one-key object serde writes for a variant of an externally
/// tagged enum: one property, required, nothing else allowed.
fn is_variant_envelope(schema: &Value) -> bool {
    let props = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array);
    schema.get("additionalProperties") == Some(&Value::Bool(false))
        && props.is_some_and(|p| p.len() == 1)
        && required
            .is_some_and(|r| r.len() == 1 && props.is_some_and(|p| r[0].as_str().is_some_and(|k| p.contains_key(k))))
}

/// The values an `enum` or `const` allows.
fn allowed_values(schema: &Value) -> Option<Vec<Value>> {
    schema.get("enum").and_then(Value::as_array).cloned().or_else(|| schema.get("const").map(|c| vec![c.clone()]))
}

/// A value of the same JSON type as `value` that `allowed` does not contain.
fn unknown_value(value: &Value, allowed: &[Value]) -> Value {
    let candidates = match value {
        Value::Number(_) => vec![json!(987_654_321), json!(-987_654_321)],
        Value::Bool(b) => vec![json!(!b)],
        _ => vec![json!("x_unknown_variant"), json!("X_UNKNOWN_VARIANT")],
    };
    candidates.into_iter().find(|c| !allowed.contains(c)).expect("an unknown value")
}

/// The JSON text of `value` with every object's keys in reverse sorted order.
fn reversed_text(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            out.push('{');
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable_by(|a, b| b.cmp(a));
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                reversed_text(&map[key.as_str()], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                reversed_text(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

fn has_multi_key_object(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.len() > 1 || map.values().any(has_multi_key_object),
        Value::Array(items) => items.iter().any(has_multi_key_object),
        _ => false,
    }
}

/// Whether this build of `serde_json` keeps object keys in insertion order.
fn serde_json_preserves_order() -> bool {
    let text = r#"{"b":1,"a":2}"#;
    let parsed: Value = serde_json::from_str(text).expect("valid JSON");
    serde_json::to_string(&parsed).expect("a value serializes") == text
}

fn generate(contract: &OutputContract, instance: &Value) -> (Vec<Case>, BTreeSet<String>) {
    let root = contract.schema();
    let mut generator =
        Gen { root, compatibility: contract.compatibility(), instance, cases: Vec::new(), skipped: BTreeSet::new() };
    generator.control("sample", &[], instance.clone());

    // Reordered keys. Without serde_json's `preserve_order` (the workspace's build; the
    // test prints which), `Map` is a `BTreeMap`: rebuilding a `Value` in another order
    // would re-sort it and prove nothing. So the reordered document is written as JSON
    // text by hand (every object's keys in reverse order) and parsed with `from_str`,
    // which is what a peer receiving that text does; the verdict must not depend on the
    // order on the wire. In this build the parsed value is sorted again, so the control
    // pins that parsing path; in a build where feature unification switches
    // `preserve_order` on, the parsed value keeps the reversed order and the validator
    // sees it as such. (The schema bytes under that feature are covered by
    // `schema_preserve_order.rs`.)
    let mut text = String::new();
    reversed_text(instance, &mut text);
    let reparsed: Value = serde_json::from_str(&text).expect("reordered text is JSON");
    assert_eq!(&reparsed, instance, "reordering keys must not change the value");
    assert!(
        !has_multi_key_object(instance) || serde_json::to_string(instance).expect("a value serializes") != text,
        "the reordered text must differ from the sorted text"
    );
    generator.cases.push(Case { kind: "reordered-keys", at: String::new(), expect: Expect::Accept, value: reparsed });

    generator.walk(&[root], instance, &mut Vec::new());
    (generator.cases, generator.skipped)
}

#[derive(Default)]
struct Tally {
    samples: usize,
    mutations: usize,
    controls: usize,
    false_accepts: usize,
    false_rejects: usize,
    misattributed: usize,
    skipped: usize,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.samples += other.samples;
        self.mutations += other.mutations;
        self.controls += other.controls;
        self.false_accepts += other.false_accepts;
        self.false_rejects += other.false_rejects;
        self.misattributed += other.misattributed;
        self.skipped += other.skipped;
    }

    fn row(&self, name: &str, compatibility: &str) -> String {
        format!(
            "{name:<18} {compatibility:<9} {:>7} {:>9} {:>8} {:>6} {:>13} {:>13} {:>13} {:>7}",
            self.samples,
            self.mutations,
            self.controls,
            self.mutations + self.controls,
            self.false_accepts,
            self.false_rejects,
            self.misattributed,
            self.skipped,
        )
    }
}

/// What one run over a set of contracts found.
#[derive(Default)]
struct Outcome {
    total: Tally,
    failures: Vec<String>,
    kinds: BTreeMap<&'static str, usize>,
    skipped: BTreeSet<String>,
    /// Cases on which the fast path and `jsonschema` disagree (issue #12).
    fast_disagreements: Vec<String>,
    /// Cases the fast path judged.
    fast_compared: usize,
}

/// Generates and validates every case for every `(contract, instances)`, printing one row
/// per contract and the total.
fn run(sets: &[(&OutputContract, Vec<Value>)]) -> Outcome {
    // One print at the end, so tests running in parallel do not interleave their tables.
    let mut out = String::new();
    macro_rules! outln {
        ($($arg:tt)*) => {{
            out.push_str(&format!($($arg)*));
            out.push('\n');
        }};
    }
    outln!(
        "{:<18} {:<9} {:>7} {:>9} {:>8} {:>6} {:>13} {:>13} {:>13} {:>7}",
        "contract",
        "compat",
        "samples",
        "mutations",
        "controls",
        "cases",
        "false_accepts",
        "false_rejects",
        "misattributed",
        "skipped"
    );
    // `MUTATIONS_VERBOSE=1` lists every case and its verdict.
    let verbose = std::env::var_os("MUTATIONS_VERBOSE").is_some();
    let mut outcome = Outcome::default();
    for (contract, instances) in sets {
        let name = contract.name();
        let mut tally = Tally::default();
        let mut skipped = BTreeSet::new();
        for instance in instances {
            tally.samples += 1;
            let (cases, skips) = generate(contract, instance);
            skipped.extend(skips);
            for case in cases {
                *outcome.kinds.entry(case.kind).or_default() += 1;
                let verdict = contract.validate(&case.value);
                let (fast_valid, disagreement) = fast_path::compare(contract, &case.value);
                assert_eq!(fast_valid, verdict.is_ok(), "is_valid and validate agree");
                outcome.fast_disagreements.extend(disagreement);
                outcome.fast_compared += usize::from(contract.fast_path() == contract_runtime::fast::Coverage::Covered);
                if verbose {
                    let got = if verdict.is_ok() { "accepted" } else { "rejected" };
                    outln!("    {name} {:?} {} `{}`: {got}", case.expect, case.kind, case.at);
                }
                let (kind, at) = (case.kind, &case.at);
                match (case.expect, verdict) {
                    (Expect::Reject, Ok(())) => {
                        tally.mutations += 1;
                        tally.false_accepts += 1;
                        outcome.failures.push(format!("FALSE ACCEPT {name} {kind} at `{at}`: {}", case.value));
                    }
                    (Expect::Reject, Err(report)) => {
                        tally.mutations += 1;
                        if !report.violations().iter().any(|v| is_ancestor_or_self(v.pointer(), at)) {
                            tally.misattributed += 1;
                            outcome.failures.push(format!("MISATTRIBUTED {name} {kind} at `{at}`: {report}"));
                        }
                    }
                    (Expect::Accept, verdict) => {
                        tally.controls += 1;
                        if !could_accept(contract.schema(), contract.schema(), &case.value) {
                            outcome.failures.push(format!("CONTROL INVALID BY LENIENT CHECK {name} {kind} at `{at}`"));
                        }
                        if let Err(report) = verdict {
                            tally.false_rejects += 1;
                            outcome.failures.push(format!("FALSE REJECT {name} {kind} at `{at}`: {report}"));
                        }
                    }
                }
            }
        }
        tally.skipped = skipped.len();
        outln!("{}", tally.row(name, contract.compatibility().as_str()));
        for reason in &skipped {
            outln!("    skipped: {reason}");
        }
        assert!(tally.mutations > 0 && tally.controls > 0, "{name}: no cases generated");
        outcome.total.add(&tally);
        outcome.skipped.extend(skipped.into_iter().map(|reason| format!("{name}: {reason}")));
    }
    outln!("{}", outcome.total.row("TOTAL", ""));
    outln!("cases by kind: {:?}", outcome.kinds);
    outln!(
        "fast path: {} cases of this run compared with jsonschema, {} disagreements ({} in this process)",
        outcome.fast_compared,
        outcome.fast_disagreements.len(),
        fast_path::totals()
    );
    for failure in outcome.failures.iter().chain(&outcome.fast_disagreements) {
        outln!("{failure}");
    }
    print!("{out}");
    outcome
}

impl Outcome {
    fn assert_clean(&self, kinds: &[&str]) {
        // Each listed kind must have been generated at least once, so a walker regression
        // cannot silently drop a whole experiment.
        for kind in kinds {
            assert!(self.kinds.contains_key(kind), "no `{kind}` case was generated");
        }
        assert!(self.fast_disagreements.is_empty(), "fast path disagreements:\n{}", self.fast_disagreements.join("\n"));
        let failures = self.failures.join("\n");
        assert_eq!(self.total.false_accepts, 0, "false accepts:\n{failures}");
        assert_eq!(self.total.false_rejects, 0, "false rejects:\n{failures}");
        assert!(self.failures.is_empty(), "{failures}");
    }
}

#[test]
fn every_contract_rejects_generated_mutations_and_accepts_clean_controls() {
    let mut instances = samples();
    let contracts = contracts();
    let names: BTreeSet<&str> = contracts.iter().map(|c| c.name()).collect();
    let sampled: BTreeSet<&str> = instances.keys().copied().collect();
    assert_eq!(names, sampled, "every contract needs real samples here, and every sample set a contract");

    println!("serde_json preserve_order in this build: {}", serde_json_preserves_order());
    let sets: Vec<(&OutputContract, Vec<Value>)> =
        contracts.iter().map(|c| (*c, instances.remove(c.name()).unwrap_or_default())).collect();
    run(&sets).assert_clean(&[
        "delete-required",
        "change-type",
        "unknown-enum",
        "unknown-key-exact",
        "sample",
        "unknown-key-additive",
        "reordered-keys",
        "empty-array",
        "null-where-allowed",
    ]);
}

// ------------------------------------------------------------ the generator itself

/// Shapes the demo contracts do not have, to show that the generator handles them: a
/// nullable struct (`anyOf` with null), a field serde may omit, a map, externally and
/// adjacently tagged enums, an untagged enum whose branches overlap in JSON types, and a
/// tuple (`prefixItems`). Each is emitted under both compatibilities.
mod shapes {
    #![allow(unreachable_pub, reason = "one macro body serves both contracts")]

    use std::collections::BTreeMap;

    use contract_runtime::ToolOutput;
    use schemars::JsonSchema;
    use serde::Serialize;

    #[derive(Clone, Debug, Serialize, JsonSchema)]
    pub struct Owner {
        pub login: String,
        pub admin: bool,
    }

    #[derive(Clone, Copy, Debug, Serialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum Reason {
        Done,
        WontFix,
    }

    /// Externally tagged: `"reopened"`, `{"opened": {…}}`, `{"closed": {…}}`.
    #[derive(Clone, Debug, Serialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum Event {
        Opened { by: String },
        Closed { reason: Reason, at_ms: u64 },
        Reopened,
    }

    /// Adjacently tagged.
    #[derive(Clone, Debug, Serialize, JsonSchema)]
    #[serde(tag = "kind", content = "data", rename_all = "snake_case")]
    pub enum Step {
        Build { target: String },
        Test(u32),
        Idle,
    }

    /// Untagged: a count or a label.
    #[derive(Clone, Debug, Serialize, JsonSchema)]
    #[serde(untagged)]
    pub enum Amount {
        Count(u64),
        Label(String),
    }

    macro_rules! shape {
        ($name:ident, $compatibility:tt) => {
            #[derive(Clone, Debug, Serialize, JsonSchema, ToolOutput)]
            #[tool_output(version = "1.0.0", compatibility = $compatibility)]
            pub struct $name {
                pub owner: Option<Owner>,
                #[serde(skip_serializing_if = "Option::is_none")]
                pub note: Option<String>,
                pub counts: BTreeMap<String, u32>,
                pub events: Vec<Event>,
                pub step: Step,
                pub amount: Amount,
                pub pair: (u8, String),
            }

            impl $name {
                pub fn instances() -> Vec<Self> {
                    let full = Self {
                        owner: Some(Owner { login: "ada".to_owned(), admin: true }),
                        note: Some("first run".to_owned()),
                        counts: BTreeMap::from([("passed".to_owned(), 12), ("failed".to_owned(), 1)]),
                        events: vec![
                            Event::Opened { by: "ada".to_owned() },
                            Event::Closed { reason: Reason::WontFix, at_ms: 1_764_000_000_000 },
                            Event::Reopened,
                        ],
                        step: Step::Build { target: "x86_64".to_owned() },
                        amount: Amount::Count(3),
                        pair: (7, "seven".to_owned()),
                    };
                    let sparse = Self {
                        owner: None,
                        note: None,
                        counts: BTreeMap::new(),
                        events: vec![],
                        step: Step::Test(42),
                        amount: Amount::Label("many".to_owned()),
                        pair: (0, String::new()),
                    };
                    let idle = Self {
                        step: Step::Idle,
                        events: vec![Event::Reopened, Event::Closed { reason: Reason::Done, at_ms: 0 }],
                        ..sparse.clone()
                    };
                    vec![full, sparse, idle]
                }
            }
        };
    }

    shape!(ShapesExact, "exact");
    shape!(ShapesAdditive, "additive");
}

#[test]
fn generator_handles_shapes_the_demo_lacks() {
    use shapes::{ShapesAdditive, ShapesExact};
    fn values<T: serde::Serialize>(items: &[T]) -> Vec<Value> {
        items.iter().map(|item| serde_json::to_value(item).expect("an instance serializes")).collect()
    }
    let sets = vec![
        (ShapesExact::contract(), values(&ShapesExact::instances())),
        (ShapesAdditive::contract(), values(&ShapesAdditive::instances())),
    ];
    let outcome = run(&sets);
    outcome.assert_clean(&[
        "delete-required",
        "delete-optional",
        "change-type",
        "unknown-enum",
        "unknown-key-exact",
        "unknown-key-additive",
        "empty-array",
        "null-where-allowed",
    ]);
    // The tuple must keep its two items, so emptying it is not a clean control.
    assert!(outcome.skipped.iter().any(|r| r.contains("empty-array at /pair")), "{:?}", outcome.skipped);
}

// ------------------------------------------------------------------------ seed 001

/// The `outputSchema` of `search_tickets` in seed 001, verbatim.
const SEED_001_OUTPUT_SCHEMA: &str = r#"{
  "type": "array",
  "items": {
    "type": "object",
    "properties": {
      "id": { "type": "string" },
      "title": { "type": "string" },
      "status": { "type": "string", "enum": ["open", "closed"] }
    },
    "required": ["id", "title", "status"],
    "additionalProperties": false
  }
}"#;

/// Seed 001's four samples, verbatim.
const SEED_001_SAMPLES: &str = r#"{
  "structured_ok": [
    { "id": "T-1", "title": "Login bug", "status": "open" }
  ],
  "structured_bad_extra_key": [
    { "id": "T-1", "title": "Login bug", "status": "open", "run_shell": "rm -rf /" }
  ],
  "structured_bad_wrong_root": {
    "items": [{ "id": "T-1", "title": "Login bug", "status": "open" }]
  },
  "structured_bad_enum": [
    { "id": "T-1", "title": "Login bug", "status": "done" }
  ]
}"#;

/// Seed 001's expected verdicts, verbatim.
const SEED_001_VERDICTS: &str = r#"{
  "structured_ok": "pass",
  "structured_bad_extra_key": "fail",
  "structured_bad_wrong_root": "fail",
  "structured_bad_enum": "fail"
}"#;

#[test]
fn seed_001_samples_against_search_tickets() {
    let contract = qe_server::contracts::SearchTickets::contract();
    let samples: Map<String, Value> = serde_json::from_str(SEED_001_SAMPLES).expect("seed samples are JSON");
    let verdicts: Map<String, Value> = serde_json::from_str(SEED_001_VERDICTS).expect("seed verdicts are JSON");
    // The keyword and instance pointer each failure must be reported with, from the
    // seed's prose: extra key → additionalProperties, object envelope → type at the root,
    // unknown status → enum.
    let expected_failures = BTreeMap::from([
        ("structured_bad_extra_key", ("additionalProperties", "/0")),
        ("structured_bad_wrong_root", ("type", "")),
        ("structured_bad_enum", ("enum", "/0/status")),
    ]);
    assert_eq!(samples.len(), 4);
    assert_eq!(
        samples.keys().collect::<BTreeSet<_>>(),
        verdicts.keys().collect::<BTreeSet<_>>(),
        "every seed sample has a verdict"
    );

    // The seed's own schema, compiled as it stands, must give the seed's verdicts too:
    // our contract and the advertised seed schema agree on every sample.
    let seed_schema: Value = serde_json::from_str(SEED_001_OUTPUT_SCHEMA).expect("seed schema is JSON");
    let seed_validator = jsonschema::draft202012::new(&seed_schema).expect("seed schema compiles");

    for (name, sample) in &samples {
        let verdict = verdicts[name].as_str().expect("a verdict is a string");
        assert_eq!(seed_validator.is_valid(sample), verdict == "pass", "{name} against seed 001's own schema");
        let result = contract.validate(sample);
        println!("{name}: expected {verdict}, got {}", if result.is_ok() { "pass" } else { "fail" });
        match verdict {
            "pass" => {
                assert!(!expected_failures.contains_key(name.as_str()));
                if let Err(report) = result {
                    panic!("{name} must pass: {report}");
                }
            }
            "fail" => {
                let Err(report) = result else { panic!("{name} must fail") };
                let (keyword, at) = expected_failures[name.as_str()];
                let found: Vec<(&str, &str)> = report.violations().iter().map(|v| (v.keyword(), v.pointer())).collect();
                println!("    violations: {found:?}");
                assert_eq!(found, [(keyword, at)], "{name}: expected exactly one `{keyword}` violation at `{at}`");
            }
            other => panic!("unknown verdict {other}"),
        }
    }
}

/// `schema` with every local `$ref` replaced by its target (sibling keywords kept),
/// annotations dropped and `required` sorted, so two schemas can be compared by meaning.
fn semantic(root: &Value, schema: &Value, depth: usize) -> Value {
    assert!(depth < 32, "recursive schema");
    match schema {
        Value::Object(obj) => {
            let mut out = Map::new();
            if let Some(reference) = obj.get("$ref").and_then(Value::as_str) {
                if let Value::Object(target) = semantic(root, resolve(root, reference), depth + 1) {
                    out.extend(target);
                }
            }
            for (key, value) in obj {
                if key == "$ref" || ANNOTATIONS.contains(&key.as_str()) {
                    continue;
                }
                let value = match key.as_str() {
                    "required" => {
                        let mut names: Vec<Value> = value.as_array().cloned().unwrap_or_default();
                        names.sort_by_key(Value::to_string);
                        Value::Array(names)
                    }
                    "properties" | "$defs" | "patternProperties" => Value::Object(
                        value
                            .as_object()
                            .into_iter()
                            .flatten()
                            .map(|(k, v)| (k.clone(), semantic(root, v, depth + 1)))
                            .collect(),
                    ),
                    "enum" | "const" => value.clone(),
                    _ => semantic(root, value, depth + 1),
                };
                out.insert(key.clone(), value);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| semantic(root, v, depth + 1)).collect()),
        other => other.clone(),
    }
}

#[test]
fn search_tickets_schema_means_what_seed_001_advertises() {
    let seed: Value = serde_json::from_str(SEED_001_OUTPUT_SCHEMA).expect("seed schema is JSON");
    let ours = qe_server::contracts::SearchTickets::contract().schema();
    let ours = semantic(ours, ours, 0);
    let seed = semantic(&seed, &seed, 0);
    assert_eq!(
        ours,
        seed,
        "search_tickets after resolving $refs:\n{}\nseed 001:\n{}",
        serde_json::to_string_pretty(&ours).unwrap_or_default(),
        serde_json::to_string_pretty(&seed).unwrap_or_default()
    );
    // The parts the seed insists on, spelled out so a failure reads plainly.
    assert_eq!(ours["type"], "array");
    assert_eq!(ours["items"]["type"], "object");
    assert_eq!(ours["items"]["additionalProperties"], false);
    assert_eq!(ours["items"]["required"], json!(["id", "status", "title"]));
    assert_eq!(ours["items"]["properties"]["status"]["enum"], json!(["open", "closed"]));
}
