//! Input schemas classified in the request direction (clients write, the server reads),
//! rule by rule. Every fixture pair is classified old → new and new → old, for requests
//! and for responses, and each of those four verdicts is checked against an oracle that
//! knows nothing of the engine: argument values generated from both schemas
//! (`support/arguments.rs`) and validated with the `jsonschema` crate. For requests a
//! change is breaking exactly when some value the old schema accepts is refused by the
//! new one; for responses when some value the new schema allows was refused by the old
//! one. The few places where the rules depart from that reading on purpose are listed in
//! `DEPARTURES`, each with its reason, and the test checks that they really depart.

use std::fmt::Write as _;

use contract_tools::evolution::{self, Change, Direction, Verdict};
use serde_json::{json, Value};

use crate::support::arguments;

use crate::support::evolution::{show, A, B, C};

/// A fixture pair: name, old, new, then the verdicts request old → new, request
/// new → old, response old → new, response new → old.
struct Pair {
    name: &'static str,
    old: Value,
    new: Value,
    verdicts: [Option<Verdict>; 4],
}

fn pair(name: &'static str, old: Value, new: Value, verdicts: [Option<Verdict>; 4]) -> Pair {
    Pair { name, old, new, verdicts }
}

/// An object schema with `properties` and `required`, open.
fn obj(properties: Value, required: &[&str]) -> Value {
    let mut schema = json!({ "type": "object", "required": required });
    schema["properties"] = properties;
    schema
}

/// The same, closed with `additionalProperties: false`.
fn closed(properties: Value, required: &[&str]) -> Value {
    let mut schema = obj(properties, required);
    schema["additionalProperties"] = Value::Bool(false);
    schema
}

/// One argument `q` with schema `schema`, required, beside a required `id`.
fn arg(schema: Value) -> Value {
    let mut args = obj(json!({ "id": { "type": "string" } }), &["id", "q"]);
    args["properties"]["q"] = schema;
    args
}

/// Where the four verdicts sit in `Pair::verdicts`.
const WAYS: [(Direction, bool, &str); 4] = [
    (Direction::Request, true, "request old → new"),
    (Direction::Request, false, "request new → old"),
    (Direction::Response, true, "response old → new"),
    (Direction::Response, false, "response new → old"),
];

/// The verdicts that depart from the oracle on purpose: (pair, way, why).
const DEPARTURES: &[(&str, &str, &str)] = &[
    (
        "one_of_overlapping_branch_added",
        "request new → old",
        "a `oneOf` branch that overlaps another is taken as unsafe both ways; the walk does not compare the overlap",
    ),
    (
        "one_of_overlapping_branch_added",
        "response old → new",
        "a `oneOf` branch that overlaps another is taken as unsafe both ways; the walk does not compare the overlap",
    ),
    (
        "optional_argument_added",
        "request old → new",
        "callers built against the old schema do not send the new name; a strict reading calls it unsafe",
    ),
    ("unclassified_keyword_added", "request new → old", "an unclassified keyword is breaking both ways (fail closed)"),
    ("unclassified_keyword_added", "response old → new", "an unclassified keyword is breaking both ways (fail closed)"),
    (
        "closing_keyword_changed",
        "response old → new",
        "draft-07 readers ignore `unevaluatedProperties`: for them the object opened",
    ),
    (
        "closing_keyword_changed",
        "request new → old",
        "draft-07 validators ignore `unevaluatedProperties`: for them the object closes",
    ),
];

