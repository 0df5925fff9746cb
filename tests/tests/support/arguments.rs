//! An oracle for schema evolution that knows nothing of the engine: it generates
//! argument values from two schemas and validates each with the `jsonschema` crate
//! against both, to find values one schema accepts and the other refuses.
//!
//! The generator walks a schema (local `$ref`s resolved, `anyOf`/`oneOf`/`allOf`
//! entries each visited) and proposes, at every node: one value of every JSON type, the
//! `enum` and `const` values, numbers at and next to each bound and multiples of
//! `multipleOf`, strings at and next to each length bound plus a few shapes (a date, an
//! e-mail address, digits, capitals), arrays empty, of one value, of a repeated value and
//! at the item bounds; and for objects a base (every required property with a value the
//! property schema accepts), the base with every optional property too, each required
//! property dropped, each property replaced by each of its candidates, and each
//! property name of either schema added with a few values. Values are generated from
//! both schemas, so what one side requires the other's values lack.
//!
//! It is a search, not a proof: finding no witness means none among these values. A
//! pattern is only probed with the fixed string shapes, so a changed pattern may need a
//! witness the generator does not make; the tests say where they rely on that.

#![allow(dead_code, reason = "each test file that includes this module uses a part of it")]

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

/// Candidates proposed per node, at most; keeps the search small and bounded.
const PER_NODE: usize = 2000;
/// How deep the generator descends into properties and items.
const MAX_DEPTH: usize = 6;

/// A compiled schema that validates formats too (`format` is an assertion here).
pub(crate) struct Checker(jsonschema::Validator);

impl Checker {
    pub(crate) fn new(schema: &Value) -> Self {
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .build(schema)
            .unwrap_or_else(|e| panic!("schema does not compile: {e}\n{schema:#}"));
        Checker(validator)
    }

    pub(crate) fn accepts(&self, value: &Value) -> bool {
        self.0.is_valid(value)
    }
}

/// Values `from` accepts and `to` refuses, among the values generated from both.
pub(crate) fn witnesses(from: &Value, to: &Value) -> Vec<Value> {
    let (a, b) = (Checker::new(from), Checker::new(to));
    candidates(from, to).into_iter().filter(|v| a.accepts(v) && !b.accepts(v)).collect()
}

/// Every value generated from either schema, without duplicates.
pub(crate) fn candidates(one: &Value, other: &Value) -> Vec<Value> {
    let mut names = BTreeSet::new();
    property_names(one, &mut names);
    property_names(other, &mut names);
    let names: Vec<String> = names.into_iter().collect();
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for root in [one, other] {
        let generator = Generator { root, names: &names };
        for value in generator.gen(root, 0) {
            if seen.insert(value.to_string()) {
                out.push(value);
            }
        }
    }
    out
}

fn property_names(schema: &Value, names: &mut BTreeSet<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                if key == "properties" {
                    if let Some(props) = value.as_object() {
                        names.extend(props.keys().cloned());
                    }
                }
                property_names(value, names);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| property_names(v, names)),
        _ => {}
    }
}

struct Generator<'a> {
    root: &'a Value,
    names: &'a [String],
}

