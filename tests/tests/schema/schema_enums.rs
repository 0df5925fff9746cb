//! No false rejects from the derive for enums: externally, internally and adjacently
//! tagged and untagged enums with every variant kind, at the root and nested; variant
//! renames (`rename`, `rename_all`, `rename_all_fields`, names with `/`, `.` and `~`),
//! `#[serde(other)]`, `#[serde(untagged)]` variants in a tagged enum,
//! `deny_unknown_fields` on a tagged enum, and internally tagged newtype variants around
//! a map, an enum, a strict struct and a transparent wrapper.
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

// ----------------------------------------------------------- tagging

external_enum {
    #[derive(Serialize, JsonSchema)]
    pub struct Inner { pub size: u32 }

    /// Externally tagged (serde's default), every variant kind.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub enum Root { Unit, Newtype(u32), Tuple(u8, String), Struct { a: i64, b: Option<String> }, Nested(Inner) }

    pub fn cases() -> Vec<Case> {
        vec![case("external_enum", vec![
            Root::Unit, Root::Newtype(3), Root::Tuple(1, "x".into()),
            Root::Struct { a: -5, b: None }, Root::Struct { a: 5, b: Some("b".into()) }, Root::Nested(Inner { size: 1 }),
        ], &[])]
    }
}

external_enum_in_struct {
    #[derive(Serialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum Level { Low, VeryHigh }

    #[derive(Serialize, JsonSchema)]
    pub enum Shape { Circle { r: f64 }, Rect { w: f64, h: f64 }, Dot }

    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub level: Level, pub shapes: Vec<Shape>, pub main: Option<Shape> }

    pub fn cases() -> Vec<Case> {
        vec![case("external_enum_in_struct", vec![
            Root { level: Level::Low, shapes: vec![], main: None },
            Root { level: Level::VeryHigh, shapes: vec![Shape::Circle { r: 1.5 }, Shape::Rect { w: 1.0, h: 2.0 }, Shape::Dot], main: Some(Shape::Dot) },
            Root { level: Level::Low, shapes: vec![], main: Some(Shape::Rect { w: 0.0, h: 0.0 }) },
        ], &[])]
    }
}

internal_enum {
    #[derive(Serialize, JsonSchema)]
    pub struct Inner { pub size: u32, pub label: Option<String> }

    #[derive(Serialize, JsonSchema)]
    pub struct Marker;

    /// Internally tagged: unit, newtype of a struct, newtype of a unit struct, struct.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    #[serde(tag = "kind")]
    pub enum Root { Unit, Newtype(Inner), Marked(Marker), Struct { a: u32, inner: Inner } }

    pub fn cases() -> Vec<Case> {
        vec![case("internal_enum", vec![
            Root::Unit, Root::Newtype(Inner { size: 1, label: None }), Root::Newtype(Inner { size: 2, label: Some("l".into()) }),
            Root::Marked(Marker), Root::Struct { a: 1, inner: Inner { size: 0, label: None } },
        ], &[])]
    }
}

internal_enum_newtype_map {
    /// An internally tagged newtype variant around a map: the tag sits among free keys.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    #[serde(tag = "type")]
    pub enum Root { Counts(BTreeMap<String, u32>) }

    pub fn cases() -> Vec<Case> {
        let m = |kv: &[(&str, u32)]| kv.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect();
        // The root is a map: any key is valid output.
        vec![case("internal_enum_newtype_map", vec![Root::Counts(BTreeMap::new()), Root::Counts(m(&[("a", 1), ("b", 2)]))], &[""])]
    }
}

internal_enum_nested {
    #[derive(Serialize, JsonSchema)]
    #[serde(tag = "op", rename_all = "lowercase")]
    pub enum Step { Copy { from: String, to: String }, Delete { path: String }, Noop }

    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub steps: Vec<Step>, pub first: Option<Step> }

    pub fn cases() -> Vec<Case> {
        vec![case("internal_enum_nested", vec![
            Root { steps: vec![], first: None },
            Root { steps: vec![Step::Copy { from: "a".into(), to: "b".into() }, Step::Delete { path: "c".into() }, Step::Noop], first: Some(Step::Noop) },
        ], &[])]
    }
}

adjacent_enum {
    #[derive(Serialize, JsonSchema)]
    pub struct Inner { pub id: u32 }

    /// Adjacently tagged: every variant kind.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    #[serde(tag = "t", content = "c")]
    pub enum Root { Unit, Newtype(u32), Tuple(u8, bool), Struct { a: String }, Nested(Inner) }

    pub fn cases() -> Vec<Case> {
        vec![case("adjacent_enum", vec![
            Root::Unit, Root::Newtype(9), Root::Tuple(1, true), Root::Struct { a: "s".into() }, Root::Nested(Inner { id: 4 }),
        ], &[])]
    }
}

untagged_enum {
    #[derive(Serialize, JsonSchema)]
    pub struct Inner { pub name: String, pub size: u64 }

    /// Untagged: null, string, array, object, nested object.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    #[serde(untagged)]
    pub enum Root { Unit, Text(String), Pair(u32, u32), Point { x: f64, y: f64 }, Inner(Inner) }

    pub fn cases() -> Vec<Case> {
        vec![case("untagged_enum", vec![
            Root::Unit, Root::Text("t".into()), Root::Pair(1, 2), Root::Point { x: 0.5, y: -1.0 }, Root::Inner(Inner { name: "n".into(), size: 3 }),
        ], &[])]
    }
}

