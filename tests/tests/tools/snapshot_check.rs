//! `schemas::check` (what `cargo xtask schemas --check` runs) fails on a stale or
//! hand-edited file, a missing file and an orphan file, naming the file and saying how
//! to fix it; a freshly written folder passes.

use std::path::{Path, PathBuf};

use contract_tools::schemas;

/// A fresh folder under the target directory, written from the demo contracts.
fn fresh(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("snapshot-check").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    schemas::write(&dir, &qe_server::all_contracts()).expect("writes");
    dir
}

fn check(dir: &Path) -> Result<(), String> {
    schemas::check(dir, &qe_server::all_contracts()).map_err(|e| e.to_string())
}

#[test]
fn a_freshly_written_folder_passes_and_rewriting_changes_nothing() {
    let dir = fresh("clean");
    check(&dir).expect("clean control");
    let summary = schemas::write(&dir, &qe_server::all_contracts()).expect("writes");
    assert!(summary.written.is_empty() && summary.removed.is_empty(), "{summary:?}");
    assert_eq!(summary.unchanged.len(), qe_server::all_contracts().len() + 1);
}

#[test]
fn a_hand_edited_file_fails_with_a_diff() {
    let dir = fresh("edited");
    let path = dir.join("fleet_status.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replacen("\"healthy\"", "\"healthy_count\"", 1)).unwrap();
    let err = check(&dir).expect_err("a hand edit is drift");
    assert!(err.contains("fleet_status.json"), "{err}");
    let diff_line = |sign: char, needle: &str| err.lines().any(|l| l.starts_with(sign) && l.contains(needle));
    assert!(diff_line('-', "\"healthy_count\"") && diff_line('+', "\"healthy\""), "a unified diff is shown: {err}");
    assert!(err.contains("cargo xtask schemas"), "{err}");
    // `write` treats the checked-in file as the reviewed contract, so it refuses to
    // overwrite the edit without a version bump; restoring the file repairs it.
    assert!(schemas::write(&dir, &qe_server::all_contracts()).is_err());
    std::fs::write(&path, text).unwrap();
    check(&dir).expect("repaired");
}

#[test]
fn windows_line_endings_are_not_drift() {
    let dir = fresh("crlf");
    let path = dir.join("task_status.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace('\n', "\r\n")).unwrap();
    check(&dir).expect("CRLF checkouts are the same content");
}

#[test]
fn a_missing_file_fails() {
    let dir = fresh("missing");
    std::fs::remove_file(dir.join("qe__coverage_gaps.json")).unwrap();
    let err = check(&dir).expect_err("a missing schema is drift");
    assert!(err.contains("qe__coverage_gaps.json") && err.contains("missing"), "{err}");
    assert!(err.contains("cargo xtask schemas"), "{err}");
}

#[test]
fn an_orphan_file_fails_and_write_removes_it() {
    let dir = fresh("orphan");
    std::fs::write(dir.join("retired_tool.json"), "{}\n").unwrap();
    let err = check(&dir).expect_err("an orphan is drift");
    assert!(err.contains("retired_tool.json") && err.contains("orphan"), "{err}");
    // A schema no contract produces is a contract that was removed: breaking, with a fix.
    assert!(err.contains("retired_tool (removed): - (root) (contract `retired_tool` removed"), "{err}");
    assert!(
        err.contains("BREAKING") && err.lines().any(|l| l.starts_with("fix: ") && l.contains("retired_tool")),
        "{err}"
    );
    let summary = schemas::write(&dir, &qe_server::all_contracts()).unwrap();
    assert_eq!(summary.removed, ["retired_tool.json"]);
    check(&dir).expect("clean after write");
    // Files that are not JSON are not ours to judge.
    std::fs::write(dir.join("README.md"), "generated; do not edit\n").unwrap();
    check(&dir).expect("non-JSON files are ignored");
}

#[test]
fn a_stale_inventory_fails() {
    let dir = fresh("inventory");
    let path = dir.join("inventory.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replacen("\"exact\"", "\"additive\"", 1)).unwrap();
    let err = check(&dir).expect_err("a stale inventory is drift");
    assert!(err.contains("inventory.json"), "{err}");
}

