//! Schema evolution across the two spellings of a type union: a `type` array (how schemas
//! were checked in before the canonical form wrote none) and `anyOf` with one
//! single-`type` branch per type (the canonical form); and `{}` or `true` for the members
//! of an object whose values may be anything. The same values are the same contract,
//! whichever side has which spelling; nullability and bounds are still judged across
//! them.

use contract_tools::evolution::{self, Bump, Change, ChangeKind, Direction, Verdict};
use serde_json::{json, Map, Value};

/// The spelling with `type` arrays, written from the canonical one by this test on its
/// own: an `anyOf` whose branches each have one `type` and keywords no other branch and
/// not the node itself has becomes one node with the branches' keywords and the types
/// as an array.
fn with_type_arrays(node: &Value) -> Value {
    match node {
        Value::Object(map) => {
            let map: Map<String, Value> = map.iter().map(|(k, v)| (k.clone(), with_type_arrays(v))).collect();
            let merged = map.get("anyOf").and_then(Value::as_array).and_then(|branches| {
                if branches.len() < 2 || map.contains_key("type") {
                    return None;
                }
                let mut merged = map.clone();
                merged.remove("anyOf");
                let mut types = Vec::new();
                for branch in branches {
                    let branch = branch.as_object()?;
                    types.push(branch.get("type").filter(|t| t.is_string())?.clone());
                    for (key, value) in branch.iter().filter(|(k, _)| *k != "type") {
                        if merged.insert(key.clone(), value.clone()).is_some() {
                            return None;
                        }
                    }
                }
                merged.insert("type".to_owned(), Value::Array(types));
                Some(merged)
            });
            Value::Object(merged.unwrap_or(map))
        }
        Value::Array(items) => Value::Array(items.iter().map(with_type_arrays).collect()),
        other => other.clone(),
    }
}

fn type_arrays(node: &Value) -> usize {
    match node {
        Value::Object(map) => {
            usize::from(map.get("type").is_some_and(Value::is_array)) + map.values().map(type_arrays).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(type_arrays).sum(),
        _ => 0,
    }
}

fn kinds(changes: &[Change]) -> Vec<&'static str> {
    changes.iter().map(|c| c.kind().as_str()).collect()
}

/// Exactly one cosmetic text-only change, in both directions and for requests too.
fn assert_respelled_only(old: &Value, new: &Value, what: &str) {
    for (a, b) in [(old, new), (new, old)] {
        for direction in [Direction::Response, Direction::Request] {
            let changes = evolution::diff_in(direction, a, b);
            assert_eq!(kinds(&changes), ["text_only"], "{what} ({direction:?}): {changes:?}");
            assert_eq!(evolution::verdict(&changes), Some(Verdict::Cosmetic), "{what}");
            assert_eq!(evolution::required_bump(&changes), Bump::Patch, "{what}");
            assert!(changes[0].to_string().contains("respelled in the current canonical form"), "{}", changes[0]);
        }
    }
}

/// Every checked-in contract of the demo, against itself written with `type` arrays.
#[test]
fn checked_in_schemas_and_their_type_array_spelling_are_the_same_contract() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas");
    let mut respelled = 0;
    for entry in std::fs::read_dir(&dir).expect("schemas/ exists") {
        let path = entry.expect("an entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
        if name == "inventory.json" || path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let new: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(type_arrays(&new), 0, "{name}: the canonical form writes no type array");
        let old = with_type_arrays(&new);
        if old == new {
            // Clean control: a schema with nothing to respell has no change at all.
            assert!(evolution::diff(&old, &new).is_empty(), "{name}");
            continue;
        }
        assert!(type_arrays(&old) > 0, "{name}");
        assert_respelled_only(&old, &new, &name);
        respelled += 1;
    }
    assert!(respelled >= 7, "only {respelled} demo contracts have a nullable scalar");
}