#[allow(clippy::too_many_lines, reason = "one table, one rule a line")]
fn pairs() -> Vec<Pair> {
    let s = || json!({ "type": "string" });
    let int = || json!({ "type": "integer" });
    vec![
        // Arguments added, removed, required.
        pair(
            "required_argument_added",
            obj(json!({ "id": s() }), &["id"]),
            obj(json!({ "id": s(), "limit": int() }), &["id", "limit"]),
            [B, A, A, B],
        ),
        pair(
            "optional_argument_added",
            obj(json!({ "id": s() }), &["id"]),
            obj(json!({ "id": s(), "limit": int() }), &["id"]),
            [A, A, A, B],
        ),
        pair(
            "optional_became_required",
            obj(json!({ "id": s(), "limit": int() }), &["id"]),
            obj(json!({ "id": s(), "limit": int() }), &["id", "limit"]),
            [B, A, A, B],
        ),
        pair(
            "required_argument_added_to_closed_object",
            closed(json!({ "id": s() }), &["id"]),
            closed(json!({ "id": s(), "limit": int() }), &["id", "limit"]),
            [B, B, B, B],
        ),
        pair(
            "optional_argument_added_to_closed_object",
            closed(json!({ "id": s() }), &["id"]),
            closed(json!({ "id": s(), "limit": int() }), &["id"]),
            [A, B, B, A],
        ),
        // Values.
        pair(
            "enum_value_removed",
            arg(json!({ "enum": ["a", "b", "c"] })),
            arg(json!({ "enum": ["a", "b"] })),
            [B, A, A, B],
        ),
        pair("enum_added", arg(s()), arg(json!({ "type": "string", "enum": ["a", "b"] })), [B, A, A, B]),
        pair("const_added", arg(s()), arg(json!({ "type": "string", "const": "by_id" })), [B, A, A, B]),
        pair("const_changed", arg(json!({ "const": "by_id" })), arg(json!({ "const": "by_name" })), [B, B, B, B]),
        // Types.
        pair("number_to_integer", arg(json!({ "type": "number" })), arg(int()), [B, A, A, B]),
        pair("type_removed_from_list", arg(json!({ "type": ["string", "integer"] })), arg(s()), [B, A, A, B]),
        pair(
            "type_added",
            arg(json!({ "description": "anything" })),
            arg(json!({ "description": "anything", "type": "string" })),
            [B, A, A, B],
        ),
        pair("type_changed", arg(s()), arg(int()), [B, B, B, B]),
        pair("no_longer_nullable", arg(json!({ "type": ["string", "null"] })), arg(s()), [B, A, A, B]),
        pair(
            "no_longer_nullable_any_of",
            arg(json!({ "anyOf": [{ "type": "string" }, { "type": "null" }] })),
            arg(s()),
            [B, A, A, B],
        ),
        // Bounds and constraints.
        pair(
            "maximum_tightened",
            arg(json!({ "type": "integer", "maximum": 100 })),
            arg(json!({ "type": "integer", "maximum": 50 })),
            [B, A, A, B],
        ),
        pair("minimum_added", arg(int()), arg(json!({ "type": "integer", "minimum": 1 })), [B, A, A, B]),
        pair("max_length_added", arg(s()), arg(json!({ "type": "string", "maxLength": 8 })), [B, A, A, B]),
        pair(
            "min_items_added",
            arg(json!({ "type": "array", "items": s() })),
            arg(json!({ "type": "array", "items": s(), "minItems": 1 })),
            [B, A, A, B],
        ),
        pair("pattern_added", arg(s()), arg(json!({ "type": "string", "pattern": "^[a-z]+$" })), [B, A, A, B]),
        pair(
            "pattern_changed",
            arg(json!({ "type": "string", "pattern": "^[a-z]+$" })),
            arg(json!({ "type": "string", "pattern": "^[0-9]+$" })),
            [B, B, B, B],
        ),
        pair("format_added", arg(s()), arg(json!({ "type": "string", "format": "date" })), [B, A, A, B]),
        pair("multiple_of_added", arg(int()), arg(json!({ "type": "integer", "multipleOf": 5 })), [B, A, A, B]),
        pair(
            "multiple_of_widened",
            arg(json!({ "type": "integer", "multipleOf": 10 })),
            arg(json!({ "type": "integer", "multipleOf": 5 })),
            [A, B, B, A],
        ),
        pair(
            "unique_items_added",
            arg(json!({ "type": "array", "items": s() })),
            arg(json!({ "type": "array", "items": s(), "uniqueItems": true })),
            [B, A, A, B],
        ),
        // Objects closed and opened.
        pair(
            "additional_properties_false_added",
            obj(json!({ "id": s() }), &["id"]),
            closed(json!({ "id": s() }), &["id"]),
            [B, A, A, B],
        ),
        pair(
            "unevaluated_properties_false_added",
            obj(json!({ "id": s() }), &["id"]),
            json!({ "type": "object", "properties": { "id": s() }, "required": ["id"], "unevaluatedProperties": false }),
            [B, A, A, B],
        ),
        pair(
            "closing_keyword_changed",
            closed(json!({ "id": s() }), &["id"]),
            json!({ "type": "object", "properties": { "id": s() }, "required": ["id"], "unevaluatedProperties": false }),
            [A, B, B, A],
        ),
        // Unions.
        pair(
            "one_of_branch_removed",
            arg(json!({ "oneOf": [{ "type": "string" }, { "type": "integer" }, { "type": "boolean" }] })),
            arg(json!({ "oneOf": [{ "type": "string" }, { "type": "integer" }] })),
            [B, A, A, B],
        ),
        pair(
            "any_of_became_one_of",
            arg(json!({ "anyOf": [{ "type": "integer" }, { "type": "number" }] })),
            arg(json!({ "oneOf": [{ "type": "integer" }, { "type": "number" }] })),
            [B, A, A, B],
        ),
        pair(
            "one_of_overlapping_branch_added",
            arg(json!({ "oneOf": [{ "type": "string" }, { "type": "integer" }] })),
            arg(
                json!({ "oneOf": [{ "type": "string" }, { "type": "integer" }, { "type": "string", "maxLength": 3 }] }),
            ),
            [B, B, B, B],
        ),
        // An argument named in a map: the value it may have is now narrower.
        pair(
            "optional_argument_added_to_a_map",
            json!({ "type": "object", "additionalProperties": s() }),
            json!({ "type": "object", "properties": { "x": { "type": "string", "maxLength": 3 } }, "additionalProperties": s() }),
            [B, A, A, B],
        ),
        // A property's schema narrowed below the root.
        pair(
            "item_schema_narrowed",
            arg(json!({ "type": "array", "items": s() })),
            arg(json!({ "type": "array", "items": { "type": "string", "maxLength": 8 } })),
            [B, A, A, B],
        ),
        // Cosmetic and unclassified.
        pair(
            "description_changed",
            arg(json!({ "type": "string", "description": "the id" })),
            arg(json!({ "type": "string", "description": "the fleet id" })),
            [C, C, C, C],
        ),
        pair(
            "branches_reordered",
            arg(json!({ "anyOf": [{ "type": "string" }, { "type": "integer" }] })),
            arg(json!({ "anyOf": [{ "type": "integer" }, { "type": "string" }] })),
            [C, C, C, C],
        ),
        pair(
            "defs_renamed",
            json!({ "type": "object", "properties": { "q": { "$ref": "#/$defs/Query" } }, "$defs": { "Query": { "type": "string" } } }),
            json!({ "type": "object", "properties": { "q": { "$ref": "#/$defs/Query2" } }, "$defs": { "Query2": { "type": "string" } } }),
            [C, C, C, C],
        ),
        pair(
            "unclassified_keyword_added",
            obj(json!({ "a": s(), "b": s() }), &[]),
            json!({ "type": "object", "properties": { "a": s(), "b": s() }, "dependentRequired": { "a": ["b"] } }),
            [B, B, B, B],
        ),
        // `$ref` chains: the enum sits two references down.
        pair(
            "ref_chain_enum_value_removed",
            json!({
                "type": "object", "properties": { "q": { "$ref": "#/$defs/Query" } }, "required": ["q"],
                "$defs": { "Query": { "$ref": "#/$defs/Mode" }, "Mode": { "enum": ["a", "b", "c"] } }
            }),
            json!({
                "type": "object", "properties": { "q": { "$ref": "#/$defs/Query" } }, "required": ["q"],
                "$defs": { "Query": { "$ref": "#/$defs/Mode" }, "Mode": { "enum": ["a", "b"] } }
            }),
            [B, A, A, B],
        ),
    ]
}

