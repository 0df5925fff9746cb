//! Opaque subtrees and schemas that accept any value.
//!
//! A subtree declared opaque is a pass-through value whose shape the contract does not
//! own. Nothing inside it is closed under `exact` and nothing inside it is linted: the
//! `$defs` it reaches are its own (a definition reached both from an opaque subtree and
//! from the rest of the schema is copied, the copy left open for the opaque uses). The
//! "no silent `{}`" lint sees every spelling of "any JSON value", not only `{}`: a `type`
//! list of every JSON type, or an `anyOf`/`oneOf` whose branches together admit every type.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::{escape_pointer_token, for_each_child_mut, ANNOTATIONS, NOT_CONSTRAINING, OPAQUE_MARK};
use crate::contract::pointer::unescape;

/// One bit per JSON type; `number` admits integers as well, `integer` only them.
const OBJECT: u8 = 1;
const ARRAY: u8 = 1 << 1;
const STRING: u8 = 1 << 2;
const NUMBER: u8 = 1 << 3;
const INTEGER: u8 = 1 << 4;
const BOOLEAN: u8 = 1 << 5;
const NULL: u8 = 1 << 6;
/// Every JSON value: `integer` is inside `number`.
const EVERY: u8 = OBJECT | ARRAY | STRING | NUMBER | INTEGER | BOOLEAN | NULL;

fn type_bits(name: &str) -> Option<u8> {
    Some(match name {
        "object" => OBJECT,
        "array" => ARRAY,
        "string" => STRING,
        // A number may be an integer.
        "number" => NUMBER | INTEGER,
        "integer" => INTEGER,
        "boolean" => BOOLEAN,
        "null" => NULL,
        _ => return None,
    })
}

/// Whether `node` is a schema that accepts any value: no keyword but annotations, or a
/// spelling of "any JSON type". Keywords that would constrain only a type the node does
/// not admit are not read: such a node is not recognised (it is left to its author).
pub(super) fn accepts_any(node: &Value) -> bool {
    admitted(node) == Some(EVERY)
}

/// The JSON types `node` admits with no constraint on their values, when that is all it
/// says: only `type`, annotations, `anyOf`/`oneOf` of such schemas, and permissive
/// `additionalProperties`/`items` (what `serde_json::Map` writes). `None` for anything else.
fn admitted(node: &Value) -> Option<u8> {
    let obj = match node {
        Value::Bool(true) => return Some(EVERY),
        Value::Object(obj) => obj,
        _ => return None,
    };
    let mut bits = EVERY;
    for (key, value) in obj {
        let key = key.as_str();
        if ANNOTATIONS.contains(&key) || NOT_CONSTRAINING.contains(&key) {
            continue;
        }
        bits &= match (key, value) {
            ("type", Value::String(t)) => type_bits(t)?,
            ("type", Value::Array(ts)) => {
                ts.iter().map(|t| t.as_str().and_then(type_bits)).try_fold(0, |acc, b| Some(acc | b?))?
            }
            ("anyOf" | "oneOf", Value::Array(branches)) => {
                branches.iter().map(admitted).try_fold(0, |acc, b| Some(acc | b?))?
            }
            ("additionalProperties" | "items" | "unevaluatedProperties" | "unevaluatedItems", sub)
                if admitted(sub) == Some(EVERY) =>
            {
                EVERY
            }
            _ => return None,
        };
    }
    Some(bits)
}

/// A `oneOf` of every JSON type that lists both `number` and `integer` (or any other two
/// branches that admit the same values) refuses every integer: it matches two branches.
/// The intent is "any value", which is what `anyOf` says; the branches are kept as written.
pub(super) fn overlapping_one_of_as_any_of(node: &mut Value) {
    if let Some(obj) = node.as_object_mut() {
        let overlapping = match obj.get("oneOf") {
            Some(Value::Array(branches)) if !obj.contains_key("anyOf") => {
                let bits: Option<Vec<u8>> = branches.iter().map(admitted).collect();
                bits.is_some_and(|bits| {
                    let union = bits.iter().fold(0, |acc, b| acc | b);
                    let total: u32 = bits.iter().map(|b| b.count_ones()).sum();
                    union == EVERY && total > union.count_ones()
                })
            }
            _ => false,
        };
        if overlapping && let Some(branches) = obj.remove("oneOf") {
            obj.insert("anyOf".to_owned(), branches);
        }
    }
    for_each_child_mut(node, &mut overlapping_one_of_as_any_of);
}