untagged_overlap {
    /// Variants whose objects overlap: `Short` is a prefix of `Long`.
    #[derive(Serialize, JsonSchema)]
    #[serde(untagged)]
    pub enum Ticket { Short { id: u32 }, Long { id: u32, title: String } }

    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub tickets: Vec<Ticket> }

    pub fn cases() -> Vec<Case> {
        vec![case("untagged_overlap", vec![
            Root { tickets: vec![] },
            Root { tickets: vec![Ticket::Short { id: 1 }, Ticket::Long { id: 2, title: "t".into() }] },
        ], &[])]
    }
}

untagged_variant_in_tagged_enum {
    /// serde 1.0.181+: an `#[serde(untagged)]` variant at the end of a tagged enum.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub enum Root { Known { id: u32 }, Empty, #[serde(untagged)] Raw(String), #[serde(untagged)] Other { code: u16 } }

    pub fn cases() -> Vec<Case> {
        vec![case("untagged_variant_in_tagged_enum", vec![
            Root::Known { id: 1 }, Root::Empty, Root::Raw("r".into()), Root::Other { code: 7 },
        ], &[])]
    }
}

internal_newtype_odd_contents {
    #[derive(Serialize, JsonSchema)]
    pub enum Action { Move { dx: i8 }, Stop }

    #[derive(Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct Strict { pub code: u16 }

    #[derive(Serialize, JsonSchema)]
    pub struct Inner { pub size: u8 }

    #[derive(Serialize, JsonSchema)]
    #[serde(transparent)]
    pub struct Wrapper { pub inner: Inner }

    /// Internally tagged newtype variants around an externally tagged enum, a struct with
    /// `deny_unknown_fields`, and a transparent wrapper of a struct.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    #[serde(tag = "t")]
    pub enum Root { Act(Action), Strict(Strict), Wrapped(Wrapper) }

    pub fn cases() -> Vec<Case> {
        vec![case("internal_newtype_odd_contents", vec![
            Root::Act(Action::Move { dx: -1 }), Root::Strict(Strict { code: 1 }), Root::Wrapped(Wrapper { inner: Inner { size: 2 } }),
        ], &[])]
    }
}

// -------------------------------------- variant names and attributes

enum_rename_slash_dot {
    /// Variant names with `/`, `.` and `~`, which must be escaped in pointers.
    #[derive(Serialize, JsonSchema)]
    pub enum Kind { #[serde(rename = "qe/unit")] Unit, #[serde(rename = "v1.2")] Version, #[serde(rename = "a~b")] Tilde(u8) }

    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    #[serde(tag = "kind.name")]
    pub enum Root {
        #[serde(rename = "x/y")]
        Slash { #[serde(rename = "a/b")] ab: u32, #[serde(rename = "c.d")] cd: Kind },
        #[serde(rename = "p.q")]
        Dot,
    }

    pub fn cases() -> Vec<Case> {
        vec![case("enum_rename_slash_dot", vec![
            Root::Slash { ab: 1, cd: Kind::Unit }, Root::Slash { ab: 2, cd: Kind::Version }, Root::Slash { ab: 3, cd: Kind::Tilde(7) }, Root::Dot,
        ], &[])]
    }
}

serde_other {
    /// `#[serde(other)]` only matters when deserializing; serializing writes the name.
    #[derive(Serialize, JsonSchema)]
    #[serde(tag = "kind")]
    pub enum Event { Start { at: u32 }, Stop, #[serde(other)] Unknown }

    #[derive(Serialize, JsonSchema)]
    #[serde(tag = "t", content = "c")]
    pub enum Signal { Level(u8), #[serde(other)] Other }

    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub events: Vec<Event>, pub signal: Signal }

    pub fn cases() -> Vec<Case> {
        vec![case("serde_other", vec![
            Root { events: vec![Event::Start { at: 1 }, Event::Stop, Event::Unknown], signal: Signal::Other },
            Root { events: vec![], signal: Signal::Level(3) },
        ], &[])]
    }
}

enum_rename_all_fields {
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    #[serde(tag = "type", rename_all = "kebab-case", rename_all_fields = "camelCase")]
    pub enum Root { FirstThing { user_id: u32, display_name: String }, SecondThing { is_ok: bool } }

    pub fn cases() -> Vec<Case> {
        vec![case("enum_rename_all_fields", vec![
            Root::FirstThing { user_id: 1, display_name: "d".into() }, Root::SecondThing { is_ok: true },
        ], &[])]
    }
}

deny_unknown_internal_enum {
    #[derive(Serialize, JsonSchema)]
    pub struct Inner { pub size: u32 }

    /// `deny_unknown_fields` on an internally tagged enum with a newtype variant.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    #[serde(tag = "kind", deny_unknown_fields)]
    pub enum Root { Wrapped(Inner), Inline { a: u8 }, Unit }

    pub fn cases() -> Vec<Case> {
        vec![case("deny_unknown_internal_enum", vec![Root::Wrapped(Inner { size: 1 }), Root::Inline { a: 1 }, Root::Unit], &[])]
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
    corpus::check(exact::all(), additive::all(), corpus::Floor { shapes: 14, probes: 66, fast_covered: 2 });
}