/// The verdict of `changes`, or the list of them on failure.
fn report(changes: &[Change]) -> String {
    changes.iter().fold(String::new(), |mut out, c| {
        let _ = write!(out, "\n    {c}: {}  [{}]", c.verdict(), c.kind());
        out
    })
}

/// Checks every pair's four verdicts against the table and against the oracle.
fn check(pairs: &[Pair]) {
    let mut wrong = Vec::new();
    let mut departed = Vec::new();
    for p in pairs {
        for (i, (direction, forward, way)) in WAYS.iter().enumerate() {
            let (from, to) = if *forward { (&p.old, &p.new) } else { (&p.new, &p.old) };
            let changes = evolution::diff_in(*direction, from, to);
            let got = evolution::verdict(&changes);
            if changes.iter().any(|c| c.direction() != *direction) {
                wrong.push(format!("{}, {way}: a change says another direction", p.name));
            }
            if got != p.verdicts[i] {
                wrong.push(format!(
                    "{}, {way}: {}, expected {}{}",
                    p.name,
                    show(got),
                    show(p.verdicts[i]),
                    report(&changes)
                ));
            }
            // Requests: old values the new schema refuses. Responses: new values the
            // old schema refused.
            let found = if *direction == Direction::Request {
                arguments::witnesses(from, to)
            } else {
                arguments::witnesses(to, from)
            };
            let oracle_breaking = !found.is_empty();
            let departs = DEPARTURES.iter().any(|(name, w, _)| *name == p.name && w == way);
            if departs {
                if oracle_breaking == (got == B) {
                    wrong.push(format!("{}, {way}: listed as a departure, but the oracle agrees", p.name));
                }
                departed.push(format!("{}, {way}", p.name));
            } else if oracle_breaking != (got == B) {
                wrong.push(format!(
                    "{}, {way}: engine {}, oracle {} (witness: {})",
                    p.name,
                    show(got),
                    if oracle_breaking { "breaking" } else { "no witness" },
                    found.first().map_or_else(|| "none".to_owned(), Value::to_string)
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    eprintln!("departures from the oracle, each on purpose: {departed:?}");
}

#[test]
fn every_rule_both_ways_both_directions_matches_the_oracle() {
    let pairs = pairs();
    check(&pairs);
    // Every departure named is exercised.
    for (name, way, why) in DEPARTURES {
        assert!(pairs.iter().any(|p| p.name == *name), "{name} ({way}: {why}) has no fixture");
    }
}

#[test]
fn details_read_right_in_each_direction() {
    let old = obj(json!({ "id": { "type": "string" } }), &["id"]);
    let new = obj(json!({ "id": { "type": "string" }, "limit": { "type": "integer" } }), &["id", "limit"]);
    let request = evolution::diff_in(Direction::Request, &old, &new);
    assert_eq!(request.len(), 1);
    assert_eq!(request[0].to_string(), "+ /properties/limit (required argument added: calls without it are refused)");
    assert_eq!(request[0].verdict(), Verdict::Breaking);
    let response = evolution::diff_in(Direction::Response, &old, &new);
    assert_eq!(response[0].to_string(), "+ /properties/limit (required, open object)");
    assert_eq!(response[0].verdict(), Verdict::Additive);
    assert_eq!(response[0].direction(), Direction::Response);

    let removed = evolution::diff_in(Direction::Request, &new, &old);
    assert_eq!(
        removed[0].to_string(),
        "- required /properties/limit (argument removed from an open object: the server ignores it now)"
    );
    assert_eq!(removed[0].verdict(), Verdict::Additive);

    let (open, shut) = (
        closed(json!({ "id": { "type": "string" } }), &["id"]),
        closed(json!({ "id": { "type": "string" }, "tag": { "type": "string" } }), &["id"]),
    );
    let gone = evolution::diff_in(Direction::Request, &shut, &open);
    assert_eq!(
        gone[0].to_string(),
        "- /properties/tag (argument removed from a closed object: old calls that send it are refused)"
    );
    assert_eq!(gone[0].verdict(), Verdict::Breaking);
}

/// `diff` is the response direction; identical schemas give no change in either.
#[test]
fn diff_is_the_response_direction() {
    for p in pairs() {
        assert_eq!(
            evolution::diff(&p.old, &p.new),
            evolution::diff_in(Direction::Response, &p.old, &p.new),
            "{}",
            p.name
        );
        assert!(evolution::diff_in(Direction::Request, &p.old, &p.old).is_empty(), "{}", p.name);
    }
}
