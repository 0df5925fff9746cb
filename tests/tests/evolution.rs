//! Schema evolution: every classification rule in both directions, the version policy,
//! the review that `cargo xtask schemas [--check]` prints, unreadable checked-in files,
//! contract identity, and an end-to-end run of the xtask on a copy of the workspace.
//!
//! Fixture pairs live in `tests/fixtures/evolution/<rule>/{old,new}.json`; the classified
//! reports are insta snapshots in `tests/tests/snapshots-evolution/`.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use contract_runtime::{contracts, ContractId, ToolOutput};
use contract_tools::evolution::{self, Bump, Change, Policy, Verdict, Version};
use contract_tools::snapshot::{self, Status};
use serde_json::Value;

const B: Option<Verdict> = Some(Verdict::Breaking);
const A: Option<Verdict> = Some(Verdict::Additive);
const C: Option<Verdict> = Some(Verdict::Cosmetic);
const NONE: Option<Verdict> = None;

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

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/evolution")
}

fn load(rule: &str, side: &str) -> Value {
    let path = fixtures().join(rule).join(format!("{side}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn show(verdict: Option<Verdict>) -> &'static str {
    verdict.map_or("no change", Verdict::as_str)
}

/// The classified report of one direction, as a reviewer reads it.
fn report(changes: &[Change]) -> String {
    let mut out = format!("{} (bump: {})\n", show(evolution::verdict(changes)), evolution::required_bump(changes));
    for change in changes {
        let _ = writeln!(out, "  {change}: {}  [{}]", change.verdict(), change.kind());
    }
    out
}

fn assert_evolution_snapshot(name: &str, text: &str) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("snapshots-evolution");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!(format!("evolution__{name}"), text));
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
        assert_evolution_snapshot(rule, &format!("old → new: {}new → old: {}", report(&there), report(&back)));
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
fn the_issue_examples_read_as_written() {
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

// ------------------------------------------------------------------ version policy

/// Changes whose worst verdict is `verdict`, taken from the fixtures.
fn changes_of(verdict: Option<Verdict>) -> Vec<Change> {
    let rule = match verdict {
        Some(Verdict::Breaking) => "required_property_removed",
        Some(Verdict::Additive) => "optional_property_added_to_open_object",
        Some(Verdict::Cosmetic) => "annotations_changed",
        None => "identical",
    };
    let changes = evolution::diff(&load(rule, "old"), &load(rule, "new"));
    assert_eq!(evolution::verdict(&changes), verdict);
    changes
}

#[test]
fn version_policy_table() {
    // (checked-in version, declared version, worst change, outcome)
    let table: &[(&str, &str, Option<Verdict>, &str)] = &[
        ("1.2.0", "1.2.0", NONE, "ok"),
        ("1.2.0", "2.0.0", NONE, "ok"),
        ("1.2.0", "1.2.0", C, "needs 1.2.1"),
        ("1.2.0", "1.2.1", C, "ok"),
        ("1.2.0", "1.3.0", C, "ok"),
        ("1.2.0", "1.2.1", A, "needs 1.3.0"),
        ("1.2.0", "1.3.0", A, "ok"),
        ("1.2.0", "2.0.0", A, "ok"),
        ("1.2.0", "1.2.0", B, "needs 2.0.0"),
        ("1.2.0", "1.3.0", B, "needs 2.0.0"),
        ("1.2.0", "1.9.9", B, "needs 2.0.0"),
        ("1.2.0", "2.0.0", B, "ok"),
        ("1.2.0", "2.0.0-rc.1", B, "ok"),
        ("1.2.0", "1.1.0", NONE, "decreased"),
        ("1.2.0", "1.1.9", B, "decreased"),
        ("2.0.0", "2.0.0-rc.1", NONE, "decreased"),
        ("1.2.0", "1.2.0+build.5", NONE, "ok"),
        ("1.2.0", "1.2.0+build.5", C, "needs 1.2.1"),
        // Below 1.0.0 a minor bump counts as major.
        ("0.3.1", "0.3.1", C, "needs 0.3.2"),
        ("0.3.1", "0.3.2", C, "ok"),
        ("0.3.1", "0.3.2", A, "needs 0.4.0"),
        ("0.3.1", "0.4.0", A, "ok"),
        ("0.3.1", "0.3.2", B, "needs 0.4.0"),
        ("0.3.1", "0.4.0", B, "ok"),
        ("0.3.1", "1.0.0", B, "ok"),
        ("0.0.3", "0.0.4", B, "needs 0.1.0"),
    ];
    let v = |s: &str| Version::parse(s).expect("valid version");
    let mut wrong = Vec::new();
    for &(old, new, verdict, expected) in table {
        let outcome = match evolution::version_policy(&v(old), &v(new), &changes_of(verdict)) {
            Policy::Ok => "ok".to_owned(),
            Policy::TooSmall { needs, .. } => format!("needs {needs}"),
            Policy::Decreased => "decreased".to_owned(),
        };
        if outcome != expected {
            wrong.push(format!("{old} → {new} with {}: {outcome}, expected {expected}", show(verdict)));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn required_bump_follows_the_worst_verdict() {
    assert_eq!(evolution::required_bump(&changes_of(NONE)), Bump::None);
    assert_eq!(evolution::required_bump(&changes_of(C)), Bump::Patch);
    assert_eq!(evolution::required_bump(&changes_of(A)), Bump::Minor);
    assert_eq!(evolution::required_bump(&changes_of(B)), Bump::Major);
    let mut mixed = changes_of(C);
    mixed.extend(changes_of(B));
    mixed.extend(changes_of(A));
    assert_eq!(evolution::required_bump(&mixed), Bump::Major);
}

// ------------------------------------------------------------------ the review

/// Successive versions of one contract, `fleet`, as a project would edit it.
#[allow(dead_code)] // Only their schemas are used: the values are never built.
mod fleet {
    use contract_runtime::ToolOutput;
    use schemars::JsonSchema;
    use serde::Serialize;

    pub(crate) mod v1 {
        use super::{JsonSchema, Serialize, ToolOutput};
        /// Health of the agent fleet.
        #[derive(Serialize, JsonSchema, ToolOutput)]
        #[tool_output(name = "fleet", version = "1.2.0", compatibility = "additive")]
        pub(crate) struct Fleet {
            pub(crate) healthy: u32,
            pub(crate) degraded: u32,
        }
    }

    /// `degraded` removed, version unchanged.
    pub(crate) mod breaking_unbumped {
        use super::{JsonSchema, Serialize, ToolOutput};
        /// Health of the agent fleet.
        #[derive(Serialize, JsonSchema, ToolOutput)]
        #[tool_output(name = "fleet", version = "1.2.0", compatibility = "additive")]
        pub(crate) struct Fleet {
            pub(crate) healthy: u32,
        }
    }

    /// `degraded` removed under a minor bump: still too small.
    pub(crate) mod breaking_minor {
        use super::{JsonSchema, Serialize, ToolOutput};
        /// Health of the agent fleet.
        #[derive(Serialize, JsonSchema, ToolOutput)]
        #[tool_output(name = "fleet", version = "1.3.0", compatibility = "additive")]
        pub(crate) struct Fleet {
            pub(crate) healthy: u32,
        }
    }

    /// `degraded` removed under a major bump.
    pub(crate) mod breaking_major {
        use super::{JsonSchema, Serialize, ToolOutput};
        /// Health of the agent fleet.
        #[derive(Serialize, JsonSchema, ToolOutput)]
        #[tool_output(name = "fleet", version = "2.0.0", compatibility = "additive")]
        pub(crate) struct Fleet {
            pub(crate) healthy: u32,
        }
    }

    /// An optional `region` added under a minor bump.
    pub(crate) mod additive_minor {
        use super::{JsonSchema, Serialize, ToolOutput};
        /// Health of the agent fleet.
        #[derive(Serialize, JsonSchema, ToolOutput)]
        #[tool_output(name = "fleet", version = "1.3.0", compatibility = "additive")]
        pub(crate) struct Fleet {
            pub(crate) healthy: u32,
            pub(crate) degraded: u32,
            #[serde(skip_serializing_if = "Option::is_none")]
            pub(crate) region: Option<String>,
        }
    }

    /// The v1 schema under a lower version.
    pub(crate) mod decreased {
        use super::{JsonSchema, Serialize, ToolOutput};
        /// Health of the agent fleet.
        #[derive(Serialize, JsonSchema, ToolOutput)]
        #[tool_output(name = "fleet", version = "1.1.0", compatibility = "additive")]
        pub(crate) struct Fleet {
            pub(crate) healthy: u32,
            pub(crate) degraded: u32,
        }
    }
}

/// A directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(label: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("tool-contracts-evolution-{label}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create temp dir");
        Self(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A schemas folder with `fleet` 1.2.0 (v1) checked in.
fn checked_in_v1() -> TempDir {
    let dir = TempDir::new("schemas");
    let summary = snapshot::write(dir.path(), &contracts![fleet::v1::Fleet]).expect("a new contract is written");
    assert_eq!(summary.written, ["fleet.json", "inventory.json"]);
    dir
}

fn read_all(dir: &Path) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
        .expect("dir exists")
        .map(|e| {
            let path = e.expect("entry").path();
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&path).expect("readable"),
            )
        })
        .collect();
    files.sort();
    files
}

/// Review text with the temp dir replaced and the bodies of unified diffs collapsed, for
/// snapshots: the schema text itself belongs to the schema snapshots, not to these.
fn redact(text: &str, dir: &Path) -> String {
    let text = text.replace(&dir.display().to_string(), "<schemas>");
    let mut out = Vec::new();
    let mut in_diff = false;
    for line in text.lines() {
        if line.starts_with("--- ") {
            in_diff = true;
            out.push("<unified diff>");
            continue;
        }
        if in_diff && (line.starts_with([' ', '+', '-']) || line.starts_with("@@")) {
            continue;
        }
        in_diff = false;
        out.push(line);
    }
    out.join("\n")
}

#[test]
fn unchanged_folder_passes_check_and_write() {
    let dir = checked_in_v1();
    let review = snapshot::review(dir.path(), &contracts![fleet::v1::Fleet]).unwrap();
    assert!(review.is_up_to_date() && review.policy_ok());
    assert!(review.lines().is_empty());
    assert_eq!(review.contracts()[0].status(), Status::Unchanged);
    review.check().unwrap();
    let summary = review.write(dir.path()).unwrap();
    assert!(summary.written.is_empty());
}

#[test]
fn write_refuses_a_bump_that_is_too_small_and_names_the_needed_version() {
    let dir = checked_in_v1();
    let before = read_all(dir.path());

    let review = snapshot::review(dir.path(), &contracts![fleet::breaking_unbumped::Fleet]).unwrap();
    assert!(!review.policy_ok());
    assert_eq!(
        redact(&review.lines().join("\n"), dir.path()),
        "fleet 1.2.0 (unchanged): - required /properties/degraded: BREAKING, needs 2.0.0; \
         <schemas>/fleet.json line 5 before the change"
    );
    let err = review.write(dir.path()).unwrap_err().to_string();
    assert_evolution_snapshot("write_refused_unbumped", &redact(&err, dir.path()));
    assert_eq!(read_all(dir.path()), before, "a refused write leaves the folder untouched");

    // A minor bump is still too small for a breaking change.
    let err = snapshot::write(dir.path(), &contracts![fleet::breaking_minor::Fleet]).unwrap_err().to_string();
    assert!(err.contains("fleet 1.2.0 → 1.3.0: - required /properties/degraded: BREAKING, needs 2.0.0"), "{err}");
    assert!(err.contains("fix: set `#[tool_output(version = \"2.0.0\")]` (or later) on `Fleet`"), "{err}");
    assert_eq!(read_all(dir.path()), before);

    // The control: the same change under a major bump is written, and then checks clean.
    let summary = snapshot::write(dir.path(), &contracts![fleet::breaking_major::Fleet]).unwrap();
    assert_eq!(summary.written, ["fleet.json", "inventory.json"]);
    snapshot::check(dir.path(), &contracts![fleet::breaking_major::Fleet]).unwrap();
    let inventory = std::fs::read_to_string(dir.path().join("inventory.json")).unwrap();
    assert!(inventory.contains("\"version\": \"2.0.0\""), "{inventory}");
}

#[test]
fn check_prints_the_unified_diff_and_the_classified_list() {
    let dir = checked_in_v1();
    // Additive under a minor bump: drift (so check fails) but the policy is met.
    let err = snapshot::check(dir.path(), &contracts![fleet::additive_minor::Fleet]).unwrap_err().to_string();
    assert!(err.contains("@@"), "a unified diff: {err}");
    assert!(err.contains("fleet 1.2.0 → 1.3.0: + /properties/region (optional, open object): additive, ok"), "{err}");
    assert!(!err.contains("fix:"), "{err}");
    assert_evolution_snapshot("check_additive_bumped", &redact(&err, dir.path()));
    // ... and write accepts it; the control check then passes.
    snapshot::write(dir.path(), &contracts![fleet::additive_minor::Fleet]).unwrap();
    snapshot::check(dir.path(), &contracts![fleet::additive_minor::Fleet]).unwrap();

    let dir = checked_in_v1();
    let err = snapshot::check(dir.path(), &contracts![fleet::breaking_unbumped::Fleet]).unwrap_err().to_string();
    assert!(err.contains("fleet 1.2.0 (unchanged): - required /properties/degraded: BREAKING, needs 2.0.0"), "{err}");
    assert_evolution_snapshot("check_breaking_unbumped", &redact(&err, dir.path()));
}

#[test]
fn json_report_for_bots() {
    let dir = checked_in_v1();
    let review = snapshot::review(dir.path(), &contracts![fleet::breaking_unbumped::Fleet]).unwrap();
    let report = review.to_json();
    assert_eq!(report["ok"], false);
    assert_eq!(report["policy_ok"], false);
    let fleet = &report["contracts"][0];
    assert_eq!(fleet["policy"], "too_small");
    assert_eq!(fleet["needs"], "2.0.0");
    assert_eq!(fleet["changes"][0]["kind"], "required_property_removed");
    assert_eq!(fleet["changes"][0]["pointer"], "/properties/degraded");
    assert!(report["files"][0]["diff"].as_str().is_some_and(|d| d.contains("@@")));
    let mut shown = report.clone();
    for file in shown["files"].as_array_mut().unwrap() {
        if file["diff"].is_string() {
            file["diff"] = Value::from("<unified diff>");
        }
    }
    let text = contract_runtime::schema::canonical_string(&shown);
    assert_evolution_snapshot("json_report_breaking_unbumped", &redact(&text, dir.path()));

    // The control: an up-to-date folder reports ok.
    let review = snapshot::review(dir.path(), &contracts![fleet::v1::Fleet]).unwrap();
    assert_eq!(review.to_json()["ok"], true);
}

#[test]
fn a_lower_version_is_refused_even_with_an_unchanged_schema() {
    let dir = checked_in_v1();
    let review = snapshot::review(dir.path(), &contracts![fleet::decreased::Fleet]).unwrap();
    assert_eq!(review.contracts()[0].status(), Status::Unchanged);
    assert_eq!(review.lines(), ["fleet 1.2.0 → 1.1.0: version decreased; a version never decreases"]);
    let err = review.write(dir.path()).unwrap_err().to_string();
    assert!(err.contains("nothing was written"), "{err}");
    let err = review.check().unwrap_err().to_string();
    assert!(err.contains("version decreased"), "{err}");
}

#[test]
fn unreadable_checked_in_files_are_named_with_line_or_pointer() {
    // Unparseable JSON: the file and the line.
    let dir = checked_in_v1();
    let file = dir.path().join("fleet.json");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(3, "<<<<<<< HEAD");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let review = snapshot::review(dir.path(), &contracts![fleet::additive_minor::Fleet]).unwrap();
    let problem = review.contracts()[0].problem().expect("unreadable").to_owned();
    assert!(problem.contains("fleet.json: line 4 column 1: not valid JSON"), "{problem}");
    let err = review.write(dir.path()).unwrap_err().to_string();
    assert!(err.contains(&problem) && err.contains("nothing was written"), "{err}");
    assert!(err.contains(&format!("fix: restore {} from version control", file.display())), "{err}");
    assert!(review.check().unwrap_err().to_string().contains(&problem));

    // Valid JSON that is not a schema: the file, the pointer and the line.
    let broken = text.replacen("\"type\": \"integer\"", "\"type\": 7", 1);
    assert_ne!(broken, text);
    std::fs::write(&file, &broken).unwrap();
    let line = broken.lines().position(|l| l.contains("\"type\": 7")).unwrap() + 1;
    let review = snapshot::review(dir.path(), &contracts![fleet::additive_minor::Fleet]).unwrap();
    let problem = review.contracts()[0].problem().expect("not a schema");
    assert!(
        problem.contains(&format!(
            "fleet.json: not a JSON Schema at /properties/degraded/type: expected a type name or a non-empty list of type names (near line {line})"
        )),
        "{problem}"
    );
    assert!(!review.policy_ok());

    // The control: the intact file classifies and is written.
    std::fs::write(&file, &text).unwrap();
    let review = snapshot::review(dir.path(), &contracts![fleet::additive_minor::Fleet]).unwrap();
    assert!(review.contracts()[0].problem().is_none());
    review.write(dir.path()).unwrap();
}

#[test]
fn an_unreadable_inventory_blocks_a_change_it_must_version() {
    let dir = checked_in_v1();
    let inventory = dir.path().join("inventory.json");
    let good = std::fs::read_to_string(&inventory).unwrap();
    let bad = good.replace("\"version\": \"1.2.0\"", "\"version\": \"1.2\"");
    assert_ne!(bad, good);
    std::fs::write(&inventory, &bad).unwrap();
    let line = bad.lines().position(|l| l.contains("\"version\": \"1.2\"")).unwrap() + 1;
    let review = snapshot::review(dir.path(), &contracts![fleet::additive_minor::Fleet]).unwrap();
    let problem = review.contracts()[0].problem().expect("bad inventory");
    assert!(
        problem.contains(&format!(
            "inventory.json: at /contracts/0/version (near line {line}): expected a semver version"
        )),
        "{problem}"
    );
    assert!(review.write(dir.path()).is_err());

    // The control: with the inventory intact the same change is written.
    std::fs::write(&inventory, &good).unwrap();
    snapshot::write(dir.path(), &contracts![fleet::additive_minor::Fleet]).unwrap();
}

// ------------------------------------------------------------------ fail closed

/// One change's kind, verdict, pointer and detail, for the fail-closed tests.
fn only_change(changes: &[Change]) -> (&str, Verdict, &str, &str) {
    assert_eq!(changes.len(), 1, "expected exactly one change: {changes:#?}");
    let c = &changes[0];
    (c.kind().as_str(), c.verdict(), c.pointer(), c.detail())
}

/// An object nested `levels` property levels deep (each level one property `a`), with
/// `leaf` at the bottom.
fn nested(levels: usize, leaf: &Value) -> Value {
    let mut node = leaf.clone();
    for _ in 0..levels {
        // Built by hand: `json!` would copy `node` through serde on every level.
        let properties = serde_json::Map::from_iter([("a".to_owned(), node)]);
        node = Value::Object(serde_json::Map::from_iter([
            ("type".to_owned(), Value::from("object")),
            ("properties".to_owned(), Value::Object(properties)),
        ]));
    }
    node
}

/// The pointer of the leaf under [`nested`], written out by hand (not by the walker).
fn nested_pointer(levels: usize) -> String {
    "/properties/a".repeat(levels)
}

#[test]
fn a_change_deeper_than_the_walk_goes_is_breaking_and_names_where_it_stopped() {
    let string = serde_json::json!({ "type": "string" });
    let integer = serde_json::json!({ "type": "integer" });

    // 300 property levels: past the walk's limit of 256.
    let changes = evolution::diff(&nested(300, &string), &nested(300, &integer));
    let (kind, verdict, pointer, detail) = only_change(&changes);
    assert_eq!((kind, verdict), ("unclassified", Verdict::Breaking));
    assert_eq!(pointer, nested_pointer(257), "the pointer where the walk stopped");
    assert!(detail.contains("deeper than 256"), "{detail}");
    assert_eq!(evolution::required_bump(&changes), Bump::Major);

    // Clean control: the same depth without a change is no change at all.
    assert!(evolution::diff(&nested(300, &string), &nested(300, &string)).is_empty());
    // Clean control: within the limit the same change is classified as what it is.
    let changes = evolution::diff(&nested(200, &string), &nested(200, &integer));
    let (kind, verdict, pointer, _) = only_change(&changes);
    assert_eq!((kind, verdict), ("type_changed", Verdict::Breaking));
    assert_eq!(pointer, format!("{}/type", nested_pointer(200)));
    // A harmless change deep down (a description) is still not cosmetic past the limit,
    // since nothing there was judged, but it is cosmetic within it.
    let described = serde_json::json!({ "type": "string", "description": "a name" });
    assert_eq!(
        evolution::verdict(&evolution::diff(&nested(300, &string), &nested(300, &described))),
        Some(Verdict::Breaking)
    );
    assert_eq!(
        evolution::verdict(&evolution::diff(&nested(200, &string), &nested(200, &described))),
        Some(Verdict::Cosmetic)
    );

    // Far deeper (1,000 levels): a verdict, not a stack overflow.
    let changes = evolution::diff(&nested(1_000, &string), &nested(1_000, &integer));
    let (kind, verdict, pointer, _) = only_change(&changes);
    assert_eq!((kind, verdict, pointer), ("unclassified", Verdict::Breaking, nested_pointer(257).as_str()));
    assert!(evolution::diff(&nested(1_000, &string), &nested(1_000, &string)).is_empty());
}

#[test]
fn a_checked_in_schema_deeper_than_the_diff_goes_is_refused_by_the_shape_check() {
    let string = serde_json::json!({ "type": "string" });
    let err = evolution::check_schema(&nested(300, &string)).expect_err("too deep to judge");
    assert_eq!(err.pointer(), nested_pointer(257));
    assert!(err.message().contains("deeper than 256"), "{err}");
    // Clean control: within the limit the shape check passes.
    evolution::check_schema(&nested(200, &string)).expect("200 levels are checked");
}

/// A root that is `$ref` → `d0` → `d1` → … → `d{links-1}` → `{ "type": leaf }`: a chain of
/// `links + 1` references.
fn ref_chain(links: usize, leaf: &str) -> Value {
    let mut defs = serde_json::Map::new();
    for i in 0..links {
        defs.insert(format!("d{i}"), serde_json::json!({ "$ref": format!("#/$defs/d{}", i + 1) }));
    }
    defs.insert(format!("d{links}"), serde_json::json!({ "type": leaf }));
    serde_json::json!({ "$ref": "#/$defs/d0", "$defs": defs })
}

#[test]
fn a_change_behind_a_long_ref_chain_is_breaking() {
    for links in [63, 64, 65, 100] {
        let changes = evolution::diff(&ref_chain(links, "string"), &ref_chain(links, "integer"));
        assert_eq!(evolution::verdict(&changes), Some(Verdict::Breaking), "{links} links: {changes:#?}");
        // Clean control: the same chain unchanged.
        assert!(evolution::diff(&ref_chain(links, "string"), &ref_chain(links, "string")).is_empty(), "{links}");
    }
    let changes = evolution::diff(&ref_chain(100, "string"), &ref_chain(100, "integer"));
    let (kind, _, pointer, detail) = only_change(&changes);
    assert_eq!((kind, pointer), ("unclassified", ""));
    assert!(detail.contains("`$ref` chain longer than 64"), "{detail}");
    // Clean control: a short chain is followed and the change classified.
    let short = evolution::diff(&ref_chain(5, "string"), &ref_chain(5, "integer"));
    let (kind, verdict, pointer, _) = only_change(&short);
    assert_eq!((kind, verdict, pointer), ("type_changed", Verdict::Breaking, "/type"));

    // A `$ref` cycle that never reaches a schema: the same cycle is no change, a
    // different one is breaking.
    let cycle = |extra: &str| {
        serde_json::json!({
            "$ref": "#/$defs/a",
            "$defs": { "a": { "$ref": "#/$defs/b" }, "b": { "$ref": "#/$defs/a", "description": extra } }
        })
    };
    assert!(evolution::diff(&cycle("x"), &cycle("x")).is_empty());
    assert_eq!(evolution::verdict(&evolution::diff(&cycle("x"), &cycle("y"))), Some(Verdict::Breaking));
}

#[test]
fn bounds_beyond_f64_precision_are_compared_exactly() {
    let max = |m: Value| serde_json::json!({ "type": "integer", "maximum": m });
    // u64::MAX and one below are the same `f64`; raising the bound by one is relaxed.
    let changes = evolution::diff(&max(serde_json::json!(u64::MAX - 1)), &max(serde_json::json!(u64::MAX)));
    let (kind, verdict, pointer, _) = only_change(&changes);
    assert_eq!((kind, verdict, pointer), ("bound_relaxed", Verdict::Breaking, "/maximum"));
    let changes = evolution::diff(&max(serde_json::json!(u64::MAX)), &max(serde_json::json!(u64::MAX - 1)));
    assert_eq!(only_change(&changes).0, "bound_tightened");
    // An integer beyond 2^53 against the fraction `f64` rounds onto it: breaking.
    let changes = evolution::diff(
        &max(serde_json::json!(9_007_199_254_740_993_u64)),
        &max(serde_json::json!(9_007_199_254_740_992.0)),
    );
    let (kind, verdict, ..) = only_change(&changes);
    assert_eq!((kind, verdict), ("unclassified", Verdict::Breaking));
    // Clean controls: the same bound, and the same value written as 10 and 10.0.
    assert!(evolution::diff(&max(serde_json::json!(u64::MAX)), &max(serde_json::json!(u64::MAX))).is_empty());
    let same_value = evolution::diff(&max(serde_json::json!(10)), &max(serde_json::json!(10.0)));
    assert_ne!(evolution::verdict(&same_value), Some(Verdict::Breaking), "{same_value:#?}");
}

#[test]
fn a_ref_that_does_not_resolve_is_breaking_when_it_changes() {
    let to = |target: &str| serde_json::json!({ "type": "object", "properties": { "x": { "$ref": target } } });
    let changes = evolution::diff(&to("#/$defs/Missing"), &to("#/$defs/Other"));
    let (kind, verdict, pointer, detail) = only_change(&changes);
    assert_eq!((kind, verdict, pointer), ("unclassified", Verdict::Breaking, "/properties/x"));
    assert!(detail.contains("does not resolve"), "{detail}");
    // Clean control: the same unresolvable reference on both sides is no change.
    assert!(evolution::diff(&to("#/$defs/Missing"), &to("#/$defs/Missing")).is_empty());
}

/// `{ keyword: nested(levels, $ref Leaf) }` with `Leaf` of type `leaf`: a change that only
/// the `$ref` target shows.
fn deep_under(keyword: &str, levels: usize, leaf: &str) -> Value {
    let mut schema = serde_json::json!({
        "type": "object",
        "$defs": { "Leaf": { "type": leaf } }
    });
    let inner = nested(levels, &serde_json::json!({ "$ref": "#/$defs/Leaf" }));
    if keyword == "properties" {
        schema["properties"] = serde_json::json!({ "x": inner });
    } else {
        schema[keyword] = inner;
    }
    schema
}

#[test]
fn a_change_deep_inside_an_unknown_keyword_is_breaking() {
    // `not` is not classified: it is compared as a whole with `$ref`s inlined, which
    // stops after 16 property levels. 20 levels: the change is past that.
    let changes = evolution::diff(&deep_under("not", 20, "string"), &deep_under("not", 20, "integer"));
    let (kind, verdict, pointer, detail) = only_change(&changes);
    assert_eq!((kind, verdict, pointer), ("unclassified", Verdict::Breaking, "/not"));
    assert!(detail.contains("more than 16 property levels"), "{detail}");

    // Clean control: the same depth unchanged.
    assert!(evolution::diff(&deep_under("not", 20, "string"), &deep_under("not", 20, "string")).is_empty());
    // Clean control: a shallow change in `not` is reported the ordinary way.
    let changes = evolution::diff(&deep_under("not", 3, "string"), &deep_under("not", 3, "integer"));
    let (kind, verdict, pointer, detail) = only_change(&changes);
    assert_eq!((kind, verdict, pointer), ("unclassified", Verdict::Breaking, "/not"));
    assert!(detail.contains("not classified") && !detail.contains("levels"), "{detail}");
    // Clean control: under a keyword the classifier knows, the same 20 levels are
    // walked and the change classified where it is.
    let changes = evolution::diff(&deep_under("properties", 20, "string"), &deep_under("properties", 20, "integer"));
    let (kind, verdict, pointer, _) = only_change(&changes);
    assert_eq!((kind, verdict), ("type_changed", Verdict::Breaking));
    assert_eq!(pointer, format!("/properties/x{}/type", nested_pointer(20)));
}

#[test]
fn a_known_keyword_in_a_form_the_classifier_does_not_read_is_breaking() {
    let cases = [
        (serde_json::json!({ "enum": 5 }), serde_json::json!({ "enum": 6 }), ""),
        (serde_json::json!({ "maximum": "10" }), serde_json::json!({ "maximum": "20" }), ""),
        (serde_json::json!({ "required": [5] }), serde_json::json!({ "required": [6] }), ""),
        (
            serde_json::json!({ "properties": { "a": 5 } }),
            serde_json::json!({ "properties": { "a": 6 } }),
            "/properties/a",
        ),
        (
            serde_json::json!({ "properties": { "a": { "allOf": {} } } }),
            serde_json::json!({ "properties": { "a": { "allOf": { "type": "string" } } } }),
            "/properties/a",
        ),
    ];
    for (old, new, at) in &cases {
        let changes = evolution::diff(old, new);
        let (kind, verdict, pointer, detail) = only_change(&changes);
        assert_eq!((kind, verdict, pointer), ("unclassified", Verdict::Breaking, *at), "{old} → {new}");
        assert!(detail.contains("does not understand"), "{detail}");
        // Clean control: unchanged is no change, even in a form not understood.
        assert!(evolution::diff(old, old).is_empty(), "{old}");
    }
    // Clean control: the well-formed version of the first case is classified.
    let well_formed = evolution::diff(&serde_json::json!({ "enum": [5] }), &serde_json::json!({ "enum": [5, 6] }));
    let (kind, ..) = only_change(&well_formed);
    assert_eq!(kind, "enum_value_added");
}

// ------------------------------------------------------------------ removed contracts

/// A second contract next to `fleet`, later retired.
#[allow(dead_code)] // Only its schema is used.
mod retired {
    use contract_runtime::ToolOutput;
    use schemars::JsonSchema;
    use serde::Serialize;

    /// Output of a tool that is later removed.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(name = "legacy/report", version = "1.4.0", compatibility = "exact")]
    pub(crate) struct LegacyReport {
        pub(crate) rows: u32,
    }
}

#[test]
fn a_removed_contract_is_a_breaking_removal_with_a_fix() {
    let dir = TempDir::new("removed");
    snapshot::write(dir.path(), &contracts![fleet::v1::Fleet, retired::LegacyReport]).unwrap();

    // Clean control: both contracts still produced.
    let review = snapshot::review(dir.path(), &contracts![fleet::v1::Fleet, retired::LegacyReport]).unwrap();
    assert!(!review.has_removals());
    review.check().expect("clean control");

    // `LegacyReport` dropped from the list.
    let review = snapshot::review(dir.path(), &contracts![fleet::v1::Fleet]).unwrap();
    assert!(review.has_removals());
    let removed = review.contracts().iter().find(|c| c.name() == "legacy/report").expect("reported");
    assert_eq!(removed.status(), Status::Removed);
    assert_eq!(removed.old_version(), Some(&Version::new(1, 4, 0)));
    assert_eq!(removed.new_version(), None);
    assert!(!removed.is_ok());
    let (kind, verdict, pointer, _) = only_change(removed.changes());
    assert_eq!((kind, verdict, pointer), ("contract_removed", Verdict::Breaking, ""));
    assert_eq!(evolution::required_bump(removed.changes()), Bump::Major);

    let err = review.check().expect_err("a removal fails the check").to_string();
    assert!(
        err.contains("legacy/report 1.4.0 (removed): - (root) (contract `legacy/report` removed: its clients lose the tool and its output): BREAKING, no version bump covers a removal"),
        "{err}"
    );
    let fix = err.lines().find(|l| l.starts_with("fix: ")).unwrap_or_else(|| panic!("a fix line: {err}"));
    assert!(
        fix.contains("legacy__report.json") && fix.contains("LegacyReport") && fix.contains("cargo xtask schemas"),
        "{fix}"
    );
    let report = review.to_json();
    assert_eq!(report["ok"], false);
    let entry = report["contracts"].as_array().unwrap().iter().find(|c| c["name"] == "legacy/report").unwrap();
    assert_eq!((entry["status"].as_str(), entry["policy"].as_str()), (Some("removed"), Some("removed")));
    assert_eq!(entry["changes"][0]["kind"], "contract_removed");
    assert_eq!(entry["changes"][0]["verdict"], "breaking");

    // The schema file deleted by hand as well: the inventory still names the contract,
    // so it is still a breaking removal, not a clean folder.
    std::fs::remove_file(dir.path().join("legacy__report.json")).unwrap();
    let review = snapshot::review(dir.path(), &contracts![fleet::v1::Fleet]).unwrap();
    assert!(review.has_removals());
    let err = review.check().expect_err("still a removal").to_string();
    assert!(err.contains("legacy/report 1.4.0 (removed)") && err.contains("BREAKING"), "{err}");

    // Regenerating is how a deliberate retirement is recorded; afterwards the folder is
    // clean and nothing is reported.
    review.write(dir.path()).expect("a retirement is written");
    let after = snapshot::review(dir.path(), &contracts![fleet::v1::Fleet]).unwrap();
    assert!(!after.has_removals());
    after.check().expect("clean after the retirement is written");
    assert!(!dir.path().join("legacy__report.json").exists());
}

// ------------------------------------------------------------------ identity

#[allow(dead_code)] // Only their contracts are used: the values are never built.
mod identity {
    use contract_runtime::ToolOutput;
    use schemars::JsonSchema;
    use serde::Serialize;

    pub(crate) mod before {
        use super::{JsonSchema, Serialize, ToolOutput};
        #[derive(Serialize, JsonSchema, ToolOutput)]
        #[tool_output(name = "health", version = "1.0.0", compatibility = "exact")]
        pub(crate) struct Health {
            pub(crate) healthy: u32,
        }
    }

    /// The same name and version, another schema: a change shipped without a bump.
    pub(crate) mod after {
        use super::{JsonSchema, Serialize, ToolOutput};
        #[derive(Serialize, JsonSchema, ToolOutput)]
        #[tool_output(name = "health", version = "1.0.0", compatibility = "exact")]
        pub(crate) struct Health {
            pub(crate) healthy: u32,
            pub(crate) note: String,
        }
    }
}

#[test]
fn same_name_and_version_with_another_schema_is_another_contract() {
    let before = identity::before::Health::contract();
    let after = identity::after::Health::contract();
    assert_eq!((before.name(), before.version()), (after.name(), after.version()));
    assert_ne!(before.sha256(), after.sha256());
    assert_ne!(before.id(), after.id());
    assert_ne!(before.id().to_string(), after.id().to_string());

    // A cache entry or a client validator keyed by identity cannot serve the other one.
    let mut by_identity: HashMap<ContractId, &str> = HashMap::new();
    by_identity.insert(before.id().clone(), "validated under `before`");
    assert_eq!(by_identity.get(before.id()), Some(&"validated under `before`"), "the control hits");
    assert_eq!(by_identity.get(after.id()), None);

    // And the policy refuses to ship it under the unchanged version.
    let changes = evolution::diff(before.schema(), after.schema());
    assert_eq!(evolution::verdict(&changes), Some(Verdict::Breaking));
    assert!(matches!(evolution::version_policy(before.version(), after.version(), &changes), Policy::TooSmall { .. }));
}

// ------------------------------------------------------------------ end to end

/// The end-to-end tests share `target/e2e`, where each copy's build writes the same
/// `xtask` binary (with its copy's contracts and root baked in): they must not overlap.
static E2E: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn e2e_lock() -> std::sync::MutexGuard<'static, ()> {
    E2E.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs `cargo xtask <args>` in `root` with its own target dir; returns (success, stdout,
/// stderr).
fn xtask(root: &Path, target: &Path, args: &[&str]) -> (bool, String, String) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .arg("xtask")
        .args(args)
        .current_dir(root)
        .env("CARGO_TARGET_DIR", target)
        .env("CARGO_TERM_COLOR", "never")
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Copies the files git knows about (tracked, plus untracked ones not ignored) from the
/// workspace into `to`.
fn copy_workspace(from: &Path, to: &Path) {
    let output = Command::new("git")
        .args(["ls-files", "-z", "--cached", "--others", "--exclude-standard"])
        .current_dir(from)
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git ls-files: {}", String::from_utf8_lossy(&output.stderr));
    for name in output.stdout.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let name = std::str::from_utf8(name).expect("utf-8 path");
        let source = from.join(name);
        if !source.is_file() {
            continue; // listed but deleted in the work tree
        }
        let dest = to.join(name);
        std::fs::create_dir_all(dest.parent().expect("has a parent")).expect("create dir");
        std::fs::copy(&source, &dest).unwrap_or_else(|e| panic!("copy {name}: {e}"));
    }
}

fn edit(file: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(file).expect("readable");
    assert_eq!(text.matches(from).count(), 1, "`{from}` must occur once in {}", file.display());
    std::fs::write(file, text.replacen(from, to, 1)).expect("writable");
}

fn checked_in_version(root: &Path, name: &str) -> Version {
    let text = std::fs::read_to_string(root.join("schemas/inventory.json")).expect("inventory");
    let inventory: Value = serde_json::from_str(&text).expect("inventory is JSON");
    let entry = inventory["contracts"].as_array().unwrap().iter().find(|c| c["name"] == name).expect("entry");
    Version::parse(entry["version"].as_str().unwrap()).unwrap()
}

#[test]
fn xtask_refuses_a_breaking_change_until_the_version_is_bumped() {
    let _serial = e2e_lock();
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf();
    let target = workspace.join("target/e2e");
    let copy = TempDir::new("workspace");
    let root = copy.path();
    copy_workspace(&workspace, root);

    // A clean baseline, generated in the copy itself so that the test does not depend on
    // the state of the real schemas/ folder; the control check passes.
    std::fs::remove_dir_all(root.join("schemas")).expect("schemas/ is copied");
    let (ok, out, err) = xtask(root, &target, &["schemas"]);
    assert!(ok, "baseline write failed:\n{out}\n{err}");
    let (ok, out, err) = xtask(root, &target, &["schemas", "--check"]);
    assert!(ok, "baseline check failed:\n{out}\n{err}");
    let fleet = checked_in_version(root, "fleet_status");
    let quality = checked_in_version(root, "quality_assess");
    let fleet_major = evolution::minimum_version(&fleet, Bump::Major);
    let quality_minor = evolution::minimum_version(&quality, Bump::Minor);

    // Edit two demo types: drop a required field (breaking) and bound another (additive).
    let contracts = root.join("examples/qe-server/src/contracts.rs");
    edit(
        &contracts,
        "    /// Agents that answered late or report errors.\n    pub degraded: u32,",
        "    /// Agents that answered late or report errors.\n    #[serde(skip)]\n    pub degraded: u32,",
    );
    edit(
        &contracts,
        "    /// Weighted score, 0 to 100.\n    pub overall_score: f64,",
        "    /// Weighted score, 0 to 100.\n    #[schemars(range(min = 0, max = 100))]\n    pub overall_score: f64,",
    );
    let schemas_before = read_all(&root.join("schemas"));

    // --check fails, with the unified diff and the classified list.
    let (ok, out, err) = xtask(root, &target, &["schemas", "--check"]);
    assert!(!ok, "check must fail on drift:\n{out}\n{err}");
    assert!(err.contains("schemas/fleet_status.json is not up to date") && err.contains("@@"), "{err}");
    let breaking =
        format!("fleet_status {fleet} (unchanged): - required /properties/degraded: BREAKING, needs {fleet_major}");
    let additive = format!(
        "quality_assess {quality} (unchanged): + /properties/overall_score/maximum (100 added, tightened): additive, needs {quality_minor}"
    );
    assert!(err.contains(&breaking), "expected `{breaking}` in:\n{err}");
    assert!(err.contains(&additive), "expected `{additive}` in:\n{err}");

    // --format json: the same findings, machine-readable, on stdout.
    let (ok, out, err) = xtask(root, &target, &["schemas", "--check", "--format", "json"]);
    assert!(!ok, "{err}");
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let entry =
        |name: &str| report["contracts"].as_array().unwrap().iter().find(|c| c["name"] == name).unwrap().clone();
    assert_eq!(entry("fleet_status")["needs"], fleet_major.to_string());
    assert_eq!(entry("fleet_status")["changes"][0]["kind"], "required_property_removed");
    assert_eq!(entry("quality_assess")["needs"], quality_minor.to_string());

    // Writing is refused, says which change needs which version, and writes nothing.
    let (ok, out, err) = xtask(root, &target, &["schemas"]);
    assert!(!ok, "write must be refused:\n{out}\n{err}");
    assert!(
        err.contains("refusing to write") && err.contains(&breaking) && err.contains("nothing was written"),
        "{err}"
    );
    assert_eq!(read_all(&root.join("schemas")), schemas_before);

    // Bump both, the breaking one too little: still refused, naming only what is short.
    let fleet_minor = evolution::minimum_version(&fleet, Bump::Minor);
    set_version_of(&contracts, "FleetStatus", &fleet, &fleet_minor);
    set_version_of(&contracts, "QualityAssess", &quality, &quality_minor);
    let (ok, out, err) = xtask(root, &target, &["schemas"]);
    assert!(!ok, "a minor bump is too small for a breaking change:\n{out}\n{err}");
    assert!(
        err.contains(&format!(
            "fleet_status {fleet} → {fleet_minor}: - required /properties/degraded: BREAKING, needs {fleet_major}"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "quality_assess {quality} → {quality_minor}: + /properties/overall_score/maximum (100 added, tightened): additive, ok"
        )),
        "{err}"
    );
    assert_eq!(read_all(&root.join("schemas")), schemas_before);

    // The right bump: written, and --check passes.
    set_version_of(&contracts, "FleetStatus", &fleet_minor, &fleet_major);
    let (ok, out, err) = xtask(root, &target, &["schemas"]);
    assert!(ok, "write must pass after the major bump:\n{out}\n{err}");
    assert!(out.contains("wrote schemas/fleet_status.json"), "{out}");
    assert!(
        out.contains(&format!("fleet_status {fleet} → {fleet_major}: - required /properties/degraded: BREAKING, ok")),
        "{out}"
    );
    let (ok, out, err) = xtask(root, &target, &["schemas", "--check"]);
    assert!(ok, "check must pass after the bump:\n{out}\n{err}");
    assert_eq!(checked_in_version(root, "fleet_status"), fleet_major);
    assert_eq!(checked_in_version(root, "quality_assess"), quality_minor);
}

/// Rewrites the `version = "…"` of the `#[tool_output(…)]` attribute right above
/// `pub struct <ty>`.
fn set_version_of(file: &Path, ty: &str, from: &Version, to: &Version) {
    let text = std::fs::read_to_string(file).expect("readable");
    let at =
        text.find(&format!("pub struct {ty} ")).unwrap_or_else(|| panic!("`pub struct {ty}` in {}", file.display()));
    let attr = text[..at].rfind("#[tool_output(").expect("a tool_output attribute above the struct");
    let old = format!("version = \"{from}\"");
    let offset = text[attr..at].find(&old).unwrap_or_else(|| panic!("`{old}` on {ty}"));
    let mut edited = text.clone();
    edited.replace_range(attr + offset..attr + offset + old.len(), &format!("version = \"{to}\""));
    std::fs::write(file, edited).expect("writable");
}

/// Runs git in `root` with a throwaway identity; panics on failure.
fn git(root: &Path, args: &[&str]) {
    let output = Command::new("git")
        .args(["-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(root)
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

/// Sets the version of `name` in `schemas/inventory.json` by hand, as someone hiding a
/// change from the checked-in comparison would.
fn hand_edit_inventory_version(root: &Path, name: &str, version: &Version) {
    let path = root.join("schemas/inventory.json");
    let mut inventory: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("inventory")).expect("JSON");
    let entry = inventory["contracts"].as_array_mut().unwrap().iter_mut().find(|c| c["name"] == name).expect("entry");
    entry["version"] = Value::String(version.to_string());
    std::fs::write(&path, contract_runtime::schema::canonical_string(&inventory)).expect("writable");
}

#[test]
fn check_against_a_base_revision_sees_a_change_the_checked_in_files_hide() {
    let _serial = e2e_lock();
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf();
    let target = workspace.join("target/e2e");
    let copy = TempDir::new("against");
    let root = copy.path();
    copy_workspace(&workspace, root);
    std::fs::remove_dir_all(root.join("schemas")).expect("schemas/ is copied");
    let (ok, out, err) = xtask(root, &target, &["schemas"]);
    assert!(ok, "baseline write failed:\n{out}\n{err}");
    git(root, &["init", "--quiet"]);
    git(root, &["add", "--all"]);
    git(root, &["commit", "--quiet", "--message", "baseline"]);
    // Control: nothing changed since the base revision.
    let (ok, out, err) = xtask(root, &target, &["schemas", "--check", "--against", "HEAD"]);
    assert!(ok, "an unchanged tree passes:\n{out}\n{err}");

    // A breaking change, hidden: regenerate under a bump, then put the old version back
    // in the type and, by hand, in the inventory. The checked-in files now agree with
    // the types, so the plain check has nothing to compare against and passes.
    let fleet = checked_in_version(root, "fleet_status");
    let fleet_major = evolution::minimum_version(&fleet, Bump::Major);
    let contracts = root.join("examples/qe-server/src/contracts.rs");
    edit(
        &contracts,
        "    /// Agents that answered late or report errors.\n    pub degraded: u32,",
        "    /// Agents that answered late or report errors.\n    #[serde(skip)]\n    pub degraded: u32,",
    );
    set_version_of(&contracts, "FleetStatus", &fleet, &fleet_major);
    let (ok, out, err) = xtask(root, &target, &["schemas"]);
    assert!(ok, "the bumped write passes:\n{out}\n{err}");
    set_version_of(&contracts, "FleetStatus", &fleet_major, &fleet);
    hand_edit_inventory_version(root, "fleet_status", &fleet);
    let (ok, out, err) = xtask(root, &target, &["schemas", "--check"]);
    assert!(ok, "the hidden change passes the plain check (the gap --against closes):\n{out}\n{err}");

    // Judged against the base revision, the change and the missing bump are plain.
    let (ok, out, err) = xtask(root, &target, &["schemas", "--check", "--against", "HEAD"]);
    assert!(!ok, "--against must see the breaking change:\n{out}\n{err}");
    let line = format!(
        "against HEAD: fleet_status {fleet} (unchanged): - required /properties/degraded: BREAKING, needs {fleet_major}; \
         schemas/fleet_status.json line "
    );
    assert!(err.contains(&line), "expected `{line}` in:\n{err}");
    assert!(err.contains(" before the change\n"), "the removal is located in the base revision's file:\n{err}");

    // The honest bump passes both checks.
    set_version_of(&contracts, "FleetStatus", &fleet, &fleet_major);
    let (ok, out, err) = xtask(root, &target, &["schemas"]);
    assert!(ok, "{out}\n{err}");
    let (ok, out, err) = xtask(root, &target, &["schemas", "--check", "--against", "HEAD"]);
    assert!(ok, "after the major bump:\n{out}\n{err}");
    assert!(err.contains(&format!("against HEAD: fleet_status {fleet} → {fleet_major}")), "{err}");
}

#[test]
fn xtask_check_reports_a_removed_contract_as_a_breaking_removal() {
    let _serial = e2e_lock();
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf();
    let target = workspace.join("target/e2e");
    let copy = TempDir::new("removal");
    let root = copy.path();
    copy_workspace(&workspace, root);
    std::fs::remove_dir_all(root.join("schemas")).expect("schemas/ is copied");
    let (ok, out, err) = xtask(root, &target, &["schemas"]);
    assert!(ok, "baseline write failed:\n{out}\n{err}");
    // Control: the baseline passes the check.
    let (ok, out, err) = xtask(root, &target, &["schemas", "--check"]);
    assert!(ok, "baseline check failed:\n{out}\n{err}");
    let scrape = checked_in_version(root, "scrape_page");

    // `ScrapePage` is dropped from the published list; its type stays.
    edit(
        &root.join("examples/qe-server/src/contracts.rs"),
        "        TicketPage,\n        ScrapePage,\n",
        "        TicketPage,\n",
    );
    let (ok, out, err) = xtask(root, &target, &["schemas", "--check"]);
    assert!(!ok, "a removal fails the check:\n{out}\n{err}");
    let line = format!(
        "scrape_page {scrape} (removed): - (root) (contract `scrape_page` removed: its clients lose the tool and its output): BREAKING, no version bump covers a removal"
    );
    assert!(err.contains(&line), "expected `{line}` in:\n{err}");
    assert!(
        err.lines().any(|l| l
            .starts_with("fix: schemas/scrape_page.json is checked in but no contract produces `scrape_page`")
            && l.contains("`ScrapePage`")),
        "{err}"
    );
    let (ok, out, _) = xtask(root, &target, &["schemas", "--check", "--format", "json"]);
    assert!(!ok);
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let entry = report["contracts"].as_array().unwrap().iter().find(|c| c["name"] == "scrape_page").unwrap().clone();
    assert_eq!((entry["status"].as_str(), entry["ok"].as_bool()), (Some("removed"), Some(false)), "{entry}");
    assert_eq!(entry["changes"][0]["kind"], "contract_removed");

    // Writing records the retirement: the file and the inventory entry go, the check
    // passes again.
    let (ok, out, err) = xtask(root, &target, &["schemas"]);
    assert!(ok, "a retirement is written:\n{out}\n{err}");
    assert!(out.contains(&line) && out.contains("removed schemas/scrape_page.json"), "{out}");
    let (ok, out, err) = xtask(root, &target, &["schemas", "--check"]);
    assert!(ok, "clean after the retirement:\n{out}\n{err}");
    assert!(!root.join("schemas/scrape_page.json").exists());
}

// ------------------------------------------------------------------ untagged unions

/// Successive versions of a generic wrapper whose `data` is an untagged enum of structs,
/// as a tool returns it. The schemas compared below are the contracts of these types.
#[allow(dead_code)] // Only their schemas are used: the values are never built.
mod goals {
    use contract_runtime::ToolOutput;
    use schemars::JsonSchema;
    use serde::Serialize;

    /// The answer of the `goal` tool, with the data optional (`anyOf: [{$ref}, {type: null}]`).
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(name = "goal", version = "1.0.0", compatibility = "additive")]
    pub(crate) struct Envelope<T> {
        pub(crate) ok: bool,
        pub(crate) data: Option<T>,
    }

    /// The answer of the `goal` tool, with the data always there (a `$ref`).
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(name = "goal", version = "1.0.0", compatibility = "additive")]
    pub(crate) struct Direct<T> {
        pub(crate) ok: bool,
        pub(crate) data: T,
    }

    #[derive(Serialize, JsonSchema)]
    pub(crate) struct Progress {
        pub(crate) done: u32,
        pub(crate) ratio: f32,
    }

    #[derive(Serialize, JsonSchema)]
    pub(crate) struct Score {
        pub(crate) value: f64,
        pub(crate) weight: f32,
    }

    #[derive(Serialize, JsonSchema)]
    pub(crate) struct Eta {
        pub(crate) seconds: f64,
        pub(crate) confidence: f32,
    }

    /// Two variants.
    pub(crate) mod two {
        use super::{JsonSchema, Progress, Score, Serialize};
        #[derive(Serialize, JsonSchema)]
        #[serde(untagged)]
        pub(crate) enum GoalData {
            Progress(Progress),
            Score(Score),
        }
    }

    /// A variant added between the two.
    pub(crate) mod three {
        use super::{Eta, JsonSchema, Progress, Score, Serialize};
        #[derive(Serialize, JsonSchema)]
        #[serde(untagged)]
        pub(crate) enum GoalData {
            Progress(Progress),
            Eta(Eta),
            Score(Score),
        }
    }

    /// The two variants in the other order.
    pub(crate) mod reordered {
        use super::{JsonSchema, Progress, Score, Serialize};
        #[derive(Serialize, JsonSchema)]
        #[serde(untagged)]
        pub(crate) enum GoalData {
            Score(Score),
            Progress(Progress),
        }
    }

    /// The two variants in the other order, `Progress` with a new required field.
    pub(crate) mod reordered_changed {
        use super::{changed, JsonSchema, Score, Serialize};
        #[derive(Serialize, JsonSchema)]
        #[serde(untagged)]
        pub(crate) enum GoalData {
            Score(Score),
            Progress(changed::Progress),
        }
    }

    /// A rating that shares `value` with `Score`.
    #[derive(Serialize, JsonSchema)]
    pub(crate) struct Rating {
        pub(crate) value: f64,
        pub(crate) stars: u8,
    }

    /// `Score` replaced by `Rating`: another variant, not `Score` edited.
    pub(crate) mod replaced {
        use super::{JsonSchema, Progress, Rating, Serialize};
        #[derive(Serialize, JsonSchema)]
        #[serde(untagged)]
        pub(crate) enum GoalData {
            Progress(Progress),
            Rating(Rating),
        }
    }

    /// The first of the three variants removed.
    pub(crate) mod without_progress {
        use super::{Eta, JsonSchema, Score, Serialize};
        #[derive(Serialize, JsonSchema)]
        #[serde(untagged)]
        pub(crate) enum GoalData {
            Eta(Eta),
            Score(Score),
        }
    }

    /// The same two variants, `Progress` with a new required field.
    pub(crate) mod changed {
        use super::{JsonSchema, Score, Serialize};
        #[derive(Serialize, JsonSchema)]
        pub(crate) struct Progress {
            pub(crate) done: u32,
            pub(crate) total: u32,
            pub(crate) ratio: f32,
        }
        #[derive(Serialize, JsonSchema)]
        #[serde(untagged)]
        pub(crate) enum GoalData {
            Progress(Progress),
            Score(Score),
        }
    }
}

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

const ETA: &str = "branch type \"object\" with properties confidence, seconds";
const PROGRESS: &str = "branch type \"object\" with properties done, ratio";
const SCORE: &str = "branch type \"object\" with properties value, weight";
const RATING: &str = "branch type \"object\" with properties stars, value";

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

// ------------------------------------------------------------------ pointers into the file

/// A search tool whose results are a `$defs` entry: the logical pointer
/// `/properties/packages/items/properties/category` is written at
/// `/$defs/SearchResult/properties/category`.
#[allow(dead_code)] // Only their schemas are used: the values are never built.
mod search {
    pub(crate) mod v1 {
        /// Packages matching a query.
        #[derive(serde::Serialize, schemars::JsonSchema, contract_runtime::ToolOutput)]
        #[tool_output(name = "search", version = "1.0.0", compatibility = "additive")]
        pub(crate) struct Search {
            pub(crate) packages: Vec<SearchResult>,
        }

        #[derive(serde::Serialize, schemars::JsonSchema)]
        pub(crate) struct SearchResult {
            pub(crate) name: String,
            pub(crate) category: String,
            pub(crate) tags: Option<Vec<String>>,
        }
    }

    /// `category` nullable, `tags` gone.
    pub(crate) mod v2 {
        /// Packages matching a query.
        #[derive(serde::Serialize, schemars::JsonSchema, contract_runtime::ToolOutput)]
        #[tool_output(name = "search", version = "1.0.0", compatibility = "additive")]
        pub(crate) struct Search {
            pub(crate) packages: Vec<SearchResult>,
        }

        #[derive(serde::Serialize, schemars::JsonSchema)]
        pub(crate) struct SearchResult {
            pub(crate) name: String,
            pub(crate) category: Option<String>,
        }
    }
}

/// `node` with every local `$ref` replaced by its target (keywords beside the `$ref`
/// kept) and `$defs` dropped: the dereferenced schema logical pointers walk. For
/// schemas without recursion only.
fn dereferenced(root: &Value, node: &Value) -> Value {
    match node {
        Value::Object(map) => {
            let mut out = serde_json::Map::new();
            if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                let target = root.pointer(reference.strip_prefix('#').expect("a local $ref")).expect("resolves");
                if let Value::Object(target) = dereferenced(root, target) {
                    out.extend(target);
                }
            }
            for (key, value) in map.iter().filter(|(k, _)| *k != "$ref" && *k != "$defs") {
                out.insert(key.clone(), dereferenced(root, value));
            }
            Value::Object(out)
        }
        Value::Array(list) => Value::Array(list.iter().map(|v| dereferenced(root, v)).collect()),
        other => other.clone(),
    }
}

/// The line of the node at `pointer` in the canonical text of `root`, found by writing
/// the document again with that node replaced by a marker.
fn marked_line(root: &Value, pointer: &str) -> usize {
    const MARKER: &str = "<the changed node>";
    let mut marked = root.clone();
    *marked.pointer_mut(pointer).expect("the node exists") = Value::String(MARKER.to_owned());
    let text = contract_runtime::schema::canonical_string(&marked);
    text.lines().position(|l| l.contains(MARKER)).expect("the marker is written") + 1
}

/// Checks in `old`, reviews `new` against it, and returns the review of the one
/// contract with the old and new file texts.
fn review_pair(
    old: &contract_runtime::ContractSet,
    new: &contract_runtime::ContractSet,
) -> (TempDir, snapshot::ContractReview, String, String) {
    let dir = TempDir::new("located");
    snapshot::write(dir.path(), old).expect("the old contract is written");
    let review = snapshot::review(dir.path(), new).unwrap();
    let contract = review.contracts()[0].clone();
    let old_text = std::fs::read_to_string(dir.path().join(contract.file())).unwrap();
    let new_text = snapshot::render(new).unwrap()[contract.file()].clone();
    (dir, contract, old_text, new_text)
}

#[test]
fn review_lines_name_the_file_pointer_and_line() {
    use goals::{three, two, without_progress, Envelope};
    let (dir, goal, _, new_text) =
        review_pair(&contracts![Envelope<two::GoalData>], &contracts![Envelope<three::GoalData>]);
    let shown = format!("{}/goal.json", dir.path().display());
    // One added branch where it sits, nothing removed, and where the file has it.
    let line = marked_line(&serde_json::from_str(&new_text).unwrap(), "/$defs/GoalData/anyOf/1");
    assert_eq!(
        goal.lines(),
        [format!(
            "goal 1.0.0 (unchanged): + /properties/data/anyOf/0/anyOf/1 ({ETA}): BREAKING, needs 2.0.0; \
             {shown} line {line}: /$defs/GoalData/anyOf/1"
        )]
    );
    assert_eq!(new_text.lines().nth(line - 1).map(str::trim), Some("{"), "the branch starts on that line");
    assert_eq!(new_text.lines().nth(line).map(str::trim), Some("\"$ref\": \"#/$defs/Eta\""));

    // A removal points into the old file.
    let (dir, goal, old_text, _) =
        review_pair(&contracts![Envelope<three::GoalData>], &contracts![Envelope<without_progress::GoalData>]);
    let shown = format!("{}/goal.json", dir.path().display());
    let line = marked_line(&serde_json::from_str(&old_text).unwrap(), "/$defs/GoalData/anyOf/0");
    assert_eq!(
        goal.lines(),
        [format!(
            "goal 1.0.0 (unchanged): - /properties/data/anyOf/0/anyOf/0 ({PROGRESS}): additive, needs 1.1.0; \
             {shown} line {line} before the change: /$defs/GoalData/anyOf/0"
        )]
    );

    // A removal inside a branch that moved is found where the old file has it.
    let (_dir, goal, _, _) =
        review_pair(&contracts![Envelope<goals::reordered_changed::GoalData>], &contracts![Envelope<two::GoalData>]);
    let removed = &goal.changes()[1];
    assert_eq!(removed.pointer(), "/properties/data/anyOf/0/anyOf/0/properties/total");
    assert_eq!(removed.old_pointer(), "/properties/data/anyOf/0/anyOf/1/properties/total");
    let location = goal.locations()[1].as_ref().expect("located");
    assert_eq!((location.side(), location.pointer()), (evolution::Side::Old, "/$defs/Progress/properties/total"));

    // Through an array of `$defs` entries, as the review prints it and as JSON.
    let (dir, found, old_text, new_text) =
        review_pair(&contracts![search::v1::Search], &contracts![search::v2::Search]);
    let shown = format!("{}/search.json", dir.path().display());
    let category =
        marked_line(&serde_json::from_str(&new_text).unwrap(), "/$defs/SearchResult/properties/category/type");
    let tags = marked_line(&serde_json::from_str(&old_text).unwrap(), "/$defs/SearchResult/properties/tags");
    assert_eq!(
        found.lines(),
        [
            format!(
                "search 1.0.0 (unchanged): ~ /properties/packages/items/properties/category/type (\"string\" → [\"string\",\"null\"], now nullable): BREAKING, needs 2.0.0; \
                 {shown} line {category}: /$defs/SearchResult/properties/category/type"
            ),
            format!(
                "search 1.0.0 (unchanged): - required /properties/packages/items/properties/tags: BREAKING, needs 2.0.0; \
                 {shown} line {tags} before the change: /$defs/SearchResult/properties/tags"
            ),
        ]
    );
    let review = snapshot::review(dir.path(), &contracts![search::v2::Search]).unwrap();
    let report = review.to_json();
    let changes = &report["contracts"][0]["changes"];
    assert_eq!(changes[0]["pointer"], "/properties/packages/items/properties/category/type");
    assert_eq!(
        changes[0]["location"],
        serde_json::json!({ "side": "new", "pointer": "/$defs/SearchResult/properties/category/type", "line": category })
    );
    assert_eq!(
        changes[1]["location"],
        serde_json::json!({ "side": "old", "pointer": "/$defs/SearchResult/properties/tags", "line": tags })
    );
    review.report().validate().unwrap_or_else(|err| panic!("the report matches its schema: {err}"));
}

/// For every change of every pair: the file pointer resolves in the file it names, to the
/// node the logical pointer reaches in the dereferenced schema, and the line is where
/// that node is written in the canonical text.
#[test]
fn file_pointers_resolve_to_the_changed_node_and_its_line() {
    use goals::{changed, reordered, reordered_changed, three, two, without_progress, Direct, Envelope};
    let pairs = [
        (contracts![Envelope<two::GoalData>], contracts![Envelope<three::GoalData>]),
        (contracts![Envelope<three::GoalData>], contracts![Envelope<without_progress::GoalData>]),
        (contracts![Envelope<two::GoalData>], contracts![Envelope<reordered::GoalData>]),
        (contracts![Envelope<two::GoalData>], contracts![Envelope<changed::GoalData>]),
        (contracts![Envelope<changed::GoalData>], contracts![Envelope<two::GoalData>]),
        // The removed `total` is at another index in the old file than in the new one.
        (contracts![Envelope<two::GoalData>], contracts![Envelope<reordered_changed::GoalData>]),
        (contracts![Envelope<reordered_changed::GoalData>], contracts![Envelope<two::GoalData>]),
        (contracts![Direct<reordered_changed::GoalData>], contracts![Direct<two::GoalData>]),
        (contracts![Direct<two::GoalData>], contracts![Direct<three::GoalData>]),
        (contracts![Direct<three::GoalData>], contracts![Direct<two::GoalData>]),
        (contracts![Envelope<two::GoalData>], contracts![Direct<two::GoalData>]),
        (contracts![search::v1::Search], contracts![search::v2::Search]),
        (contracts![search::v2::Search], contracts![search::v1::Search]),
    ];
    let mut checked = 0;
    for (old, new) in &pairs {
        let (_dir, review, old_text, new_text) = review_pair(old, new);
        assert!(!review.changes().is_empty());
        assert_eq!(review.locations().len(), review.changes().len());
        for (change, location) in review.changes().iter().zip(review.locations()) {
            let location = location.as_ref().unwrap_or_else(|| panic!("{change}: no location"));
            let text = if location.side() == evolution::Side::Old { &old_text } else { &new_text };
            let file: Value = serde_json::from_str(text).unwrap();
            assert_eq!(contract_runtime::schema::canonical_string(&file), *text, "the file is canonical");
            let node = file
                .pointer(location.pointer())
                .unwrap_or_else(|| panic!("{change}: {} not in the file", location.pointer()));
            let logical = dereferenced(&file, &file);
            let in_file = if location.side() == evolution::Side::Old { change.old_pointer() } else { change.pointer() };
            assert_eq!(
                logical.pointer(in_file),
                Some(&dereferenced(&file, node)),
                "{change}: {} is not the changed node",
                location.pointer()
            );
            assert_eq!(location.line(), marked_line(&file, location.pointer()), "{change}: line");
            checked += 1;
        }
    }
    assert!(checked >= pairs.len(), "every pair has located changes");
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
