//! Run-time contracts read from checked-in files (`ContractSet::load_dir`,
//! `OutputContract::from_file`): the checked-in `schemas/` itself loads with the very
//! identities the derived types have, and each kind of bad file — not canonical, not
//! JSON, a silent `{}`, a hash the inventory does not declare, a bad version, a file no
//! entry claims — is refused naming the file and the JSON pointer. Each refusal has its
//! clean control, and each fix a message names is applied and then passes. The same
//! folders go through `cargo xtask schemas --runtime-dir`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use contract_runtime::schema::{canonical_string, sha256_hex};
use contract_runtime::{ContractSet, OutputContract};
use contract_tools::schemas;
use serde_json::{json, Value};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

fn fixtures() -> PathBuf {
    workspace().join("tests/fixtures/dynamic")
}

/// A fresh copy of the fixture folder, to break one way.
fn copy_of_fixtures(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("runtime-contracts").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    for file in ["weather.json", "inventory.json"] {
        std::fs::copy(fixtures().join(file), dir.join(file)).expect("copy a fixture");
    }
    dir
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("JSON")
}

fn write_canonical(path: &Path, value: &Value) {
    std::fs::write(path, canonical_string(value)).expect("write");
}

/// Edits the one inventory entry of a fixture copy.
fn edit_entry(dir: &Path, edit: impl FnOnce(&mut Value)) {
    let path = dir.join("inventory.json");
    let mut inventory = read_json(&path);
    edit(&mut inventory["contracts"][0]);
    write_canonical(&path, &inventory);
}

