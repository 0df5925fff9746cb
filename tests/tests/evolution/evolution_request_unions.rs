//! Tagged unions of arguments in the request direction, through `$ref`: an arguments
//! schema `{ "oneOf": [ {mode: "by_id", id}, {mode: "search", query} ] }` with a branch
//! added, removed, and changed inside, each classified both ways in both directions and
//! checked against the independent oracle of `support/arguments.rs`. Also checks the
//! oracle itself: it finds a known witness and finds none for an identical pair.

use contract_tools::evolution::{self, ChangeKind, Direction, Verdict};
use serde_json::{json, Value};

use crate::support::arguments;

use crate::support::evolution::{show, A, B};

/// The arguments schema, its branches written in `$defs` and reached through two `$ref`s
/// (root → `Args` → each branch). `extra` adds branches; `search` replaces the search
/// branch's definition.
fn args(extra: &[&str], search: &Value) -> Value {
    let mut branches = vec![json!({ "$ref": "#/$defs/ById" }), json!({ "$ref": "#/$defs/Search" })];
    branches.extend(extra.iter().map(|name| json!({ "$ref": format!("#/$defs/{name}") })));
    json!({
        "$ref": "#/$defs/Args",
        "$defs": {
            "Args": { "oneOf": branches },
            "ById": {
                "type": "object",
                "properties": { "mode": { "const": "by_id" }, "id": { "type": "string" } },
                "required": ["mode", "id"]
            },
            "Search": search,
            "Recent": {
                "type": "object",
                "properties": { "mode": { "const": "recent" }, "days": { "type": "integer", "minimum": 1 } },
                "required": ["mode", "days"]
            }
        }
    })
}

fn search(required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": {
            "mode": { "const": "search" },
            "query": { "type": "string" },
            "limit": { "type": "integer" }
        },
        "required": required
    })
}

fn base() -> Value {
    args(&[], &search(&["mode", "query"]))
}

/// Name, old, new, verdicts: request old → new, request new → old, response old → new,
/// response new → old.
fn cases() -> Vec<(&'static str, Value, Value, [Option<Verdict>; 4])> {
    vec![
        ("branch_added", base(), args(&["Recent"], &search(&["mode", "query"])), [A, B, B, A]),
        ("branch_removed", args(&["Recent"], &search(&["mode", "query"])), base(), [B, A, A, B]),
        ("required_field_added_inside_a_branch", base(), args(&[], &search(&["mode", "query", "limit"])), [B, A, A, B]),
    ]
}

