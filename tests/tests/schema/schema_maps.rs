//! No false rejects and no false accepts from the derive for maps and collections: maps
//! keyed by strings, integers and enums, sets, nested and boxed collections, and maps
//! whose key type serde fixes (integers, `bool`, `char`, `Uuid`), flattened or not,
//! declared with `contract_runtime::keys` / `FlatMap` in nested types or seen by the
//! derive on the contract type's own fields. Each typed-key shape also carries payloads
//! serde can never write (a key outside the key type), which must be rejected, and the
//! hand-written clean controls they were bent from.
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

// ---------------------------------------------- maps and collections

maps {
    #[derive(Serialize, JsonSchema)]
    pub struct Stat { pub n: u32 }

    #[derive(Serialize, JsonSchema, PartialEq, Eq, PartialOrd, Ord, Hash)]
    #[serde(rename_all = "lowercase")]
    pub enum Sev { Low, High }

    /// String-, integer- and enum-keyed maps; map values that are closed objects.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub by_name: BTreeMap<String, Stat>, pub by_id: BTreeMap<u32, String>, pub signed: HashMap<i64, bool>, pub by_sev: BTreeMap<Sev, u8>, pub nested: BTreeMap<String, Vec<Stat>> }

    pub fn cases() -> Vec<Case> {
        vec![case("maps", vec![
            Root { by_name: BTreeMap::new(), by_id: BTreeMap::new(), signed: HashMap::new(), by_sev: BTreeMap::new(), nested: BTreeMap::new() },
            Root {
                by_name: [("a".to_owned(), Stat { n: 1 })].into(), by_id: [(0, "z".to_owned()), (u32::MAX, "m".to_owned())].into(),
                signed: [(-1, true), (i64::MAX, false)].into(), by_sev: [(Sev::Low, 1), (Sev::High, 2)].into(),
                nested: [("k".to_owned(), vec![Stat { n: 2 }])].into(),
            },
        ], &["/by_name", "/by_id", "/signed", "/by_sev", "/nested"])]
    }
}

collections {
    #[derive(Serialize, JsonSchema)]
    pub struct Tag { pub t: String }

    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub set: BTreeSet<u32>, pub hset: HashSet<String>, pub grid: Vec<Vec<u8>>, pub bytes: Vec<u8>, pub sparse: Option<Vec<Option<u32>>>, pub boxed: Box<Tag>, pub tags: Vec<Box<Tag>> }

    pub fn cases() -> Vec<Case> {
        vec![case("collections", vec![
            Root { set: BTreeSet::new(), hset: HashSet::new(), grid: vec![], bytes: vec![], sparse: None, boxed: Box::new(Tag { t: String::new() }), tags: vec![] },
            Root { set: [1, 2].into(), hset: ["a".to_owned()].into(), grid: vec![vec![], vec![1, 2]], bytes: vec![0, 255], sparse: Some(vec![None, Some(1)]), boxed: Box::new(Tag { t: "t".into() }), tags: vec![Box::new(Tag { t: "u".into() })] },
        ], &[])]
    }
}

// ---------------------------------------------------- typed map keys