/// The one problem loading `dir` reports, as (file, pointer, message).
fn the_problem(dir: &Path) -> (String, Option<String>, String) {
    let err = ContractSet::load_dir(dir).expect_err("the folder is refused");
    assert_eq!(err.problems().len(), 1, "{err}");
    let problem = &err.problems()[0];
    // The display form names the file and the pointer too.
    assert!(err.to_string().starts_with(problem.file()), "{err}");
    match problem.pointer() {
        Some("") => assert!(err.to_string().contains(": at the root: "), "{err}"),
        Some(pointer) => assert!(err.to_string().contains(&format!(": at `{pointer}`: ")), "{err}"),
        None => {}
    }
    (problem.file().to_owned(), problem.pointer().map(str::to_owned), problem.message().to_owned())
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn the_checked_in_schemas_folder_loads_with_the_identities_of_the_derived_types() {
    let loaded = ContractSet::load_dir(workspace().join("schemas")).unwrap_or_else(|err| panic!("{err}"));
    let derived = qe_server::contracts::all_contracts();
    assert_eq!(loaded.contracts().len(), derived.contracts().len());
    for contract in derived.contracts() {
        let from_file = loaded.get(contract.name()).unwrap_or_else(|| panic!("`{}` was not loaded", contract.name()));
        assert_eq!(from_file.id(), contract.id(), "{}", contract.name());
        assert_eq!(from_file.compatibility(), contract.compatibility(), "{}", contract.name());
        assert_eq!(from_file.schema(), contract.schema(), "{}", contract.name());
        assert_eq!(from_file.canonical_bytes(), contract.canonical_bytes(), "{}", contract.name());
        assert_eq!(from_file.sensitive_pointers(), contract.sensitive_pointers(), "{}", contract.name());
        assert_eq!(from_file.opaque_pointers(), contract.opaque_pointers(), "{}", contract.name());
        assert_eq!(from_file.type_name(), contract.type_name(), "{}", contract.name());
    }
    // Loading again gives the same contracts, not new copies.
    let again = ContractSet::load_dir(workspace().join("schemas")).expect("loads again");
    for contract in loaded.contracts() {
        assert!(std::ptr::eq(contract, again.get(contract.name()).expect("there")), "{}", contract.name());
    }
}

#[test]
fn the_fixture_loads_from_the_folder_and_from_its_file_and_validates() {
    let set = ContractSet::load_dir(fixtures()).unwrap_or_else(|err| panic!("{err}"));
    set.check().expect("one contract, bound once");
    let weather = set.get("weather").expect("bound to the tool of its name");
    let from_file = OutputContract::from_file(fixtures().join("weather.json")).expect("the same file alone");
    assert!(std::ptr::eq(weather, from_file));
    assert_eq!(weather.opaque_pointers(), ["/raw"]);
    assert_eq!(weather.type_name(), "registry: weather");
    assert!(weather.validate(&json!({ "city": "Lisbon", "celsius": 21.5, "raw": [1, { "x": null }] })).is_ok());
    let report = weather.validate(&json!({ "city": "Lisbon", "celsius": 99, "wind": 3 })).unwrap_err();
    let mut found: Vec<_> = report.violations().iter().map(|v| (v.pointer(), v.keyword())).collect();
    found.sort_unstable();
    assert_eq!(found, [("", "additionalProperties"), ("/celsius", "maximum")]);
}

#[test]
fn a_file_not_in_canonical_form_is_refused_at_the_first_pointer_that_differs_until_it_is_rewritten() {
    let dir = copy_of_fixtures("not-canonical");
    let file = dir.join("weather.json");
    let text = std::fs::read_to_string(&file).expect("read");
    // One line indented by three spaces instead of four: the same JSON, the same hash.
    let bent = text.replacen("    \"celsius\": {", "   \"celsius\": {", 1);
    assert_ne!(bent, text);
    std::fs::write(&file, &bent).expect("write");
    let (at, pointer, message) = the_problem(&dir);
    assert_eq!(at, shown(&file));
    assert_eq!(pointer.as_deref(), Some("/properties/celsius"));
    assert!(message.contains("not in canonical form") && message.contains("canonical_string"), "{message}");

    // So is the whole schema on one line: it differs from its first line, the root's.
    std::fs::write(&file, read_json(&file).to_string()).expect("write");
    let (_, pointer, message) = the_problem(&dir);
    assert_eq!(pointer.as_deref(), Some(""));
    assert!(message.contains("line 1 "), "{message}");

    // The fix the message names: write it as `canonical_string` does.
    write_canonical(&file, &read_json(&file));
    ContractSet::load_dir(&dir).unwrap_or_else(|err| panic!("{err}"));
}

#[test]
fn a_file_that_is_not_json_is_refused_with_its_line_and_column() {
    let dir = copy_of_fixtures("not-json");
    let file = dir.join("weather.json");
    let text = std::fs::read_to_string(&file).expect("read");
    std::fs::write(&file, text.replacen("\"city\": {", "\"city\" {", 1)).expect("write");
    let (at, pointer, message) = the_problem(&dir);
    assert_eq!(at, shown(&file));
    assert_eq!(pointer, None);
    let line = text.lines().position(|l| l.contains("\"city\": {")).expect("the line") + 1;
    assert!(message.starts_with(&format!("line {line} column ")) && message.contains("not valid JSON"), "{message}");
    // Control: the untouched fixture.
    ContractSet::load_dir(fixtures()).expect("the fixture loads");
}

#[test]
fn a_silent_any_value_is_refused_at_its_schema_pointer_until_the_inventory_declares_it_opaque() {
    let dir = copy_of_fixtures("silent-any");
    edit_entry(&dir, |entry| entry["opaque"] = json!([]));
    let (at, pointer, message) = the_problem(&dir);
    assert_eq!(at, shown(&dir.join("weather.json")));
    assert_eq!(pointer.as_deref(), Some("/properties/raw"));
    assert!(message.contains("silent `{}`") && message.contains("`opaque`"), "{message}");

    // Through a `$ref`: the pointer is where the permissive schema is written.
    let file = dir.join("weather.json");
    let mut schema = read_json(&file);
    schema["$defs"] = json!({ "Raw": { "description": "Anything." } });
    schema["properties"]["raw"] = json!({ "$ref": "#/$defs/Raw" });
    let canonical = canonical_string(&schema);
    std::fs::write(&file, &canonical).expect("write");
    edit_entry(&dir, |entry| entry["sha256"] = json!(sha256_hex(canonical.as_bytes())));
    let (_, pointer, _) = the_problem(&dir);
    assert_eq!(pointer.as_deref(), Some("/$defs/Raw"));

    // The fix the message names: declare the instance pointer opaque.
    edit_entry(&dir, |entry| entry["opaque"] = json!(["/raw"]));
    let set = ContractSet::load_dir(&dir).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(set.get("weather").expect("loaded").opaque_pointers(), ["/raw"]);

    // A root that accepts anything is refused whatever is declared.
    std::fs::write(&file, "{}\n").expect("write");
    edit_entry(&dir, |entry| entry["sha256"] = json!(sha256_hex(b"{}\n")));
    let (_, pointer, message) = the_problem(&dir);
    assert_eq!(pointer.as_deref(), Some(""));
    assert!(message.contains("root schema accepts any JSON value"), "{message}");
}

#[test]
fn a_schema_changed_without_its_declared_hash_is_refused_at_the_inventory_pointer_until_declared() {
    let dir = copy_of_fixtures("hash-mismatch");
    let file = dir.join("weather.json");
    let mut schema = read_json(&file);
    schema["properties"]["celsius"]["maximum"] = json!(70);
    write_canonical(&file, &schema);
    let (at, pointer, message) = the_problem(&dir);
    assert_eq!(at, shown(&dir.join("inventory.json")));
    assert_eq!(pointer.as_deref(), Some("/contracts/0/sha256"));
    let new_hash = sha256_hex(canonical_string(&schema).as_bytes());
    assert!(message.contains(&new_hash) && message.contains(&shown(&file)), "{message}");

    // The fix the message names: declare the new hash (with the version its change needs).
    edit_entry(&dir, |entry| {
        entry["sha256"] = json!(new_hash);
        entry["version"] = json!("2.0.0");
    });
    let set = ContractSet::load_dir(&dir).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(set.get("weather").expect("loaded").sha256(), new_hash);
}

#[test]
fn a_schema_that_does_not_compile_is_refused_naming_the_file() {
    let dir = copy_of_fixtures("does-not-compile");
    let file = dir.join("weather.json");
    let mut schema = read_json(&file);
    schema["properties"]["city"] = json!({ "type": "text" });
    let canonical = canonical_string(&schema);
    std::fs::write(&file, &canonical).expect("write");
    edit_entry(&dir, |entry| entry["sha256"] = json!(sha256_hex(canonical.as_bytes())));
    let (at, _, message) = the_problem(&dir);
    assert_eq!(at, shown(&file));
    assert!(message.contains("not a JSON Schema 2020-12"), "{message}");
    // Control: a type that exists.
    schema["properties"]["city"] = json!({ "type": "string", "minLength": 1 });
    let canonical = canonical_string(&schema);
    std::fs::write(&file, &canonical).expect("write");
    edit_entry(&dir, |entry| entry["sha256"] = json!(sha256_hex(canonical.as_bytes())));
    ContractSet::load_dir(&dir).unwrap_or_else(|err| panic!("{err}"));
}

#[test]
fn inventory_mistakes_are_refused_at_their_pointer() {
    let dir = copy_of_fixtures("inventory");
    let inventory = shown(&dir.join("inventory.json"));
    for (field, value, expected) in [
        ("version", json!("1.0"), "not a semver version"),
        ("compatibility", json!("loose"), "expected \"exact\" or \"additive\""),
        ("opaque", json!(["raw"]), "expected JSON pointers"),
    ] {
        let original = read_json(&fixtures().join("inventory.json"))["contracts"][0][field].clone();
        edit_entry(&dir, |entry| entry[field] = value);
        let (at, pointer, message) = the_problem(&dir);
        assert_eq!(at, inventory, "{field}");
        assert_eq!(pointer.as_deref(), Some(format!("/contracts/0/{field}").as_str()), "{field}");
        assert!(message.contains(expected), "{field}: {message}");
        // Control: the field restored.
        edit_entry(&dir, |entry| entry[field] = original);
        ContractSet::load_dir(&dir).unwrap_or_else(|err| panic!("{field}: {err}"));
    }
}

#[test]
fn a_file_no_entry_claims_and_a_missing_inventory_are_refused_by_name() {
    let dir = copy_of_fixtures("orphan");
    let orphan = dir.join("stray.json");
    std::fs::copy(dir.join("weather.json"), &orphan).expect("copy");
    let (at, pointer, message) = the_problem(&dir);
    assert_eq!((at, pointer), (shown(&orphan), None));
    assert!(message.contains("no entry of") && message.contains("claims this file"), "{message}");
    std::fs::remove_file(&orphan).expect("remove");
    ContractSet::load_dir(&dir).expect("without the stray file");

    std::fs::remove_file(dir.join("inventory.json")).expect("remove");
    let (at, _, message) = the_problem(&dir);
    assert_eq!(at, shown(&dir.join("inventory.json")));
    assert!(message.contains("lists its contracts in inventory.json"), "{message}");
    let err = OutputContract::from_file(dir.join("weather.json")).unwrap_err();
    assert_eq!(err.problems()[0].file(), shown(&dir.join("inventory.json")), "{err}");
}

#[test]
fn cargo_xtask_schemas_checks_a_runtime_folder_when_asked_and_never_writes_it() {
    let schemas = Path::new(env!("CARGO_TARGET_TMPDIR")).join("runtime-contracts").join("schemas");
    let _ = std::fs::remove_dir_all(&schemas);
    let set = qe_server::contracts::all_contracts();
    schemas::write(&schemas, &set).expect("the derived folder");
    let run = |runtime: &Path, check: bool| {
        let (schemas, runtime) = (schemas.display().to_string(), runtime.display().to_string());
        let mut args = vec!["xtask", "schemas", "--dir", schemas.as_str(), "--runtime-dir", runtime.as_str()];
        if check {
            args.push("--check");
        }
        contract_tools::cli::run(args, &set)
    };
    // Control: the fixture folder passes, in both modes.
    assert_eq!(schemas::check_runtime_dir(&fixtures()), Ok(1));
    assert_eq!(run(&fixtures(), true), ExitCode::SUCCESS);
    assert_eq!(run(&fixtures(), false), ExitCode::SUCCESS);

    let dir = copy_of_fixtures("xtask");
    edit_entry(&dir, |entry| entry["opaque"] = json!([]));
    let before = std::fs::read(dir.join("weather.json")).expect("read");
    let err = schemas::check_runtime_dir(&dir).unwrap_err();
    assert!(err.to_string().contains("weather.json: at `/properties/raw`"), "{err}");
    assert_eq!(run(&dir, true), ExitCode::FAILURE);
    assert_eq!(run(&dir, false), ExitCode::FAILURE, "writing checks it too");
    assert_eq!(std::fs::read(dir.join("weather.json")).expect("read"), before, "the folder was written");
}
