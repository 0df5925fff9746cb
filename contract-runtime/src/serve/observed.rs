//! What a tool's results looked like, never what they held: per tool, how many results
//! were observed and, per instance pointer, how many values stood there, of which JSON
//! types, and whether the tool's schema names the property (required, optional, or not
//! at all). Counts, types and property names only, each bounded. What `tool-contracts
//! proxy --observe FILE` records and `tool-contracts schemas --suggest FILE` reads.
//!
//! An array's items are recorded under the token `*`: `/items/*/id` counts every item
//! that had an `id`, and `/items/*` every item, so a property present in every item of
//! every result has the count of the objects of its parent.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::contract::pointer::{escape, resolve_ref};

/// The most tools recorded; results of others are counted in [`Observed::tools_dropped`].
pub const MAX_TOOLS: usize = 512;

/// The most pointers recorded per tool; properties past it are counted as dropped.
pub const MAX_POINTERS: usize = 512;

/// The deepest instance pointer recorded (in tokens); deeper values are counted as
/// dropped and not walked.
pub const MAX_DEPTH: usize = 12;

/// The longest property name recorded (in characters); a longer one, or one holding a
/// control character, is counted as dropped and not walked.
pub const MAX_KEY_CHARS: usize = 128;

/// What `Observed::about` says of every file.
pub const ABOUT: &str = "results observed by tool-contracts proxy --observe: counts, JSON types and property names \
                         per instance pointer, never values";

/// Every tool's observations.
///
/// # Examples
///
/// ```
/// use contract_runtime::observed::{Named, Observed};
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": { "id": { "type": "string" }, "note": { "type": "string" } },
///     "required": ["id"],
/// });
/// let mut observed = Observed::default();
/// observed.record("task", &json!({ "id": "t-1", "note": "a", "extra": 1 }), Some(&schema));
/// observed.record("task", &json!({ "id": "t-2", "note": "b" }), Some(&schema));
/// let task = &observed.tools["task"];
/// assert_eq!(task.results, 2);
/// assert_eq!(task.pointers["/note"].count, 2);
/// assert_eq!(task.pointers["/note"].schema, Some(Named::Optional));
/// assert_eq!(task.pointers["/extra"].schema, Some(Named::Undeclared));
/// assert_eq!(task.pointers["/extra"].types["integer"], 1);
/// // No value is kept.
/// assert!(!serde_json::to_string(&observed).unwrap().contains("t-1"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Observed {
    /// What the file holds ([`ABOUT`]).
    pub about: String,
    /// Each tool's observations, by tool name.
    pub tools: BTreeMap<String, ToolObserved>,
    /// Results of tools not recorded because [`MAX_TOOLS`] tools were.
    #[serde(default)]
    pub tools_dropped: u64,
}

impl Default for Observed {
    fn default() -> Self {
        Self { about: ABOUT.to_owned(), tools: BTreeMap::new(), tools_dropped: 0 }
    }
}

/// One tool's observations.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolObserved {
    /// How many results were observed.
    pub results: u64,
    /// Per instance pointer (`""` is the result itself, `*` any array item).
    pub pointers: BTreeMap<String, PointerObserved>,
    /// Values not recorded: past [`MAX_DEPTH`] or [`MAX_POINTERS`], or under a name
    /// longer than [`MAX_KEY_CHARS`] or holding a control character.
    #[serde(default)]
    pub dropped: u64,
    /// Keys a result's JSON text block had and its `structuredContent` lacked (what a
    /// client reading `structuredContent` never sees), by pointer: in how many results.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub only_in_text: BTreeMap<String, u64>,
    /// Keys `structuredContent` had and the result's JSON text block lacked, by pointer.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub only_in_structured: BTreeMap<String, u64>,
}

/// The values observed at one instance pointer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PointerObserved {
    /// How many values stood there.
    pub count: u64,
    /// How many of them were of each JSON type (`null`, `boolean`, `integer`, `number`,
    /// `string`, `array`, `object`).
    pub types: BTreeMap<String, u64>,
    /// How the tool's schema names the property, as of the last result observed; absent
    /// for the result itself, an array item, or when the schema does not describe the
    /// object that holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Named>,
}

/// How a schema names an object's property.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Named {
    /// In `properties` and `required`.
    Required,
    /// In `properties`, not `required`.
    Optional,
    /// Described objects hold it, but no `properties` names it.
    Undeclared,
}

