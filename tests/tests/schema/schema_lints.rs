//! No silent `{}` (a subschema that accepts any value must be declared opaque) and
//! portable formats. Every refusal has a clean control built the same way that must pass,
//! and every fix line a message prints is applied to the refused type and then passes.

#![allow(dead_code, reason = "types here exist for their schemas; most are never constructed")]

use std::collections::{BTreeMap, HashMap};

use contract_runtime::{OutputContract, ToolOutput};
use contract_tools::schemas;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::support::lint_types;
use crate::support::lints;

use lint_types::*;
use lints::{accepted, refusal};

// ------------------------------------------------------------------ a `Value` field

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct TypedPayload {
    url: String,
    payload: BTreeMap<String, u32>,
}

#[test]
fn a_value_field_without_opaque_is_refused_naming_type_field_and_pointer() {
    let err = refusal::<RawPayload>();
    let message = err.to_string();
    assert_eq!(err.type_name(), "RawPayload");
    assert_eq!(err.pointer(), Some("/properties/payload"));
    for part in ["`RawPayload`", "`payload`", "`/properties/payload`", "#[tool_output(opaque)]"] {
        assert!(message.contains(part), "message lacks {part}: {message}");
    }
    // Clean control: the same struct with a concrete type.
    assert!(accepted::<TypedPayload>().opaque_pointers().is_empty());
}

#[test]
fn a_declared_opaque_field_is_accepted_and_listed_in_the_inventory() {
    let contract = accepted::<OpaquePayload>();
    assert_eq!(contract.opaque_pointers(), ["/payload"]);
    // The opaque value may be anything, the rest stays closed under `exact`.
    for payload in [serde_json::json!(null), serde_json::json!([1, "a"]), serde_json::json!({ "any": { "thing": 1 } })]
    {
        let value = serde_json::to_value(OpaquePayload { url: "u".into(), payload }).expect("serializes");
        assert!(contract.validate(&value).is_ok(), "{value}");
    }
    assert!(contract.validate(&serde_json::json!({ "url": "u", "payload": 1, "extra": 1 })).is_err());

    let files = schemas::render(&contract_runtime::contracts![OpaquePayload, TypedPayload]).expect("renders");
    let entry = schemas::inventory_entry(&files, "opaque_payload").expect("listed in the inventory");
    assert_eq!(entry["opaque"], serde_json::json!(["/payload"]));
    // Clean control: a contract without opaque fields lists none.
    let entry = schemas::inventory_entry(&files, "typed_payload").expect("listed in the inventory");
    assert_eq!(entry["opaque"], serde_json::json!([]));
}

// ------------------------------------------------------------------ nested `Value` fields

#[test]
fn a_nested_value_field_needs_the_opaque_transform() {
    let err = refusal::<RawPages>();
    let message = err.to_string();
    assert_eq!(err.pointer(), Some("/$defs/RawPage/properties/metadata"));
    for part in ["`RawPages`", "`metadata`", "`/$defs/RawPage/properties/metadata`", "contract_runtime::opaque"] {
        assert!(message.contains(part), "message lacks {part}: {message}");
    }

    // Clean control: the transform declares it opaque, at every place the type is used.
    let contract = accepted::<OpaquePages>();
    assert_eq!(contract.opaque_pointers(), ["/by_key/*/metadata", "/pages/*/metadata"]);
    let files = schemas::render(&contract_runtime::contracts![OpaquePages]).expect("renders");
    let entry = schemas::inventory_entry(&files, "opaque_pages").expect("listed in the inventory");
    assert_eq!(entry["opaque"], serde_json::json!(["/by_key/*/metadata", "/pages/*/metadata"]));
}