fn is_marked(node: &Value) -> bool {
    node.get(OPAQUE_MARK).is_some()
}

/// Which `$defs` entries (as `#/$defs/…` references) the schema reaches from outside every
/// opaque subtree (`owned`) and which from inside one (`opaque`).
#[derive(Default)]
struct Reach {
    owned: BTreeSet<String>,
    opaque: BTreeSet<String>,
}

/// Records the `$ref`s below `node` (not descending into `$defs`), each with whether it
/// sits inside an opaque subtree.
fn refs_below(node: &Value, inside: bool, out: &mut Vec<(String, bool)>) {
    let Some(obj) = node.as_object() else { return };
    let inside = inside || is_marked(node);
    if let Some(reference) = obj.get("$ref").and_then(Value::as_str) {
        out.push((reference.to_owned(), inside));
    }
    super::for_each_child(node, |suffix, child| {
        if !suffix.starts_with("/$defs/") && !suffix.starts_with("/definitions/") {
            refs_below(child, inside, out);
        }
    });
}

fn reach(root: &Value) -> Reach {
    let mut reach = Reach::default();
    let mut work = Vec::new();
    refs_below(root, false, &mut work);
    while let Some((reference, inside)) = work.pop() {
        let set = if inside { &mut reach.opaque } else { &mut reach.owned };
        if !set.insert(reference.clone()) {
            continue;
        }
        if let Some(target) = super::resolve(root, &reference) {
            refs_below(target, inside, &mut work);
        }
    }
    reach
}

/// The `$defs` name a `#/$defs/…` reference points at.
fn def_name(reference: &str) -> Option<String> {
    reference.strip_prefix("#/$defs/").filter(|rest| !rest.contains('/')).map(unescape)
}

/// Gives each opaque subtree `$defs` of its own, so that closing objects under `exact`
/// never reaches into one: a definition reached both from an opaque subtree and from the
/// rest of the schema is copied (named `<Name>Opaque`), and the references inside opaque
/// subtrees point at the copy. Returns the references of the definitions reached only
/// from opaque subtrees (the copies among them), which are neither closed nor linted.
pub(super) fn own_defs_for_opaque_subtrees(root: &mut Value, copy_shared: bool) -> BTreeSet<String> {
    let reach = reach(root);
    let shared: Vec<String> = reach.owned.intersection(&reach.opaque).cloned().collect();
    if !copy_shared || shared.is_empty() {
        return reach.opaque.difference(&reach.owned).cloned().collect();
    }
    let Some(Value::Object(mut defs)) = root.as_object_mut().and_then(|o| o.remove("$defs")) else {
        return reach.opaque.difference(&reach.owned).cloned().collect();
    };
    let mut copies = BTreeMap::new();
    for reference in &shared {
        let Some(name) = def_name(reference) else { continue };
        let Some(body) = defs.get(&name).cloned() else { continue };
        let base = format!("{name}Opaque");
        let copy = std::iter::once(base.clone())
            .chain((2..=defs.len() + 1).map(|i| format!("{base}{i}")))
            .find(|n| !defs.contains_key(n))
            .unwrap_or(base);
        copies.insert(reference.clone(), format!("#/$defs/{}", escape_pointer_token(&copy)));
        defs.insert(copy, body);
    }
    let copy_refs: BTreeSet<String> = copies.values().cloned().collect();
    let only_opaque: BTreeSet<String> = reach.opaque.difference(&reach.owned).cloned().chain(copy_refs).collect();
    point_opaque_uses_at_copies(root, false, &copies);
    for (name, def) in &mut defs {
        let reference = format!("#/$defs/{}", escape_pointer_token(name));
        point_opaque_uses_at_copies(def, only_opaque.contains(&reference), &copies);
    }
    if let Some(obj) = root.as_object_mut() {
        obj.insert("$defs".to_owned(), Value::Object(defs));
    }
    only_opaque
}