impl Observed {
    /// Records one result of `tool`: `value` is its `structuredContent` (or its JSON
    /// text), `schema` the tool's output schema, if it has one.
    pub fn record(&mut self, tool: &str, value: &Value, schema: Option<&Value>) {
        if !self.tools.contains_key(tool) && self.tools.len() >= MAX_TOOLS {
            self.tools_dropped += 1;
            return;
        }
        let observed = self.tools.entry(tool.to_owned()).or_default();
        observed.results += 1;
        let described = schema.map(|root| (root, vec![root]));
        observed.walk(value, "", 0, None, described.as_ref().map(|(root, here)| (*root, here.as_slice())));
    }
}

impl Observed {
    /// Records that a result of `tool` had keys in its JSON text block and not in its
    /// `structuredContent` (`only_in_text`), or the other way round: pointers, bounded by
    /// the caller, each counted once per result.
    pub fn record_mismatch(&mut self, tool: &str, only_in_text: &[String], only_in_structured: &[String]) {
        let Some(observed) = self.tools.get_mut(tool) else { return };
        for (pointers, counts) in
            [(only_in_text, &mut observed.only_in_text), (only_in_structured, &mut observed.only_in_structured)]
        {
            for pointer in pointers {
                if counts.contains_key(pointer) || counts.len() < MAX_POINTERS {
                    *counts.entry(pointer.clone()).or_default() += 1;
                }
            }
        }
    }
}

impl ToolObserved {
    fn walk(&mut self, value: &Value, pointer: &str, depth: usize, named: Option<Named>, schema: Schema<'_>) {
        if !self.pointers.contains_key(pointer) && self.pointers.len() >= MAX_POINTERS {
            self.dropped += 1;
            return;
        }
        let here = self.pointers.entry(pointer.to_owned()).or_default();
        here.count += 1;
        *here.types.entry(type_of(value).to_owned()).or_default() += 1;
        if named.is_some() {
            here.schema = named;
        }
        let children: Vec<(String, &Value)> = match value {
            Value::Object(map) => map.iter().map(|(k, v)| (k.clone(), v)).collect(),
            Value::Array(items) => items.iter().map(|v| ("*".to_owned(), v)).collect(),
            _ => return,
        };
        if depth >= MAX_DEPTH {
            self.dropped += children.len() as u64;
            return;
        }
        let expanded = schema.map(|(root, here)| (root, expand(root, here)));
        for (key, child) in children {
            if key.chars().count() > MAX_KEY_CHARS || key.chars().any(char::is_control) {
                self.dropped += 1;
                continue;
            }
            let is_item = value.is_array();
            let (named, below) = match &expanded {
                Some((root, subschemas)) => {
                    let named = if is_item { None } else { name(subschemas, &key) };
                    (named, Some((*root, descend(subschemas, &key, is_item))))
                }
                None => (None, None),
            };
            let token = if is_item { key } else { escape(&key) };
            let below_ref = below.as_ref().map(|(root, subs)| (*root, subs.as_slice()));
            self.walk(child, &format!("{pointer}/{token}"), depth + 1, named, below_ref);
        }
    }
}

/// The schema root and the subschemas that describe a location (none: not described).
type Schema<'a> = Option<(&'a Value, &'a [&'a Value])>;

fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `subschemas` with every local `$ref` resolved and every `allOf`/`anyOf`/`oneOf`
/// member added, within a bound (a `$ref` may lead back to itself).
fn expand<'a>(root: &'a Value, subschemas: &[&'a Value]) -> Vec<&'a Value> {
    let mut out: Vec<&'a Value> = Vec::new();
    let mut queue: Vec<&'a Value> = subschemas.to_vec();
    while let Some(schema) = queue.pop() {
        if out.len() >= 64 {
            break;
        }
        if out.iter().any(|seen| std::ptr::eq(*seen, schema)) {
            continue;
        }
        out.push(schema);
        let Some(object) = schema.as_object() else { continue };
        if let Some(target) = object.get("$ref").and_then(Value::as_str).and_then(|r| resolve_ref(root, r)) {
            queue.push(target);
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            if let Some(members) = object.get(key).and_then(Value::as_array) {
                queue.extend(members.iter());
            }
        }
    }
    out
}

/// How the object `subschemas` describe names its property `key`; `None` when none of
/// them describes an object's properties (the object is not described).
fn name(subschemas: &[&Value], key: &str) -> Option<Named> {
    let mut describes = false;
    let mut named = None;
    for schema in subschemas {
        let Some(object) = schema.as_object() else { continue };
        let properties = object.get("properties").and_then(Value::as_object);
        describes |= properties.is_some() || object.contains_key("additionalProperties");
        if properties.is_some_and(|p| p.contains_key(key)) {
            let required = object
                .get("required")
                .and_then(Value::as_array)
                .is_some_and(|r| r.iter().any(|name| name.as_str() == Some(key)));
            if required {
                return Some(Named::Required);
            }
            named = Some(Named::Optional);
        } else if object
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|n| n.as_str() == Some(key)))
        {
            named = named.or(Some(Named::Optional));
        }
    }
    named.or(describes.then_some(Named::Undeclared))
}