/// A label whose pattern is a valid regular expression: the control.
#[derive(serde::Serialize, schemars::JsonSchema, contract_runtime::ToolOutput)]
#[tool_output(name = "label_ok", version = "1.0.0", compatibility = "exact")]
struct LabelOk {
    #[schemars(regex(pattern = "^[a-z]+$"))]
    label: String,
}

/// The same label with a pattern no regex engine accepts (an unclosed group): schemars
/// writes it, our lints see a constrained string, only compiling the schema refuses it.
#[derive(serde::Serialize, schemars::JsonSchema, contract_runtime::ToolOutput)]
#[tool_output(name = "label_bad_pattern", version = "1.0.0", compatibility = "exact")]
struct LabelBadPattern {
    #[schemars(regex(pattern = "^([a-z]+$"))]
    label: String,
}

/// A keyword value the 2020-12 meta-schema refuses (`minLength` is a count, not text).
#[derive(serde::Serialize, schemars::JsonSchema, contract_runtime::ToolOutput)]
#[tool_output(name = "label_bad_keyword", version = "1.0.0", compatibility = "exact")]
struct LabelBadKeyword {
    #[schemars(extend("minLength" = "three"))]
    label: String,
}

/// A contract whose schema does not compile is refused at every point that reports
/// contract errors: `try_contract`, `ContractSet::check` (the server's startup check),
/// the snapshot check and write, and the xtask command's exit code. Contracts are built
/// and compiled before anything is compared, so an uncompilable schema can never pass
/// `cargo xtask schemas --check` as "up to date".
#[test]
fn a_contract_whose_schema_does_not_compile_is_refused_by_the_check() {
    use contract_runtime::ContractErrorKind;
    use contract_runtime::{contracts, ToolOutput};

    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("snapshot-check").join("uncompilable");
    let _ = std::fs::remove_dir_all(&dir);
    let run = |set: &contract_runtime::ContractSet, check: bool| {
        let dir = dir.display().to_string();
        let mut args = vec!["xtask", "schemas", "--dir", dir.as_str()];
        if check {
            args.push("--check");
        }
        contract_tools::cli::run(args, set)
    };

    // The control: the same shape with a valid pattern builds, checks, writes and passes.
    let good = contracts![LabelOk];
    assert!(LabelOk::try_contract().is_ok());
    good.check().expect("a compilable contract passes the set check");
    schemas::write(&dir, &good).expect("writes the control");
    schemas::check(&dir, &good).expect("the control is up to date");
    assert_eq!(run(&good, true), std::process::ExitCode::SUCCESS);

    for (name, err, set) in [
        ("label_bad_pattern", LabelBadPattern::try_contract().unwrap_err(), contracts![LabelOk, LabelBadPattern]),
        ("label_bad_keyword", LabelBadKeyword::try_contract().unwrap_err(), contracts![LabelOk, LabelBadKeyword]),
    ] {
        assert_eq!(err.kind(), ContractErrorKind::InvalidSchema, "{name}: {err}");
        assert!(err.to_string().contains(&format!("contract `{name}`")), "{err}");
        let problems = set.check().expect_err("the set check refuses it").to_string();
        assert!(problems.contains("does not compile") && problems.contains(name), "{problems}");
        let checked = schemas::check(&dir, &set).expect_err("the snapshot check refuses it").to_string();
        assert!(checked.contains("does not compile") && checked.contains(name), "{checked}");
        assert!(schemas::write(&dir, &set).is_err(), "{name}: nothing is written");
        assert!(!dir.join(format!("{name}.json")).exists(), "{name}: no schema file was written");
        assert_eq!(run(&set, true), std::process::ExitCode::FAILURE, "{name}: --check fails");
        assert_eq!(run(&set, false), std::process::ExitCode::FAILURE, "{name}: writing fails");
    }
    // The folder the refused runs saw is still the control's, untouched.
    schemas::check(&dir, &good).expect("the control is still up to date");
}
