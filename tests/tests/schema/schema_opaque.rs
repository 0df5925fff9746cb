//! A subtree declared opaque is never closed, anywhere inside it, under either
//! compatibility, and the inventory lists exactly the opaque subtrees.
//!
//! Generated cases: every opaque spelling the library offers × `exact` and `additive` ×
//! a value of every JSON type × the opaque subtree at the root, inside a struct, a `Vec`,
//! an `Option` (each through a `$defs` type), and as the root itself. The oracle is
//! "serde wrote this value for this Rust type, so the contract accepts it"; every listed
//! pointer is probed with an object of unknown keys, which must pass; and clean controls
//! must still be refused: a non-opaque sibling of the wrong type, an unknown key next to
//! the opaque subtree under `exact`.

#![allow(dead_code, reason = "types here exist for their schemas and their serde output")]

use contract_runtime::ToolOutput;
use contract_tools::schemas;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Map, Value};

// ------------------------------------------------------------------ "any JSON value"

/// The hand-written "any JSON value" schemas HTTP API models use, as `schema_with`.
mod any {
    use schemars::{json_schema, Schema, SchemaGenerator};

    pub(super) fn type_list(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": ["object", "array", "string", "number", "boolean", "null"] })
    }
    pub(super) fn type_list_with_integer(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": ["object", "array", "string", "number", "integer", "boolean", "null"] })
    }
    pub(super) fn any_of(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "anyOf": [
            { "type": "object" }, { "type": "array" }, { "type": "string" },
            { "type": "number" }, { "type": "boolean" }, { "type": "null" },
        ] })
    }
    /// `number` and `integer` both: an integer matches two branches.
    pub(super) fn one_of(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "oneOf": [
            { "type": "object", "additionalProperties": true }, { "type": "array", "items": {} },
            { "type": "string" }, { "type": "number" }, { "type": "integer" }, { "type": "boolean" },
            { "type": "null" },
        ] })
    }
}

/// Builds the Rust value of a field from the JSON value it carries.
trait Carry {
    fn carry(value: Value) -> Self;
}

impl Carry for Value {
    fn carry(value: Value) -> Self {
        value
    }
}

/// A map carries the value under one key (for a flattened map, next to the fields).
impl Carry for Map<String, Value> {
    fn carry(value: Value) -> Self {
        [("upstream".to_owned(), value)].into_iter().collect()
    }
}

