//! What a contract's `tools/list` entry shows is its checked-in schema, for every root
//! shape and both protocol eras: a root that is an object through `$ref` or `oneOf`
//! says `"type": "object"` in the schema itself, so only a root that is not an object
//! is rewritten, as the `{"result": …}` wrapper, for peers before 2026-07-28.

use contract_runtime::wire::{advertised_output_schema, ProtocolVersion};
use contract_runtime::{OutputContract, ToolOutput};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};

#[derive(Debug, Serialize, JsonSchema)]
pub struct Inner {
    pub name: String,
}

/// A transparent newtype of a struct: schemars writes a bare `$ref` root.
#[derive(Debug, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
#[serde(transparent)]
pub struct Goal(pub Inner);

/// The same, with additive compatibility (nothing is closed).
#[derive(Debug, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "additive")]
#[serde(transparent)]
pub struct OpenGoal(pub Inner);

/// A root that refers to itself from an internally tagged enum: hoisted into `$defs`.
#[derive(Debug, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub struct Tree {
    pub id: u32,
    pub children: Vec<Entry>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "kind")]
pub enum Entry {
    Nested(Tree),
    Leaf { v: u8 },
}

/// An internally tagged enum root: a `oneOf` of objects.
#[derive(Debug, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
#[serde(tag = "kind")]
pub enum Shape {
    Circle { r: u8 },
    Square { side: u8 },
}

/// An array root.
#[derive(Debug, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
#[serde(transparent)]
pub struct Names(pub Vec<String>);

/// An untagged enum of an object and a string: not always an object.
#[derive(Debug, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
#[serde(untagged)]
pub enum Mixed {
    Named { name: String },
    Bare(String),
}

/// A plain struct.
#[derive(Debug, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub struct Plain {
    pub a: u8,
}

fn old() -> ProtocolVersion {
    ProtocolVersion::new("2025-11-25")
}

fn wrapped(schema: &Value) -> Value {
    let mut inner = schema.as_object().expect("an object schema").clone();
    let mut outer = serde_json::Map::new();
    for key in ["$schema", "$defs"] {
        if let Some(value) = inner.remove(key) {
            outer.insert(key.to_owned(), value);
        }
    }
    outer.insert("type".to_owned(), json!("object"));
    outer.insert("properties".to_owned(), json!({ "result": inner }));
    outer.insert("required".to_owned(), json!(["result"]));
    outer.insert("additionalProperties".to_owned(), json!(false));
    Value::Object(outer)
}

#[test]
fn an_object_root_is_advertised_as_checked_in_on_every_era() {
    let objects: [(&OutputContract, &str); 5] = [
        (Goal::contract(), "$ref"),
        (OpenGoal::contract(), "$ref"),
        (Tree::contract(), "$ref"),
        (Shape::contract(), "oneOf"),
        (Plain::contract(), "properties"),
    ];
    for (contract, through) in objects {
        let schema = contract.schema();
        assert!(schema.get(through).is_some(), "{}: the root shape under test: {schema}", contract.name());
        assert_eq!(schema["type"], "object", "{}: {schema}", contract.name());
        for protocol in [old(), ProtocolVersion::latest()] {
            assert_eq!(advertised_output_schema(contract, &protocol), *schema, "{} on {protocol:?}", contract.name());
        }
    }
    // The added type changes no verdict: an object passes, anything else still fails.
    assert!(Goal::contract().is_valid(&json!({ "name": "n" })));
    assert!(!Goal::contract().is_valid(&json!({ "name": "n", "extra": 1 })), "exact stays closed");
    assert!(OpenGoal::contract().is_valid(&json!({ "name": "n", "extra": 1 })), "additive stays open");
    assert!(Tree::contract().is_valid(&json!({ "id": 1, "children": [{ "kind": "Nested", "id": 2, "children": [] }] })));
    assert!(!Tree::contract().is_valid(&json!({ "id": 1, "children": [], "x": 0 })));
    assert!(Shape::contract().is_valid(&json!({ "kind": "Circle", "r": 1 })));
    assert!(!Shape::contract().is_valid(&json!({ "kind": "Circle", "side": 1 })));
}

#[test]
fn a_root_that_is_not_always_an_object_is_wrapped_for_old_peers_only() {
    for contract in [Names::contract(), Mixed::contract()] {
        let schema = contract.schema();
        assert!(schema.get("type").is_none_or(|t| t != "object"), "{}: {schema}", contract.name());
        assert_eq!(advertised_output_schema(contract, &ProtocolVersion::latest()), *schema, "{}", contract.name());
        assert_eq!(advertised_output_schema(contract, &old()), wrapped(schema), "{}", contract.name());
    }
}
