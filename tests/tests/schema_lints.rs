//! No silent `{}` (a subschema that accepts any value must be declared opaque) and
//! portable formats. Every refusal has a clean control built the same way that must pass,
//! and every fix line a message prints is applied to the refused type and then passes.

#![allow(dead_code, reason = "types here exist for their schemas; most are never constructed")]

use std::collections::{BTreeMap, HashMap};

use contract_runtime::{ContractError, OutputContract, ToolOutput};
use contract_tools::snapshot;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// The refusal of `T`, or a panic naming what was accepted. Only the "accepts anything"
/// lints carry a schema pointer, so a refusal for another reason fails here too.
fn refusal<T: ToolOutput>() -> ContractError {
    match T::try_contract() {
        Ok(contract) => panic!("`{}` must be refused, got {}", contract.type_name(), contract.id()),
        Err(err) if err.pointer().is_some() && err.to_string().contains("any JSON value") => err,
        Err(err) => panic!("refused for another reason than the lint: {err}"),
    }
}

fn accepted<T: ToolOutput>() -> &'static OutputContract {
    T::try_contract().unwrap_or_else(|err| panic!("must be accepted: {err}"))
}

// ------------------------------------------------------------------ a `Value` field

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct RawPayload {
    url: String,
    payload: Value,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct TypedPayload {
    url: String,
    payload: BTreeMap<String, u32>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact", name = "opaque_payload")]
struct OpaquePayload {
    url: String,
    #[tool_output(opaque)]
    payload: Value,
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

    let files = snapshot::render(&contract_runtime::contracts![OpaquePayload, TypedPayload]).expect("renders");
    let entry = snapshot::inventory_entry(&files, "opaque_payload").expect("listed in the inventory");
    assert_eq!(entry["opaque"], serde_json::json!(["/payload"]));
    // Clean control: a contract without opaque fields lists none.
    let entry = snapshot::inventory_entry(&files, "typed_payload").expect("listed in the inventory");
    assert_eq!(entry["opaque"], serde_json::json!([]));
}

// ------------------------------------------------------------------ nested `Value` fields

#[derive(Serialize, JsonSchema)]
struct RawPage {
    url: String,
    metadata: Value,
}

#[derive(Serialize, JsonSchema)]
struct OpaquePage {
    url: String,
    #[schemars(transform = contract_runtime::opaque)]
    metadata: Value,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "additive")]
struct RawPages {
    pages: Vec<RawPage>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "additive", name = "opaque_pages")]
struct OpaquePages {
    pages: Vec<OpaquePage>,
    by_key: BTreeMap<String, OpaquePage>,
}

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
    let files = snapshot::render(&contract_runtime::contracts![OpaquePages]).expect("renders");
    let entry = snapshot::inventory_entry(&files, "opaque_pages").expect("listed in the inventory");
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

/// Written with an alias, so that the derive cannot see the map of `Value` and the
/// refusal comes from building the contract.
type Bag = BTreeMap<String, Value>;

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct FlattenedValueMap {
    id: u32,
    #[serde(flatten)]
    rest: Bag,
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
#[serde(transparent)]
struct Anything(Value);

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "additive")]
#[serde(transparent)]
struct Numbers(Vec<u32>);

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