/// `#[serde(transparent)]` newtypes around `Value` with a hand-written schema, declared
/// opaque on the type (`$name`) or not (`$plain`, declared at the field that holds it).
macro_rules! any_newtypes {
    ($($name:ident, $plain:ident = $schema:literal;)*) => {$(
        #[derive(Serialize, JsonSchema)]
        #[serde(transparent)]
        #[schemars(transform = contract_runtime::opaque)]
        struct $name(#[schemars(schema_with = $schema)] Value);

        #[derive(Serialize, JsonSchema)]
        #[serde(transparent)]
        struct $plain(#[schemars(schema_with = $schema)] Value);

        impl Carry for $name {
            fn carry(value: Value) -> Self {
                Self(value)
            }
        }
        impl Carry for $plain {
            fn carry(value: Value) -> Self {
                Self(value)
            }
        }
    )*};
}

any_newtypes! {
    OpaqueTypeList, TypeList = "any::type_list";
    OpaqueTypeListInt, TypeListInt = "any::type_list_with_integer";
    OpaqueAnyOf, AnyOf = "any::any_of";
    OpaqueOneOf, OneOf = "any::one_of";
}

/// A value of every JSON type.
fn values() -> Vec<Value> {
    vec![
        json!({ "a": 1, "b": "x" }),
        json!({ "outer": { "inner": { "deep": [1, { "k": null }] } }, "list": [{}] }),
        json!([1, "two", { "three": 3.5 }, [null]]),
        json!("text"),
        json!(1.5),
        json!(-7),
        json!(u64::MAX),
        json!(true),
        json!(null),
    ]
}

// ------------------------------------------------------------------ the oracle

/// An object no schema in this file names: whatever sits at an opaque pointer may be it.
fn probe() -> Value {
    json!({ "probe_unknown": { "deeper_unknown": [1, { "k": "v" }] } })
}

/// Puts [`probe`] at every place instance pointer `pointer` (with `*` for any member)
/// denotes in `value`; a final `*` adds a new member. Returns how many places it probed.
fn probe_at(value: &mut Value, tokens: &[&str]) -> usize {
    match tokens {
        [] => {
            *value = probe();
            1
        }
        ["*"] => match value {
            Value::Object(map) => {
                map.insert("probe_new_key".to_owned(), probe());
                1
            }
            Value::Array(items) => {
                items.push(probe());
                1
            }
            _ => 0,
        },
        ["*", rest @ ..] => match value {
            Value::Object(map) => map.values_mut().map(|v| probe_at(v, rest)).sum(),
            Value::Array(items) => items.iter_mut().map(|v| probe_at(v, rest)).sum(),
            _ => 0,
        },
        [token, rest @ ..] => {
            let key = token.replace("~1", "/").replace("~0", "~");
            match value {
                Value::Object(map) => map.get_mut(&key).map_or(0, |v| probe_at(v, rest)),
                Value::Array(items) => {
                    key.parse::<usize>().ok().and_then(|i| items.get_mut(i)).map_or(0, |v| probe_at(v, rest))
                }
                _ => 0,
            }
        }
    }
}

/// Where one case puts the opaque subtree, relative to the contract's root.
struct Place {
    /// Instance pointers the inventory must list as opaque.
    opaque: Vec<String>,
    /// Pointers of non-opaque `u32` siblings.
    siblings: &'static [&'static str],
    /// Pointers of the objects around the opaque subtree that `exact` closes.
    closed: Vec<&'static str>,
}

/// Counts what one case checked, so that the loops are seen to run.
#[derive(Default, Debug)]
struct Tally {
    accepted: usize,
    probed: usize,
    refused: usize,
}

/// The whole oracle for the contract of `T`, fed a value of every JSON type.
fn check<T: ToolOutput>(name: &str, build: impl Fn(Value) -> T, place: &Place, tally: &mut Tally) {
    let contract = T::try_contract().unwrap_or_else(|err| panic!("{name}: must build: {err}"));
    let exact = contract.compatibility() == contract_runtime::Compatibility::Exact;
    assert_eq!(contract.opaque_pointers(), place.opaque, "{name}: opaque pointers");
    let files = schemas::render(&contract_runtime::ContractSet::new().with::<T>()).expect("renders");
    let entry = schemas::inventory_entry(&files, contract.name()).expect("listed in the inventory");
    assert_eq!(entry["opaque"], json!(place.opaque), "{name}: inventory");

    for value in values() {
        let output = build(value.clone());
        // What serde wrote for this Rust type is accepted, on both paths.
        let written = serde_json::to_value(&output).expect("serializes");
        assert!(contract.validate(&written).is_ok(), "{name}: refuses what serde wrote: {written}");
        assert!(contract.validate_output(&output).is_ok(), "{name}: validate_output refuses {written}");
        tally.accepted += 1;

        // Every listed pointer is open: an object of unknown keys passes there.
        for pointer in &place.opaque {
            let mut probed = written.clone();
            let tokens: Vec<&str> = pointer.split('/').skip(1).collect();
            let n = probe_at(&mut probed, &tokens);
            assert!(n > 0, "{name}: `{pointer}` denotes nothing in {written}");
            assert!(contract.validate(&probed).is_ok(), "{name}: `{pointer}` is listed opaque but closed: {probed}");
            tally.probed += n;
        }

        // Clean controls: a sibling of the wrong type is refused ...
        for sibling in place.siblings {
            let mut wrong = written.clone();
            *wrong.pointer_mut(sibling).unwrap_or_else(|| panic!("{name}: no `{sibling}` in {written}")) =
                json!("not a number");
            assert!(!contract.is_valid(&wrong), "{name}: accepts a string at `{sibling}`: {wrong}");
            tally.refused += 1;
        }
        // ... and, under `exact`, so is an unknown key next to the opaque subtree.
        for object in &place.closed {
            let mut extra = written.clone();
            let target = extra.pointer_mut(object).and_then(Value::as_object_mut);
            target
                .unwrap_or_else(|| panic!("{name}: no object at `{object}` in {written}"))
                .insert("unknown".into(), json!(1));
            assert_eq!(contract.is_valid(&extra), !exact, "{name}: an unknown key at `{object}`: {extra}");
            tally.refused += usize::from(exact);
        }
    }
}

/// One opaque spelling, at every place it can be written: a field of the contract type,
/// and a field of a nested (`$defs`) type inside a struct, a `Vec` and an `Option`.
/// `$at` is the opaque pointer relative to the object that holds the field; `open` says
/// that the holding object takes any key (a flattened opaque map).
macro_rules! spelling {
    (
        $module:ident, $compat:literal,
        root: [$(#[$root:meta])*], nested: [$(#[$nested:meta])*], $ty:ty, at: $at:literal, open: $open:literal
    ) => {
        mod $module {
            use super::*;

            #[derive(Serialize, JsonSchema, ToolOutput)]
            #[tool_output(version = "1.0.0", compatibility = $compat)]
            struct AtRoot {
                id: u32,
                $(#[$root])*
                data: $ty,
            }

            #[derive(Serialize, JsonSchema)]
            struct Inner {
                n: u32,
                $(#[$nested])*
                data: $ty,
            }

            #[derive(Serialize, JsonSchema, ToolOutput)]
            #[tool_output(version = "1.0.0", compatibility = $compat)]
            struct InStruct {
                id: u32,
                inner: Inner,
            }

            #[derive(Serialize, JsonSchema, ToolOutput)]
            #[tool_output(version = "1.0.0", compatibility = $compat)]
            struct InVec {
                id: u32,
                items: Vec<Inner>,
            }

            #[derive(Serialize, JsonSchema, ToolOutput)]
            #[tool_output(version = "1.0.0", compatibility = $compat)]
            struct InOption {
                id: u32,
                maybe: Option<Inner>,
            }

            fn inner(value: Value) -> Inner {
                Inner { n: 2, data: Carry::carry(value) }
            }

            fn closed(holder: &'static str, parents: &[&'static str]) -> Vec<&'static str> {
                let mut out = parents.to_vec();
                if !$open {
                    out.push(holder);
                }
                out
            }

            pub(super) fn check_all(tally: &mut Tally) {
                let name = concat!(stringify!($module), " (", $compat, ")");
                let at = |prefix: &str| vec![format!("{prefix}{}", $at)];
                check(name, |v| AtRoot { id: 1, data: Carry::carry(v) }, &Place {
                    opaque: at(""),
                    siblings: &["/id"],
                    closed: closed("", &[]),
                }, tally);
                check(name, |v| InStruct { id: 1, inner: inner(v) }, &Place {
                    opaque: at("/inner"),
                    siblings: &["/id", "/inner/n"],
                    closed: closed("/inner", &[""]),
                }, tally);
                check(name, |v| InVec { id: 1, items: vec![inner(v.clone()), inner(v)] }, &Place {
                    opaque: at("/items/*"),
                    siblings: &["/id", "/items/0/n", "/items/1/n"],
                    closed: closed("/items/1", &[""]),
                }, tally);
                check(name, |v| InOption { id: 1, maybe: Some(inner(v)) }, &Place {
                    opaque: at("/maybe"),
                    siblings: &["/id", "/maybe/n"],
                    closed: closed("/maybe", &[""]),
                }, tally);
            }
        }
    };
}

/// A spelling that only a field of the contract type can carry (`#[tool_output(opaque)]`).
macro_rules! root_spelling {
    ($module:ident, $compat:literal, root: [$(#[$root:meta])*], $ty:ty, at: $at:literal, open: $open:literal) => {
        mod $module {
            use super::*;

            #[derive(Serialize, JsonSchema, ToolOutput)]
            #[tool_output(version = "1.0.0", compatibility = $compat)]
            struct AtRoot {
                id: u32,
                $(#[$root])*
                data: $ty,
            }

            pub(super) fn check_all(tally: &mut Tally) {
                let name = concat!(stringify!($module), " (", $compat, ")");
                check(name, |v| AtRoot { id: 1, data: Carry::carry(v) }, &Place {
                    opaque: vec![$at.to_owned()],
                    siblings: &["/id"],
                    closed: if $open { vec![] } else { vec![""] },
                }, tally);
            }
        }
    };
}

/// The contract type is itself one opaque value (a `#[serde(transparent)]` newtype of a
/// type declared opaque): listed as `""`, any value passes.
macro_rules! root_is {
    ($module:ident, $compat:literal, $ty:ident) => {
        mod $module {
            use super::*;

            #[derive(Serialize, JsonSchema, ToolOutput)]
            #[tool_output(version = "1.0.0", compatibility = $compat)]
            #[serde(transparent)]
            struct Whole($ty);

            pub(super) fn check_all(tally: &mut Tally) {
                let name = concat!(stringify!($module), " (", $compat, ")");
                check(
                    name,
                    |v| Whole(Carry::carry(v)),
                    &Place { opaque: vec![String::new()], siblings: &[], closed: vec![] },
                    tally,
                );
            }
        }
    };
}

/// Every spelling under one compatibility.
macro_rules! all_spellings {
    ($compat:literal) => {
        // `#[tool_output(opaque)]` on a field of the contract type.
        root_spelling!(tool_output_value, $compat, root: [#[tool_output(opaque)]], Value, at: "/data", open: false);
        root_spelling!(tool_output_type_list, $compat, root: [#[tool_output(opaque)]], TypeList, at: "/data", open: false);
        root_spelling!(tool_output_any_of, $compat, root: [#[tool_output(opaque)]], AnyOf, at: "/data", open: false);
        root_spelling!(tool_output_one_of, $compat, root: [#[tool_output(opaque)]], OneOf, at: "/data", open: false);
        // ... on a flattened map of the contract type: its values are opaque.
        root_spelling!(tool_output_flattened, $compat,
            root: [#[serde(flatten)] #[tool_output(opaque)]], Map<String, Value>, at: "/*", open: true);

        // `#[schemars(transform = contract_runtime::opaque)]` on a field.
        spelling!(transform_field_value, $compat,
            root: [#[schemars(transform = contract_runtime::opaque)]],
            nested: [#[schemars(transform = contract_runtime::opaque)]], Value, at: "/data", open: false);
        spelling!(transform_field_type_list, $compat,
            root: [#[schemars(transform = contract_runtime::opaque)]],
            nested: [#[schemars(transform = contract_runtime::opaque)]], TypeListInt, at: "/data", open: false);
        spelling!(transform_field_one_of, $compat,
            root: [#[schemars(transform = contract_runtime::opaque)]],
            nested: [#[schemars(transform = contract_runtime::opaque)]], OneOf, at: "/data", open: false);

        // `#[schemars(transform = contract_runtime::opaque)]` on the type.
        spelling!(transform_type_type_list, $compat, root: [], nested: [], OpaqueTypeList, at: "/data", open: false);
        spelling!(transform_type_type_list_int, $compat, root: [], nested: [], OpaqueTypeListInt, at: "/data", open: false);
        spelling!(transform_type_any_of, $compat, root: [], nested: [], OpaqueAnyOf, at: "/data", open: false);
        spelling!(transform_type_one_of, $compat, root: [], nested: [], OpaqueOneOf, at: "/data", open: false);

        // `#[schemars(with = "contract_runtime::OpaqueMap")]` on a map field, and on a
        // flattened map field (where schemars ignores `transform`).
        spelling!(opaque_map, $compat,
            root: [#[schemars(with = "contract_runtime::OpaqueMap")]],
            nested: [#[schemars(with = "contract_runtime::OpaqueMap")]], Map<String, Value>, at: "/data/*", open: false);
        spelling!(opaque_map_flattened, $compat,
            root: [#[serde(flatten)] #[schemars(with = "contract_runtime::OpaqueMap")]],
            nested: [#[serde(flatten)] #[schemars(with = "contract_runtime::OpaqueMap")]], Map<String, Value>,
            at: "/*", open: true);

        root_is!(root_is_type_list, $compat, OpaqueTypeList);
        root_is!(root_is_one_of, $compat, OpaqueOneOf);

        pub(super) fn check_all(tally: &mut Tally) {
            tool_output_value::check_all(tally);
            tool_output_type_list::check_all(tally);
            tool_output_any_of::check_all(tally);
            tool_output_one_of::check_all(tally);
            tool_output_flattened::check_all(tally);
            transform_field_value::check_all(tally);
            transform_field_type_list::check_all(tally);
            transform_field_one_of::check_all(tally);
            transform_type_type_list::check_all(tally);
            transform_type_type_list_int::check_all(tally);
            transform_type_any_of::check_all(tally);
            transform_type_one_of::check_all(tally);
            opaque_map::check_all(tally);
            opaque_map_flattened::check_all(tally);
            root_is_type_list::check_all(tally);
            root_is_one_of::check_all(tally);
        }
    };
}

mod exact {
    use super::*;
    all_spellings!("exact");
}

mod additive {
    use super::*;
    all_spellings!("additive");
}

#[test]
fn every_opaque_spelling_accepts_every_value_serde_writes_and_stays_open_under_both_compatibilities() {
    let mut tally = Tally::default();
    exact::check_all(&mut tally);
    let exact = std::mem::take(&mut tally);
    additive::check_all(&mut tally);
    // 5 spellings at the root only, 9 at 4 places, 2 as the whole root; 9 values each.
    let cases = 5 + 9 * 4 + 2;
    for (tally, compat) in [(&exact, "exact"), (&tally, "additive")] {
        assert_eq!(tally.accepted, cases * values().len(), "{compat}: {tally:?}");
        assert!(tally.probed >= tally.accepted, "{compat}: {tally:?}");
    }
    assert!(exact.refused > tally.refused, "unknown keys are refused under exact only: {exact:?} {tally:?}");
}

// ------------------------------------------------------------------ a `$defs` type used twice

/// "Any object", as a hand-written schema: constrained (an object), so the lint lets an
/// undeclared use through, and `exact` closes it there.
fn any_object(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "object" })
}

#[derive(Serialize, JsonSchema)]
#[serde(transparent)]
struct Attributes(#[schemars(schema_with = "any_object")] Map<String, Value>);

#[derive(Serialize, JsonSchema)]
struct Point {
    x: i32,
    y: i32,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct SharedDefs {
    #[tool_output(opaque)]
    upstream: Attributes,
    own: Attributes,
    #[tool_output(opaque)]
    raw_point: Point,
    points: Vec<Point>,
}

#[test]
fn a_definition_used_inside_and_outside_an_opaque_subtree_is_open_only_inside() {
    let contract = SharedDefs::try_contract().unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(contract.opaque_pointers(), ["/raw_point", "/upstream"]);
    let attributes: Map<String, Value> = [("k".to_owned(), json!({ "deep": 1 }))].into_iter().collect();
    let value = SharedDefs {
        upstream: Attributes(attributes),
        own: Attributes(Map::new()),
        raw_point: Point { x: 1, y: 2 },
        points: vec![Point { x: 3, y: 4 }],
    };
    assert!(contract.validate_output(&value).is_ok());
    let written = serde_json::to_value(&value).expect("serializes");
    // Open inside the opaque subtrees: unknown keys pass at `/upstream` and `/raw_point`.
    for (pointer, probe_key) in [("/upstream", "anything"), ("/raw_point", "z")] {
        let mut probed = written.clone();
        probed
            .pointer_mut(pointer)
            .and_then(Value::as_object_mut)
            .expect("object")
            .insert(probe_key.into(), json!([1]));
        assert!(contract.validate(&probed).is_ok(), "{pointer} must be open: {probed}");
    }
    // Clean controls: the same definitions stay closed where they are the contract's own.
    for (pointer, probe_key) in [("/own", "anything"), ("/points/0", "z"), ("", "unknown")] {
        let mut probed = written.clone();
        probed
            .pointer_mut(pointer)
            .and_then(Value::as_object_mut)
            .expect("object")
            .insert(probe_key.into(), json!([1]));
        assert!(!contract.is_valid(&probed), "{pointer} must stay closed: {probed}");
    }
    let mut wrong = written.clone();
    wrong["points"][0]["x"] = json!("one");
    assert!(!contract.is_valid(&wrong), "a field of the owned use keeps its type");
}
