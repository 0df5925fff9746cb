//! The canonical form writes no `type` array: `"type": ["string", "null"]` becomes
//! `anyOf` with one single-`type` branch per type, which clients that map schemas onto a
//! single-`type` dialect (the OpenAPI subset of function declarations) read, where they
//! reject a `type` array or drop the constraint. The values accepted are the same.

use serde_json::{Map, Value};

use super::for_each_child_mut;

/// The keywords that apply to instances of one JSON type only, by type: in a branch of
/// that type they mean what they meant beside the `type` array. `format` is placed apart
/// (a string keyword for every format JSON Schema defines). `unevaluatedProperties` and
/// `unevaluatedItems` are not here: they see what the keywords beside them evaluated,
/// branches included, so they stay on the schema that holds the `anyOf`.
const STRING_KEYWORDS: &[&str] =
    &["minLength", "maxLength", "pattern", "contentEncoding", "contentMediaType", "contentSchema"];
const NUMBER_KEYWORDS: &[&str] = &["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"];
const ARRAY_KEYWORDS: &[&str] =
    &["items", "prefixItems", "contains", "minContains", "maxContains", "minItems", "maxItems", "uniqueItems"];
const OBJECT_KEYWORDS: &[&str] = &[
    "properties",
    "patternProperties",
    "additionalProperties",
    "required",
    "dependentRequired",
    "dependentSchemas",
    "propertyNames",
    "minProperties",
    "maxProperties",
];

/// The keywords that apply only to instances of the JSON type `name`.
#[must_use]
pub(crate) fn keywords_of_type(name: &str) -> &'static [&'static str] {
    match name {
        "string" => STRING_KEYWORDS,
        "integer" | "number" => NUMBER_KEYWORDS,
        "array" => ARRAY_KEYWORDS,
        "object" => OBJECT_KEYWORDS,
        _ => &[],
    }
}

/// The JSON type names of JSON Schema.
const TYPE_NAMES: &[&str] = &["null", "boolean", "object", "array", "number", "string", "integer"];

/// Rewrites every `type` array in `schema` (see [`split_type_list`]).
pub(crate) fn split_type_lists(node: &mut Value) {
    split_type_list(node);
    for_each_child_mut(node, &mut split_type_lists);
}

/// Rewrites the `type` array of one schema node, not of its subschemas, as `anyOf` with
/// one branch per type, and returns whether it did. Each branch is `{"type": <that
/// type>}` with the keywords that apply only to that type (string keywords in the
/// string branch, numeric ones in the `integer`/`number` branch, object and array
/// keywords likewise; `format` in the string branch, or the numeric one when there is
/// no string); everything else stays on the node: `enum`, `const`, the annotations,
/// applicators, `unevaluatedProperties`/`unevaluatedItems`, and a keyword of a type the
/// list does not name (it constrains nothing there). A node that already has an `anyOf`
/// gets the new one as an `allOf` entry. A one-type array becomes that type; an empty
/// array, or one with a name that is not a JSON type, is left as it is. The values
/// accepted are the same.
///
/// # Examples
///
/// ```
/// use serde_json::json;
///
/// let mut schema = json!({ "type": ["string", "null"], "maxLength": 8, "description": "A label." });
/// assert!(contract_runtime::schema::split_type_list(&mut schema));
/// assert_eq!(
///     schema,
///     json!({
///         "anyOf": [{ "type": "string", "maxLength": 8 }, { "type": "null" }],
///         "description": "A label."
///     })
/// );
/// ```
pub fn split_type_list(node: &mut Value) -> bool {
    let Some(obj) = node.as_object_mut() else { return false };
    let Some(Value::Array(list)) = obj.get("type") else { return false };
    if obj.contains_key("anyOf") && obj.get("allOf").is_some_and(|entries| !entries.is_array()) {
        return false;
    }
    let mut types: Vec<&str> = Vec::with_capacity(list.len());
    for item in list {
        match item.as_str() {
            Some(name) if TYPE_NAMES.contains(&name) => {
                if !types.contains(&name) {
                    types.push(name);
                }
            }
            _ => return false,
        }
    }
    let types: Vec<String> = types.into_iter().map(str::to_owned).collect();
    match types.as_slice() {
        [] => false,
        [one] => {
            obj.insert("type".to_owned(), Value::String(one.clone()));
            true
        }
        _ => {
            obj.remove("type");
            let format_home = ["string", "integer", "number"].into_iter().find(|t| types.iter().any(|n| n == t));
            let mut branches: Vec<Map<String, Value>> = types
                .iter()
                .map(|name| {
                    let mut branch = Map::new();
                    branch.insert("type".to_owned(), Value::String(name.clone()));
                    branch
                })
                .collect();
            let mut moved: Vec<&str> = Vec::new();
            for (name, branch) in types.iter().zip(&mut branches) {
                let mut own: Vec<&str> = keywords_of_type(name).to_vec();
                if format_home == Some(name.as_str()) || (format_home == Some("integer") && name == "number") {
                    own.push("format");
                }
                for keyword in own {
                    if let Some(value) = obj.get(keyword) {
                        branch.insert(keyword.to_owned(), value.clone());
                        moved.push(keyword);
                    }
                }
            }
            for keyword in moved {
                obj.remove(keyword);
            }
            let any_of = Value::Array(branches.into_iter().map(Value::Object).collect());
            if obj.contains_key("anyOf") {
                let mut wrapper = Map::new();
                wrapper.insert("anyOf".to_owned(), any_of);
                match obj.get_mut("allOf") {
                    Some(Value::Array(entries)) => entries.push(Value::Object(wrapper)),
                    _ => {
                        obj.insert("allOf".to_owned(), Value::Array(vec![Value::Object(wrapper)]));
                    }
                }
            } else {
                obj.insert("anyOf".to_owned(), any_of);
            }
            true
        }
    }
}