/// Points the `$ref`s inside opaque subtrees of `node` at the copies (`$defs` is out of
/// the schema while this runs, so it is not descended).
fn point_opaque_uses_at_copies(node: &mut Value, inside: bool, copies: &BTreeMap<String, String>) {
    let inside = inside || is_marked(node);
    let Some(obj) = node.as_object_mut() else { return };
    if inside && let Some(copy) = obj.get("$ref").and_then(Value::as_str).and_then(|r| copies.get(r)) {
        obj.insert("$ref".to_owned(), Value::String(copy.clone()));
    }
    for_each_child_mut(node, &mut |child| point_opaque_uses_at_copies(child, inside, copies));
}

/// What to write to declare the subschema at `pointer` opaque, for the lint's message:
/// the spelling that works where it is (a field of the contract type, a field of a nested
/// type, a whole type, a flattened map).
pub(super) fn unconstrained_fix(schema: &Value, pointer: &str, field: Option<&str>, root_type: &str) -> String {
    const TRANSFORM: &str = "`#[schemars(transform = contract_runtime::opaque)]`";
    let (owner, rest, nested) = match pointer.strip_prefix("/$defs/") {
        Some(tail) => {
            let name = tail.split('/').next().unwrap_or(tail);
            (unescape(name), &tail[name.len()..], true)
        }
        None => (root_type.to_owned(), pointer, false),
    };
    let owner_node = if nested { schema.pointer(&pointer[..pointer.len() - rest.len()]) } else { Some(schema) };
    if let Some(field) = field {
        let property = format!("/properties/{}", escape_pointer_token(field));
        let own_field = rest.strip_prefix(property.as_str()).is_some_and(|r| r.is_empty() || r.starts_with('/'));
        return if own_field && !nested {
            format!("`#[tool_output(opaque)]` on field `{field}` of `{owner}`")
        } else if own_field {
            format!("{TRANSFORM} on field `{field}` of `{owner}`")
        } else {
            // A field of a variant, or a newtype variant `field` itself.
            format!("{TRANSFORM} on field `{field}` of `{owner}` (for a newtype variant `{field}`, on its one field)")
        };
    }
    if rest.is_empty() {
        return format!("{TRANSFORM} on the type `{owner}`");
    }
    let no_fields = owner_node.is_some_and(|n| n.get("properties").is_none());
    if matches!(rest, "/additionalProperties" | "/unevaluatedProperties") && no_fields {
        return if nested {
            format!(
                "`#[schemars(with = \"contract_runtime::OpaqueMap\")]` on the flattened map field of `{owner}` (schemars ignores `transform` on flattened fields), or {TRANSFORM} on the type `{owner}`"
            )
        } else {
            format!("`#[tool_output(opaque)]` on the flattened map field of `{owner}`")
        };
    }
    if nested {
        format!("{TRANSFORM} on the field of `{owner}` that holds it, or on the type `{owner}`")
    } else {
        format!("{TRANSFORM} on the field of `{owner}` that holds it")
    }
}

/// What to write to declare a flattened map opaque: `#[tool_output(opaque)]` on a field of
/// the contract type itself, [`super::OpaqueMap`] anywhere else (schemars ignores
/// `transform` on flattened fields).
pub(super) fn flattened_map_fix(pointer: &str) -> &'static str {
    let parent = pointer.rsplit_once('/').map_or("", |(parent, _)| parent);
    if parent.is_empty() {
        "`#[tool_output(opaque)]` on the flattened field"
    } else {
        "`#[schemars(with = \"contract_runtime::OpaqueMap\")]` on the flattened field (schemars ignores `transform` on flattened fields)"
    }
}