#[derive(Serialize, JsonSchema)]
struct Upstream {
    url: String,
    #[serde(flatten)]
    rest: HashMap<String, Value>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct RawCrawl {
    pages: Vec<Upstream>,
}

#[derive(Serialize, JsonSchema)]
struct OpaqueUpstream {
    url: String,
    #[serde(flatten)]
    #[schemars(with = "contract_runtime::OpaqueMap")]
    rest: HashMap<String, Value>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct OpaqueCrawl {
    pages: Vec<OpaqueUpstream>,
}

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

#[derive(Serialize, JsonSchema)]
struct Meta {
    source: String,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct OpaqueFlattenedStruct {
    id: u32,
    #[serde(flatten)]
    #[tool_output(opaque)]
    meta: Meta,
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

// ------------------------------------------------------------------ every fix line, applied

/// One fix line a message prints: `Bad` is refused with a message that contains `fix` at
/// schema pointer `pointer`; `good`, the same type written as the message says, builds,
/// accepts what serde writes for it and is listed in the inventory with `opaque`.
fn fix_line_works<Bad: ToolOutput, Good: ToolOutput>(fix: &str, pointer: Option<&str>, good: &Good, opaque: &[&str]) {
    let err = Bad::try_contract().map(|c| c.id().to_string()).expect_err("the type without the fix is refused");
    let message = err.to_string();
    assert!(message.contains(fix), "message lacks the fix `{fix}`: {message}");
    assert_eq!(err.pointer(), pointer, "{message}");

    let contract = Good::try_contract().unwrap_or_else(|err| panic!("the fixed type must build: {err}"));
    let written = serde_json::to_value(good).expect("serializes");
    assert!(contract.validate_output(good).is_ok(), "the fixed type refuses {written}: {}", contract.schema());
    assert_eq!(contract.opaque_pointers(), opaque);
    let files = snapshot::render(&contract_runtime::ContractSet::new().with::<Good>()).expect("renders");
    let entry = snapshot::inventory_entry(&files, contract.name()).expect("listed in the inventory");
    assert_eq!(entry["opaque"], serde_json::json!(opaque));
}

fn any_types(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": ["object", "array", "string", "number", "boolean", "null"] })
}

fn any_types_with_integer(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": ["object", "array", "string", "number", "integer", "boolean", "null"] })
}

fn any_of_types(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "anyOf": [
        { "type": "object" }, { "type": "array" }, { "type": "string" }, { "type": "number" },
        { "type": "boolean" }, { "type": "null" },
    ] })
}

fn one_of_types(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "oneOf": [
        { "type": "object" }, { "type": "array" }, { "type": "string" }, { "type": "integer" },
        { "type": "number" }, { "type": "boolean" }, { "type": "null" },
    ] })
}

/// A realistic upstream value: an object several levels deep.
fn upstream() -> Value {
    serde_json::json!({ "id": "a1", "attributes": { "tags": ["x", "y"], "score": 0.5, "owner": null } })
}

/// For each "any JSON value" spelling: a newtype the lint refuses, its fix (the transform
/// on the type), a contract type using each, and a root field spelled inline.
macro_rules! any_value_spelling {
    ($test:ident, $schema:literal, $plain:ident, $declared:ident, $bad:ident, $good:ident, $bad_field:ident, $good_field:ident) => {
        #[derive(Serialize, JsonSchema)]
        #[serde(transparent)]
        struct $plain(#[schemars(schema_with = $schema)] Value);

        #[derive(Serialize, JsonSchema)]
        #[serde(transparent)]
        #[schemars(transform = contract_runtime::opaque)]
        struct $declared(#[schemars(schema_with = $schema)] Value);

        #[derive(Serialize, JsonSchema, ToolOutput)]
        #[tool_output(version = "1.0.0", compatibility = "exact")]
        struct $bad {
            id: u32,
            data: $plain,
        }

        #[derive(Serialize, JsonSchema, ToolOutput)]
        #[tool_output(version = "1.0.0", compatibility = "exact")]
        struct $good {
            id: u32,
            data: $declared,
        }

        #[derive(Serialize, JsonSchema, ToolOutput)]
        #[tool_output(version = "1.0.0", compatibility = "exact")]
        struct $bad_field {
            id: u32,
            #[schemars(schema_with = $schema)]
            data: Value,
        }

        #[derive(Serialize, JsonSchema, ToolOutput)]
        #[tool_output(version = "1.0.0", compatibility = "exact")]
        struct $good_field {
            id: u32,
            #[tool_output(opaque)]
            #[schemars(schema_with = $schema)]
            data: Value,
        }

        #[test]
        fn $test() {
            let fix =
                concat!("`#[schemars(transform = contract_runtime::opaque)]` on the type `", stringify!($plain), "`");
            let pointer = concat!("/$defs/", stringify!($plain));
            fix_line_works::<$bad, $good>(
                fix,
                Some(pointer),
                &$good { id: 1, data: $declared(upstream()) },
                &["/data"],
            );
            let fix = concat!("`#[tool_output(opaque)]` on field `data` of `", stringify!($bad_field), "`");
            let good = $good_field { id: 1, data: upstream() };
            fix_line_works::<$bad_field, $good_field>(fix, Some("/properties/data"), &good, &["/data"]);
        }
    };
}

any_value_spelling!(
    an_any_type_list_is_unconstrained_and_its_fix_works,
    "any_types",
    AnyTypes,
    OpaqueAnyTypes,
    RawAnyTypes,
    DeclaredAnyTypes,
    RawAnyTypesField,
    DeclaredAnyTypesField
);
any_value_spelling!(
    an_any_type_list_with_integer_is_unconstrained_and_its_fix_works,
    "any_types_with_integer",
    AnyTypesInt,
    OpaqueAnyTypesInt,
    RawAnyTypesInt,
    DeclaredAnyTypesInt,
    RawAnyTypesIntField,
    DeclaredAnyTypesIntField
);
any_value_spelling!(
    an_any_of_every_type_is_unconstrained_and_its_fix_works,
    "any_of_types",
    AnyOfTypes,
    OpaqueAnyOfTypes,
    RawAnyOfTypes,
    DeclaredAnyOfTypes,
    RawAnyOfTypesField,
    DeclaredAnyOfTypesField
);
any_value_spelling!(
    a_one_of_every_type_is_unconstrained_and_its_fix_works,
    "one_of_types",
    OneOfTypes,
    OpaqueOneOfTypes,
    RawOneOfTypes,
    DeclaredOneOfTypes,
    RawOneOfTypesField,
    DeclaredOneOfTypesField
);

/// Clean control for the spellings above: a type list that leaves one type out
/// constrains the value, and the lint lets it through.
fn all_but_null(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": ["object", "array", "string", "number", "boolean"] })
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "additive")]
struct AllButNull {
    #[schemars(schema_with = "all_but_null")]
    data: Value,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "additive")]
