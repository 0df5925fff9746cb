//! The canonical schema bytes are identical with and without
//! serde_json's `preserve_order` feature.
//!
//! The workspace builds serde_json without the feature (asserted below). The fixture crate
//! `tests/fixtures/preserve-order` builds the same contracts with the feature on, in a
//! cargo workspace of its own (excluded from the root one, so feature unification never
//! leaks it into the real build) and in its own target directory
//! `target/preserve-order` (so it neither waits on nor invalidates the main build). It
//! prints a probe proving the feature is really on there, then every contract's canonical
//! bytes and the inventory, as JSON lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use contract_tools::schemas::{self, INVENTORY};
use serde_json::Value;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the tests crate sits in the workspace").to_path_buf()
}

/// Removes the Cargo.lock copied into the fixture, however the test ends, so a run
/// leaves no untracked file behind (the fixture's `.gitignore` covers a crash).
struct CopiedLock(PathBuf);

impl Drop for CopiedLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `(name, version)` of every package in a Cargo.lock.
fn locked_packages(lock: &str) -> BTreeSet<(String, String)> {
    let mut packages = BTreeSet::new();
    for block in lock.split("[[package]]").skip(1) {
        let field = |key: &str| {
            block.lines().find_map(|line| {
                line.strip_prefix(key)
                    .and_then(|rest| rest.trim().strip_prefix('='))
                    .map(|v| v.trim().trim_matches('"'))
            })
        };
        if let (Some(name), Some(version)) = (field("name "), field("version ")) {
            packages.insert((name.to_owned(), version.to_owned()));
        }
    }
    packages
}

/// The same probe as the fixture's: does this build of `serde_json` keep insertion order?
fn preserves_order_here() -> bool {
    let mut probe = serde_json::Map::new();
    probe.insert("zebra".to_owned(), Value::from(1));
    probe.insert("apple".to_owned(), Value::from(2));
    serde_json::to_string(&Value::Object(probe)).expect("a map serializes") == r#"{"zebra":1,"apple":2}"#
}

#[test]
fn canonical_bytes_do_not_depend_on_serde_json_preserve_order() {
    // Without this the comparison below would be between two builds that both keep
    // order, and would prove nothing about the build that does not.
    assert!(
        !preserves_order_here(),
        "serde_json's preserve_order is on in the workspace itself (some dependency enables it); \
         the fixture then no longer compares against a build without it"
    );

    let root = workspace();
    let fixture = root.join("tests/fixtures/preserve-order");
    // The workspace lock pins the fixture to the versions the workspace uses, so the
    // build needs nothing the workspace has not already fetched.
    let lock = fixture.join("Cargo.lock");
    std::fs::copy(root.join("Cargo.lock"), &lock).expect("copy Cargo.lock into the fixture");
    let _cleanup = CopiedLock(lock.clone());

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["run", "--quiet", "--manifest-path"])
        .arg(fixture.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", root.join("target/preserve-order"))
        .current_dir(&root)
        .output()
        .expect("run cargo");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the preserve-order fixture failed ({}):\n{}\n{stdout}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );

    // Cargo only pruned the lock (and added indexmap's edge for the feature): every
    // package it resolved is one the workspace itself pins, at the same version.
    let workspace_packages = locked_packages(&std::fs::read_to_string(root.join("Cargo.lock")).expect("Cargo.lock"));
    let fixture_packages = locked_packages(&std::fs::read_to_string(&lock).expect("the fixture's Cargo.lock"));
    let drifted: Vec<_> = fixture_packages
        .iter()
        .filter(|(name, _)| name != "preserve-order-fixture")
        .filter(|package| !workspace_packages.contains(*package))
        .collect();
    assert!(drifted.is_empty(), "the fixture resolved versions the workspace does not use: {drifted:?}");

    let lines: Vec<Value> =
        stdout.lines().map(|line| serde_json::from_str(line).expect("the fixture prints JSON lines")).collect();
    let probe = lines.iter().find(|l| l["kind"] == "probe").expect("a probe line");
    assert_eq!(
        probe["preserve_order"], true,
        "serde_json's preserve_order is not on in the fixture, so the test would prove nothing: {probe}"
    );

    assert_eq!(
        probe["naive_differs"], true,
        "with preserve_order on, printing a raw schemars schema with serde_json alone should not give \
         canonical bytes; if it does, this test no longer exercises the canonicalizer's sort: {probe}"
    );
    // And in this build, without the feature, the same naive printing is already sorted,
    // which is exactly why a workspace-only test could never catch a missing sort.
    let raw = contract_runtime::schema::settings()
        .into_generator()
        .into_root_schema_for::<qe_server::contracts::FleetStatus>()
        .to_value();
    let naive = serde_json::to_string_pretty(&raw).expect("a schema serializes") + "\n";
    assert_eq!(naive, contract_runtime::schema::canonical_string(&raw), "without preserve_order serde_json sorts keys");

    let mut printed: BTreeMap<String, String> = BTreeMap::new();
    for line in lines.iter().filter(|l| l["kind"] == "contract" || l["kind"] == "inventory") {
        let file = line["file"].as_str().expect("a file name").to_owned();
        let bytes = line["bytes"].as_str().expect("the bytes as text").to_owned();
        assert!(printed.insert(file.clone(), bytes).is_none(), "{file} printed twice");
    }

    // The same contracts built here, without preserve_order.
    let contracts = qe_server::all_contracts();
    let mut expected: BTreeMap<String, String> = BTreeMap::new();
    contracts.check().unwrap_or_else(|err| panic!("{err}"));
    for contract in contracts.contracts() {
        let text = std::str::from_utf8(contract.canonical_bytes()).expect("UTF-8").to_owned();
        expected.insert(schemas::file_name(contract.name()), text);
    }
    let rendered = schemas::render(&contracts).unwrap_or_else(|err| panic!("{err}"));
    expected.insert(INVENTORY.to_owned(), rendered[INVENTORY].clone());

    assert_eq!(
        printed.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "the fixture prints every contract and the inventory"
    );
    let dir = root.join("schemas");
    let checked_in: BTreeSet<String> = std::fs::read_dir(&dir)
        .expect("schemas/")
        .filter_map(|e| e.ok()?.file_name().to_str().map(str::to_owned))
        .filter(|name| Path::new(name).extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(checked_in, expected.keys().cloned().collect(), "schemas/ holds exactly these files");

    for (file, bytes) in &printed {
        let on_disk = std::fs::read(dir.join(file)).unwrap_or_else(|err| panic!("schemas/{file}: {err}"));
        assert!(
            bytes.as_bytes() == on_disk.as_slice(),
            "schemas/{file} differs from the bytes built with preserve_order on:\n{}",
            schemas::unified_diff(&String::from_utf8_lossy(&on_disk), bytes, &format!("schemas/{file}"))
        );
        assert_eq!(bytes, &expected[file], "{file}: bytes with and without preserve_order");
    }
    println!("{} files identical with and without serde_json/preserve_order", printed.len());
}
