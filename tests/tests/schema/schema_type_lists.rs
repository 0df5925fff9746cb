//! The canonical form writes no `type` array: `"type": [a, b, …]` becomes `anyOf` with
//! one single-`type` branch per type. The values accepted stay the same, judged by
//! `jsonschema` on the schema before and after the rewrite for generated schemas and
//! generated values of every JSON type; contract schemas, input schemas and the fast
//! path follow.

use std::collections::{BTreeMap, HashMap};

use contract_runtime::fused::Coverage;
use contract_runtime::schema::{make_portable, split_type_list};
use contract_runtime::ToolOutput;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::support::fast_path;

/// The validator options contracts are judged with: 2020-12, formats asserted.
fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(schema)
        .unwrap_or_else(|e| panic!("{schema} compiles: {e}"))
}

/// Whether any node of `schema` has a `type` array.
fn has_type_array(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => map.get("type").is_some_and(Value::is_array) || map.values().any(has_type_array),
        Value::Array(items) => items.iter().any(has_type_array),
        _ => false,
    }
}

const TYPES: &[&str] = &["null", "boolean", "object", "array", "number", "string", "integer"];

/// A node with a `type` array and keywords of every vocabulary, some of them about
/// types the array does not name, type-agnostic ones beside them, and sometimes an
/// `anyOf` of its own (the new branches then go into `allOf`) or an
/// `unevaluatedProperties` that must still see the object branch's properties.
fn node_with_type_list() -> impl Strategy<Value = Value> {
    let types = proptest::sample::subsequence(TYPES, 1..=TYPES.len()).prop_shuffle();
    let keyword = prop_oneof![
        (0u64..4).prop_map(|n| ("minLength", json!(n))),
        (1u64..6).prop_map(|n| ("maxLength", json!(n))),
        Just(("pattern", json!("^a"))),
        Just(("format", json!("date"))),
        (-3i64..3).prop_map(|n| ("minimum", json!(n))),
        (-3i64..5).prop_map(|n| ("maximum", json!(n))),
        Just(("exclusiveMaximum", json!(2.5))),
        Just(("multipleOf", json!(2))),
        Just(("items", json!({ "anyOf": [{ "type": "integer" }, { "type": "null" }] }))),
        Just(("items", json!({ "type": ["integer", "null"], "maximum": 3 }))),
        Just(("prefixItems", json!([{ "type": "string" }]))),
        (0u64..3).prop_map(|n| ("minItems", json!(n))),
        (0u64..3).prop_map(|n| ("maxItems", json!(n))),
        Just(("uniqueItems", json!(true))),
        Just(("contains", json!({ "type": "integer" }))),
        Just(("properties", json!({ "a": { "type": ["integer", "string"], "minimum": 1, "maxLength": 2 } }))),
        Just(("required", json!(["a"]))),
        Just(("additionalProperties", json!(false))),
        Just(("patternProperties", json!({ "^x": { "type": "boolean" } }))),
        Just(("propertyNames", json!({ "maxLength": 1 }))),
        (0u64..2).prop_map(|n| ("minProperties", json!(n))),
        Just(("unevaluatedProperties", json!(false))),
        Just(("enum", json!([null, true, 1, 2.5, "a", "ab", [1], { "a": 1 }, "2024-01-02"]))),
        Just(("const", json!("a"))),
        Just((
            "anyOf",
            json!([{ "maxLength": 1 }, { "minimum": 0 }, { "minItems": 1 }, { "required": ["a"] }, { "type": "null" }, { "type": "boolean" }])
        )),
        Just(("description", json!("annotations stay"))),
        Just(("default", json!(null))),
    ];
    (types, proptest::collection::vec(keyword, 0..7), any::<bool>()).prop_map(|(types, keywords, nested)| {
        let mut node = Map::new();
        node.insert("type".to_owned(), json!(types));
        for (key, value) in keywords {
            node.insert(key.to_owned(), value);
        }
        let node = Value::Object(node);
        // Below a property too, so the rewrite reaches subschemas.
        if nested {
            json!({ "type": "object", "properties": { "v": node }, "required": ["v"] })
        } else {
            node
        }
    })
}

/// Values of every JSON type, near every bound the generated keywords use.
fn values() -> Vec<Value> {
    let mut values = vec![
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(1),
        json!(2),
        json!(3),
        json!(4),
        json!(-2),
        json!(2.5),
        json!(1.5),
        json!(-0.5),
        json!(""),
        json!("a"),
        json!("ab"),
        json!("ba"),
        json!("abcdefg"),
        json!("2024-01-02"),
        json!("2024-13-45"),
        json!([]),
        json!([1]),
        json!([1, 1]),
        json!([null, 2]),
        json!(["s"]),
        json!(["s", 4]),
        json!([1.5]),
        json!({}),
        json!({ "a": 1 }),
        json!({ "a": 0 }),
        json!({ "a": "xy" }),
        json!({ "a": "xyz" }),
        json!({ "a": null }),
        json!({ "b": 1 }),
        json!({ "x": true }),
        json!({ "x": 1 }),
        json!({ "a": 1, "x": false }),
        json!({ "a": 2, "b": [] }),
    ];
    let wrapped: Vec<Value> = values.iter().map(|v| json!({ "v": v })).collect();
    values.extend(wrapped);
    values.push(json!({}));
    values
}

