//! Closing objects for `exact`: `additionalProperties: false` where nothing is
//! composed, `unevaluatedProperties: false` on the outermost object where serde composes,
//! and nothing inside an opaque subtree.

use std::collections::{BTreeSet, HashSet};

use serde_json::{Map, Value};

use super::{escape_pointer_token, for_each_child_mut, is_opaque, resolve};

/// Whether a schema node describes object members of its own (not only through `$ref`
/// or applicators).
fn has_own_members(obj: &Map<String, Value>) -> bool {
    obj.contains_key("properties") || obj.contains_key("patternProperties") || obj.contains_key("additionalProperties")
}

pub(crate) fn may_be_object(obj: &Map<String, Value>) -> bool {
    let typed_object = match obj.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => false,
    };
    typed_object || has_own_members(obj)
}

/// A node whose instance is built from several schemas at once: serde's `flatten` and
/// internally tagged newtype variants. Such an object is closed with
/// `unevaluatedProperties`, and its branches are left open.
///
/// An applicator whose branches name no property (the `anyOf` of `required` lists that
/// [`AllOrNone`] writes) composes nothing: `additionalProperties: false` beside it sees
/// every property there is, and draft-07 Ajv, which ignores `unevaluatedProperties`,
/// still reads it.
fn is_composed(obj: &Map<String, Value>) -> bool {
    let composes = |k: &str| match obj.get(k) {
        None => false,
        Some(Value::Array(branches)) if matches!(k, "anyOf" | "oneOf" | "allOf") => {
            branches.iter().any(names_properties)
        }
        Some(_) => true,
    };
    let applicator = ["anyOf", "oneOf", "allOf", "$ref", "if"].into_iter().any(composes);
    (has_own_members(obj) && applicator) || composes("allOf")
}

