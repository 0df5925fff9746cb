//! The mutation generator and its runner, shared by validate_mutations.rs (the demo
//! contracts) and validate_mutation_generator.rs (shapes the demo lacks).
//!
//! Nothing here is written per contract. For a contract and real serialized instances
//! of it, `run` walks the contract's canonical schema (resolving local `$ref`s,
//! descending `allOf` and the one `oneOf`/`anyOf` branch the instance takes) alongside
//! each instance, and generates:
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
//! checker (`could_accept`, in `support/lenient.rs`) must prove that the schema rejects
//! it, which matters where a changed value could land in another `oneOf`/`anyOf` branch.
//! Mutations it cannot prove invalid are skipped and listed with the reason. Clean
//! controls are only generated where the schema surely accepts them
//! (`surely_accepts_null`, …), and the lenient checker must agree with each of them too.
//!
//! The counts (cases, false accepts, false rejects) are printed per contract and in
//! total; run with `-- --nocapture` to see them. Both must be zero. A mutation that is
//! rejected only for a reason unrelated to the mutated location (no violation at that
//! location or one of its ancestors) counts as misattributed, which must be zero too.
//! Every case is also judged by the fast path (`support/fast_path.rs`), which must agree.
//!
//! It reads its siblings `fast_path` and `lenient` of the support module.

use std::collections::{BTreeMap, BTreeSet};

use contract_runtime::{Compatibility, OutputContract};
use serde_json::{json, Map, Value};

use super::fast_path;
use super::lenient::{constrains_nothing, could_accept, gather, surely_accepts_null, type_allows, type_set};

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

/// Values of other JSON types than `value`, in a fixed order of preference
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
            // preferred type may be another branch's (an untagged `u64 | String`).
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
            // `additive` every object is open. The expectation comes
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
#[allow(dead_code)]
pub(crate) fn serde_json_preserves_order() -> bool {
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
pub(crate) struct Outcome {
    total: Tally,
    failures: Vec<String>,
    kinds: BTreeMap<&'static str, usize>,
    pub(crate) skipped: BTreeSet<String>,
    /// Cases on which the fast path and `jsonschema` disagree.
    fast_disagreements: Vec<String>,
    /// Cases the fast path judged.
    fast_compared: usize,
}

/// Generates and validates every case for every `(contract, instances)`, printing one row
/// per contract and the total.
pub(crate) fn run(sets: &[(&OutputContract, Vec<Value>)]) -> Outcome {
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
                outcome.fast_compared +=
                    usize::from(contract.fast_path() == contract_runtime::fused::Coverage::Covered);
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
    pub(crate) fn assert_clean(&self, kinds: &[&str]) {
        // Each listed kind must have been generated at least once, so a walker regression
        // cannot silently drop a whole kind of case.
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
