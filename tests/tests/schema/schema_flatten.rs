//! No false rejects from the derive for `#[serde(flatten)]`: flattened structs, maps and
//! enums of every tagging, `Option`s of them (`None` writes no key; a flattened
//! `Option<Struct>` declared with `contract_runtime::AllOrNone` writes all of its fields
//! or none, and a partial one must be rejected), flatten nested in flatten and inside
//! enum variants, one type used both flattened and as a plain field, and
//! `deny_unknown_fields` on a flattened type.
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

// ---------------------------------------- flattened structs and maps

flatten_struct {
    #[derive(Serialize, JsonSchema)]
    pub struct Meta { pub source: String, pub retries: u8 }

    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub id: u32, #[serde(flatten)] pub meta: Meta }

    pub fn cases() -> Vec<Case> {
        vec![case("flatten_struct", vec![
            Root { id: 1, meta: Meta { source: "s".into(), retries: 0 } }, Root { id: 2, meta: Meta { source: String::new(), retries: 3 } },
        ], &[])]
    }
}

flatten_option_struct {
    #[derive(Serialize, JsonSchema)]
    pub struct Paging { pub cursor: String, pub limit: u32 }

    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub items: Vec<u32>, #[serde(flatten)] pub paging: Option<Paging> }

    pub fn cases() -> Vec<Case> {
        vec![case("flatten_option_struct", vec![
            Root { items: vec![], paging: None }, Root { items: vec![1], paging: Some(Paging { cursor: "c".into(), limit: 10 }) },
        ], &[])]
    }
}

flatten_btreemap {
    /// A flattened map: the root accepts any extra key by serde's own shape.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub id: u32, #[serde(flatten)] pub extra: BTreeMap<String, u32> }

    pub fn cases() -> Vec<Case> {
        vec![case("flatten_btreemap", vec![
            Root { id: 1, extra: BTreeMap::new() }, Root { id: 2, extra: [("x".to_owned(), 1), ("y".to_owned(), 2)].into() },
        ], &[""])]
    }
}

flatten_hashmap {
    #[derive(Serialize, JsonSchema)]
    pub struct Label { pub text: String }

    /// A flattened `HashMap` of objects, nested in an array: the item accepts any key, but
    /// each value is a closed `Label`.
    #[derive(Serialize, JsonSchema)]
    pub struct Item { pub id: u32, #[serde(flatten)] pub labels: HashMap<String, Label> }

    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub items: Vec<Item> }

    pub fn cases() -> Vec<Case> {
        let label = |t: &str| Label { text: t.into() };
        vec![case("flatten_hashmap", vec![
            Root { items: vec![] },
            Root { items: vec![Item { id: 1, labels: HashMap::new() }, Item { id: 2, labels: [("en".to_owned(), label("a")), ("fr".to_owned(), label("b"))].into() }] },
        ], &["/items/*"])]
    }
}

