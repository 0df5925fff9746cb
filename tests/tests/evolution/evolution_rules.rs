//! Schema evolution, rule by rule: every fixture pair of `tests/fixtures/evolution/<rule>/`
//! classified in both directions (verdict, kinds, the report as an insta snapshot in
//! `snapshots-evolution/`), pointers that survive `$defs` renames, recursion, and a file
//! pointer for every change of every pair.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use contract_tools::evolution::{self, Bump, Change, Verdict};

use crate::support::evolution::{assert_evolution_snapshot, dereferenced, fixtures, load, show, A, B, C, NONE};

type Rule = (&'static str, Option<Verdict>, Option<Verdict>, &'static [&'static str]);

/// Every rule: its fixture directory, the verdict old → new, the verdict new → old (the
/// mirror image), and the kinds of the old → new changes.
const RULES: &[Rule] = &[
    ("required_property_removed", B, A, &["required_property_removed"]),
    ("required_became_optional", B, A, &["became_optional"]),
    ("enum_value_added", B, A, &["enum_value_added"]),
    ("enum_removed", B, A, &["enum_removed"]),
    ("type_widened_integer_to_number", B, A, &["type_widened"]),
    ("type_list_widened", B, A, &["type_widened"]),
    ("type_changed", B, B, &["type_changed"]),
    ("became_nullable_type_list", B, A, &["became_nullable"]),
    ("became_nullable_any_of", B, A, &["became_nullable"]),
    ("one_of_branch_added", B, A, &["branch_added"]),
    ("any_of_branch_added", B, A, &["branch_added"]),
    ("one_of_became_any_of", B, A, &["composition_changed"]),
    ("maximum_relaxed", B, A, &["bound_relaxed"]),
    ("minimum_relaxed", B, A, &["bound_relaxed"]),
    ("exclusive_maximum_removed", B, A, &["bound_relaxed"]),
    ("max_length_removed", B, A, &["bound_relaxed"]),
    ("min_length_lowered", B, A, &["bound_relaxed"]),
    ("min_items_lowered", B, A, &["bound_relaxed"]),
    ("max_items_raised", B, A, &["bound_relaxed"]),
    ("pattern_removed", B, A, &["constraint_removed"]),
    ("pattern_changed", B, B, &["constraint_changed"]),
    ("format_removed", B, A, &["constraint_removed"]),
    ("multiple_of_narrowed", A, B, &["constraint_changed"]),
    ("unique_items_removed", B, A, &["constraint_removed"]),
    ("const_changed", B, B, &["const_changed"]),
    ("const_removed", B, A, &["const_removed"]),
    ("additional_properties_false_removed", B, A, &["object_opened"]),
    ("unevaluated_properties_false_removed", B, A, &["object_opened"]),
    ("closing_keyword_changed", B, A, &["closing_keyword_changed"]),
    ("property_added_to_closed_object", B, A, &["property_added_to_closed_object"]),
    ("property_added_to_composed_branch", B, A, &["property_added_to_closed_object"]),
    ("optional_property_added_to_open_object", A, B, &["property_added"]),
    ("property_renamed", B, B, &["property_added", "required_property_removed"]),
    ("items_changed", B, A, &["enum_value_added"]),
    ("annotations_changed", C, C, &["annotation_changed"]),
    ("defs_renamed", C, C, &["text_only"]),
    ("defs_renamed_with_change", B, A, &["enum_value_added"]),
    ("recursive_definition", A, B, &["property_added"]),
    ("unconstrained_became_union", A, B, &["constraint_added", "type_narrowed"]),
    ("unclassified_keyword", B, B, &["unclassified"]),
    ("identical", NONE, NONE, &[]),
];

/// The classified report of one direction, as a reviewer reads it.
fn report(changes: &[Change]) -> String {
    let mut out = format!("{} (bump: {})\n", show(evolution::verdict(changes)), evolution::required_bump(changes));
    for change in changes {
        let _ = writeln!(out, "  {change}: {}  [{}]", change.verdict(), change.kind());
    }
    out
}

#[test]
fn every_fixture_pair_is_in_the_rule_table() {
    let on_disk: BTreeSet<String> = std::fs::read_dir(fixtures())
        .expect("fixtures/evolution exists")
        .map(|e| e.expect("readable entry").file_name().to_string_lossy().into_owned())
        .collect();
    let in_table: BTreeSet<String> = RULES.iter().map(|r| r.0.to_owned()).collect();
    assert_eq!(on_disk, in_table, "each fixture directory needs a row in RULES and the reverse");
    for rule in &on_disk {
        for side in ["old", "new"] {
            let schema = load(rule, side);
            evolution::check_schema(&schema).unwrap_or_else(|e| panic!("{rule}/{side}.json: {e}"));
        }
    }
}

#[test]
fn every_rule_both_directions() {
    let mut wrong = Vec::new();
    for &(rule, forward, backward, kinds) in RULES {
        let (old, new) = (load(rule, "old"), load(rule, "new"));
        let there = evolution::diff(&old, &new);
        let back = evolution::diff(&new, &old);
        if evolution::verdict(&there) != forward {
            wrong.push(format!(
                "{rule}: old → new is {}, expected {}\n{}",
                show(evolution::verdict(&there)),
                show(forward),
                report(&there)
            ));
        }
        if evolution::verdict(&back) != backward {
            wrong.push(format!(
                "{rule}: new → old is {}, expected {}\n{}",
                show(evolution::verdict(&back)),
                show(backward),
                report(&back)
            ));
        }
        let found: BTreeSet<&str> = there.iter().map(|c| c.kind().as_str()).collect();
        let expected: BTreeSet<&str> = kinds.iter().copied().collect();
        if found != expected {
            wrong.push(format!("{rule}: kinds {found:?}, expected {expected:?}"));
        }
        // Pointers never name a definition: they stay put when schemars renames one.
        for change in there.iter().chain(&back) {
            if change.pointer().contains("$defs") {
                wrong.push(format!("{rule}: pointer {} names a $def", change.pointer()));
            }
        }
        assert_evolution_snapshot!(rule, &format!("old → new: {}new → old: {}", report(&there), report(&back)));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn pointers_are_stable_across_def_renames() {
    let changes = evolution::diff(&load("defs_renamed_with_change", "old"), &load("defs_renamed_with_change", "new"));
    let lines: Vec<String> = changes.iter().map(ToString::to_string).collect();
    assert_eq!(lines, ["+ /properties/agents/items/properties/role/enum (value \"reviewer\")"]);
    // The rename alone changes no meaning, but it changes the bytes: a patch bump.
    let renamed = evolution::diff(&load("defs_renamed", "old"), &load("defs_renamed", "new"));
    assert_eq!(evolution::required_bump(&renamed), Bump::Patch);
}

#[test]
fn recursion_is_guarded_and_reported_where_it_first_differs() {
    let changes = evolution::diff(&load("recursive_definition", "old"), &load("recursive_definition", "new"));
    let lines: Vec<String> = changes.iter().map(ToString::to_string).collect();
    assert_eq!(lines, ["+ /properties/tree/properties/label (optional, open object)"]);
}

#[test]
fn the_review_lines_read_as_documented() {
    let removed = evolution::diff(&load("required_property_removed", "old"), &load("required_property_removed", "new"));
    assert_eq!(removed[0].to_string(), "- required /properties/state");
    let added = evolution::diff(
        &load("optional_property_added_to_open_object", "old"),
        &load("optional_property_added_to_open_object", "new"),
    );
    assert_eq!(added[0].to_string(), "+ /properties/region (optional, open object)");
    // Removing an optional property from a closed object is safe, but readers lose it.
    let dropped = evolution::diff(
        &load("property_added_to_closed_object", "new"),
        &load("property_added_to_closed_object", "old"),
    );
    assert_eq!(dropped[0].verdict(), Verdict::Additive);
    assert!(dropped[0].detail().contains("warning"), "{}", dropped[0]);
}

/// Every change of every fixture pair, both ways, except a change of the whole schema,
/// names a node of the file it points into, the node its logical pointer reaches.
#[test]
fn every_fixture_change_has_a_file_pointer() {
    let mut wrong = Vec::new();
    let mut located = 0;
    for &(rule, ..) in RULES {
        let (old, new) = (load(rule, "old"), load(rule, "new"));
        for (from, to) in [(&old, &new), (&new, &old)] {
            for change in evolution::diff(from, to).iter().filter(|c| !c.pointer().is_empty()) {
                let Some((side, pointer)) = change.file_pointer() else {
                    wrong.push(format!("{rule}: {change}: no file pointer"));
                    continue;
                };
                let (file, logical) =
                    if side == evolution::Side::Old { (from, change.old_pointer()) } else { (to, change.pointer()) };
                located += 1;
                let Some(node) = file.pointer(pointer) else {
                    wrong.push(format!("{rule}: {change}: {pointer} is not in the {} file", side.as_str()));
                    continue;
                };
                // A recursive definition has no finite dereferenced form.
                if rule != "recursive_definition"
                    && dereferenced(file, file).pointer(logical) != Some(&dereferenced(file, node))
                {
                    wrong.push(format!("{rule}: {change}: {pointer} is not the changed node"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(located > RULES.len(), "the fixtures have located changes: {located}");
}
