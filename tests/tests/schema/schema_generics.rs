//! No false rejects from the derive for generic types and type names: one generic
//! contract in two instantiations, several instantiations inside one schema, two types of
//! the same name from different modules, and a flattened generic parameter.
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

// ------------------------------------------------ generics and names

generics {
    #[derive(Serialize, JsonSchema)]
    pub struct Item { pub id: u32 }

    /// One generic contract, two instantiations.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Page<T> { pub items: Vec<T>, pub next: Option<String>, pub total: u64 }

    pub fn cases() -> Vec<Case> {
        vec![
            case("generics<Item>", vec![
                Page { items: vec![], next: None, total: 0 }, Page { items: vec![Item { id: 1 }, Item { id: 2 }], next: Some("n".into()), total: 2 },
            ], &[]),
            case("generics<String>", vec![
                Page { items: vec!["a".to_owned()], next: None, total: 1 }, Page { items: vec![], next: Some(String::new()), total: 9 },
            ], &[]),
        ]
    }
}

generics_nested {
    #[derive(Serialize, JsonSchema)]
    pub struct Item { pub id: u32 }

    #[derive(Serialize, JsonSchema)]
    pub struct Page<T> { pub items: Vec<T> }

    /// Two instantiations of one generic inside one schema: `$defs` `Page` and `Page2`.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub items: Page<Item>, pub names: Page<String>, pub pages: Page<Page<Item>> }

    pub fn cases() -> Vec<Case> {
        vec![case("generics_nested", vec![
            Root { items: Page { items: vec![] }, names: Page { items: vec![] }, pages: Page { items: vec![] } },
            Root { items: Page { items: vec![Item { id: 1 }] }, names: Page { items: vec!["n".into()] }, pages: Page { items: vec![Page { items: vec![Item { id: 2 }] }] } },
        ], &[])]
    }
}

same_names {
    pub mod a {
        use crate::support::corpus::prelude::*;
        #[derive(Serialize, JsonSchema)]
        pub struct Item { pub id: u32 }
    }
    pub mod b {
        use crate::support::corpus::prelude::*;
        #[derive(Serialize, JsonSchema)]
        pub struct Item { pub name: String, pub id: String }
    }

    /// Two types named `Item`: schemars must keep both `$defs` apart.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub a: a::Item, pub b: b::Item, pub more_a: Vec<a::Item>, pub more_b: Option<b::Item> }

    pub fn cases() -> Vec<Case> {
        vec![case("same_names", vec![
            Root { a: a::Item { id: 1 }, b: b::Item { name: "n".into(), id: "x".into() }, more_a: vec![], more_b: None },
            Root { a: a::Item { id: 1 }, b: b::Item { name: "n".into(), id: "x".into() }, more_a: vec![a::Item { id: 2 }], more_b: Some(b::Item { name: String::new(), id: String::new() }) },
        ], &[])]
    }
}

generic_flatten {
    #[derive(Serialize, JsonSchema)]
    pub struct Meta { pub source: String }

    /// A generic parameter that is flattened: a struct in one instantiation, a map in the other.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Envelope<T> { pub id: u32, #[serde(flatten)] pub body: T }

    pub fn cases() -> Vec<Case> {
        vec![
            case("generic_flatten<Meta>", vec![Envelope { id: 1, body: Meta { source: "s".into() } }, Envelope { id: 2, body: Meta { source: String::new() } }], &[]),
            case("generic_flatten<BTreeMap>", vec![Envelope { id: 1, body: BTreeMap::<String, u8>::new() }, Envelope { id: 2, body: [("k".to_owned(), 1_u8)].into() }], &[""]),
        ]
    }
}

generic_flatten_enum {
    #[derive(Serialize, JsonSchema)]
    #[serde(tag = "op")]
    pub enum Op { Put { key: String }, Drop }

    #[derive(Serialize, JsonSchema)]
    pub struct Envelope<T> { pub seq: u64, #[serde(flatten)] pub body: T }

    #[derive(Serialize, JsonSchema)]
    pub struct Outer<T> { pub at: u32, #[serde(flatten)] pub inner: T }

    /// A generic flattened parameter that is an internally tagged enum, nested twice.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub ops: Vec<Envelope<Op>>, pub last: Outer<Envelope<Op>> }

    pub fn cases() -> Vec<Case> {
        vec![case("generic_flatten_enum", vec![
            Root { ops: vec![], last: Outer { at: 1, inner: Envelope { seq: 2, body: Op::Drop } } },
            Root { ops: vec![Envelope { seq: 1, body: Op::Put { key: "k".into() } }, Envelope { seq: 2, body: Op::Drop }], last: Outer { at: 3, inner: Envelope { seq: 4, body: Op::Put { key: String::new() } } } },
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
    corpus::check(exact::all(), additive::all(), corpus::Floor { shapes: 7, probes: 33, fast_covered: 12 });
}