nested_flatten {
    #[derive(Serialize, JsonSchema)]
    pub struct C { pub c: bool, pub deep: Leaf }

    #[derive(Serialize, JsonSchema)]
    pub struct Leaf { pub v: u8 }

    #[derive(Serialize, JsonSchema)]
    pub struct B { pub b: String, #[serde(flatten)] pub c: C }

    /// Three levels of flattened structs, with a closed object at the bottom.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub a: u32, #[serde(flatten)] pub b: B }

    pub fn cases() -> Vec<Case> {
        vec![case("nested_flatten", vec![
            Root { a: 1, b: B { b: "b".into(), c: C { c: true, deep: Leaf { v: 1 } } } }, Root { a: 0, b: B { b: String::new(), c: C { c: false, deep: Leaf { v: 0 } } } },
        ], &[])]
    }
}

nested_flatten_map {
    #[derive(Serialize, JsonSchema)]
    pub struct Inner { pub kind: String, #[serde(flatten)] pub rest: BTreeMap<String, String> }

    /// A map flattened two levels down still opens the outermost object.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub id: u32, #[serde(flatten)] pub inner: Inner }

    pub fn cases() -> Vec<Case> {
        vec![case("nested_flatten_map", vec![
            Root { id: 1, inner: Inner { kind: "k".into(), rest: BTreeMap::new() } },
            Root { id: 2, inner: Inner { kind: "k".into(), rest: [("z".to_owned(), "1".to_owned())].into() } },
        ], &[""])]
    }
}

flatten_two_structs {
    #[derive(Serialize, JsonSchema)]
    pub struct Left { pub l: u8, pub shared: Option<Nested> }

    #[derive(Serialize, JsonSchema)]
    pub struct Right { pub r: u8, pub list: Vec<Nested> }

    #[derive(Serialize, JsonSchema)]
    pub struct Nested { pub n: i8 }

    /// Two flattened structs whose own nested objects stay closed.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { #[serde(flatten)] pub left: Left, #[serde(flatten)] pub right: Right, pub own: Nested }

    pub fn cases() -> Vec<Case> {
        vec![case("flatten_two_structs", vec![
            Root { left: Left { l: 1, shared: None }, right: Right { r: 2, list: vec![] }, own: Nested { n: 0 } },
            Root { left: Left { l: 1, shared: Some(Nested { n: -1 }) }, right: Right { r: 2, list: vec![Nested { n: 1 }] }, own: Nested { n: 3 } },
        ], &[])]
    }
}

flatten_shared_def {
    #[derive(Serialize, JsonSchema)]
    pub struct Meta { pub source: String }

    /// The same type used both flattened (left open, composed) and as a plain field
    /// (must be closed): one `$def` reached in two modes.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub id: u32, #[serde(flatten)] pub meta: Meta, pub other: Meta, pub others: Vec<Meta> }

    pub fn cases() -> Vec<Case> {
        let m = |s: &str| Meta { source: s.into() };
        vec![case("flatten_shared_def", vec![
            Root { id: 1, meta: m("a"), other: m("b"), others: vec![] }, Root { id: 2, meta: m("a"), other: m("b"), others: vec![m("c"), m("d")] },
        ], &[])]
    }
}

deny_unknown_inner {
    #[derive(Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Meta { pub source: String }

    #[derive(Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Plain { pub n: u8 }

    /// `deny_unknown_fields` on a type that is flattened into another one (serde writes
    /// it fine), and on a plain nested type (closed under both compatibilities).
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub id: u32, #[serde(flatten)] pub meta: Meta, pub plain: Plain }

    pub fn cases() -> Vec<Case> {
        vec![case("deny_unknown_inner", vec![
            Root { id: 1, meta: Meta { source: "s".into() }, plain: Plain { n: 1 } }, Root { id: 2, meta: Meta { source: String::new() }, plain: Plain { n: 0 } },
        ], &[])]
    }
}

composed_values_everywhere {
    #[derive(Serialize, JsonSchema)]
    pub struct Meta { pub source: String }

    #[derive(Serialize, JsonSchema)]
    #[serde(tag = "type")]
    pub enum Kind { A, B { b: u8 } }

    #[derive(Serialize, JsonSchema)]
    pub struct Item { pub id: u32, #[serde(flatten)] pub meta: Meta, #[serde(flatten)] pub kind: Kind }

    /// A composed struct as array item, map value, optional field and tuple member.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub list: Vec<Item>, pub by_id: BTreeMap<String, Item>, pub first: Option<Item>, pub pair: (Item, u8) }

    pub fn cases() -> Vec<Case> {
        let item = |i, kind| Item { id: i, meta: Meta { source: "s".into() }, kind };
        vec![case("composed_values_everywhere", vec![
            Root { list: vec![], by_id: BTreeMap::new(), first: None, pair: (item(0, Kind::A), 0) },
            Root { list: vec![item(1, Kind::A), item(2, Kind::B { b: 1 })], by_id: [("k".to_owned(), item(3, Kind::B { b: 2 }))].into(), first: Some(item(4, Kind::A)), pair: (item(5, Kind::B { b: 3 }), 1) },
        ], &["/by_id"])]
    }
}

// --------------------------------------------------- flattened enums

flatten_external_enum {
    /// A flattened externally tagged enum adds one key named after the variant.
    #[derive(Serialize, JsonSchema)]
    pub enum Payload { Text(String), Numbers(Vec<u32>), Sized { w: u32, h: u32 } }

    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub id: u32, #[serde(flatten)] pub payload: Payload }

    pub fn cases() -> Vec<Case> {
        vec![case("flatten_external_enum", vec![
            Root { id: 1, payload: Payload::Text("t".into()) }, Root { id: 2, payload: Payload::Numbers(vec![1, 2]) },
            Root { id: 3, payload: Payload::Sized { w: 1, h: 2 } },
        ], &[])]
    }
}

flatten_external_enum_all_kinds {
    /// A flattened externally tagged enum with unit and tuple variants too.
    #[derive(Serialize, JsonSchema)]
    pub enum Extra { Nothing, Pair(u8, u8), One(bool) }

    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub id: u32, #[serde(flatten)] pub extra: Extra }

    pub fn cases() -> Vec<Case> {
        vec![case("flatten_external_enum_all_kinds", vec![
            Root { id: 1, extra: Extra::Nothing }, Root { id: 2, extra: Extra::Pair(1, 2) }, Root { id: 3, extra: Extra::One(true) },
        ], &[])]
    }
}

flatten_internal_enum {
    #[derive(Serialize, JsonSchema)]
    pub struct Detail { pub code: u16 }

    #[derive(Serialize, JsonSchema)]
    #[serde(tag = "status", rename_all = "snake_case")]
    pub enum Status { Pending, Failed { reason: String }, Done(Detail) }

    /// A flattened internally tagged enum, nested in an array and at the root.
    #[derive(Serialize, JsonSchema)]
    pub struct Task { pub id: u32, #[serde(flatten)] pub status: Status }

    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub tasks: Vec<Task>, #[serde(flatten)] pub overall: Status }

    pub fn cases() -> Vec<Case> {
        vec![case("flatten_internal_enum", vec![
            Root { tasks: vec![], overall: Status::Pending },
            Root { tasks: vec![Task { id: 1, status: Status::Pending }, Task { id: 2, status: Status::Failed { reason: "r".into() } }, Task { id: 3, status: Status::Done(Detail { code: 200 }) }], overall: Status::Done(Detail { code: 1 }) },
            Root { tasks: vec![], overall: Status::Failed { reason: String::new() } },
        ], &[])]
    }
}

flatten_adjacent_enum {
    #[derive(Serialize, JsonSchema)]
    #[serde(tag = "t", content = "c")]
    pub enum Body { Empty, Count(u32), Named { name: String } }

    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub id: u32, #[serde(flatten)] pub body: Body }

    pub fn cases() -> Vec<Case> {
        vec![case("flatten_adjacent_enum", vec![
            Root { id: 1, body: Body::Empty }, Root { id: 2, body: Body::Count(3) }, Root { id: 3, body: Body::Named { name: "n".into() } },
        ], &[])]
    }
}

flatten_untagged_enum {
    #[derive(Serialize, JsonSchema)]
    #[serde(untagged)]
    pub enum Location { Path { path: String }, Url { url: String, port: Option<u16> } }

    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub id: u32, #[serde(flatten)] pub location: Location }

    pub fn cases() -> Vec<Case> {
        vec![case("flatten_untagged_enum", vec![
            Root { id: 1, location: Location::Path { path: "/p".into() } }, Root { id: 2, location: Location::Url { url: "u".into(), port: None } },
            Root { id: 3, location: Location::Url { url: "u".into(), port: Some(80) } },
        ], &[])]
    }
}

flatten_option_enum_and_map {
    #[derive(Serialize, JsonSchema)]
    #[serde(tag = "state")]
    pub enum State { Idle, Busy { job: u32 } }

    #[derive(Serialize, JsonSchema)]
    pub enum Source { Disk { path: String }, Net(String) }

    #[derive(Serialize, JsonSchema)]
    pub struct Limits { pub max: u8 }

    /// Flattened `Option`s of an internally tagged enum, an externally tagged enum, a
    /// struct and a map; `None` writes no key at all.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root {
        pub id: u32,
        #[serde(flatten)]
        pub state: Option<State>,
        #[serde(flatten)]
        pub source: Option<Source>,
        #[serde(flatten)]
        pub limits: Option<Limits>,
    }

    pub fn cases() -> Vec<Case> {
        vec![case("flatten_option_enum", vec![
            Root { id: 1, state: None, source: None, limits: None },
            Root { id: 2, state: Some(State::Idle), source: Some(Source::Net("n".into())), limits: None },
            Root { id: 3, state: Some(State::Busy { job: 4 }), source: None, limits: Some(Limits { max: 1 }) },
            Root { id: 4, state: None, source: Some(Source::Disk { path: "p".into() }), limits: Some(Limits { max: 2 }) },
        ], &[])]
    }
}

flatten_option_adjacent {
    #[derive(Serialize, JsonSchema)]
    #[serde(tag = "t", content = "c")]
    pub enum Change { Set(String), Clear }

    /// A flattened `Option` of an adjacently tagged enum.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub id: u32, #[serde(flatten, skip_serializing_if = "Option::is_none")] pub change: Option<Change> }

    pub fn cases() -> Vec<Case> {
        vec![case("flatten_option_adjacent", vec![
            Root { id: 1, change: None }, Root { id: 2, change: Some(Change::Clear) }, Root { id: 3, change: Some(Change::Set("s".into())) },
        ], &[])]
    }
}

untagged_flatten_branches {
    #[derive(Serialize, JsonSchema)]
    pub struct Meta { pub source: String }

    #[derive(Serialize, JsonSchema)]
    #[serde(untagged)]
    pub enum Either { Tagged { id: u32, #[serde(flatten)] meta: Meta }, Bare { name: String } }

    /// Untagged variants that compose, flattened again into the parent.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub list: Vec<Either>, #[serde(flatten)] pub top: Either }

    pub fn cases() -> Vec<Case> {
        let tagged = |i| Either::Tagged { id: i, meta: Meta { source: "s".into() } };
        vec![case("untagged_flatten_branches", vec![
            Root { list: vec![], top: tagged(1) }, Root { list: vec![tagged(2), Either::Bare { name: "b".into() }], top: Either::Bare { name: "c".into() } },
        ], &[])]
    }
}

// -------------------------------------- flatten inside enum variants

flatten_in_enum_variants {
    #[derive(Serialize, JsonSchema)]
    pub struct Meta { pub source: String }

    /// Flatten inside the struct variants of an externally tagged enum.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub enum Root { Record { id: u32, #[serde(flatten)] meta: Meta }, Plain { id: u32 } }

    pub fn cases() -> Vec<Case> {
        vec![case("flatten_in_enum_variants", vec![
            Root::Record { id: 1, meta: Meta { source: "s".into() } }, Root::Plain { id: 2 },
        ], &[])]
    }
}

internal_enum_flatten_inside {
    #[derive(Serialize, JsonSchema)]
    pub struct Meta { pub source: String, pub hops: u8 }

    #[derive(Serialize, JsonSchema)]
    pub struct Body { pub size: u32, #[serde(flatten)] pub meta: Meta }

    /// Internally tagged variants that flatten: composition inside composition.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    #[serde(tag = "kind")]
    pub enum Root { Wrapped(Body), Inline { id: u32, #[serde(flatten)] meta: Meta } }

    pub fn cases() -> Vec<Case> {
        vec![case("internal_enum_flatten_inside", vec![
            Root::Wrapped(Body { size: 1, meta: Meta { source: "s".into(), hops: 0 } }), Root::Inline { id: 2, meta: Meta { source: String::new(), hops: 9 } },
        ], &[])]
    }
}

internal_enum_flatten_map_variant {
    /// An internally tagged struct variant with a flattened map: any key is valid there.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    #[serde(tag = "kind")]
    pub enum Root { Bag { id: u32, #[serde(flatten)] rest: BTreeMap<String, bool> } }

    pub fn cases() -> Vec<Case> {
        vec![case("internal_enum_flatten_map_variant", vec![
            Root::Bag { id: 1, rest: BTreeMap::new() }, Root::Bag { id: 2, rest: [("on".to_owned(), true)].into() },
        ], &[""])]
    }
}

adjacent_content_flatten {
    #[derive(Serialize, JsonSchema)]
    pub struct Meta { pub source: String }

    #[derive(Serialize, JsonSchema)]
    pub struct Body { pub size: u32, #[serde(flatten)] pub meta: Meta }

    /// Adjacently tagged content that is itself composed.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    #[serde(tag = "t", content = "c", rename_all = "camelCase")]
    pub enum Root { WithBody(Body), NoBody }

    pub fn cases() -> Vec<Case> {
        vec![case("adjacent_content_flatten", vec![Root::WithBody(Body { size: 1, meta: Meta { source: "s".into() } }), Root::NoBody], &[])]
    }
}

internal_in_internal {
    #[derive(Serialize, JsonSchema)]
    #[serde(tag = "level")]
    pub enum Severity { Low, High { score: u8 } }

    #[derive(Serialize, JsonSchema)]
    pub struct Finding { pub rule: String, #[serde(flatten)] pub severity: Severity }

    /// An internally tagged newtype variant around a struct that flattens another
    /// internally tagged enum: two tags in one object.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    #[serde(tag = "kind")]
    pub enum Root { Found(Finding), Clean { checked: u32 } }

    pub fn cases() -> Vec<Case> {
        vec![case("internal_in_internal", vec![
            Root::Found(Finding { rule: "r".into(), severity: Severity::Low }), Root::Found(Finding { rule: "r".into(), severity: Severity::High { score: 9 } }), Root::Clean { checked: 3 },
        ], &[])]
    }
}

// ---------------------- flattened Option<Struct>: all fields or none

flatten_option_all_or_none {
    #[derive(Serialize, JsonSchema)]
    pub struct Audit {
        pub created_by: String,
        pub created_at: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub note: Option<String>,
    }

    #[derive(Serialize, JsonSchema)]
    pub struct Item { pub id: u32, #[serde(flatten)] #[schemars(with = "contract_runtime::AllOrNone<Audit>")] pub audit: Option<Audit> }

    #[derive(Serialize, JsonSchema)]
    pub enum Event { Made { id: u32, #[serde(flatten)] #[schemars(with = "contract_runtime::AllOrNone<Audit>")] audit: Option<Audit> } }

    #[derive(Serialize, JsonSchema)]
    #[serde(tag = "kind")]
    pub enum Tagged { Made { id: u32, #[serde(flatten)] #[schemars(with = "contract_runtime::AllOrNone<Audit>")] audit: Option<Audit> } }

    /// A flattened `Option<Struct>` declared with `contract_runtime::AllOrNone`: serde
    /// writes all of the struct's fields or none, at the root, in array items, in an
    /// externally and in an internally tagged variant.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root {
        pub id: u32,
        #[serde(flatten)]
        #[schemars(with = "contract_runtime::AllOrNone<Audit>")]
        pub audit: Option<Audit>,
        pub items: Vec<Item>,
        pub events: Vec<Event>,
        pub tagged: Tagged,
    }

    pub fn cases() -> Vec<Case> {
        let audit = |note: Option<&str>| Some(Audit { created_by: "alice".into(), created_at: 7, note: note.map(Into::into) });
        let empty = Root { id: 0, audit: None, items: vec![], events: vec![], tagged: Tagged::Made { id: 0, audit: None } };
        let full = Root {
            id: 1,
            audit: audit(Some("n")),
            items: vec![Item { id: 2, audit: audit(None) }, Item { id: 3, audit: None }],
            events: vec![Event::Made { id: 4, audit: audit(None) }, Event::Made { id: 5, audit: None }],
            tagged: Tagged::Made { id: 6, audit: audit(Some("")) },
        };
        let base = json!({
            "id": 1, "items": [{ "id": 2 }], "events": [{ "Made": { "id": 4 } }], "tagged": { "kind": "Made", "id": 6 },
        });
        let partial = |at: &str, key: &str, value: Value| put(base.clone(), at, key, value);
        vec![case("flatten_option_all_or_none", vec![empty, full], &[])
            .accepts(vec![base.clone()])
            .rejects(vec![
                ("created_by without created_at at the root", partial("", "created_by", json!("alice"))),
                ("created_at alone in an array item", partial("/items/0", "created_at", json!(7))),
                ("the optional note alone in an externally tagged variant", partial("/events/0/Made", "note", json!("n"))),
                ("created_by alone in an internally tagged variant", partial("/tagged", "created_by", json!("alice"))),
                ("note and created_by without created_at", put(partial("", "created_by", json!("a")), "", "note", json!("n"))),
            ])]
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
    corpus::check(exact::all(), additive::all(), corpus::Floor { shapes: 24, probes: 95, fast_covered: 18 });
}