/// Whether a schema may make properties evaluated: it has members of its own, a `$ref`,
/// a conditional or an applicator branch that does. `not` never does.
fn names_properties(node: &Value) -> bool {
    let Some(obj) = node.as_object() else { return false };
    has_own_members(obj)
        || ["$ref", "if", "unevaluatedProperties", "dependentSchemas"].iter().any(|k| obj.contains_key(*k))
        || ["anyOf", "oneOf", "allOf"]
            .iter()
            .filter_map(|k| obj.get(*k).and_then(Value::as_array))
            .any(|branches| branches.iter().any(names_properties))
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Mode {
    /// This node is the outermost schema of its instance: close it.
    Closing,
    /// This node is a branch composed into an object closed further out: leave it open.
    Open,
}

/// Under `exact`, closes every object (root, nested, array items, `$defs`), with
/// `additionalProperties: false` where nothing is composed and with
/// `unevaluatedProperties: false` on the outermost object where serde composes. Nothing
/// inside an opaque subtree is closed, nor any definition in `opaque_defs` (those only
/// opaque subtrees reach).
pub(super) fn close_objects(root: &mut Value, opaque_defs: &BTreeSet<String>) {
    // Pass 1: in which modes is each definition reached?
    let mut seen = reached_modes(root);
    // The root schema is always the outermost object of the result, but it can also be
    // a composed branch: `#[serde(tag = "k")] enum Entry { Nested(Root), … }` inside
    // `Root` composes the root with the tag through `$ref: "#"`. A definition in that
    // position is left open and closed at each use instead; the root has no use to close
    // it at, so its body moves into `$defs` and the root becomes one closing use of it.
    if seen.contains(&("#".to_owned(), Mode::Open)) && hoist_root(root) {
        // No `$ref: "#"` is left after the hoist, so this is not repeated.
        seen = reached_modes(root);
    }
    let open: HashSet<String> = seen.iter().filter(|(_, m)| *m == Mode::Open).map(|(r, _)| r.clone()).collect();
    // Pass 2 records references too; they are not needed any more.
    let mut refs = Vec::new();

    // Pass 2: apply, the root first, then each definition in the mode it needs.
    let defs: Vec<String> = root
        .get("$defs")
        .and_then(Value::as_object)
        .map(|m| m.keys().map(|k| format!("#/$defs/{}", escape_pointer_token(k))).collect())
        .unwrap_or_default();
    let mut root_defs = root.as_object_mut().and_then(|o| o.remove("$defs"));
    visit(root, Mode::Closing, true, &open, &mut refs);
    if let Some(Value::Object(defs_map)) = root_defs.as_mut() {
        for reference in defs.into_iter().filter(|r| !opaque_defs.contains(r)) {
            let name = crate::contract::pointer::unescape(reference.trim_start_matches("#/$defs/"));
            let mode = if open.contains(&reference) { Mode::Open } else { Mode::Closing };
            if let Some(def) = defs_map.get_mut(&name) {
                visit(def, mode, true, &open, &mut refs);
            }
        }
    }
    if let (Some(obj), Some(defs)) = (root.as_object_mut(), root_defs) {
        obj.insert("$defs".to_owned(), defs);
    }
}

/// Every `$ref` reachable from the root, with each mode it is reached in.
fn reached_modes(root: &Value) -> HashSet<(String, Mode)> {
    let mut seen: HashSet<(String, Mode)> = HashSet::new();
    let mut work = vec![];
    let mut refs = Vec::new();
    visit(&mut root.clone(), Mode::Closing, false, &HashSet::new(), &mut refs);
    work.append(&mut refs);
    while let Some((reference, mode)) = work.pop() {
        if !seen.insert((reference.clone(), mode)) {
            continue;
        }
        if let Some(target) = resolve(root, &reference) {
            visit(&mut target.clone(), mode, false, &HashSet::new(), &mut refs);
            work.append(&mut refs);
        }
    }
    seen
}

/// Moves the root's body into `$defs` (named after its title) and points the root and
/// every `$ref: "#"` at it. `$schema` stays at the root; `title` and `description` are
/// kept on both. Returns `false` when the root is not an object schema.
fn hoist_root(root: &mut Value) -> bool {
    fn point_at(node: &mut Value, reference: &str) {
        if let Some(obj) = node.as_object_mut()
            && obj.get("$ref").and_then(Value::as_str) == Some("#")
        {
            obj.insert("$ref".to_owned(), Value::String(reference.to_owned()));
        }
        for_each_child_mut(node, &mut |child| point_at(child, reference));
    }
    let Some(obj) = root.as_object_mut() else { return false };
    let mut defs = match obj.remove("$defs") {
        Some(Value::Object(defs)) => defs,
        _ => Map::new(),
    };
    let base = obj.get("title").and_then(Value::as_str).unwrap_or("Root").to_owned();
    // `$defs` is finite, so one of its length + 1 candidates is free.
    let name = std::iter::once(base.clone())
        .chain((2..=defs.len() + 1).map(|i| format!("{base}{i}")))
        .find(|n| !defs.contains_key(n))
        .unwrap_or(base);
    let reference = format!("#/$defs/{}", escape_pointer_token(&name));
    let mut kept = Map::new();
    for key in ["$schema", "title", "description"] {
        if let Some(value) = obj.get(key) {
            kept.insert(key.to_owned(), value.clone());
        }
    }
    obj.remove("$schema");
    let mut body = Value::Object(std::mem::take(obj));
    point_at(&mut body, &reference);
    defs.values_mut().for_each(|def| point_at(def, &reference));
    defs.insert(name, body);
    *obj = kept;
    obj.insert("$ref".to_owned(), Value::String(reference));
    obj.insert("$defs".to_owned(), Value::Object(defs));
    true
}

/// Visits one schema node in `mode`. With `apply`, closes objects; always records the
/// `$ref`s it meets with the mode their target is reached in. `$defs` are not descended:
/// the caller handles them.
fn visit(node: &mut Value, mode: Mode, apply: bool, open_defs: &HashSet<String>, refs: &mut Vec<(String, Mode)>) {
    if is_opaque(node) {
        // An opaque subtree is the value's own: nothing in it, nor what it refers to, is closed.
        return;
    }
    let Some(obj) = node.as_object_mut() else { return };
    let composed = is_composed(obj);
    let inner_mode = if composed { Mode::Open } else { mode };
    if let Some(reference) = obj.get("$ref").and_then(Value::as_str).map(str::to_owned) {
        refs.push((reference.clone(), inner_mode));
        // The target is left open for a composition elsewhere: close it here, at the use.
        if apply
            && inner_mode == Mode::Closing
            && open_defs.contains(&reference)
            && !obj.contains_key("additionalProperties")
        {
            obj.insert("unevaluatedProperties".to_owned(), Value::Bool(false));
        }
    }
    if apply && mode == Mode::Closing {
        if composed {
            if !obj.contains_key("additionalProperties") && !obj.contains_key("unevaluatedProperties") {
                obj.insert("unevaluatedProperties".to_owned(), Value::Bool(false));
            }
        } else if may_be_object(obj) && !obj.contains_key("additionalProperties") {
            // `patternProperties` alone does not close an object: a key that matches no
            // pattern is still allowed. schemars writes it without `additionalProperties`
            // for a flattened map with integer keys, whose object serde never gives a key
            // outside its fields and the key pattern.
            obj.insert("additionalProperties".to_owned(), Value::Bool(false));
        }
    }
    for (key, value) in obj.iter_mut() {
        match key.as_str() {
            "properties" | "patternProperties" => {
                for sub in value.as_object_mut().into_iter().flat_map(|m| m.values_mut()) {
                    visit(sub, Mode::Closing, apply, open_defs, refs);
                }
            }
            "prefixItems" => {
                for sub in value.as_array_mut().into_iter().flatten() {
                    visit(sub, Mode::Closing, apply, open_defs, refs);
                }
            }
            "additionalProperties" | "items" | "contains" | "unevaluatedItems" => {
                visit(value, Mode::Closing, apply, open_defs, refs);
            }
            "allOf" | "anyOf" | "oneOf" => {
                for sub in value.as_array_mut().into_iter().flatten() {
                    visit(sub, inner_mode, apply, open_defs, refs);
                }
            }
            "if" | "then" | "else" => visit(value, inner_mode, apply, open_defs, refs),
            _ => {}
        }
    }
}
