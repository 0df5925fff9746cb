//! A grid of argument schemas: every ordered pair of 18 property schemas (types, nullable
//! spellings, enums, consts, bounds, arrays, unions, nested objects, the empty schema),
//! under a required or optional property of an open or closed object, classified in both
//! directions and checked against the independent oracle of `support/arguments.rs`.
//!
//! The property it proves: the engine never misses a break the oracle finds (no value
//! the old schema accepts and the new one refuses is ever classified additive or
//! cosmetic for requests, and the same for responses the other way round). The reverse
//! does not hold and is not claimed: the walk judges keyword by keyword, so a pair such
//! as `{"enum": ["a", "b"]}` → `{"type": "string"}` is breaking for requests (a `type`
//! added) though every old value is a string. Those conservative verdicts are counted.

use contract_tools::evolution::{self, Direction, Verdict};
use serde_json::{json, Value};

use crate::support::arguments;

fn schemas() -> Vec<Value> {
    vec![
        json!({ "type": "string" }),
        json!({ "type": "integer" }),
        json!({ "type": "number" }),
        json!({ "type": ["string", "null"] }),
        json!({ "anyOf": [{ "type": "string" }, { "type": "null" }] }),
        json!({ "enum": ["a", "b", "c"] }),
        json!({ "enum": ["a", "b"] }),
        json!({ "const": "a" }),
        json!({ "type": "integer", "minimum": 0, "maximum": 10 }),
        json!({ "type": "integer", "minimum": 0 }),
        json!({ "type": "string", "maxLength": 3 }),
        json!({ "type": "array", "items": { "type": "string" } }),
        json!({ "type": "array", "items": { "type": "string", "maxLength": 3 } }),
        json!({ "anyOf": [{ "type": "string" }, { "type": "integer" }] }),
        json!({ "oneOf": [{ "type": "string" }, { "type": "integer" }] }),
        json!({ "type": "object", "properties": { "x": { "type": "string" } }, "required": ["x"] }),
        json!({ "type": "object", "properties": { "x": { "type": "string" } }, "additionalProperties": false }),
        json!({}),
    ]
}

/// Arguments `{id, q}` with `q`'s schema, `q` required or not, the object closed or not.
fn arguments_with(q: &Value, required: bool, closed: bool) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": { "id": { "type": "string" }, "q": q },
        "required": if required { json!(["id", "q"]) } else { json!(["id"]) }
    });
    if closed {
        schema["additionalProperties"] = Value::Bool(false);
    }
    schema
}

#[test]
fn no_break_the_oracle_finds_is_missed_in_either_direction() {
    let schemas = schemas();
    let (mut cases, mut conservative, mut missed) = (0, 0, Vec::new());
    for (i, a) in schemas.iter().enumerate() {
        for (j, b) in schemas.iter().enumerate().filter(|(j, _)| *j != i) {
            for (required, closed) in [(true, false), (false, false), (true, true), (false, true)] {
                let (old, new) = (arguments_with(a, required, closed), arguments_with(b, required, closed));
                for direction in [Direction::Request, Direction::Response] {
                    cases += 1;
                    let verdict = evolution::verdict(&evolution::diff_in(direction, &old, &new));
                    assert!(verdict.is_some(), "{i} → {j}: a change was found");
                    let found = if direction == Direction::Request {
                        arguments::witnesses(&old, &new)
                    } else {
                        arguments::witnesses(&new, &old)
                    };
                    match (found.first(), verdict == Some(Verdict::Breaking)) {
                        (Some(witness), false) => missed.push(format!(
                            "{direction:?} {a} → {b} (required {required}, closed {closed}): {verdict:?}, but {witness} breaks"
                        )),
                        (None, true) => conservative += 1,
                        _ => {}
                    }
                }
            }
        }
    }
    assert!(missed.is_empty(), "{}", missed.join("\n"));
    eprintln!("{cases} cases, none missed; {conservative} breaking verdicts without a witness (conservative)");
    assert!(conservative * 5 < cases, "conservative verdicts are the exception: {conservative} of {cases}");
}
