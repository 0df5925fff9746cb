//! Every fix line the schema lints print, applied: the refused type and the same type
//! written as the message says, which builds, validates what serde writes for it and is
//! listed in the inventory. The lints themselves are `schema_lints.rs`.

#![allow(dead_code, reason = "types here exist for their schemas; most are never constructed")]

use std::collections::HashMap;

use contract_runtime::ToolOutput;
use contract_tools::schemas;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::support::lint_types;
use crate::support::lints;

use lint_types::*;
use lints::{accepted, refusal};

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
    let files = schemas::render(&contract_runtime::ContractSet::new().with::<Good>()).expect("renders");
    let entry = schemas::inventory_entry(&files, contract.name()).expect("listed in the inventory");
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
