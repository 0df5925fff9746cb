//! End to end: `cargo xtask schemas [--check]` run on a copy of the workspace, with the
//! demo contracts edited the way a project would. These tests build the copy's `xtask` in
//! the tests' outside target directory and must not overlap: a lock runs them one at a
//! time in this binary, and a nextest group with the other outside builds.

use std::path::Path;
use std::process::Command;

use contract_tools::evolution::{self, Bump, Version};
use serde_json::Value;

use crate::support::evolution::{read_all, TempDir};

/// The end-to-end tests share the outside target directory, where each copy's build writes the same
/// `xtask` binary (with its copy's contracts and root baked in): they must not overlap.
static E2E: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn e2e_lock() -> std::sync::MutexGuard<'static, ()> {
    E2E.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs `cargo xtask <args>` in `root` in the outside target directory; returns (success, stdout,
/// stderr).
fn xtask(root: &Path, args: &[&str]) -> (bool, String, String) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = crate::support::bins::outside_env(&mut Command::new(cargo))
        .arg("xtask")
        .args(args)
        .current_dir(root)
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
    let copy = TempDir::new("workspace");
    let root = copy.path();
    copy_workspace(&workspace, root);

    // A clean baseline, generated in the copy itself so that the test does not depend on
    // the state of the real schemas/ folder; the control check passes.
    std::fs::remove_dir_all(root.join("schemas")).expect("schemas/ is copied");
    let (ok, out, err) = xtask(root, &["schemas"]);
    assert!(ok, "baseline write failed:\n{out}\n{err}");
    let (ok, out, err) = xtask(root, &["schemas", "--check"]);
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
    let (ok, out, err) = xtask(root, &["schemas", "--check"]);
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
    let (ok, out, err) = xtask(root, &["schemas", "--check", "--format", "json"]);
    assert!(!ok, "{err}");
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let entry =
        |name: &str| report["contracts"].as_array().unwrap().iter().find(|c| c["name"] == name).unwrap().clone();
    assert_eq!(entry("fleet_status")["needs"], fleet_major.to_string());
    assert_eq!(entry("fleet_status")["changes"][0]["kind"], "required_property_removed");
    assert_eq!(entry("quality_assess")["needs"], quality_minor.to_string());

    // Writing is refused, says which change needs which version, and writes nothing.
    let (ok, out, err) = xtask(root, &["schemas"]);
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
    let (ok, out, err) = xtask(root, &["schemas"]);
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
    let (ok, out, err) = xtask(root, &["schemas"]);
    assert!(ok, "write must pass after the major bump:\n{out}\n{err}");
    assert!(out.contains("wrote schemas/fleet_status.json"), "{out}");
    assert!(
        out.contains(&format!("fleet_status {fleet} → {fleet_major}: - required /properties/degraded: BREAKING, ok")),
        "{out}"
    );
    let (ok, out, err) = xtask(root, &["schemas", "--check"]);
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

/// Sets the contract version the tool snapshot `schemas/tools/<name>.tool.json` records,
/// by hand, as the same person would to keep the tool snapshot in line.
fn hand_edit_tool_snapshot_version(root: &Path, name: &str, version: &Version) {
    let path = root.join("schemas/tools").join(format!("{name}.tool.json"));
    let mut tool: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("snapshot")).expect("JSON");
    tool["contract"]["version"] = Value::String(version.to_string());
    std::fs::write(&path, contract_runtime::schema::canonical_string(&tool)).expect("writable");
}