#[test]
fn respelling_beside_enum_bounds_and_closed_objects_is_cosmetic() {
    let new = json!({
        "type": "object",
        "properties": {
            "label": { "anyOf": [{ "type": "string", "maxLength": 8, "pattern": "^a" }, { "type": "null" }], "description": "d" },
            "count": { "anyOf": [{ "type": "integer", "minimum": 0, "maximum": 9 }, { "type": "null" }] },
            "pick": { "enum": ["a", "b", null], "anyOf": [{ "type": "string" }, { "type": "null" }] },
            "tags": { "anyOf": [{ "type": "array", "items": { "type": "string" }, "maxItems": 3 }, { "type": "null" }] },
            "extra": {
                "anyOf": [
                    { "type": "object", "properties": { "k": { "type": "boolean" } }, "additionalProperties": false },
                    { "type": "null" }
                ]
            }
        },
        "required": ["label", "count", "pick", "tags", "extra"],
        "additionalProperties": false
    });
    let old = with_type_arrays(&new);
    assert_eq!(type_arrays(&old), 5, "{old}");
    assert_respelled_only(&old, &new, "hand-written");
}

/// One pair: what it is, old, new, the kinds old → new, the verdict old → new and the
/// verdict new → old.
type Case = (&'static str, Value, Value, &'static [&'static str], Verdict, Verdict);

/// Nullability and bounds across the spellings.
#[test]
fn nullability_and_bounds_are_judged_across_spellings() {
    let string = json!({ "type": "string" });
    let nullable_any_of = json!({ "anyOf": [{ "type": "string" }, { "type": "null" }] });
    let nullable_array = json!({ "type": ["string", "null"] });
    let cases: &[Case] = &[
        (
            "became nullable (anyOf)",
            string.clone(),
            nullable_any_of.clone(),
            &["became_nullable"],
            Verdict::Breaking,
            Verdict::Additive,
        ),
        (
            "became nullable (array)",
            string.clone(),
            nullable_array.clone(),
            &["became_nullable"],
            Verdict::Breaking,
            Verdict::Additive,
        ),
        (
            "array → anyOf with a bound added",
            nullable_array.clone(),
            json!({ "anyOf": [{ "type": "string", "maxLength": 2 }, { "type": "null" }] }),
            &["bound_tightened"],
            Verdict::Additive,
            Verdict::Breaking,
        ),
        (
            "array with a bound → anyOf without it",
            json!({ "type": ["integer", "null"], "minimum": 0 }),
            json!({ "anyOf": [{ "type": "integer" }, { "type": "null" }] }),
            &["bound_relaxed"],
            Verdict::Breaking,
            Verdict::Additive,
        ),
        (
            "array → anyOf with one more type",
            nullable_array.clone(),
            json!({ "anyOf": [{ "type": "string" }, { "type": "null" }, { "type": "integer" }] }),
            &["branch_added"],
            Verdict::Breaking,
            Verdict::Additive,
        ),
        (
            "array → anyOf without null",
            json!({ "type": ["string", "integer", "null"] }),
            json!({ "anyOf": [{ "type": "string" }, { "type": "integer" }] }),
            &["no_longer_nullable"],
            Verdict::Additive,
            Verdict::Breaking,
        ),
    ];
    let mut wrong = Vec::new();
    for (what, old, new, expected, there, back) in cases {
        let forward = evolution::diff(old, new);
        let backward = evolution::diff(new, old);
        if kinds(&forward) != *expected {
            wrong.push(format!("{what}: kinds {:?}, expected {expected:?}: {forward:?}", kinds(&forward)));
        }
        if evolution::verdict(&forward) != Some(*there) || evolution::verdict(&backward) != Some(*back) {
            wrong.push(format!(
                "{what}: verdicts {:?} / {:?}",
                evolution::verdict(&forward),
                evolution::verdict(&backward)
            ));
        }
        if backward.iter().any(|c| c.kind() == ChangeKind::TextOnly) {
            wrong.push(format!("{what}: a real change reported as text only"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Clean controls: the same union in both spellings is no change of meaning at all.
    assert_respelled_only(&nullable_array, &nullable_any_of, "string or null");
}

#[test]
fn members_of_any_value_written_true_are_cosmetic() {
    let old = json!({ "type": "object", "properties": { "m": { "type": "object", "additionalProperties": {} } } });
    let new = json!({ "type": "object", "properties": { "m": { "type": "object", "additionalProperties": true } } });
    assert_respelled_only(&old, &new, "additionalProperties {} → true");
    // Clean control: members that were any value and are now typed are a real change.
    let typed = json!({ "type": "object", "properties": { "m": { "type": "object", "additionalProperties": { "type": "string" } } } });
    assert_eq!(evolution::verdict(&evolution::diff(&new, &typed)), Some(Verdict::Additive));
    assert_eq!(evolution::verdict(&evolution::diff(&typed, &old)), Some(Verdict::Breaking));
}
