//! The review that `cargo xtask schemas [--check]` prints, run in-process on a temp
//! schemas folder: bumps that are too small, the unified diff and the classified list, the
//! JSON report, lower versions, unreadable checked-in files, and removed contracts.

use std::path::Path;

use contract_runtime::contracts;
use contract_tools::evolution::{self, Bump, Verdict, Version};
use contract_tools::schemas::{self, Status};
use serde_json::Value;

use crate::support::evolution::{assert_evolution_snapshot, only_change, read_all, TempDir};

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

/// A schemas folder with `fleet` 1.2.0 (v1) checked in.
fn checked_in_v1() -> TempDir {
    let dir = TempDir::new("schemas");
    let summary = schemas::write(dir.path(), &contracts![fleet::v1::Fleet]).expect("a new contract is written");
    assert_eq!(summary.written, ["fleet.json", "inventory.json"]);
    dir
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
    let review = schemas::review(dir.path(), &contracts![fleet::v1::Fleet]).unwrap();
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

    let review = schemas::review(dir.path(), &contracts![fleet::breaking_unbumped::Fleet]).unwrap();
    assert!(!review.policy_ok());
    assert_eq!(
        redact(&review.lines().join("\n"), dir.path()),
        "fleet 1.2.0 (unchanged): - required /properties/degraded: BREAKING, needs 2.0.0; \
         <schemas>/fleet.json line 5 before the change"
    );
    let err = review.write(dir.path()).unwrap_err().to_string();
    assert_evolution_snapshot!("write_refused_unbumped", &redact(&err, dir.path()));
    assert_eq!(read_all(dir.path()), before, "a refused write leaves the folder untouched");

    // A minor bump is still too small for a breaking change.
    let err = schemas::write(dir.path(), &contracts![fleet::breaking_minor::Fleet]).unwrap_err().to_string();
    assert!(err.contains("fleet 1.2.0 → 1.3.0: - required /properties/degraded: BREAKING, needs 2.0.0"), "{err}");
    assert!(err.contains("fix: set `#[tool_output(version = \"2.0.0\")]` (or later) on `Fleet`"), "{err}");
    assert_eq!(read_all(dir.path()), before);

    // The control: the same change under a major bump is written, and then checks clean.
    let summary = schemas::write(dir.path(), &contracts![fleet::breaking_major::Fleet]).unwrap();
    assert_eq!(summary.written, ["fleet.json", "inventory.json"]);
    schemas::check(dir.path(), &contracts![fleet::breaking_major::Fleet]).unwrap();
    let inventory = std::fs::read_to_string(dir.path().join("inventory.json")).unwrap();
    assert!(inventory.contains("\"version\": \"2.0.0\""), "{inventory}");
}

#[test]
fn check_prints_the_unified_diff_and_the_classified_list() {
    let dir = checked_in_v1();
    // Additive under a minor bump: drift (so check fails) but the policy is met.
    let err = schemas::check(dir.path(), &contracts![fleet::additive_minor::Fleet]).unwrap_err().to_string();
    assert!(err.contains("@@"), "a unified diff: {err}");
    assert!(err.contains("fleet 1.2.0 → 1.3.0: + /properties/region (optional, open object): additive, ok"), "{err}");
    assert!(!err.contains("fix:"), "{err}");
    assert_evolution_snapshot!("check_additive_bumped", &redact(&err, dir.path()));
    // ... and write accepts it; the control check then passes.
    schemas::write(dir.path(), &contracts![fleet::additive_minor::Fleet]).unwrap();
    schemas::check(dir.path(), &contracts![fleet::additive_minor::Fleet]).unwrap();

    let dir = checked_in_v1();
    let err = schemas::check(dir.path(), &contracts![fleet::breaking_unbumped::Fleet]).unwrap_err().to_string();
    assert!(err.contains("fleet 1.2.0 (unchanged): - required /properties/degraded: BREAKING, needs 2.0.0"), "{err}");
    assert_evolution_snapshot!("check_breaking_unbumped", &redact(&err, dir.path()));
}

#[test]
fn json_report_for_bots() {
    let dir = checked_in_v1();
    let review = schemas::review(dir.path(), &contracts![fleet::breaking_unbumped::Fleet]).unwrap();
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
    assert_evolution_snapshot!("json_report_breaking_unbumped", &redact(&text, dir.path()));

    // The control: an up-to-date folder reports ok.
    let review = schemas::review(dir.path(), &contracts![fleet::v1::Fleet]).unwrap();
    assert_eq!(review.to_json()["ok"], true);
}

#[test]
fn a_lower_version_is_refused_even_with_an_unchanged_schema() {
    let dir = checked_in_v1();
    let review = schemas::review(dir.path(), &contracts![fleet::decreased::Fleet]).unwrap();
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
    let review = schemas::review(dir.path(), &contracts![fleet::additive_minor::Fleet]).unwrap();
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
    let review = schemas::review(dir.path(), &contracts![fleet::additive_minor::Fleet]).unwrap();
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
    let review = schemas::review(dir.path(), &contracts![fleet::additive_minor::Fleet]).unwrap();
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
    let review = schemas::review(dir.path(), &contracts![fleet::additive_minor::Fleet]).unwrap();
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
    schemas::write(dir.path(), &contracts![fleet::additive_minor::Fleet]).unwrap();
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
    schemas::write(dir.path(), &contracts![fleet::v1::Fleet, retired::LegacyReport]).unwrap();

    // Clean control: both contracts still produced.
    let review = schemas::review(dir.path(), &contracts![fleet::v1::Fleet, retired::LegacyReport]).unwrap();
    assert!(!review.has_removals());
    review.check().expect("clean control");

    // `LegacyReport` dropped from the list.
    let review = schemas::review(dir.path(), &contracts![fleet::v1::Fleet]).unwrap();
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
    let review = schemas::review(dir.path(), &contracts![fleet::v1::Fleet]).unwrap();
    assert!(review.has_removals());
    let err = review.check().expect_err("still a removal").to_string();
    assert!(err.contains("legacy/report 1.4.0 (removed)") && err.contains("BREAKING"), "{err}");

    // Regenerating is how a deliberate retirement is recorded; afterwards the folder is
    // clean and nothing is reported.
    review.write(dir.path()).expect("a retirement is written");
    let after = schemas::review(dir.path(), &contracts![fleet::v1::Fleet]).unwrap();
    assert!(!after.has_removals());
    after.check().expect("clean after the retirement is written");
    assert!(!dir.path().join("legacy__report.json").exists());
}