#[test]
fn the_rewrite_accepts_exactly_what_the_type_array_accepted() {
    let values = values();
    let mut runner = TestRunner::new(Config { cases: 1_500, failure_persistence: None, ..Config::default() });
    let (checked, judged, split) =
        (std::cell::Cell::new(0usize), std::cell::Cell::new(0usize), std::cell::Cell::new(0usize));
    runner
        .run(&node_with_type_list(), |before| {
            let mut after = before.clone();
            make_portable(&mut after);
            prop_assert!(!has_type_array(&after), "a type array is left: {}", after);
            if after != before {
                split.set(split.get() + 1);
            }
            let (old, new) = (validator(&before), validator(&after));
            for value in &values {
                prop_assert_eq!(
                    old.is_valid(value),
                    new.is_valid(value),
                    "{} before {} after {}",
                    value,
                    before,
                    after
                );
                judged.set(judged.get() + 1);
            }
            checked.set(checked.get() + 1);
            Ok(())
        })
        .unwrap();
    assert!(checked.get() >= 1_500, "{} schemas checked", checked.get());
    assert!(split.get() >= 1_000, "only {} of the schemas had a type array to rewrite", split.get());
    println!("{} schemas, {} verdicts compared, {} rewritten", checked.get(), judged.get(), split.get());
}

/// The oracle above could agree with itself by accepting everything: each value type is
/// accepted by some generated schema and rejected by another.
#[test]
fn the_differential_values_are_told_apart() {
    let nullable_string = json!({ "type": ["string", "null"], "maxLength": 1 });
    let mut split = nullable_string.clone();
    make_portable(&mut split);
    let (old, new) = (validator(&nullable_string), validator(&split));
    for (value, expected) in [(json!(null), true), (json!("a"), true), (json!("ab"), false), (json!(1), false)] {
        assert_eq!(old.is_valid(&value), expected, "{value}");
        assert_eq!(new.is_valid(&value), expected, "{value}");
    }
}

#[test]
fn keywords_go_to_the_branch_of_their_type_and_the_rest_stays() {
    let mut schema = json!({
        "type": ["string", "integer", "object", "array", "null"],
        "description": "d",
        "enum": ["a", 1, null, {}, []],
        "minLength": 1,
        "format": "date",
        "minimum": 0,
        "properties": { "a": { "type": "string" } },
        "additionalProperties": false,
        "unevaluatedProperties": false,
        "items": { "type": "integer" },
        "uniqueItems": true
    });
    assert!(split_type_list(&mut schema));
    assert_eq!(
        schema,
        json!({
            "description": "d",
            "enum": ["a", 1, null, {}, []],
            "unevaluatedProperties": false,
            "anyOf": [
                { "type": "string", "minLength": 1, "format": "date" },
                { "type": "integer", "minimum": 0 },
                { "type": "object", "properties": { "a": { "type": "string" } }, "additionalProperties": false },
                { "type": "array", "items": { "type": "integer" }, "uniqueItems": true },
                { "type": "null" }
            ]
        })
    );
    // An `anyOf` already there: the branches are one more `allOf` entry.
    let mut both = json!({ "type": ["string", "null"], "anyOf": [{ "maxLength": 1 }, { "type": "null" }] });
    assert!(split_type_list(&mut both));
    assert_eq!(
        both,
        json!({
            "anyOf": [{ "maxLength": 1 }, { "type": "null" }],
            "allOf": [{ "anyOf": [{ "type": "string" }, { "type": "null" }] }]
        })
    );
    // Numeric keywords and `format` without a string: the numeric branch.
    let mut number = json!({ "type": ["number", "null"], "maximum": 2, "format": "date" });
    assert!(split_type_list(&mut number));
    assert_eq!(number, json!({ "anyOf": [{ "type": "number", "maximum": 2, "format": "date" }, { "type": "null" }] }));
    // One type is that type; a keyword of a type the array does not name stays.
    let mut one = json!({ "type": ["string"], "minimum": 1 });
    assert!(split_type_list(&mut one));
    assert_eq!(one, json!({ "type": "string", "minimum": 1 }));
    // Not a type array, or not one of JSON types: nothing changes.
    for unchanged in [json!({ "type": "string" }), json!({ "type": [] }), json!({ "type": ["string", "text"] })] {
        let mut copy = unchanged.clone();
        assert!(!split_type_list(&mut copy));
        assert_eq!(copy, unchanged);
    }
}

// ------------------------------------------------------------------ contracts

#[derive(Clone, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Level {
    Low,
    High,
}