#[serde(transparent)]
struct AnyRoot(#[schemars(schema_with = "any_types")] Value);

#[test]
fn a_type_list_short_of_one_type_is_not_any_value_and_an_any_value_root_is_refused() {
    let contract = accepted::<AllButNull>();
    assert!(!contract.is_valid(&serde_json::json!({ "data": null })));
    assert!(contract.is_valid(&serde_json::json!({ "data": { "a": 1 } })));
    let err = refusal::<AnyRoot>();
    assert_eq!(err.pointer(), Some(""));
    // The fix line of that message, applied: a concrete type.
    fix_line_works::<AnyRoot, Numbers>("give the result a concrete type", Some(""), &Numbers(vec![1, 2]), &[]);
    fix_line_works::<Anything, Numbers>("give the result a concrete type", Some(""), &Numbers(vec![]), &[]);
}

#[test]
fn the_fix_lines_for_value_fields_work() {
    let good = OpaquePayload { url: "u".into(), payload: upstream() };
    let fix = "`#[tool_output(opaque)]` on field `payload` of `RawPayload`";
    fix_line_works::<RawPayload, OpaquePayload>(fix, Some("/properties/payload"), &good, &["/payload"]);

    let page = || OpaquePage { url: "u".into(), metadata: upstream() };
    let good = OpaquePages { pages: vec![page()], by_key: [("k".to_owned(), page())].into() };
    let fix = "`#[schemars(transform = contract_runtime::opaque)]` on field `metadata` of `RawPage`";
    let pointer = Some("/$defs/RawPage/properties/metadata");
    fix_line_works::<RawPages, OpaquePages>(fix, pointer, &good, &["/by_key/*/metadata", "/pages/*/metadata"]);
}

#[derive(Serialize, JsonSchema)]
enum RawEvent {
    Page { url: String, meta: Value },
}

#[derive(Serialize, JsonSchema)]
enum OpaqueEvent {
    Page {
        url: String,
        #[schemars(transform = contract_runtime::opaque)]
        meta: Value,
    },
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct RawEvents {
    events: Vec<RawEvent>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct OpaqueEvents {
    events: Vec<OpaqueEvent>,
}

#[derive(Serialize, JsonSchema)]
enum RawCell {
    Raw(Value),
    Count(u32),
}

#[derive(Serialize, JsonSchema)]
enum OpaqueCell {
    Raw(#[schemars(transform = contract_runtime::opaque)] Value),
    Count(u32),
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct RawCells {
    cells: Vec<RawCell>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct OpaqueCells {
    cells: Vec<OpaqueCell>,
}

/// A root enum: `#[tool_output(opaque)]` is not allowed on a variant's field (the derive
/// says to write the transform instead, as here).
#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
enum Reply {
    Page {
        url: String,
        #[schemars(transform = contract_runtime::opaque)]
        meta: Value,
    },
}

#[test]
fn the_fix_lines_for_variant_fields_work() {
    let good = OpaqueEvents { events: vec![OpaqueEvent::Page { url: "u".into(), meta: upstream() }] };
    let fix = "`#[schemars(transform = contract_runtime::opaque)]` on field `meta` of `RawEvent`";
    let pointer = Some("/$defs/RawEvent/oneOf/0/properties/Page/properties/meta");
    fix_line_works::<RawEvents, OpaqueEvents>(fix, pointer, &good, &["/events/*/Page/meta"]);

    let good = OpaqueCells { cells: vec![OpaqueCell::Raw(upstream()), OpaqueCell::Count(3)] };
    let fix = "for a newtype variant `Raw`, on its one field";
    fix_line_works::<RawCells, OpaqueCells>(
        fix,
        Some("/$defs/RawCell/oneOf/0/properties/Raw"),
        &good,
        &["/cells/*/Raw"],
    );

    let contract = accepted::<Reply>();
    assert_eq!(contract.opaque_pointers(), ["/Page/meta"]);
    assert!(contract.validate_output(&Reply::Page { url: "u".into(), meta: upstream() }).is_ok());
}

/// A nested type whose only field is a flattened map of `Value`: its schema has no
/// properties, only the map's values.
#[derive(Serialize, JsonSchema)]
struct OnlyExtra {
    #[serde(flatten)]
    extra: serde_json::Map<String, Value>,
}

#[derive(Serialize, JsonSchema)]
struct OnlyExtraMap {
    #[serde(flatten)]
    #[schemars(with = "contract_runtime::OpaqueMap")]
    extra: serde_json::Map<String, Value>,
}

#[derive(Serialize, JsonSchema)]
#[schemars(transform = contract_runtime::opaque)]
struct OnlyExtraType {
    #[serde(flatten)]
    extra: serde_json::Map<String, Value>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct RawExtras {
    id: u32,
    pages: Vec<OnlyExtra>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct MapExtras {
    id: u32,
    pages: Vec<OnlyExtraMap>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct TypeExtras {
    id: u32,
    pages: Vec<OnlyExtraType>,
}

/// The contract type's only field is a flattened map (an alias, so that the derive does
/// not refuse it first).
#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct RootOnlyExtra {
    #[serde(flatten)]
    rest: Bag,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct OpaqueRootOnlyExtra {
    #[serde(flatten)]
    #[tool_output(opaque)]
    rest: Bag,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct OpaqueFlattenedValueMap {
    id: u32,
    #[serde(flatten)]
    #[tool_output(opaque)]
    rest: Bag,
}

/// A flattened map in a variant of the contract type itself.
#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
#[serde(tag = "kind")]
enum RawTagged {
    Page {
        url: String,
        #[serde(flatten)]
        rest: Bag,
    },
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
#[serde(tag = "kind")]
enum OpaqueTagged {
    Page {
        url: String,
        #[serde(flatten)]
        #[schemars(with = "contract_runtime::OpaqueMap")]
        rest: Bag,
    },
}

#[test]
fn the_fix_lines_for_flattened_maps_work() {
    // Flattened next to an `id` field: the upstream keys other than `id`.
    let extra = || match upstream() {
        Value::Object(mut map) => {
            map.remove("id");
            map
        }
        _ => unreachable!("an object"),
    };
    let pointer = Some("/$defs/OnlyExtra/additionalProperties");
    let good = MapExtras { id: 1, pages: vec![OnlyExtraMap { extra: extra() }] };
    let fix = "`#[schemars(with = \"contract_runtime::OpaqueMap\")]` on the flattened map field of `OnlyExtra`";
    fix_line_works::<RawExtras, MapExtras>(fix, pointer, &good, &["/pages/*/*"]);
    let good = TypeExtras { id: 1, pages: vec![OnlyExtraType { extra: extra() }] };
    let fix = "`#[schemars(transform = contract_runtime::opaque)]` on the type `OnlyExtra`";
    fix_line_works::<RawExtras, TypeExtras>(fix, pointer, &good, &["/pages/*"]);
    // Under `exact` the fields next to the opaque subtree stay checked.
    assert!(!MapExtras::contract().is_valid(&serde_json::json!({ "id": "1", "pages": [{ "a": 1 }] })));
    assert!(!TypeExtras::contract().is_valid(&serde_json::json!({ "id": 1, "pages": [], "other": 1 })));

    let fix = "`#[tool_output(opaque)]` on the flattened map field of `RootOnlyExtra`";
    let good = OpaqueRootOnlyExtra { rest: extra().into_iter().collect() };
    fix_line_works::<RootOnlyExtra, OpaqueRootOnlyExtra>(fix, Some("/additionalProperties"), &good, &["/*"]);

    let fix = "`#[tool_output(opaque)]` on the flattened field";
    let good = OpaqueFlattenedValueMap { id: 1, rest: extra().into_iter().collect() };
    fix_line_works::<FlattenedValueMap, OpaqueFlattenedValueMap>(fix, Some("/additionalProperties"), &good, &["/*"]);

    let fix = "`#[schemars(with = \"contract_runtime::OpaqueMap\")]` on the flattened field";
    let rest: HashMap<String, Value> = [("x".to_owned(), upstream())].into();
    let good = OpaqueCrawl { pages: vec![OpaqueUpstream { url: "u".into(), rest }] };
    fix_line_works::<RawCrawl, OpaqueCrawl>(fix, Some("/$defs/Upstream/additionalProperties"), &good, &["/pages/*/*"]);
    let good = OpaqueTagged::Page { url: "u".into(), rest: extra().into_iter().collect() };
    fix_line_works::<RawTagged, OpaqueTagged>(fix, Some("/oneOf/0/additionalProperties"), &good, &["/*"]);
}

/// A nested untagged enum with a branch of `Value`s: the value that accepts anything sits
/// in a branch of the type, not in a named field.
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
enum Entry {
    Text(String),
    List(Vec<Value>),
}

#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
enum EntryItems {
    Text(String),
    List(#[schemars(transform = contract_runtime::opaque)] Vec<Value>),
}

#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(transform = contract_runtime::opaque)]
enum EntryType {
    Text(String),
    List(Vec<Value>),
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct RawRows {
    rows: Vec<Entry>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct ItemRows {
    rows: Vec<EntryItems>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct TypeRows {
    rows: Vec<EntryType>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
#[serde(untagged)]
enum RawMixed {
    Text(String),
    List(Vec<Value>),
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
#[serde(untagged)]
enum OpaqueMixed {
    Text(String),
    List(#[schemars(transform = contract_runtime::opaque)] Vec<Value>),
}

#[test]
fn the_fix_lines_for_values_inside_a_type_work() {
    let fix = "`#[schemars(transform = contract_runtime::opaque)]` on the field of `Entry` that holds it, or on the type `Entry`";
    let pointer = Some("/$defs/Entry/anyOf/1/items");
    let good = ItemRows { rows: vec![EntryItems::List(vec![upstream()]), EntryItems::Text("t".into())] };
    fix_line_works::<RawRows, ItemRows>(fix, pointer, &good, &["/rows/*"]);
    let good = TypeRows { rows: vec![EntryType::List(vec![upstream()]), EntryType::Text("t".into())] };
    fix_line_works::<RawRows, TypeRows>(fix, pointer, &good, &["/rows/*"]);

    let fix = "`#[schemars(transform = contract_runtime::opaque)]` on the field of `RawMixed` that holds it";
    let good = OpaqueMixed::List(vec![upstream(), Value::Null]);
    // The opaque branch is the root value when it is a list.
    fix_line_works::<RawMixed, OpaqueMixed>(fix, Some("/anyOf/1/items"), &good, &[""]);
    assert!(OpaqueMixed::contract().validate_output(&OpaqueMixed::Text("t".into())).is_ok());
    assert!(!OpaqueMixed::contract().is_valid(&serde_json::json!(3)), "a number is neither branch");
}

#[derive(Serialize, JsonSchema)]
struct OpaqueMeta {
    #[schemars(transform = contract_runtime::opaque)]
    source: Value,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct FlattenedOpaqueFields {
    id: u32,
    #[serde(flatten)]
    meta: OpaqueMeta,
}

/// What the derive says to write for a tuple field and for a `#[serde(transparent)]` struct.
#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Pair(u32, #[schemars(transform = contract_runtime::opaque)] Value);

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
#[serde(transparent)]
struct Wrapped {
    #[schemars(transform = contract_runtime::opaque)]
    inner: Value,
}

#[test]
fn the_fix_lines_for_misplaced_opaque_markers_work() {
    let fix = "mark the fields inside it with `#[schemars(transform = contract_runtime::opaque)]` instead";
    let err = OpaqueFlattenedStruct::try_contract().expect_err("a flattened struct adds no map values");
    assert!(err.to_string().contains(fix), "{err}");
    let contract = accepted::<FlattenedOpaqueFields>();
    assert_eq!(contract.opaque_pointers(), ["/source"]);
    assert!(contract
        .validate_output(&FlattenedOpaqueFields { id: 1, meta: OpaqueMeta { source: upstream() } })
        .is_ok());
    assert!(!contract.is_valid(&serde_json::json!({ "id": 1, "source": 1, "unknown": 1 })));

    let contract = accepted::<Pair>();
    assert_eq!(contract.opaque_pointers(), ["/1"]);
    assert!(contract.validate_output(&Pair(1, upstream())).is_ok());
    assert!(!contract.is_valid(&serde_json::json!(["1", {}])));
    let contract = accepted::<Wrapped>();
    assert_eq!(contract.opaque_pointers(), [""]);
    assert!(contract.validate_output(&Wrapped { inner: upstream() }).is_ok());
}
