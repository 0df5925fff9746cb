//! Untagged unions: the branches of an untagged enum of structs, behind `Option` and behind
//! a plain `$ref`, are paired by structure, not by position: added, removed, reordered,
//! changed inside, replaced; the verdicts mirror when old and new swap.

use contract_runtime::ToolOutput;
use contract_tools::evolution::{self, Change};
use serde_json::Value;

use crate::support::evolution::{goals, ETA, PROGRESS, RATING, SCORE};

fn schema_of<T: ToolOutput>() -> &'static Value {
    T::contract().schema()
}

/// Each change as a review reads it: the line and the verdict.
fn verdict_lines(changes: &[Change]) -> Vec<String> {
    changes.iter().map(|c| format!("{c}: {}", c.verdict())).collect()
}

type SchemaOf = fn() -> &'static Value;

/// One edit of the untagged enum: the schemas before and after, the changes old → new
/// and the changes new → old (the mirror image).
struct UnionCase {
    name: String,
    old: SchemaOf,
    new: SchemaOf,
    forward: Vec<String>,
    backward: Vec<String>,
}

/// The untagged enum behind `Option` (`anyOf: [{$ref: GoalData}, {type: null}]`, the
/// enum's own `anyOf` one level down) and behind a plain `$ref`.
fn union_cases() -> Vec<UnionCase> {
    use goals::{changed, reordered, reordered_changed, replaced, three, two, without_progress, Direct, Envelope};
    let mut cases = Vec::new();
    for (under, at) in [("option", "/properties/data/anyOf/0/anyOf"), ("ref", "/properties/data/anyOf")] {
        let option = under == "option";
        let pick = |a: SchemaOf, b: SchemaOf| if option { a } else { b };
        cases.push(UnionCase {
            name: format!("{under}: a branch added"),
            old: pick(schema_of::<Envelope<two::GoalData>>, schema_of::<Direct<two::GoalData>>),
            new: pick(schema_of::<Envelope<three::GoalData>>, schema_of::<Direct<three::GoalData>>),
            forward: vec![format!("+ {at}/1 ({ETA}): breaking")],
            backward: vec![format!("- {at}/1 ({ETA}): additive")],
        });
        cases.push(UnionCase {
            name: format!("{under}: a branch removed"),
            old: pick(schema_of::<Envelope<three::GoalData>>, schema_of::<Direct<three::GoalData>>),
            new: pick(
                schema_of::<Envelope<without_progress::GoalData>>,
                schema_of::<Direct<without_progress::GoalData>>,
            ),
            forward: vec![format!("- {at}/0 ({PROGRESS}): additive")],
            backward: vec![format!("+ {at}/0 ({PROGRESS}): breaking")],
        });
        cases.push(UnionCase {
            name: format!("{under}: branches reordered"),
            old: pick(schema_of::<Envelope<two::GoalData>>, schema_of::<Direct<two::GoalData>>),
            new: pick(schema_of::<Envelope<reordered::GoalData>>, schema_of::<Direct<reordered::GoalData>>),
            forward: vec![format!("~ {at} (branches reordered, old → new index: 0 → 1, 1 → 0): cosmetic")],
            backward: vec![format!("~ {at} (branches reordered, old → new index: 0 → 1, 1 → 0): cosmetic")],
        });
        cases.push(UnionCase {
            name: format!("{under}: a branch changed inside"),
            old: pick(schema_of::<Envelope<two::GoalData>>, schema_of::<Direct<two::GoalData>>),
            new: pick(schema_of::<Envelope<changed::GoalData>>, schema_of::<Direct<changed::GoalData>>),
            forward: vec![format!("+ {at}/0/properties/total (required, open object): additive")],
            backward: vec![format!("- required {at}/0/properties/total: breaking")],
        });
        cases.push(UnionCase {
            name: format!("{under}: a branch replaced by another sharing one property"),
            old: pick(schema_of::<Envelope<two::GoalData>>, schema_of::<Direct<two::GoalData>>),
            new: pick(schema_of::<Envelope<replaced::GoalData>>, schema_of::<Direct<replaced::GoalData>>),
            forward: vec![format!("+ {at}/1 ({RATING}): breaking"), format!("- {at}/1 ({SCORE}): additive")],
            backward: vec![format!("+ {at}/1 ({SCORE}): breaking"), format!("- {at}/1 ({RATING}): additive")],
        });
        // Paired by position, `Score` would be compared with `Progress`.
        cases.push(UnionCase {
            name: format!("{under}: branches reordered, one changed inside"),
            old: pick(schema_of::<Envelope<two::GoalData>>, schema_of::<Direct<two::GoalData>>),
            new: pick(
                schema_of::<Envelope<reordered_changed::GoalData>>,
                schema_of::<Direct<reordered_changed::GoalData>>,
            ),
            forward: vec![
                format!("~ {at} (branches reordered, old → new index: 0 → 1, 1 → 0): cosmetic"),
                format!("+ {at}/1/properties/total (required, open object): additive"),
            ],
            backward: vec![
                format!("~ {at} (branches reordered, old → new index: 0 → 1, 1 → 0): cosmetic"),
                // The index in the new schema, where `Progress` is first again.
                format!("- required {at}/0/properties/total: breaking"),
            ],
        });
    }
    cases
}

#[test]
fn untagged_enum_branches_pair_by_structure_in_both_directions() {
    let mut wrong = Vec::new();
    for case in union_cases() {
        let (old, new) = ((case.old)(), (case.new)());
        assert_ne!(old, new, "{}: the two types give different schemas", case.name);
        let forward = verdict_lines(&evolution::diff(old, new));
        let backward = verdict_lines(&evolution::diff(new, old));
        if forward != case.forward {
            wrong.push(format!("{}: old → new\n  got      {forward:?}\n  expected {:?}", case.name, case.forward));
        }
        if backward != case.backward {
            wrong.push(format!("{}: new → old\n  got      {backward:?}\n  expected {:?}", case.name, case.backward));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The mirror image, stated once for every case: a branch added one way is the same
/// branch removed the other way, at the same pointer, and the verdicts swap.
#[test]
fn untagged_enum_verdicts_mirror() {
    let swap = |line: &str| -> String {
        let (sign, rest) = line.split_at(1);
        let sign = match sign {
            "+" => "-",
            "-" => "+",
            other => other,
        };
        let rest =
            rest.replace(": breaking", ": <b>").replace(": additive", ": breaking").replace(": <b>", ": additive");
        format!("{sign}{rest}")
    };
    for case in union_cases().iter().filter(|c| c.name.contains("added") || c.name.contains("removed")) {
        let forward = verdict_lines(&evolution::diff((case.old)(), (case.new)()));
        let backward = verdict_lines(&evolution::diff((case.new)(), (case.old)()));
        assert_eq!(forward.iter().map(|l| swap(l)).collect::<Vec<_>>(), backward, "{}", case.name);
    }
}