#[test]
fn check_against_a_base_revision_sees_a_change_the_checked_in_files_hide() {
    let _serial = e2e_lock();
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf();
    let copy = TempDir::new("against");
    let root = copy.path();
    copy_workspace(&workspace, root);
    std::fs::remove_dir_all(root.join("schemas")).expect("schemas/ is copied");
    let (ok, out, err) = xtask(root, &["schemas"]);
    assert!(ok, "baseline write failed:\n{out}\n{err}");
    git(root, &["init", "--quiet"]);
    git(root, &["add", "--all"]);
    git(root, &["commit", "--quiet", "--message", "baseline"]);
    // Control: nothing changed since the base revision.
    let (ok, out, err) = xtask(root, &["schemas", "--check", "--against", "HEAD"]);
    assert!(ok, "an unchanged tree passes:\n{out}\n{err}");

    // A breaking change, hidden: regenerate under a bump, then put the old version back
    // in the type and, by hand, in the inventory and the tool snapshot. The checked-in files now agree with
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
    let (ok, out, err) = xtask(root, &["schemas"]);
    assert!(ok, "the bumped write passes:\n{out}\n{err}");
    set_version_of(&contracts, "FleetStatus", &fleet_major, &fleet);
    hand_edit_inventory_version(root, "fleet_status", &fleet);
    hand_edit_tool_snapshot_version(root, "fleet_status", &fleet);
    let (ok, out, err) = xtask(root, &["schemas", "--check"]);
    assert!(ok, "the hidden change passes the plain check (the gap --against closes):\n{out}\n{err}");

    // Judged against the base revision, the change and the missing bump are plain.
    let (ok, out, err) = xtask(root, &["schemas", "--check", "--against", "HEAD"]);
    assert!(!ok, "--against must see the breaking change:\n{out}\n{err}");
    let line = format!(
        "against HEAD: fleet_status {fleet} (unchanged): - required /properties/degraded: BREAKING, needs {fleet_major}; \
         schemas/fleet_status.json line "
    );
    assert!(err.contains(&line), "expected `{line}` in:\n{err}");
    assert!(err.contains(" before the change\n"), "the removal is located in the base revision's file:\n{err}");

    // The honest bump passes both checks.
    set_version_of(&contracts, "FleetStatus", &fleet, &fleet_major);
    let (ok, out, err) = xtask(root, &["schemas"]);
    assert!(ok, "{out}\n{err}");
    let (ok, out, err) = xtask(root, &["schemas", "--check", "--against", "HEAD"]);
    assert!(ok, "after the major bump:\n{out}\n{err}");
    assert!(err.contains(&format!("against HEAD: fleet_status {fleet} → {fleet_major}")), "{err}");
}

#[test]
fn xtask_check_reports_a_removed_contract_as_a_breaking_removal() {
    let _serial = e2e_lock();
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf();
    let copy = TempDir::new("removal");
    let root = copy.path();
    copy_workspace(&workspace, root);
    std::fs::remove_dir_all(root.join("schemas")).expect("schemas/ is copied");
    let (ok, out, err) = xtask(root, &["schemas"]);
    assert!(ok, "baseline write failed:\n{out}\n{err}");
    // Control: the baseline passes the check.
    let (ok, out, err) = xtask(root, &["schemas", "--check"]);
    assert!(ok, "baseline check failed:\n{out}\n{err}");
    let scrape = checked_in_version(root, "scrape_page");

    // `ScrapePage` is dropped from the published list; its type stays.
    edit(
        &root.join("examples/qe-server/src/contracts.rs"),
        "        TicketPage,\n        ScrapePage,\n",
        "        TicketPage,\n",
    );
    let (ok, out, err) = xtask(root, &["schemas", "--check"]);
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
    let (ok, out, _) = xtask(root, &["schemas", "--check", "--format", "json"]);
    assert!(!ok);
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let entry = report["contracts"].as_array().unwrap().iter().find(|c| c["name"] == "scrape_page").unwrap().clone();
    assert_eq!((entry["status"].as_str(), entry["ok"].as_bool()), (Some("removed"), Some(false)), "{entry}");
    assert_eq!(entry["changes"][0]["kind"], "contract_removed");

    // The tool stays listed without its contract: breaking for its clients, so writing is
    // refused until the server package's version has the bump the fix line names.
    let server: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("schemas/tools/server.json")).unwrap()).unwrap();
    let listed = Version::parse(server["version"].as_str().unwrap()).unwrap();
    let bumped =
        if listed.major == 0 { Version::new(0, listed.minor + 1, 0) } else { Version::new(listed.major + 1, 0, 0) };
    let (ok, out, err) = xtask(root, &["schemas"]);
    assert!(!ok, "the tool's lost contract needs the server bump:\n{out}\n{err}");
    let unbound = format!(
        "tool scrape_page (server version): ~ /contract (scrape_page {scrape} → uncontracted, clients lose the output \
         contract they relied on): BREAKING, needs server version {bumped}"
    );
    assert!(err.contains(&unbound), "expected `{unbound}` in:\n{err}");
    let fix = format!("fix: set `version = \"{bumped}\"` (or later) in the server package's Cargo.toml");
    assert!(err.contains(&fix), "expected `{fix}` in:\n{err}");
    edit(
        &root.join("examples/qe-server/Cargo.toml"),
        &format!("version = \"{listed}\""),
        &format!("version = \"{bumped}\""),
    );

    // Writing records the retirement: the file and the inventory entry go, the check
    // passes again.
    let (ok, out, err) = xtask(root, &["schemas"]);
    assert!(ok, "a retirement is written:\n{out}\n{err}");
    assert!(out.contains(&line) && out.contains("removed schemas/scrape_page.json"), "{out}");
    let (ok, out, err) = xtask(root, &["schemas", "--check"]);
    assert!(ok, "clean after the retirement:\n{out}\n{err}");
    assert!(!root.join("schemas/scrape_page.json").exists());
}
