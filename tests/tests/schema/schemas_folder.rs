//! The checked-in `schemas/` folder is the golden set of every demo contract: each file
//! holds exactly the contract's canonical bytes and the inventory lists exactly the
//! contracts, with the real SHA-256 of each file. (`cargo xtask schemas --check` shows a
//! drift as a classified diff; this test pins the bytes and hashes independently.)

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use contract_runtime::OutputContract;
use contract_tools::schemas::{self, INVENTORY};
use serde_json::Value;

fn contracts() -> Vec<&'static OutputContract> {
    let set = qe_server::all_contracts();
    set.check().unwrap_or_else(|err| panic!("{err}"));
    set.contracts()
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the tests crate sits in the workspace").to_path_buf()
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
        let file = schemas::file_name(contract.name());
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
        assert_eq!(file, schemas::file_name(name), "{name}: file name");
        assert!(!file.contains('/') && !file.contains('\\'), "{name}: `{file}` is not a portable file name");
        let sha256 = entry["sha256"].as_str().expect("a sha256");
        assert_eq!(sha256, contract_runtime::schema::sha256_hex(&read(file)), "{name}: sha256 of schemas/{file}");
        assert_eq!(sha256, contract.sha256(), "{name}: sha256 of the contract");
        assert_eq!(entry["version"], contract.version().to_string(), "{name}: version");
        assert_eq!(entry["compatibility"], contract.compatibility().as_str(), "{name}: compatibility");
    }
}
