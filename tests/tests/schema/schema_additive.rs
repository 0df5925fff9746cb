//! What `additive` leaves closed (README, "Writing contracts"): objects whose keys are a
//! struct's fields are open, so a newer server may add fields; the one-key wrapper of an
//! externally tagged variant is the discriminant, not a struct, and stays closed; a type
//! with `#[serde(deny_unknown_fields)]` stays closed because its author said so; map keys
//! stay typed. The payloads are written by hand from what serde writes for these types.

#![allow(dead_code, reason = "the types exist for their schema; the payloads are written by hand")]

use contract_runtime::ToolOutput;
use serde_json::{json, Value};

#[derive(serde::Serialize, schemars::JsonSchema)]
enum Shape {
    Circle { r: u32 },
    Dot,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Pinned {
    code: u16,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Plain {
    name: String,
}

#[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "additive")]
struct Drawing {
    shape: Shape,
    pinned: Pinned,
    plain: Plain,
    by_id: std::collections::BTreeMap<u32, bool>,
}

#[test]
fn additive_opens_struct_objects_and_keeps_discriminants_deny_unknown_fields_and_keys_closed() {
    let contract = Drawing::contract();
    let base = json!({
        "shape": { "Circle": { "r": 1 } }, "pinned": { "code": 2 }, "plain": { "name": "n" }, "by_id": { "3": true },
    });
    assert!(contract.is_valid(&base), "clean control");
    let with = |pointer: &str, key: &str| {
        let mut value = base.clone();
        value.pointer_mut(pointer).and_then(Value::as_object_mut).expect("object").insert(key.to_owned(), json!(1));
        value
    };
    // Open: the root, a plain struct, a struct variant's own fields.
    for (pointer, key) in [("", "added"), ("/plain", "added"), ("/shape/Circle", "added")] {
        assert!(contract.is_valid(&with(pointer, key)), "additive must accept a new key at `{pointer}`");
    }
    // Closed: the variant wrapper, a deny_unknown_fields struct, a map's key type.
    for (pointer, key) in [("/shape", "added"), ("/shape", "Dot"), ("/pinned", "added"), ("/by_id", "x")] {
        assert!(!contract.is_valid(&with(pointer, key)), "additive must reject `{key}` at `{pointer}`");
    }
}