flatten_integer_key_maps {
    #[derive(Serialize, JsonSchema)]
    pub struct Inner { pub kind: String, #[serde(flatten)] pub by_id: BTreeMap<u64, String> }

    #[derive(Serialize, JsonSchema)]
    pub struct Item { pub n: u8, #[serde(flatten)] pub deltas: BTreeMap<i32, bool> }

    #[derive(Serialize, JsonSchema)]
    pub enum Event { Tally { id: u32, #[serde(flatten)] counts: HashMap<u16, u32> }, Quiet }

    #[derive(Serialize, JsonSchema)]
    #[serde(tag = "kind")]
    pub enum Tagged { Bag { id: u32, #[serde(flatten)] slots: BTreeMap<u8, String> }, Empty }

    /// Flattened maps with integer keys at the root, in a `$defs` struct, in array items,
    /// in an externally tagged variant and in an internally tagged one: serde writes only
    /// the fields and decimal keys there, so every object is closed.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root {
        pub id: u32,
        #[serde(flatten)]
        pub extra: BTreeMap<u32, String>,
        pub inner: Inner,
        pub items: Vec<Item>,
        pub events: Vec<Event>,
        pub tagged: Tagged,
    }

    pub fn cases() -> Vec<Case> {
        let empty = Root {
            id: 0, extra: BTreeMap::new(), inner: Inner { kind: String::new(), by_id: BTreeMap::new() },
            items: vec![], events: vec![], tagged: Tagged::Empty,
        };
        let full = Root {
            id: 1,
            extra: [(0, "zero".to_owned()), (u32::MAX, "max".to_owned())].into(),
            inner: Inner { kind: "k".into(), by_id: [(u64::MAX, "m".to_owned()), (10, "t".to_owned())].into() },
            items: vec![Item { n: 1, deltas: [(i32::MIN, true), (-1, false), (0, true), (i32::MAX, false)].into() }, Item { n: 2, deltas: BTreeMap::new() }],
            events: vec![Event::Quiet, Event::Tally { id: 3, counts: [(0, 1), (u16::MAX, 2)].into() }, Event::Tally { id: 4, counts: HashMap::new() }],
            tagged: Tagged::Bag { id: 5, slots: [(255, "s".to_owned())].into() },
        };
        // A payload serde writes for `Root`, by hand, for the probes below to bend.
        let base = json!({
            "id": 1, "7": "x",
            "inner": { "kind": "k", "12": "y" },
            "items": [{ "n": 1, "-3": true }],
            "events": ["Quiet", { "Tally": { "id": 3, "4": 5 } }],
            "tagged": { "kind": "Bag", "id": 5, "6": "z" },
        });
        vec![case("flatten_integer_key_maps", vec![empty, full], &[])
            .accepts(vec![base.clone()])
            .rejects(vec![
                ("a string map value that is a number", put(base.clone(), "", "8", json!(8))),
                ("a bool map value that is a string", put(base.clone(), "/items/0", "2", json!("true"))),
            ])
            .rejects_exact(vec![
                ("a negative key for u32 keys", put(base.clone(), "", "-1", json!("x"))),
                ("a key with a leading zero", put(base.clone(), "", "07", json!("x"))),
                ("a key of non-ASCII digits", put(base.clone(), "", "\u{661}\u{662}", json!("x"))),
                ("a key with a sign and a space", put(base.clone(), "/inner", "+ 1", json!("y"))),
                ("a negative zero for i32 keys", put(base.clone(), "/items/0", "-0", json!(true))),
                ("a fraction for i32 keys", put(base.clone(), "/items/0", "1.5", json!(true))),
                ("a word in an externally tagged variant's map", put(base.clone(), "/events/1/Tally", "count", json!(1))),
                ("a word in an internally tagged variant's map", put(base.clone(), "/tagged", "slot", json!("z"))),
                ("a map key on the variant without a map", put(put(base.clone(), "", "tagged", json!({ "kind": "Empty" })), "/tagged", "9", json!("z"))),
            ])]
    }
}

typed_key_maps {
    #[derive(Serialize, JsonSchema)]
    pub struct Inner { #[schemars(transform = contract_runtime::keys::<char>)] pub by_char: BTreeMap<char, u8> }

    #[derive(Serialize, JsonSchema)]
    pub enum Event { Seen { #[schemars(transform = contract_runtime::keys::<Uuid>)] by_id: HashMap<Uuid, bool> }, Idle }

    /// Maps whose keys are not strings, declared with `contract_runtime::keys`: at the
    /// root, in a `$defs` struct, in array items, in an enum variant and in an `Option`.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root {
        #[schemars(transform = contract_runtime::keys::<bool>)]
        pub flags: BTreeMap<bool, u32>,
        #[schemars(transform = contract_runtime::keys::<Uuid>)]
        pub owners: HashMap<Uuid, String>,
        pub inner: Inner,
        pub rows: Vec<Inner>,
        pub events: Vec<Event>,
        #[schemars(transform = contract_runtime::keys::<bool>)]
        pub maybe: Option<BTreeMap<bool, u8>>,
    }

    pub fn cases() -> Vec<Case> {
        let chars: BTreeMap<char, u8> = [('a', 1), ('\n', 2), ('\u{e9}', 3), ('\u{1f600}', 4), ('"', 5), ('/', 6), ('~', 7)].into();
        let ids = [Uuid::nil(), Uuid::max(), Uuid::from_u128(0x67e5_5044_10b1_426f_9247_bb68_0e5f_e0c8)];
        let empty = Root {
            flags: BTreeMap::new(), owners: HashMap::new(), inner: Inner { by_char: BTreeMap::new() },
            rows: vec![], events: vec![], maybe: None,
        };
        let full = Root {
            flags: [(true, 1), (false, 0)].into(),
            owners: ids.iter().map(|id| (*id, id.to_string())).collect(),
            inner: Inner { by_char: chars.clone() },
            rows: vec![Inner { by_char: chars }, Inner { by_char: BTreeMap::new() }],
            events: vec![Event::Idle, Event::Seen { by_id: ids.iter().map(|id| (*id, true)).collect() }],
            maybe: Some([(false, 9)].into()),
        };
        // A payload serde writes for `Root`, by hand, for the probes below to bend.
        let base = json!({
            "flags": { "true": 1 }, "owners": { "00000000-0000-0000-0000-000000000000": "n" },
            "inner": { "by_char": { "x": 1 } }, "rows": [{ "by_char": {} }],
            "events": [{ "Seen": { "by_id": {} } }], "maybe": { "false": 1 },
        });
        let upper = "67E55044-10B1-426F-9247-BB680E5FE0C8";
        vec![case("typed_key_maps", vec![empty, full], &[])
            .accepts(vec![base.clone(), put(base.clone(), "", "maybe", json!(null))])
            .rejects(vec![
                ("a bool key that is not true or false", put(base.clone(), "/flags", "maybe", json!(1))),
                ("a bool key in another case", put(base.clone(), "/flags", "True", json!(1))),
                ("a bool key written as a number", put(base.clone(), "/maybe", "1", json!(1))),
                ("an empty char key", put(base.clone(), "/inner/by_char", "", json!(1))),
                ("a char key of two characters", put(base.clone(), "/rows/0/by_char", "ab", json!(1))),
                ("a char key of two emoji", put(base.clone(), "/inner/by_char", "\u{1f600}\u{1f600}", json!(1))),
                ("an uppercase uuid key (Uuid writes lowercase)", put(base.clone(), "/owners", upper, json!("u"))),
                ("a uuid key without hyphens", put(base.clone(), "/owners", "67e5504410b1426f9247bb680e5fe0c8", json!("u"))),
                ("a braced uuid key", put(base.clone(), "/owners", "{67e55044-10b1-426f-9247-bb680e5fe0c8}", json!("u"))),
                ("a urn uuid key", put(base.clone(), "/owners", "urn:uuid:67e55044-10b1-426f-9247-bb680e5fe0c8", json!("u"))),
                ("a word as a uuid key in an enum variant", put(base.clone(), "/events/0/Seen/by_id", "me", json!(true))),
            ])]
    }
}

flatten_typed_key_maps {
    #[derive(Serialize, JsonSchema)]
    pub struct Item {
        pub count: u8,
        #[serde(flatten)]
        #[schemars(with = "contract_runtime::FlatMap<char, u8>")]
        pub by_char: BTreeMap<char, u8>,
    }

    #[derive(Serialize, JsonSchema)]
    pub enum Event {
        Tally { id: u32, #[serde(flatten)] #[schemars(with = "contract_runtime::FlatMap<Uuid, u32>")] counts: HashMap<Uuid, u32> },
        Idle,
    }

    #[derive(Serialize, JsonSchema)]
    #[serde(tag = "kind")]
    pub enum Tagged { Bag { #[serde(flatten)] #[schemars(with = "contract_runtime::FlatMap<bool, String>")] flags: BTreeMap<bool, String> }, Empty }

    /// Flattened maps with `bool`, `char` and `Uuid` keys, declared with
    /// `contract_runtime::FlatMap`: at the root, in array items of a `$defs` struct, in an
    /// externally and in an internally tagged variant.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root {
        pub id: u32,
        #[serde(flatten)]
        #[schemars(with = "contract_runtime::FlatMap<bool, u32>")]
        pub votes: BTreeMap<bool, u32>,
        pub items: Vec<Item>,
        pub events: Vec<Event>,
        pub tagged: Tagged,
    }

    pub fn cases() -> Vec<Case> {
        let empty = Root { id: 0, votes: BTreeMap::new(), items: vec![], events: vec![], tagged: Tagged::Empty };
        let full = Root {
            id: 1,
            votes: [(true, 3), (false, 4)].into(),
            items: vec![Item { count: 1, by_char: [('a', 1), ('\n', 2), ('\u{1f600}', 3), ('\\', 4)].into() }, Item { count: 2, by_char: BTreeMap::new() }],
            events: vec![Event::Idle, Event::Tally { id: 2, counts: [(Uuid::nil(), 1), (Uuid::max(), 2)].into() }],
            tagged: Tagged::Bag { flags: [(false, "f".to_owned())].into() },
        };
        let base = json!({
            "id": 1, "true": 2,
            "items": [{ "count": 1, "z": 2 }],
            "events": [{ "Tally": { "id": 2, "ffffffff-ffff-ffff-ffff-ffffffffffff": 1 } }],
            "tagged": { "kind": "Bag", "true": "t" },
        });
        vec![case("flatten_typed_key_maps", vec![empty, full], &[])
            .accepts(vec![base.clone()])
            .rejects(vec![
                ("a bool-keyed value of the wrong type", put(base.clone(), "", "false", json!("x"))),
            ])
            .rejects_exact(vec![
                ("a bool key that is not true or false", put(base.clone(), "", "yes", json!(1))),
                ("a char key of two characters", put(base.clone(), "/items/0", "ab", json!(1))),
                ("an empty char key", put(base.clone(), "/items/0", "", json!(1))),
                ("an uppercase uuid key in a variant", put(base.clone(), "/events/0/Tally", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", json!(1))),
                ("a word key in an internally tagged variant", put(base.clone(), "/tagged", "maybe", json!("m"))),
            ])]
    }
}

root_fields_typed_by_the_derive {
    #[derive(Serialize, JsonSchema)]
    pub struct Audit {
        pub created_by: String,
        pub created_at: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub note: Option<String>,
    }

    /// Typed-key maps, a flattened typed-key map and a flattened `Option<Struct>` as
    /// fields of the contract type, with no helper: the derive sees the Rust types.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    #[serde(rename_all = "camelCase")]
    pub struct Root {
        pub seen_flags: BTreeMap<bool, u32>,
        pub chars: Option<HashMap<char, u8>>,
        pub owners: Vec<BTreeMap<Uuid, String>>,
        pub counts: BTreeMap<u16, u8>,
        #[serde(flatten)]
        pub audit: Option<Audit>,
        #[serde(flatten)]
        pub votes: BTreeMap<bool, String>,
    }

    pub fn cases() -> Vec<Case> {
        let empty = Root { seen_flags: BTreeMap::new(), chars: None, owners: vec![], counts: BTreeMap::new(), audit: None, votes: BTreeMap::new() };
        let full = Root {
            seen_flags: [(true, 1), (false, 2)].into(),
            chars: Some([('\u{1f600}', 1), ('\t', 2)].into()),
            owners: vec![[(Uuid::nil(), "n".to_owned()), (Uuid::max(), "m".to_owned())].into(), BTreeMap::new()],
            counts: [(0, 1), (u16::MAX, 2)].into(),
            audit: Some(Audit { created_by: "alice".into(), created_at: 7, note: Some("n".into()) }),
            votes: [(true, "yes".to_owned()), (false, "no".to_owned())].into(),
        };
        let base = json!({ "seenFlags": { "true": 1 }, "chars": null, "owners": [{}], "counts": { "3": 4 }, "false": "no" });
        vec![case("root_fields_typed_by_the_derive", vec![empty, full], &[])
            .accepts(vec![base.clone(), put(put(base.clone(), "", "created_by", json!("a")), "", "created_at", json!(1))])
            .rejects(vec![
                ("a bool key that is not true or false", put(base.clone(), "/seenFlags", "maybe", json!(1))),
                ("a char key of two characters inside an Option", put(base.clone(), "", "chars", json!({ "ab": 1 }))),
                ("an uppercase uuid key inside a Vec", put(base.clone(), "/owners/0", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", json!("m"))),
                ("created_by without created_at", put(base.clone(), "", "created_by", json!("alice"))),
                ("the optional note alone", put(base.clone(), "", "note", json!("n"))),
            ])
            .rejects_exact(vec![
                ("a flattened bool map key that is not true or false", put(base.clone(), "", "maybe", json!("m"))),
                ("a u16 map key with a leading zero", put(base.clone(), "/counts", "03", json!(1))),
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
    // The fast path covers none of these shapes (maps and typed keys): jsonschema alone
    // judges them.
    corpus::check(exact::all(), additive::all(), corpus::Floor { shapes: 6, probes: 96, fast_covered: 0 });
}