/// Every spelling of `Option<T>` schemars writes as a `type` array, under `exact`.
#[derive(Clone, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Nullables {
    label: Option<String>,
    count: Option<u32>,
    small: Option<u8>,
    ratio: Option<f64>,
    flag: Option<bool>,
    tags: Option<Vec<String>>,
    scores: Option<BTreeMap<String, u16>>,
    level: Option<Level>,
}

#[derive(Clone, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "additive")]
struct NullablesAdditive {
    label: Option<String>,
    scores: Option<HashMap<String, i64>>,
    tags: Option<Vec<Option<u32>>>,
}

fn nullables() -> Vec<Nullables> {
    let full = Nullables {
        label: Some("l".to_owned()),
        count: Some(u32::MAX),
        small: Some(7),
        ratio: Some(0.5),
        flag: Some(false),
        tags: Some(vec!["t".to_owned()]),
        scores: Some(BTreeMap::from([("k".to_owned(), 3)])),
        level: Some(Level::High),
    };
    let empty = Nullables {
        label: None,
        count: None,
        small: None,
        ratio: None,
        flag: None,
        tags: None,
        scores: None,
        level: None,
    };
    let low = Nullables { level: Some(Level::Low), ..full.clone() };
    vec![full, low, empty]
}

#[test]
fn contract_schemas_have_no_type_array_and_accept_what_serde_writes() {
    let contract = Nullables::contract();
    assert!(!has_type_array(contract.schema()), "{}", contract.schema());
    for value in nullables() {
        let value = serde_json::to_value(&value).unwrap();
        let (valid, disagreement) = fast_path::compare(contract, &value);
        assert!(valid, "{value}");
        assert_eq!(disagreement, None);
    }
    // `exact` closes the object branch: an unknown key inside `scores` is still a
    // map key, but one in the root is refused; wrong types in a nullable field too.
    for (bad, why) in [
        (json!({ "label": 1 }), "a number where a string or null"),
        (json!({ "count": -1 }), "below the u32 range"),
        (json!({ "count": 4_294_967_296u64 }), "above the u32 range"),
        (json!({ "small": 256 }), "above the u8 range"),
        (json!({ "tags": [1] }), "an item of the wrong type"),
        (json!({ "scores": { "k": 70_000 } }), "a map value above the u16 range"),
        (json!({ "level": "medium" }), "not a variant"),
        (json!({ "extra": null }), "an unknown key"),
    ] {
        let mut value = serde_json::to_value(&nullables()[2]).unwrap();
        let (key, field) = bad.as_object().unwrap().iter().next().unwrap();
        value.as_object_mut().unwrap().insert(key.clone(), field.clone());
        let (valid, disagreement) = fast_path::compare(contract, &value);
        assert!(!valid, "{why}: {value}");
        assert_eq!(disagreement, None, "{why}");
    }
    // The nullable map is an object branch that `exact` closed... and a map: open keys.
    let scores = &contract.schema()["properties"]["scores"];
    assert!(scores["anyOf"].as_array().is_some_and(|b| b.iter().any(|b| b["type"] == "object")), "{scores}");
}

#[test]
fn the_fast_path_still_covers_nullable_scalars_and_containers() {
    assert_eq!(Nullables::contract().fast_path(), Coverage::Covered, "{}", Nullables::contract().schema());
    assert_eq!(
        NullablesAdditive::contract().fast_path(),
        Coverage::Covered,
        "{}",
        NullablesAdditive::contract().schema()
    );
    let contract = NullablesAdditive::contract();
    assert!(!has_type_array(contract.schema()));
    for value in [
        json!({ "label": null, "scores": null, "tags": null }),
        json!({ "label": "x", "scores": { "a": -1 }, "tags": [null, 3] }),
        json!({ "label": "x", "scores": { "a": "one" }, "tags": [] }),
        json!({ "label": "x", "scores": {}, "tags": [-1] }),
        json!({ "label": [], "scores": {}, "tags": [] }),
    ] {
        let (_, disagreement) = fast_path::compare(contract, &value);
        assert_eq!(disagreement, None, "{value}");
    }
}

/// An `enum` beside the branches (schemars writes it for an inline enum of strings made
/// nullable): the plan reads the branches back as one node and still covers it.
#[test]
fn an_enum_beside_the_branches_is_covered() {
    fn nullable_enum(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": ["string", "null"], "enum": ["a", "b", null], "maxLength": 1 })
    }
    #[derive(Clone, Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = "exact")]
    struct WithEnum {
        #[schemars(schema_with = "nullable_enum")]
        pick: Option<String>,
    }
    let contract = WithEnum::contract();
    assert!(!has_type_array(contract.schema()), "{}", contract.schema());
    assert_eq!(contract.fast_path(), Coverage::Covered, "{}", contract.schema());
    for (value, expected) in [
        (json!({ "pick": "a" }), true),
        (json!({ "pick": null }), true),
        (json!({ "pick": "c" }), false),
        (json!({ "pick": 1 }), false),
    ] {
        let (valid, disagreement) = fast_path::compare(contract, &value);
        assert_eq!(valid, expected, "{value}");
        assert_eq!(disagreement, None, "{value}");
    }
}
