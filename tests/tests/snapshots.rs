//! Snapshot tests of every demo contract's canonical schema and of the inventory, and a
//! byte-for-byte check of the checked-in `schemas/` folder.
//!
//! The snapshots live in `tests/tests/snapshots/<file stem>.snap` (`qe/coverage_gaps`
//! is stored as `qe__coverage_gaps.snap`, after its portable schema file name). A
//! contract change shows up here as a reviewable snapshot diff; once the change is
//! intended, regenerate with
//!
//! ```text
//! INSTA_UPDATE=always cargo test -p contract-tests --test snapshots
//! ```
//!
//! and review the `.snap` diff before committing. With `CI=true` insta only asserts and
//! never writes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use contract_runtime::snapshot::{self, INVENTORY};
use contract_runtime::OutputContract;
use serde_json::Value;

fn contracts() -> Vec<&'static OutputContract> {
    qe_server::all_contracts().into_iter().map(|c| c.unwrap_or_else(|err| panic!("{err}"))).collect()
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the tests crate sits in the workspace").to_path_buf()
}

/// The snapshot name of a schemas file: its portable file name without `.json`.
fn snapshot_name(file: &str) -> &str {
    file.strip_suffix(".json").unwrap_or_else(|| panic!("schema file `{file}` does not end in .json"))
}

fn insta_settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings
}

#[test]
fn canonical_schema_of_every_contract() {
    let contracts = contracts();
    assert!(!contracts.is_empty());
    insta_settings().bind(|| {
        for contract in contracts {
            let file = snapshot::file_name(contract.name());
            let text = std::str::from_utf8(contract.canonical_bytes()).expect("canonical bytes are UTF-8");
            insta::assert_snapshot!(snapshot_name(&file), text);
        }
    });
}

#[test]
fn inventory() {
    let files = snapshot::render(&qe_server::all_contracts()).unwrap_or_else(|err| panic!("{err}"));
    insta_settings().bind(|| insta::assert_snapshot!(snapshot_name(INVENTORY), files[INVENTORY].as_str()));
}

/// Every `.snap` file this test file wrote belongs to a current contract or to the
/// inventory, so a renamed or removed contract cannot leave a stale snapshot behind.
/// Snapshots of other test files (insta's header names their source) are not ours to judge.
#[test]
fn no_orphan_snapshots() {
    let mut expected: BTreeSet<String> =
        contracts().iter().map(|c| snapshot_name(&snapshot::file_name(c.name())).to_owned()).collect();
    expected.insert(snapshot_name(INVENTORY).to_owned());
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let mut found = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|err| panic!("{}: {err}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".snap")) else {
            continue;
        };
        let text = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        let header = text.split("\n---\n").next().unwrap_or_default();
        if header.lines().any(|line| line.trim() == "source: tests/tests/snapshots.rs") {
            found.insert(name.to_owned());
        }
    }
    assert_eq!(found, expected, "tests/tests/snapshots/*.snap from this file must match the contracts one to one");
}

#[test]
fn sha256_is_the_real_sha256() {
    // FIPS 180-2 test vectors, so the inventory check below does not merely compare one
    // implementation with itself.
    assert_eq!(
        contract_runtime::schema::sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(
        contract_runtime::schema::sha256_hex(b""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}

#[test]
fn checked_in_schema_bytes_and_inventory_hashes() {
    let dir = workspace().join("schemas");
    let read = |file: &str| std::fs::read(dir.join(file)).unwrap_or_else(|err| panic!("schemas/{file}: {err}"));
    let contracts = contracts();

    for contract in &contracts {
        let file = snapshot::file_name(contract.name());
        let bytes = read(&file);
        assert!(
            bytes == contract.canonical_bytes(),
            "schemas/{file} differs from {}'s canonical bytes; run `cargo xtask schemas` and commit",
            contract.name()
        );
        assert!(bytes.ends_with(b"}\n") && !bytes.contains(&b'\r'), "schemas/{file}: LF line ends, trailing newline");
    }

    let inventory: Value = serde_json::from_slice(&read(INVENTORY)).expect("inventory.json is JSON");
    let entries = inventory["contracts"].as_array().expect("inventory.json has a `contracts` array");
    let listed: BTreeSet<&str> = entries.iter().map(|e| e["name"].as_str().expect("a name")).collect();
    let declared: BTreeSet<&str> = contracts.iter().map(|c| c.name()).collect();
    assert_eq!(listed, declared, "inventory.json lists exactly the declared contracts");

    for entry in entries {
        let name = entry["name"].as_str().expect("a name");
        let contract = contracts.iter().find(|c| c.name() == name).expect("listed contracts are declared");
        let file = entry["file"].as_str().expect("a file");
        assert_eq!(file, snapshot::file_name(name), "{name}: file name");
        assert!(!file.contains('/') && !file.contains('\\'), "{name}: `{file}` is not a portable file name");
        let sha256 = entry["sha256"].as_str().expect("a sha256");
        assert_eq!(sha256, contract_runtime::schema::sha256_hex(&read(file)), "{name}: sha256 of schemas/{file}");
        assert_eq!(sha256, contract.sha256(), "{name}: sha256 of the contract");
        assert_eq!(entry["version"], contract.version().to_string(), "{name}: version");
        assert_eq!(entry["compatibility"], contract.compatibility().as_str(), "{name}: compatibility");
    }
}