// ------------------------------------------------------------------ maps, options, roots

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct ValueMap {
    labels: HashMap<String, Value>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct TypedMap {
    labels: HashMap<String, String>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct FlattenedTypedMap {
    id: u32,
    #[serde(flatten)]
    rest: BTreeMap<String, bool>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct FlattenedValue {
    id: u32,
    #[serde(flatten)]
    rest: Value,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct FlattenedMaybeValueMap {
    id: u32,
    #[serde(flatten)]
    rest: Option<BTreeMap<String, Value>>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct MaybeValue {
    extra: Option<Value>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct MaybeNumber {
    extra: Option<u32>,
}

/// A flattened `Option` of an enum whose every variant is a `Value`: the `None` branch
/// that schema.rs types as an object must not hide the permissive variant.
#[derive(Serialize, JsonSchema)]
enum Loose {
    Anything(Value),
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct FlattenedLoose {
    id: u32,
    #[serde(flatten)]
    loose: Option<Loose>,
}

#[derive(Serialize, JsonSchema)]
enum Strict {
    Count(u32),
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct FlattenedStrict {
    id: u32,
    #[serde(flatten)]
    strict: Option<Strict>,
}

#[test]
fn maps_and_options_of_value_are_refused() {
    let err = refusal::<ValueMap>();
    assert!(err.to_string().contains("`labels`"), "{err}");
    assert!(err.pointer().is_some_and(|p| p.starts_with("/properties/labels/")), "{err}");
    accepted::<TypedMap>();

    let err = refusal::<FlattenedValueMap>();
    assert!(err.to_string().contains("`FlattenedValueMap`"), "{err}");
    assert!(err.to_string().contains("#[tool_output(opaque)]"), "{err}");
    let err = refusal::<FlattenedValue>();
    assert!(err.to_string().contains("`FlattenedValue`"), "{err}");
    let err = refusal::<FlattenedMaybeValueMap>();
    assert!(err.to_string().contains("`FlattenedMaybeValueMap`"), "{err}");
    accepted::<FlattenedTypedMap>();

    let err = refusal::<MaybeValue>();
    assert!(err.to_string().contains("`MaybeValue`"), "{err}");
    assert!(err.pointer().is_some_and(|p| p.starts_with("/properties/extra")), "{err}");
    accepted::<MaybeNumber>();

    let err = refusal::<FlattenedLoose>();
    assert!(err.to_string().contains("`FlattenedLoose`"), "{err}");
    let strict = accepted::<FlattenedStrict>();
    for value in [FlattenedStrict { id: 1, strict: None }, FlattenedStrict { id: 2, strict: Some(Strict::Count(3)) }] {
        assert!(strict.validate_output(&value).is_ok());
    }
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "additive")]
#[serde(untagged)]
enum EitherAnything {
    Text(String),
    Other(Value),
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "additive")]
#[serde(untagged)]
enum EitherTyped {
    Text(String),
    Other(u32),
}

#[test]
fn a_root_that_accepts_anything_is_refused() {
    let err = refusal::<Anything>();
    assert_eq!(err.pointer(), Some(""));
    assert!(err.to_string().contains("`Anything`") && err.to_string().contains("root"), "{err}");
    accepted::<Numbers>();

    // An untagged branch that accepts anything makes the whole root accept anything.
    let err = refusal::<EitherAnything>();
    assert!(err.to_string().contains("`EitherAnything`"), "{err}");
    accepted::<EitherTyped>();
}

// ------------------------------------------------------------------ formats

/// Formats defined by JSON Schema 2020-12.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Numeric {
    a: u8,
    b: i64,
    c: f32,
    d: f64,
    e: u64,
    at: chrono::DateTime<chrono::Utc>,
}

#[test]
fn only_standard_formats_are_advertised() {
    // The control first: schemars itself writes non-standard formats for these types, so
    // the check below is not vacuous.
    let raw = contract_runtime::schema::settings().into_generator().into_root_schema_for::<Numeric>().to_value();
    let raw_formats = contract_tests::formats(&raw);
    for nonstandard in ["uint8", "int64", "float", "double", "uint64"] {
        assert!(
            raw_formats.iter().any(|f| f == nonstandard),
            "schemars no longer writes `{nonstandard}`: {raw_formats:?}"
        );
    }

    let mut contracts: Vec<&OutputContract> = qe_server::all_contracts().contracts();
    contracts.push(accepted::<Numeric>());
    contracts.push(accepted::<OpaquePayload>());
    contracts.push(accepted::<OpaquePages>());
    let mut seen = Vec::new();
    for contract in &contracts {
        let found = contract_tests::formats(contract.schema());
        for format in &found {
            assert!(STANDARD_FORMATS.contains(&format.as_str()), "`{}` advertises format `{format}`", contract.name());
        }
        seen.extend(found);
    }
    // Standard formats survive (`date-time`); the others are gone, and the integer
    // widths they named are advertised as bounds instead (schemars writes bounds itself
    // only for 8- and 16-bit integers).
    assert!(seen.iter().any(|f| f == "date-time"), "{seen:?}");
    let numeric = accepted::<Numeric>().schema();
    assert_eq!(numeric["properties"]["a"], serde_json::json!({ "type": "integer", "minimum": 0, "maximum": 255 }));
    assert_eq!(
        numeric["properties"]["b"],
        serde_json::json!({ "type": "integer", "minimum": i64::MIN, "maximum": i64::MAX })
    );
    assert_eq!(numeric["properties"]["e"], serde_json::json!({ "type": "integer", "minimum": 0, "maximum": u64::MAX }));
    assert_eq!(numeric["properties"]["c"], serde_json::json!({ "type": "number" }));
}

// ------------------------------------------------------------------ flattened maps

#[test]
fn a_nested_flattened_value_map_is_refused_naming_its_type_and_a_fix_that_works() {
    let err = refusal::<RawCrawl>();
    let message = err.to_string();
    assert_eq!(err.pointer(), Some("/$defs/Upstream/additionalProperties"));
    for part in ["`RawCrawl`", "`Upstream`", "flatten", "#[schemars(with = \"contract_runtime::OpaqueMap\")]"] {
        assert!(message.contains(part), "message lacks {part}: {message}");
    }
    // The fix the message names: the same type with the `with` attribute builds, accepts
    // what serde writes and lists the map's values as opaque.
    let contract = accepted::<OpaqueCrawl>();
    assert_eq!(contract.opaque_pointers(), ["/pages/*/*"]);
    let rest: HashMap<String, Value> = [("x".to_owned(), serde_json::json!({ "deep": [1] }))].into();
    let crawl = OpaqueCrawl { pages: vec![OpaqueUpstream { url: "u".into(), rest }] };
    assert!(contract.validate_output(&crawl).is_ok());
    assert!(!contract.is_valid(&serde_json::json!({ "pages": [{ "x": 1 }] })), "the field next to the map is required");
}

#[test]
fn opaque_on_a_flattened_struct_is_refused() {
    let err = OpaqueFlattenedStruct::try_contract().expect_err("a flattened struct adds no map values");
    let message = err.to_string();
    for part in ["`OpaqueFlattenedStruct`", "flattened", "contract_runtime::opaque"] {
        assert!(message.contains(part), "message lacks {part}: {message}");
    }
}

// ------------------------------------------------------------------ key and flatten helpers

#[derive(Serialize, JsonSchema)]
struct Point {
    x: i32,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct KeysOnNoMap {
    #[schemars(transform = contract_runtime::keys::<bool>)]
    count: u32,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct KeysOfAStruct {
    #[schemars(transform = contract_runtime::keys::<Point>)]
    by_point: BTreeMap<String, u32>,
}

#[derive(Serialize, JsonSchema)]
enum Mode {
    Fast,
    Slow,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct AllOrNoneOfAnEnum {
    id: u32,
    #[serde(flatten)]
    #[schemars(with = "contract_runtime::AllOrNone<Mode>")]
    mode: Option<Mode>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct KeysOnAMap {
    #[schemars(transform = contract_runtime::keys::<bool>)]
    flags: Option<Vec<BTreeMap<bool, u32>>>,
}

#[test]
fn a_helper_put_where_it_cannot_work_refuses_the_contract() {
    for (err, part) in [
        (KeysOnNoMap::try_contract().expect_err("no map"), "holds no map"),
        (KeysOfAStruct::try_contract().expect_err("struct keys"), "keys::<Point>"),
        (AllOrNoneOfAnEnum::try_contract().expect_err("not a struct"), "AllOrNone<Mode>"),
    ] {
        let message = err.to_string();
        assert!(message.contains(part), "message lacks {part}: {message}");
        assert!(err.pointer().is_some(), "{message}");
    }
    // Clean control: `keys` finds the map inside `Option` and `Vec`.
    let contract = accepted::<KeysOnAMap>();
    let flags = KeysOnAMap { flags: Some(vec![[(true, 1), (false, 2)].into(), BTreeMap::new()]) };
    assert!(contract.validate_output(&flags).is_ok());
    assert!(contract.validate_output(&KeysOnAMap { flags: None }).is_ok());
    assert!(!contract.is_valid(&serde_json::json!({ "flags": [{ "yes": 1 }] })));
}
