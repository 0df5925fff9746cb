//! Contract schemas that clients mapping tool schemas onto a single-`type` dialect read
//! whole: no `type` array anywhere, and no subschema without a constraining keyword
//! except a value declared opaque as "any JSON value". Judged by the two rules the MCP
//! Inspector's CLI lints every listed schema with, written here from their definition
//! (a `type` array of JSON type names; a schema object with no assertion, applicator or
//! reference keyword, and no `if` with `then`/`else`), and proven on the interop run
//! itself by `interop.rs`.

use std::collections::HashMap;

use contract_runtime::{OpaqueMap, ToolOutput};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};

/// Keywords that constrain an instance, as the Inspector lists them.
const CONSTRAINING: &[&str] = &[
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "format",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "items",
    "prefixItems",
    "contains",
    "additionalItems",
    "unevaluatedItems",
    "properties",
    "patternProperties",
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "dependentSchemas",
    "dependencies",
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
];
/// Where a boolean is a value of the keyword, not a schema to flag.
const BOOLEAN_VALUED: &[&str] =
    &["additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems"];
const MAPS: &[&str] = &["properties", "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions"];
const LISTS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
const ONES: &[&str] = &[
    "items",
    "contains",
    "not",
    "propertyNames",
    "if",
    "then",
    "else",
    "additionalProperties",
    "unevaluatedProperties",
    "additionalItems",
    "unevaluatedItems",
    "contentSchema",
];

/// The findings on `schema` as (rule, JSON pointer).
fn findings(schema: &Value) -> Vec<(&'static str, String)> {
    fn walk(node: &Value, at: &str, keyword: Option<&str>, out: &mut Vec<(&'static str, String)>) {
        let obj = match node {
            Value::Bool(_) => {
                if !keyword.is_some_and(|k| BOOLEAN_VALUED.contains(&k)) {
                    out.push(("boolean-schema", at.to_owned()));
                }
                return;
            }
            Value::Object(obj) => obj,
            _ => return,
        };
        if obj.get("type").is_some_and(Value::is_array) {
            out.push(("type-union", at.to_owned()));
        }
        let constrains = obj.keys().any(|k| CONSTRAINING.contains(&k.as_str()))
            || (obj.contains_key("if") && (obj.contains_key("then") || obj.contains_key("else")));
        if !constrains && keyword != Some("not") {
            out.push(("untyped-schema", at.to_owned()));
        }
        for (key, value) in obj {
            let here = format!("{at}/{}", contract_runtime::pointer::escape(key));
            match value {
                Value::Object(map) if MAPS.contains(&key.as_str()) => {
                    for (name, sub) in map {
                        walk(sub, &format!("{here}/{}", contract_runtime::pointer::escape(name)), Some(key), out);
                    }
                }
                Value::Array(list) if LISTS.contains(&key.as_str()) => {
                    for (i, sub) in list.iter().enumerate() {
                        walk(sub, &format!("{here}/{i}"), Some(key), out);
                    }
                }
                _ if ONES.contains(&key.as_str()) => walk(value, &here, Some(key), out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(schema, "", None, &mut out);
    out
}

#[test]
fn the_rules_find_what_they_are_about() {
    // Controls: each rule fires on the spelling it is about, and not on the portable one.
    let flagged = json!({
        "type": "object",
        "properties": { "a": { "type": ["string", "null"] }, "b": { "description": "anything" }, "c": true },
        "additionalProperties": false
    });
    assert_eq!(
        findings(&flagged),
        [
            ("type-union", "/properties/a".to_owned()),
            ("untyped-schema", "/properties/b".to_owned()),
            ("boolean-schema", "/properties/c".to_owned())
        ]
    );
    let portable = json!({
        "type": "object",
        "properties": { "a": { "anyOf": [{ "type": "string" }, { "type": "null" }] } },
        "additionalProperties": true
    });
    assert_eq!(findings(&portable), []);
}

#[test]
fn every_demo_contract_is_portable() {
    let set = qe_server::all_contracts();
    let contracts = set.contracts();
    assert_eq!(contracts.len(), 9);
    for contract in contracts {
        assert_eq!(findings(contract.schema()), [], "{}: {}", contract.name(), contract.schema());
    }
}

/// Values that are always objects, declared so: a map of opaque values (`OpaqueMap`, or
/// a `serde_json::Map` declared opaque) is `{"type": "object", "additionalProperties":
/// true}`, which constrains. A true any-value stays `{}`: the one finding left, and the
/// one the documentation names.
#[test]
fn object_maps_of_opaque_values_are_portable_and_a_true_any_value_is_not() {
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = "exact")]
    struct AnyValue {
        id: u32,
        #[tool_output(opaque)]
        data: Value,
    }
    #[derive(Serialize, JsonSchema)]
    struct Page {
        #[schemars(with = "OpaqueMap")]
        extra: HashMap<String, Value>,
        #[serde(flatten)]
        #[schemars(with = "OpaqueMap")]
        rest: HashMap<String, Value>,
    }
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = "exact")]
    struct Scrape {
        #[tool_output(opaque)]
        metadata: serde_json::Map<String, Value>,
        #[schemars(with = "Option<OpaqueMap>")]
        output: Option<HashMap<String, Value>>,
        pages: Vec<Page>,
    }
    let contract = Scrape::contract();
    assert_eq!(findings(contract.schema()), [], "{}", contract.schema());
    assert_eq!(contract.schema()["properties"]["metadata"], json!({ "type": "object", "additionalProperties": true }));
    assert_eq!(contract.opaque_pointers(), ["/metadata", "/output/*", "/pages/*/*", "/pages/*/extra/*"]);
    // The values are still opaque and what is around them still closed under `exact`.
    let page = json!({ "extra": { "k": [1, { "n": null }] }, "any": { "deep": true } });
    let value = json!({ "metadata": { "a": [1] }, "output": { "b": {} }, "pages": [page] });
    assert!(contract.is_valid(&value));
    assert!(contract.is_valid(&json!({ "metadata": {}, "output": null, "pages": [] })));
    assert!(!contract.is_valid(&json!({ "metadata": [], "output": null, "pages": [] })), "metadata is an object");
    assert!(!contract.is_valid(&json!({ "metadata": {}, "output": 1, "pages": [] })), "output is an object or null");
    assert!(!contract.is_valid(&json!({ "metadata": {}, "output": null, "pages": [], "x": 1 })), "the root is closed");

    assert_eq!(findings(AnyValue::contract().schema()), [("untyped-schema", "/properties/data".to_owned())]);
}
