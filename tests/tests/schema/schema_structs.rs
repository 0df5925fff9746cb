//! No false rejects from the derive for structs: named, unit, empty, tuple and newtype
//! structs, tuples and arrays, `transparent`, field renames (`rename`, every
//! `rename_all` case, names with `/`, `.` and `~`), fields serde may omit or never writes
//! (`skip_serializing_if`, `skip`, `default`, `Option<Option<_>>`), and `into`.
//!
//! Each shape runs through the serde corpus (`support/corpus.rs`) under `exact` and under
//! `additive`: every instance serde writes for it must pass, and under `exact` an unknown
//! key injected into any of its objects must be rejected, except in objects whose keys
//! serde does not fix (the shape's `open` pointers).

#![allow(unreachable_pub, reason = "the corpus types are `pub` so that one macro body serves both modules")]
#![allow(dead_code, reason = "some corpus variants exist for the schema only and are never constructed")]

use crate::support::corpus;

/// Every shape of this file, with the compatibility `$c` as a literal.
macro_rules! shapes {
    ($c:tt) => { crate::support::corpus::emit! {

// ----------------------------------------------------------- structs

plain_struct {
    #[derive(Serialize, JsonSchema)]
    pub struct Owner { pub name: String, pub team: Option<String> }

    /// A struct with scalars, a list, a nested object and a nullable nested object.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub id: u32, pub title: String, pub done: bool, pub tags: Vec<String>, pub owner: Owner, pub backup: Option<Owner> }

    pub fn cases() -> Vec<Case> {
        let owner = |n: &str| Owner { name: n.into(), team: None };
        vec![case("plain_struct", vec![
            Root { id: 0, title: String::new(), done: false, tags: vec![], owner: owner("a"), backup: None },
            Root { id: 7, title: "t".into(), done: true, tags: vec!["x".into(), "y".into()], owner: Owner { name: "b".into(), team: Some("qe".into()) }, backup: Some(owner("c")) },
        ], &[])]
    }
}

unit_struct_root {
    /// Serializes as `null`.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Ack;

    pub fn cases() -> Vec<Case> { vec![case("unit_struct_root", vec![Ack, Ack], &[])] }
}

empty_struct {
    #[derive(Serialize, JsonSchema)]
    pub struct Nothing {}

    #[derive(Serialize, JsonSchema)]
    pub struct Unit;

    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub empty: Nothing, pub unit: Unit, pub nil: (), pub list: Vec<Nothing> }

    pub fn cases() -> Vec<Case> {
        vec![case("empty_struct", vec![
            Root { empty: Nothing {}, unit: Unit, nil: (), list: vec![] },
            Root { empty: Nothing {}, unit: Unit, nil: (), list: vec![Nothing {}, Nothing {}] },
        ], &[])]
    }
}

empty_struct_root {
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root {}

    pub fn cases() -> Vec<Case> { vec![case("empty_struct_root", vec![Root {}, Root {}], &[])] }
}

tuple_struct_root {
    #[derive(Serialize, JsonSchema)]
    pub struct Point { pub x: i32, pub y: i32 }

    /// A tuple struct is an array with `prefixItems`.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root(pub u32, pub String, pub Point);

    pub fn cases() -> Vec<Case> {
        vec![case("tuple_struct_root", vec![
            Root(0, String::new(), Point { x: 0, y: 0 }),
            Root(u32::MAX, "z".into(), Point { x: -1, y: 1 }),
        ], &[])]
    }
}

tuples {
    #[derive(Serialize, JsonSchema)]
    pub struct Cell { pub v: u8 }

    #[derive(Serialize, JsonSchema)]
    pub struct Pair(pub u8, pub bool);

    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub pair: (u8, String), pub triple: (i64, bool, Cell), pub list: Vec<(String, Cell)>, pub named: Pair, pub fixed: [u16; 3] }

    pub fn cases() -> Vec<Case> {
        vec![case("tuples", vec![
            Root { pair: (1, "a".into()), triple: (-1, true, Cell { v: 2 }), list: vec![], named: Pair(0, false), fixed: [0, 1, 2] },
            Root { pair: (255, String::new()), triple: (i64::MIN, false, Cell { v: 0 }), list: vec![("k".into(), Cell { v: 9 })], named: Pair(9, true), fixed: [u16::MAX; 3] },
        ], &[])]
    }
}

newtype_root {
    #[derive(Serialize, JsonSchema)]
    pub struct Entry { pub key: String }

    /// A newtype struct serializes as its inner value: here an array of objects.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root(pub Vec<Entry>);

    pub fn cases() -> Vec<Case> {
        vec![case("newtype_root", vec![Root(vec![]), Root(vec![Entry { key: "a".into() }, Entry { key: "b".into() }])], &[])]
    }
}

transparent {
    #[derive(Serialize, JsonSchema)]
    #[serde(transparent)]
    pub struct UserId(pub u64);

    #[derive(Serialize, JsonSchema)]
    pub struct Inner { pub name: String }

    #[derive(Serialize, JsonSchema)]
    #[serde(transparent)]
    pub struct Wrapped { pub inner: Inner }

    /// A transparent root with a named field is its field's array.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    #[serde(transparent)]
    pub struct Root { pub rows: Vec<Row> }

    #[derive(Serialize, JsonSchema)]
    pub struct Row { pub id: UserId, pub who: Wrapped }

    pub fn cases() -> Vec<Case> {
        let row = |i: u64| Row { id: UserId(i), who: Wrapped { inner: Inner { name: format!("u{i}") } } };
        vec![case("transparent", vec![Root { rows: vec![] }, Root { rows: vec![row(1), row(u64::MAX)] }], &[])]
    }
}

serde_into {
    #[derive(Clone, Serialize, JsonSchema)]
    pub struct Wire { pub celsius: f64 }

    #[derive(Clone, Serialize, JsonSchema)]
    #[serde(into = "Wire")]
    pub struct Temp { pub millis: i64 }

    impl From<Temp> for Wire {
        fn from(t: Temp) -> Self { #[allow(clippy::cast_precision_loss)] Wire { celsius: t.millis as f64 / 1000.0 } }
    }

    /// `#[serde(into = "…")]`: serialized as another type.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub now: Temp, pub history: Vec<Temp> }

    pub fn cases() -> Vec<Case> {
        vec![case("serde_into", vec![Root { now: Temp { millis: 1 }, history: vec![] }, Root { now: Temp { millis: -1 }, history: vec![Temp { millis: 2 }] }], &[])]
    }
}

// ----------------------------------------------------------- renames

renames_slash_dot {
    #[derive(Serialize, JsonSchema)]
    pub struct Inner { #[serde(rename = "x.y/z")] pub xyz: u8, #[serde(rename = "~0")] pub tilde: bool }

    /// Field names with `/`, `.` and `~`.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root {
        #[serde(rename = "qe/coverage")]
        pub coverage: f64,
        #[serde(rename = "v1.2.3")]
        pub version: String,
        #[serde(rename = "a/b.c")]
        pub inner: Inner,
        #[serde(rename = "")]
        pub empty_name: u8,
    }

    pub fn cases() -> Vec<Case> {
        vec![case("renames_slash_dot", vec![
            Root { coverage: 0.5, version: "1".into(), inner: Inner { xyz: 1, tilde: false }, empty_name: 0 },
            Root { coverage: 100.0, version: String::new(), inner: Inner { xyz: 255, tilde: true }, empty_name: 9 },
        ], &[])]
    }
}

rename_all_struct {
    #[derive(Serialize, JsonSchema)]
    #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
    pub struct Screaming { pub max_value: u32, pub min_value: u32 }

    #[derive(Serialize, JsonSchema)]
    #[serde(rename_all = "kebab-case")]
    pub struct Kebab { pub first_name: String, pub last_seen: Option<u64> }

    #[derive(Serialize, JsonSchema)]
    #[serde(rename_all = "PascalCase")]
    pub struct Pascal { pub item_count: u16 }

    #[derive(Serialize, JsonSchema)]
    #[serde(rename_all = "SCREAMING-KEBAB-CASE")]
    pub struct ScreamingKebab { pub some_flag: bool }

    #[derive(Serialize, JsonSchema)]
    #[serde(rename_all(serialize = "UPPERCASE"))]
    pub struct Upper { pub lower_name: char }

    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    #[serde(rename_all = "camelCase")]
    pub struct Root { pub screaming: Screaming, pub kebab_case: Kebab, pub pascal_case: Pascal, pub sk: ScreamingKebab, pub upper: Upper, #[serde(rename = "raw_name")] pub renamed_field: u8, pub r#type: String }

    pub fn cases() -> Vec<Case> {
        vec![case("rename_all_struct", vec![
            Root { screaming: Screaming { max_value: 1, min_value: 0 }, kebab_case: Kebab { first_name: "f".into(), last_seen: None }, pascal_case: Pascal { item_count: 2 }, sk: ScreamingKebab { some_flag: true }, upper: Upper { lower_name: 'x' }, renamed_field: 3, r#type: "t".into() },
            Root { screaming: Screaming { max_value: 9, min_value: 9 }, kebab_case: Kebab { first_name: String::new(), last_seen: Some(7) }, pascal_case: Pascal { item_count: 0 }, sk: ScreamingKebab { some_flag: false }, upper: Upper { lower_name: 'é' }, renamed_field: 0, r#type: String::new() },
        ], &[])]
    }
}

// --------------------------------------- optional and skipped fields

skip_serializing_if {
    #[derive(Serialize, JsonSchema)]
    pub struct Note { pub text: String }

    fn is_zero(n: &u32) -> bool { *n == 0 }

    /// Fields that are sometimes absent.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root {
        pub id: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub note: Option<Note>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        pub tags: Vec<String>,
        #[serde(skip_serializing_if = "is_zero")]
        pub count: u32,
    }

    pub fn cases() -> Vec<Case> {
        vec![case("skip_serializing_if", vec![
            Root { id: 1, note: None, tags: vec![], count: 0 }, Root { id: 2, note: Some(Note { text: "t".into() }), tags: vec!["a".into()], count: 3 },
        ], &[])]
    }
}

defaults {
    #[derive(Serialize, JsonSchema, Default)]
    #[serde(default)]
    pub struct Settings { pub retries: u8, pub name: String }

    /// `default` changes deserialization only: the field is always written.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { #[serde(default)] pub count: u32, #[serde(default = "default_label")] pub label: String, pub settings: Settings }

    fn default_label() -> String { "none".into() }

    pub fn cases() -> Vec<Case> {
        vec![case("defaults", vec![
            Root { count: 0, label: default_label(), settings: Settings::default() }, Root { count: 9, label: "l".into(), settings: Settings { retries: 3, name: "n".into() } },
        ], &[])]
    }
}

skipped {
    /// Fields never serialized must not be required.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root {
        pub id: u32,
        #[serde(skip)]
        pub cache: Vec<u8>,
        #[serde(skip_serializing)]
        pub secret: String,
    }

    pub fn cases() -> Vec<Case> {
        vec![case("skipped", vec![Root { id: 1, cache: vec![1], secret: "s".into() }, Root { id: 0, cache: vec![], secret: String::new() }], &[])]
    }
}

option_option {
    /// `Some(None)` and `None` both serialize as `null` unless skipped.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root {
        pub maybe: Option<Option<u32>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub sparse: Option<Option<String>>,
    }

    pub fn cases() -> Vec<Case> {
        vec![case("option_option", vec![
            Root { maybe: None, sparse: None }, Root { maybe: Some(None), sparse: Some(None) }, Root { maybe: Some(Some(3)), sparse: Some(Some("s".into())) },
        ], &[])]
    }
}
    } };
}

mod exact {
    shapes!("exact");
}

mod additive {
    shapes!("additive");
}

#[test]
fn every_serialized_instance_passes_and_every_unknown_key_is_caught_under_exact() {
    corpus::check(exact::all(), additive::all(), corpus::Floor { shapes: 15, probes: 59, fast_covered: 26 });
}
