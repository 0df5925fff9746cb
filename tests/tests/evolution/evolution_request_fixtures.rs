//! Every output fixture pair of `tests/fixtures/evolution/` read as an input schema: its
//! request verdicts both ways, beside the response verdicts, each checked against the
//! independent oracle of `support/arguments.rs` (values generated from both schemas,
//! validated with the `jsonschema` crate). Where the request verdict is not the mirror
//! of the response verdict, the row says so and why.

use std::collections::BTreeSet;

use contract_tools::evolution::{self, Direction, Verdict};
use serde_json::Value;

use crate::support::arguments;

use crate::support::evolution::{fixtures, load, show, A, B, C, NONE};

/// A fixture directory and its request verdicts old → new and new → old.
type Row = (&'static str, Option<Verdict>, Option<Verdict>);

const ROWS: &[Row] = &[
    ("required_property_removed", A, B),
    ("required_became_optional", A, B),
    ("enum_value_added", A, B),
    ("enum_removed", A, B),
    ("type_widened_integer_to_number", A, B),
    ("type_list_widened", A, B),
    // Not mirrored: an unrelated type refuses old values either way.
    ("type_changed", B, B),
    ("became_nullable_type_list", A, B),
    ("became_nullable_any_of", A, B),
    ("one_of_branch_added", A, B),
    ("any_of_branch_added", A, B),
    ("one_of_became_any_of", A, B),
    ("maximum_relaxed", A, B),
    ("minimum_relaxed", A, B),
    ("exclusive_maximum_removed", A, B),
    ("max_length_removed", A, B),
    ("min_length_lowered", A, B),
    ("min_items_lowered", A, B),
    ("max_items_raised", A, B),
    ("pattern_removed", A, B),
    // Not mirrored: a changed pattern is not compared by what it accepts.
    ("pattern_changed", B, B),
    ("format_removed", A, B),
    ("multiple_of_narrowed", B, A),
    ("unique_items_removed", A, B),
    // Not mirrored: another value refuses the old one either way.
    ("const_changed", B, B),
    ("const_removed", A, B),
    ("additional_properties_false_removed", A, B),
    ("unevaluated_properties_false_removed", A, B),
    ("closing_keyword_changed", A, B),
    ("property_added_to_closed_object", A, B),
    ("property_added_to_composed_branch", A, B),
    // Not mirrored: an optional argument added is compatible both ways.
    ("optional_property_added_to_open_object", A, A),
    // Mirrored, but for another reason: the new name is a required argument either way.
    ("property_renamed", B, B),
    ("items_changed", A, B),
    ("annotations_changed", C, C),
    ("defs_renamed", C, C),
    ("defs_renamed_with_change", A, B),
    // Not mirrored: an optional argument added (deep in a recursive definition).
    ("recursive_definition", A, A),
    ("unconstrained_became_union", B, A),
    ("unclassified_keyword", B, B),
    ("identical", NONE, NONE),
];

/// Verdicts that depart from the oracle on purpose: (fixture, direction, forward, why).
const DEPARTURES: &[(&str, Direction, bool, &str)] = &[
    (
        "optional_property_added_to_open_object",
        Direction::Request,
        true,
        "an optional argument added: old callers do not send it (the strict reading calls it unsafe)",
    ),
    (
        "recursive_definition",
        Direction::Request,
        true,
        "an optional argument added deep in a recursive definition: old callers do not send it",
    ),
    (
        "closing_keyword_changed",
        Direction::Response,
        true,
        "draft-07 readers ignore `unevaluatedProperties`: for them the object opened",
    ),
    (
        "closing_keyword_changed",
        Direction::Request,
        false,
        "draft-07 validators ignore `unevaluatedProperties`: for them the object closes",
    ),
    (
        "one_of_became_any_of",
        Direction::Request,
        false,
        "`anyOf` → `oneOf` is breaking without checking that the branches exclude each other (these do)",
    ),
    (
        "one_of_became_any_of",
        Direction::Response,
        true,
        "`oneOf` → `anyOf` is breaking without checking that the branches exclude each other (these do)",
    ),
    ("unclassified_keyword", Direction::Request, false, "an unclassified change is breaking both ways (fail closed)"),
    ("unclassified_keyword", Direction::Response, true, "an unclassified change is breaking both ways (fail closed)"),
];

/// Breaking verdicts the generator cannot decide: no witness among its values, and none
/// expected from it. (fixture, direction, forward, why)
const UNDECIDED: &[(&str, Direction, bool, &str)] = &[
    ("pattern_changed", Direction::Request, true, "a changed pattern is breaking both ways; this one only widens"),
    (
        "pattern_changed",
        Direction::Request,
        false,
        "the witness is a 7-digit hex string, not one of the generator's shapes",
    ),
    (
        "pattern_changed",
        Direction::Response,
        true,
        "the witness is a 7-digit hex string, not one of the generator's shapes",
    ),
    ("pattern_changed", Direction::Response, false, "a changed pattern is breaking both ways; this one only narrows"),
];

#[test]
fn every_fixture_directory_has_a_request_row() {
    let on_disk: BTreeSet<String> = std::fs::read_dir(fixtures())
        .expect("fixtures/evolution exists")
        .map(|e| e.expect("readable entry").file_name().to_string_lossy().into_owned())
        .collect();
    let in_table: BTreeSet<String> = ROWS.iter().map(|r| r.0.to_owned()).collect();
    assert_eq!(on_disk, in_table);
}

#[test]
fn request_verdicts_of_every_fixture_pair_match_the_table_and_the_oracle() {
    let mut wrong = Vec::new();
    let mut undecided = Vec::new();
    for &(rule, forward, backward) in ROWS {
        let (old, new) = (load(rule, "old"), load(rule, "new"));
        for (direction, ahead) in [
            (Direction::Request, true),
            (Direction::Request, false),
            (Direction::Response, true),
            (Direction::Response, false),
        ] {
            let (from, to) = if ahead { (&old, &new) } else { (&new, &old) };
            let got = evolution::verdict(&evolution::diff_in(direction, from, to));
            if direction == Direction::Request {
                let expected = if ahead { forward } else { backward };
                if got != expected {
                    wrong.push(format!("{rule} request {ahead}: {}, expected {}", show(got), show(expected)));
                }
            }
            let found: Vec<Value> = if direction == Direction::Request {
                arguments::witnesses(from, to)
            } else {
                arguments::witnesses(to, from)
            };
            let departs = DEPARTURES.iter().any(|(r, d, f, _)| *r == rule && *d == direction && *f == ahead);
            let agrees = found.is_empty() != (got == B);
            match (departs, agrees) {
                (false, true) if UNDECIDED.iter().any(|(r, d, f, _)| *r == rule && *d == direction && *f == ahead) => {
                    wrong.push(format!("{rule} {direction:?} {ahead}: listed as undecided, but the oracle decides it"));
                }
                (false, true) | (true, false) => {}
                (true, true) => {
                    wrong.push(format!("{rule} {direction:?} {ahead}: listed as a departure, but the oracle agrees"));
                }
                (false, false) if found.is_empty() => {
                    if !UNDECIDED.iter().any(|(r, d, f, _)| *r == rule && *d == direction && *f == ahead) {
                        undecided.push(format!("{rule} {direction:?} {ahead}"));
                    }
                }
                (false, false) => {
                    wrong.push(format!(
                        "{rule} {direction:?} {ahead}: engine {}, oracle found {}",
                        show(got),
                        found[0]
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Breaking verdicts the generator finds no witness for, beyond those it is known not
    // to decide (`UNDECIDED`).
    assert!(undecided.is_empty(), "the generator finds no witness for: {undecided:?}");
}