impl Generator<'_> {
    /// `node` with its local `$ref` chain followed (`None` for a dangling one).
    fn resolve<'n>(&'n self, mut node: &'n Value) -> Option<&'n Value> {
        for _ in 0..16 {
            let Some(target) = node.get("$ref").and_then(Value::as_str) else { return Some(node) };
            node = self.root.pointer(target.strip_prefix('#')?)?;
        }
        None
    }

    /// A schema that validates like `node` where it sits: `node` with the root's
    /// definitions beside it.
    fn standalone(&self, node: &Value) -> Value {
        let mut schema = match node {
            Value::Object(map) => map.clone(),
            other => return other.clone(),
        };
        for defs in ["$defs", "definitions"] {
            if let Some(d) = self.root.get(defs) {
                schema.insert(defs.to_owned(), d.clone());
            }
        }
        Value::Object(schema)
    }

    /// The first candidate `node` accepts, if any.
    fn valid(&self, node: &Value, depth: usize) -> Option<Value> {
        let checker = Checker::new(&self.standalone(node));
        self.gen(node, depth).into_iter().find(|v| checker.accepts(v))
    }

    fn gen(&self, node: &Value, depth: usize) -> Vec<Value> {
        let mut out: Vec<Value> = vec![
            Value::Null,
            json!(true),
            json!(false),
            json!(0),
            json!(1),
            json!(-1),
            json!(2.5),
            json!(""),
            json!("a"),
            json!("abc"),
            json!("ABC"),
            json!("123"),
            json!("2024-01-01"),
            json!("2024-01-01T00:00:00Z"),
            json!("a@example.com"),
            json!([]),
            json!({}),
        ];
        let Some(node) = self.resolve(node) else { return out };
        let Some(map) = node.as_object() else { return out };
        if depth > MAX_DEPTH {
            return out;
        }
        if let Some(values) = map.get("enum").and_then(Value::as_array) {
            out.extend(values.iter().cloned());
        }
        out.extend(map.get("const").cloned());
        for bound in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
            if let Some(v) = map.get(bound).and_then(Value::as_f64) {
                out.extend(numbers_near(v));
            }
        }
        if let Some(m) = map.get("multipleOf").and_then(Value::as_f64) {
            out.extend([m, 2.0 * m, 3.0 * m, m / 2.0].into_iter().filter_map(number));
        }
        for bound in ["minLength", "maxLength"] {
            if let Some(v) = map.get(bound).and_then(Value::as_u64) {
                for n in v.saturating_sub(1)..=v + 1 {
                    out.push(Value::String("a".repeat(usize::try_from(n).unwrap_or(0))));
                }
            }
        }
        self.arrays(map, depth, &mut out);
        let own = self.objects(map, depth, &mut out);
        for keyword in ["anyOf", "oneOf", "allOf"] {
            for branch in map.get(keyword).and_then(Value::as_array).into_iter().flatten() {
                for candidate in self.gen(branch, depth + 1) {
                    // A branch's object with the enclosing object's own properties.
                    if let (Value::Object(fields), Some(starts)) = (&candidate, &own) {
                        for start in starts {
                            let mut merged = start.clone();
                            merged.extend(fields.clone());
                            out.push(Value::Object(merged));
                        }
                    }
                    out.push(candidate);
                }
            }
        }
        out.truncate(PER_NODE);
        out
    }

    fn arrays(&self, map: &Map<String, Value>, depth: usize, out: &mut Vec<Value>) {
        let items = map.get("items");
        let item_candidates = items.map(|i| self.gen(i, depth + 1)).unwrap_or_default();
        for item in &item_candidates {
            out.push(json!([item]));
            out.push(json!([item, item]));
        }
        let first = items.and_then(|i| self.valid(i, depth + 1)).unwrap_or(json!(1));
        for bound in ["minItems", "maxItems"] {
            if let Some(v) = map.get(bound).and_then(Value::as_u64) {
                for n in v.saturating_sub(1)..=v + 1 {
                    out.push(Value::Array(vec![first.clone(); usize::try_from(n).unwrap_or(0)]));
                }
            }
        }
    }

    /// Object candidates; returns the base and the full object, when `map` describes
    /// properties.
    fn objects(&self, map: &Map<String, Value>, depth: usize, out: &mut Vec<Value>) -> Option<[Map<String, Value>; 2]> {
        let empty = Map::new();
        let props = map.get("properties").and_then(Value::as_object).unwrap_or(&empty);
        let required: Vec<&str> =
            map.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        if props.is_empty() && required.is_empty() && !map.contains_key("additionalProperties") {
            return None;
        }
        let value_of = |name: &str| props.get(name).and_then(|s| self.valid(s, depth + 1)).unwrap_or(json!("x"));
        let mut base = Map::new();
        for name in &required {
            base.insert((*name).to_owned(), value_of(name));
        }
        let mut full = base.clone();
        for name in props.keys() {
            if !full.contains_key(name) {
                full.insert(name.clone(), value_of(name));
            }
        }
        for start in [&base, &full] {
            out.push(Value::Object(start.clone()));
            for name in &required {
                let mut fewer = start.clone();
                fewer.remove(*name);
                out.push(Value::Object(fewer));
            }
            for (name, schema) in props {
                for candidate in self.gen(schema, depth + 1) {
                    let mut changed = start.clone();
                    changed.insert(name.clone(), candidate);
                    out.push(Value::Object(changed));
                }
            }
            for name in self.names.iter().map(String::as_str).chain(["unknown"]) {
                for extra in [json!(1), json!("x"), Value::Null, json!({})] {
                    let mut more = start.clone();
                    more.entry(name.to_owned()).or_insert(extra);
                    out.push(Value::Object(more));
                }
            }
        }
        Some([base, full])
    }
}

fn number(v: f64) -> Option<Value> {
    if v.fract() == 0.0 && v.abs() < 9e15 {
        #[allow(clippy::cast_possible_truncation, reason = "a whole number well inside i64")]
        return Some(json!(v as i64));
    }
    serde_json::Number::from_f64(v).map(Value::Number)
}

fn numbers_near(v: f64) -> Vec<Value> {
    [v - 1.0, v - 0.5, v, v + 0.5, v + 1.0].into_iter().filter_map(number).collect()
}