#[test]
fn tagged_argument_unions_through_ref_both_ways_both_directions() {
    let mut wrong = Vec::new();
    for (name, old, new, verdicts) in cases() {
        let ways = [
            (Direction::Request, &old, &new),
            (Direction::Request, &new, &old),
            (Direction::Response, &old, &new),
            (Direction::Response, &new, &old),
        ];
        for (i, (direction, from, to)) in ways.into_iter().enumerate() {
            let changes = evolution::diff_in(direction, from, to);
            let got = evolution::verdict(&changes);
            if got != verdicts[i] {
                let lines: Vec<String> = changes.iter().map(|c| format!("{c}: {}", c.verdict())).collect();
                wrong.push(format!(
                    "{name} #{i} {direction:?}: {}, expected {} {lines:?}",
                    show(got),
                    show(verdicts[i])
                ));
            }
            let found = if direction == Direction::Request {
                arguments::witnesses(from, to)
            } else {
                arguments::witnesses(to, from)
            };
            if found.is_empty() == (got == B) {
                wrong.push(format!("{name} #{i} {direction:?}: engine {}, oracle witnesses {found:?}", show(got)));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn pointers_and_details_of_union_changes() {
    let added = evolution::diff_in(Direction::Request, &base(), &args(&["Recent"], &search(&["mode", "query"])));
    assert_eq!(added.len(), 1, "{added:?}");
    assert_eq!(added[0].kind(), ChangeKind::BranchAdded);
    assert_eq!(added[0].pointer(), "/oneOf/2");
    assert_eq!(added[0].verdict(), Verdict::Additive);

    let inside = evolution::diff_in(Direction::Request, &base(), &args(&[], &search(&["mode", "query", "limit"])));
    assert_eq!(inside.len(), 1, "{inside:?}");
    assert_eq!(inside[0].kind(), ChangeKind::BecameRequired);
    assert_eq!(inside[0].pointer(), "/oneOf/1/properties/limit");
    assert_eq!(inside[0].detail(), "optional → required: calls without it are refused");
    assert_eq!(inside[0].file_pointer().map(|(_, p)| p), Some("/$defs/Search/properties/limit"));
}

/// A branch that a value can match together with an existing one makes `oneOf` refuse
/// that value: breaking for requests, although a branch was only added.
#[test]
fn an_overlapping_one_of_branch_is_breaking_for_requests() {
    let old = base();
    let mut new = base();
    new["$defs"]["Args"]["oneOf"].as_array_mut().expect("a list").push(json!({
        "type": "object",
        "properties": { "id": { "type": "string" } },
        "required": ["id"]
    }));
    let changes = evolution::diff_in(Direction::Request, &old, &new);
    assert_eq!(evolution::verdict(&changes), B, "{changes:?}");
    let witness = arguments::witnesses(&old, &new);
    assert!(witness.contains(&json!({ "mode": "by_id", "id": "a" })), "{witness:?}");
    // The clean control: the tagged branch above is additive, and the oracle agrees.
    let tagged = args(&["Recent"], &search(&["mode", "query"]));
    assert_eq!(evolution::verdict(&evolution::diff_in(Direction::Request, &old, &tagged)), A);
    assert!(arguments::witnesses(&old, &tagged).is_empty());
}

/// The shapes schemars writes for an enum of arguments: externally tagged variants (one
/// required property each, closed) and unit variants (`const`). A variant added is
/// additive for requests: the branches exclude each other, so no old value now matches
/// two. The oracle agrees, and a variant removed is breaking.
#[test]
fn an_enum_variant_added_to_arguments_is_additive() {
    let variant = |name: &str| {
        json!({
            "type": "object",
            "properties": { name: { "type": "string" } },
            "required": [name],
            "additionalProperties": false
        })
    };
    let unit = |name: &str| json!({ "type": "string", "const": name });
    let schema = |branches: Vec<Value>| json!({ "type": "object", "properties": { "action": { "oneOf": branches } }, "required": ["action"] });
    let old = schema(vec![variant("ById"), variant("ByName"), unit("All")]);
    let new = schema(vec![variant("ById"), variant("ByName"), unit("All"), variant("ByTag"), unit("None")]);
    let added = evolution::diff_in(Direction::Request, &old, &new);
    assert_eq!(evolution::verdict(&added), A, "{added:?}");
    assert!(added.iter().all(|c| c.kind() == ChangeKind::BranchAdded), "{added:?}");
    assert!(arguments::witnesses(&old, &new).is_empty());
    let removed = evolution::diff_in(Direction::Request, &new, &old);
    assert_eq!(evolution::verdict(&removed), B, "{removed:?}");
    assert!(!arguments::witnesses(&new, &old).is_empty());
}

/// The oracle finds the value a required argument refuses, and nothing between a schema
/// and itself.
#[test]
fn the_oracle_finds_a_known_witness_and_none_for_an_identical_pair() {
    let old = json!({ "type": "object", "properties": { "id": { "type": "string" } }, "required": ["id"] });
    let new = json!({
        "type": "object",
        "properties": { "id": { "type": "string" }, "limit": { "type": "integer" } },
        "required": ["id", "limit"]
    });
    let found = arguments::witnesses(&old, &new);
    assert!(found.iter().any(|v| v.get("id").is_some() && v.get("limit").is_none()), "{found:?}");
    for schema in [&old, &new, &base()] {
        assert!(arguments::witnesses(schema, schema).is_empty());
        assert!(arguments::candidates(schema, schema).len() > 20, "the generator proposes values");
    }
    // Formats are asserted, not annotations.
    let date = json!({ "type": "string", "format": "date" });
    assert!(!arguments::Checker::new(&date).accepts(&json!("not a date")));
    assert!(arguments::Checker::new(&date).accepts(&Value::String("2024-01-01".to_owned())));
}
