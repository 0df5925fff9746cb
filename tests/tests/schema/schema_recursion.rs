//! No false rejects from the derive for recursive types: trees through `Vec<Self>`,
//! `Box` and `Option<Box<_>>`, recursive internally tagged enums, recursion through a
//! flattened object, and a root type that is also flattened into, or the newtype content
//! of, a type it contains (the root schema reached again through `$ref: "#"`).
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

// --------------------------------------------------------- recursion

recursion_tree {
    /// A tree through `Vec<Self>`.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Tree { pub value: i32, pub children: Vec<Tree> }

    pub fn cases() -> Vec<Case> {
        let leaf = |v| Tree { value: v, children: vec![] };
        vec![case("recursion_tree", vec![
            leaf(0), Tree { value: 1, children: vec![leaf(2), Tree { value: 3, children: vec![leaf(4)] }] },
        ], &[])]
    }
}

recursion_box {
    /// A recursive externally tagged enum through `Box`.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub enum Expr { Num(i64), Add(Box<Expr>, Box<Expr>), Neg { inner: Box<Expr> }, Zero }

    pub fn cases() -> Vec<Case> {
        vec![case("recursion_box", vec![
            Expr::Zero, Expr::Num(1), Expr::Add(Box::new(Expr::Num(1)), Box::new(Expr::Neg { inner: Box::new(Expr::Zero) })),
        ], &[])]
    }
}

recursion_list {
    #[derive(Serialize, JsonSchema)]
    pub struct Node { pub v: u8, pub next: Option<Box<Node>> }

    /// A linked list through `Option<Box<Self>>`, behind a field.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub head: Option<Node> }

    pub fn cases() -> Vec<Case> {
        vec![case("recursion_list", vec![
            Root { head: None }, Root { head: Some(Node { v: 1, next: Some(Box::new(Node { v: 2, next: Some(Box::new(Node { v: 3, next: None })) })) }) },
        ], &[])]
    }
}

recursion_internal {
    /// A recursive internally tagged enum.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    #[serde(tag = "op")]
    pub enum Op { Leaf { v: u32 }, Pair { l: Box<Op>, r: Box<Op> }, Many { ops: Vec<Op> } }

    pub fn cases() -> Vec<Case> {
        vec![case("recursion_internal", vec![
            Op::Leaf { v: 1 }, Op::Pair { l: Box::new(Op::Leaf { v: 1 }), r: Box::new(Op::Many { ops: vec![Op::Leaf { v: 2 }] }) },
        ], &[])]
    }
}

recursion_flatten {
    #[derive(Serialize, JsonSchema)]
    pub struct Meta { pub depth: u8 }

    /// A recursive type that also flattens: the recursion passes through a composed object.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Dir { pub name: String, #[serde(flatten)] pub meta: Meta, pub subdirs: Vec<Dir> }

    pub fn cases() -> Vec<Case> {
        vec![case("recursion_flatten", vec![
            Dir { name: "a".into(), meta: Meta { depth: 0 }, subdirs: vec![] },
            Dir { name: "a".into(), meta: Meta { depth: 0 }, subdirs: vec![Dir { name: "b".into(), meta: Meta { depth: 1 }, subdirs: vec![] }] },
        ], &[])]
    }
}

recursive_root_flattened {
    #[derive(Serialize, JsonSchema)]
    pub struct Kid { pub weight: u8, #[serde(flatten)] pub node: Node }

    /// The root type is flattened into a type it contains: the root schema is both the
    /// outermost object and a composed branch.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Node { pub name: String, pub kids: Vec<Kid> }

    pub fn cases() -> Vec<Case> {
        let leaf = |n: &str| Node { name: n.into(), kids: vec![] };
        vec![case("recursive_root_flattened", vec![
            leaf("a"), Node { name: "a".into(), kids: vec![Kid { weight: 1, node: leaf("b") }, Kid { weight: 2, node: Node { name: "c".into(), kids: vec![Kid { weight: 3, node: leaf("d") }] } }] },
        ], &[])]
    }
}

recursive_flattened_def {
    #[derive(Serialize, JsonSchema)]
    pub struct Kid { pub weight: u8, #[serde(flatten)] pub node: Node }

    #[derive(Serialize, JsonSchema)]
    pub struct Node { pub name: String, pub kids: Vec<Kid> }

    /// The same recursion one level down, in `$defs`.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub tree: Node }

    pub fn cases() -> Vec<Case> {
        let leaf = |n: &str| Node { name: n.into(), kids: vec![] };
        vec![case("recursive_flattened_def", vec![
            Root { tree: leaf("a") }, Root { tree: Node { name: "a".into(), kids: vec![Kid { weight: 1, node: leaf("b") }] } },
        ], &[])]
    }
}

internal_newtype_shared_and_recursive {
    #[derive(Serialize, JsonSchema)]
    pub struct Inner { pub name: String, pub children: Vec<Root>, pub twin: Option<Box<Inner>> }

    /// The newtype variant's struct is composed with the tag (left open) and also used
    /// as a plain field (closed at that use), and it recurses back to the root.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    #[serde(tag = "kind")]
    pub enum Root { Wrapped(Inner), Leaf { n: u8 } }

    pub fn cases() -> Vec<Case> {
        let inner = |n: &str| Inner { name: n.into(), children: vec![], twin: None };
        vec![case("internal_newtype_shared_and_recursive", vec![
            Root::Leaf { n: 1 },
            Root::Wrapped(inner("a")),
            Root::Wrapped(Inner { name: "b".into(), children: vec![Root::Leaf { n: 2 }, Root::Wrapped(inner("c"))], twin: Some(Box::new(inner("d"))) }),
        ], &[])]
    }
}

root_as_internal_newtype {
    #[derive(Serialize, JsonSchema)]
    #[serde(tag = "k")]
    pub enum Entry { Nested(Root), Leaf { v: u8 } }

    /// The root struct is also the content of an internally tagged newtype variant: the
    /// root schema is the outermost object and, through `$ref: "#"`, a composed branch.
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = $c)]
    pub struct Root { pub name: String, pub entries: Vec<Entry> }

    pub fn cases() -> Vec<Case> {
        let leaf = |n: &str| Root { name: n.into(), entries: vec![] };
        vec![case("root_as_internal_newtype", vec![
            leaf("a"),
            Root { name: "a".into(), entries: vec![Entry::Leaf { v: 1 }, Entry::Nested(leaf("b")), Entry::Nested(Root { name: "c".into(), entries: vec![Entry::Nested(leaf("d"))] })] },
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
    corpus::check(exact::all(), additive::all(), corpus::Floor { shapes: 9, probes: 45, fast_covered: 10 });
}