/// The subschemas that describe the value under `key` (an array item when `is_item`).
fn descend<'a>(subschemas: &[&'a Value], key: &str, is_item: bool) -> Vec<&'a Value> {
    let mut out = Vec::new();
    for schema in subschemas {
        let Some(object) = schema.as_object() else { continue };
        if is_item {
            out.extend(object.get("items").filter(|items| items.is_object()));
            continue;
        }
        match object.get("properties").and_then(Value::as_object).and_then(|p| p.get(key)) {
            Some(property) => out.push(property),
            None => out.extend(object.get("additionalProperties").filter(|extra| extra.is_object())),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn items_refs_and_unions_are_followed_and_undescribed_objects_are_not_judged() {
        let schema = json!({
            "$defs": { "item": { "type": "object", "properties": { "id": { "type": "string" } }, "required": ["id"] } },
            "type": "object",
            "properties": {
                "items": { "type": "array", "items": { "$ref": "#/$defs/item" } },
                "meta": { "type": "object" },
                "either": { "anyOf": [{ "type": "object", "properties": { "a": { "type": "integer" } } }, { "type": "null" }] },
            },
        });
        let mut observed = Observed::default();
        let value = json!({ "items": [{ "id": "1", "x": 1 }, { "id": "2" }], "meta": { "k": 1 }, "either": { "a": 1, "b": 2 } });
        observed.record("t", &value, Some(&schema));
        let t = &observed.tools["t"];
        assert_eq!(t.pointers["/items/*"].count, 2);
        assert_eq!(t.pointers["/items/*"].schema, None, "an item is not a property");
        assert_eq!(t.pointers["/items/*/id"].schema, Some(Named::Required));
        assert_eq!(t.pointers["/items/*/x"].schema, Some(Named::Undeclared));
        assert_eq!(t.pointers["/meta/k"].schema, None, "an object the schema leaves open is not judged");
        assert_eq!(t.pointers["/either/a"].schema, Some(Named::Optional));
        assert_eq!(t.pointers["/either/b"].schema, Some(Named::Undeclared));
        assert_eq!(t.pointers["/items"].schema, Some(Named::Optional));
    }

    #[test]
    fn every_bound_holds_and_counts_what_it_drops() {
        let mut observed = Observed::default();
        let long = "k".repeat(MAX_KEY_CHARS + 1);
        let mut deep = json!(1);
        for _ in 0..(MAX_DEPTH + 5) {
            deep = json!({ "d": deep });
        }
        let wide: serde_json::Map<String, Value> =
            (0..MAX_POINTERS + 10).map(|i| (format!("p{i}"), json!(i))).collect();
        observed.record("t", &json!({ long.clone(): 1, "bell\u{7}": 2, "deep": deep, "wide": wide }), None);
        let t = &observed.tools["t"];
        assert!(t.pointers.len() <= MAX_POINTERS);
        assert!(t.pointers.keys().all(|p| !p.contains(&long) && !p.contains('\u{7}')));
        assert!(t.pointers.keys().all(|p| p.matches('/').count() <= MAX_DEPTH));
        assert!(t.dropped >= 12, "{}", t.dropped);
        for n in 0..=MAX_TOOLS {
            observed.record(&format!("tool-{n}"), &json!({}), None);
        }
        assert_eq!(observed.tools.len(), MAX_TOOLS);
        assert_eq!(observed.tools_dropped, 2);
        // Control: a small result loses nothing.
        let mut small = Observed::default();
        small.record("t", &json!({ "a": [1, 2], "b": { "c": null } }), None);
        assert_eq!(small.tools["t"].dropped, 0);
        assert_eq!(small.tools["t"].pointers.len(), 5);
    }
}
