//! Every demo contract (`qe_server::all_contracts()`) against mutations generated from its
//! own schema and real serialized samples (`support/mutations.rs`): a required field
//! deleted, a value of another JSON type, an undeclared value in an `enum` or `const` (a
//! discriminant among them) and, under `exact`, an unknown key must each be rejected;
//! clean controls (the samples, an unknown key under `additive`, reordered keys, an empty
//! array or `null` where the schema allows one, an optional field deleted) must each be
//! accepted. Nothing here is written per contract but the list of samples.

use std::collections::{BTreeMap, BTreeSet};

use contract_runtime::OutputContract;
use serde_json::Value;

use crate::support::mutations;

// ------------------------------------------------------------------------- samples

/// The real serialized instances of every contract, by contract name.
fn samples() -> BTreeMap<&'static str, Vec<Value>> {
    use qe_server::samples as s;
    fn values<T: serde::Serialize>(items: &[T]) -> Vec<Value> {
        items.iter().map(|item| serde_json::to_value(item).expect("a sample serializes")).collect()
    }
    BTreeMap::from([
        ("fleet_status", values(&[s::fleet_status()])),
        ("task_status", values(&s::task_statuses())),
        ("pipeline_status", values(&[s::pipeline_status()])),
        ("quality_assess", values(&[s::quality_assess()])),
        ("security_scan", values(&[s::security_scan()])),
        ("qe/coverage_gaps", values(&[s::coverage_gaps()])),
        ("search_tickets", values(&[s::search_tickets()])),
        ("search_tickets_page", values(&[s::ticket_page()])),
        ("scrape_page", values(&[s::scrape_page()])),
    ])
}

fn contracts() -> Vec<&'static OutputContract> {
    let set = qe_server::all_contracts();
    set.check().unwrap_or_else(|err| panic!("{err}"));
    set.contracts()
}

#[test]
fn every_contract_rejects_generated_mutations_and_accepts_clean_controls() {
    let mut instances = samples();
    let contracts = contracts();
    let names: BTreeSet<&str> = contracts.iter().map(|c| c.name()).collect();
    let sampled: BTreeSet<&str> = instances.keys().copied().collect();
    assert_eq!(names, sampled, "every contract needs real samples here, and every sample set a contract");

    println!("serde_json preserve_order in this build: {}", mutations::serde_json_preserves_order());
    let sets: Vec<(&OutputContract, Vec<Value>)> =
        contracts.iter().map(|c| (*c, instances.remove(c.name()).unwrap_or_default())).collect();
    mutations::run(&sets).assert_clean(&[
        "delete-required",
        "change-type",
        "unknown-enum",
        "unknown-key-exact",
        "sample",
        "unknown-key-additive",
        "reordered-keys",
        "empty-array",
        "null-where-allowed",
    ]);
}
