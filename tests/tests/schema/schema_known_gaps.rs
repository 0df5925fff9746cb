//! Known gaps: serde shapes where the schema schemars writes disagrees with serde's output
//! and no post-processing of the schema can repair it, because the schema carries no trace
//! of the attribute. They are kept out of the serde corpus (the other `schema_*.rs` files)
//! and asserted here AS GAPS, each next to a clean control, so that the day schemars fixes
//! one this test fails and the shape moves into the corpus.
//!
//! `#[serde(tag = "…")]` on a struct was such a gap (schemars 1.2 ignores it, so the tag
//! serde writes was an unknown key under `exact`); the derive now refuses it at compile
//! time, see tests/derive-ui/tests/ui/fail/tag-on-struct.rs.

use contract_runtime::ToolOutput;
use serde_json::{json, Value};

#[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Stamp {
    at: chrono::DateTime<chrono::Utc>,
}

/// A flattened map with a key equal to a field name makes serde write the key twice;
/// `to_value` keeps the last one, so the field's value is replaced by the map's.
#[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Clash {
    id: String,
    #[serde(flatten)]
    extra: std::collections::HashMap<String, u32>,
}

/// schemars writes a map with `bool` (`char`, `Uuid`) keys exactly like one with `String`
/// keys, and a flattened `Option<Struct>` with each field optional on its own: the schema
/// keeps no trace of the key type or of the `Option`. On the contract type's own fields
/// the derive sees the types and puts them back (corpus shape
/// `root_fields_typed_by_the_derive` in schema_maps.rs); in nested types
/// `contract_runtime::keys`, `FlatMap` and `AllOrNone` declare them (shapes
/// `typed_key_maps` and `flatten_typed_key_maps` in schema_maps.rs,
/// `flatten_option_all_or_none` in schema_flatten.rs).
/// Without them these payloads, which serde never writes, still pass.
#[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Undeclared {
    inner: UndeclaredInner,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct UndeclaredInner {
    flags: std::collections::BTreeMap<bool, u32>,
    #[serde(flatten)]
    audit: Option<Audit>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Audit {
    created_by: String,
    created_at: u64,
}

#[test]
fn known_gaps_are_still_gaps() {
    let contract = Undeclared::contract();
    let inner = |v: Value| json!({ "inner": v });
    assert!(contract.is_valid(&inner(json!({ "flags": { "maybe": 1 } }))), "a bool map key schemars cannot see");
    assert!(
        contract.is_valid(&inner(json!({ "flags": {}, "created_by": "alice" }))),
        "a partial flattened Option<Struct>"
    );
    // Clean control: what serde writes passes, and an unknown key is still caught.
    let audit = Audit { created_by: "a".into(), created_at: 1 };
    let value = Undeclared { inner: UndeclaredInner { flags: [(true, 1)].into(), audit: Some(audit) } };
    assert!(contract.validate_output(&value).is_ok());
    assert!(!contract.is_valid(&inner(json!({ "flags": {}, "other": 1 }))));

    // chrono writes years outside 0000–9999 with a sign, which is not RFC 3339, so the
    // asserted `date-time` format refuses them (Ajv's and Python's validators do too) …
    let far = serde_json::to_value(Stamp { at: chrono::DateTime::<chrono::Utc>::MAX_UTC }).expect("serializes");
    assert!(far["at"].as_str().is_some_and(|s| s.starts_with('+')), "{far}");
    let report = Stamp::contract().validate(&far).expect_err("out-of-range year");
    assert!(report.violations().iter().any(|v| v.keyword() == "format"), "{report}");
    // … while the last year RFC 3339 can write passes (clean control).
    let end = chrono::DateTime::<chrono::Utc>::from_timestamp(253_402_300_799, 999_999_999).expect("in range");
    assert!(Stamp::contract().validate(&serde_json::to_value(Stamp { at: end }).expect("serializes")).is_ok());

    // A map key that clashes with a field overwrites the field in `to_value`: the output
    // really is broken (`id` lost its string), so refusing it is the right answer …
    let clash = Clash { id: "a".into(), extra: [("id".to_owned(), 5)].into() };
    let value = serde_json::to_value(&clash).expect("serializes");
    assert_eq!(value, json!({ "id": 5 }));
    assert!(Clash::contract().validate(&value).is_err());
    // … while a map key that does not clash passes (clean control).
    let fine = Clash { id: "a".into(), extra: [("other".to_owned(), 5)].into() };
    assert!(Clash::contract().validate_output(&fine).is_ok());
}
