//! What the derive knows of its input once it is read and checked: the contract's name,
//! version and compatibility, the fields it marks, the facts schemars loses; and the
//! shapes of field types it recognizes.

use crate::attr::Compatibility;

/// The checked input the impl is written from.
pub(crate) struct Contract {
    /// The contract name (the type name in snake case unless `name` sets it).
    pub(crate) name: String,
    /// The declared semantic version, checked.
    pub(crate) version: String,
    pub(crate) compatibility: Compatibility,
    /// The type's name without a raw prefix.
    pub(crate) type_name: String,
    pub(crate) collected: Collected,
}

/// A root field with a marker.
pub(crate) struct Marked {
    pub(crate) serde_name: String,
    pub(crate) sensitive: bool,
    pub(crate) opaque: bool,
    /// The serialized name of the sibling field this `Completeness` field counts.
    pub(crate) counts: Option<String>,
}

/// What the field checks collect for the impl.
#[derive(Default)]
pub(crate) struct Collected {
    /// Root fields with markers, by serialized name.
    pub(crate) marked: Vec<Marked>,
    /// Container keys written on fields (already reported).
    pub(crate) misplaced: Vec<&'static str>,
    /// Whether a flattened map field of the root is marked `#[tool_output(opaque)]`.
    pub(crate) opaque_flattened: bool,
    /// Root map fields whose key type is not a string: serialized name and key type.
    pub(crate) keyed: Vec<(String, syn::Type)>,
    /// Key types of flattened root maps whose keys are not strings.
    pub(crate) flattened_keys: Vec<syn::Type>,
    /// `T` of each flattened root `Option<T>` that is not a map.
    pub(crate) flattened_options: Vec<syn::Type>,
}

/// Whether `ty` is written as a map (`HashMap`, `BTreeMap`, `IndexMap`, `serde_json::Map`)
/// whose value type is named `Value`.
pub(crate) fn is_value_map(ty: &syn::Type) -> bool {
    let syn::Type::Path(path) = ty else { return false };
    let Some(last) = path.path.segments.last() else { return false };
    if !matches!(last.ident.to_string().as_str(), "HashMap" | "BTreeMap" | "IndexMap" | "Map") {
        return false;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else { return false };
    let value =
        args.args.iter().filter_map(|a| if let syn::GenericArgument::Type(t) = a { Some(t) } else { None }).nth(1);
    matches!(value, Some(syn::Type::Path(v)) if v.path.segments.last().is_some_and(|s| s.ident == "Value"))
}

/// The last path segment of `ty`, when `ty` is a path.
pub(crate) fn last_segment(ty: &syn::Type) -> Option<&syn::PathSegment> {
    match ty {
        syn::Type::Path(path) if path.qself.is_none() => path.path.segments.last(),
        _ => None,
    }
}

/// The type arguments of `ty`'s last segment.
pub(crate) fn type_args(ty: &syn::Type) -> Vec<&syn::Type> {
    let Some(syn::PathArguments::AngleBracketed(args)) = last_segment(ty).map(|s| &s.arguments) else {
        return Vec::new();
    };
    args.args.iter().filter_map(|a| if let syn::GenericArgument::Type(t) = a { Some(t) } else { None }).collect()
}

/// `T` of `Wrapper<T>` when the last segment of `ty` is one of `wrappers`.
pub(crate) fn single_arg<'a>(ty: &'a syn::Type, wrappers: &[&str]) -> Option<&'a syn::Type> {
    let segment = last_segment(ty)?;
    if !wrappers.iter().any(|w| segment.ident == w) {
        return None;
    }
    match type_args(ty).as_slice() {
        [inner] => Some(inner),
        _ => None,
    }
}

/// `K` of a `HashMap<K, V>`, `BTreeMap<K, V>` or `IndexMap<K, V>`.
pub(crate) fn map_key(ty: &syn::Type) -> Option<&syn::Type> {
    let segment = last_segment(ty)?;
    if !["HashMap", "BTreeMap", "IndexMap"].iter().any(|m| segment.ident == m) {
        return None;
    }
    type_args(ty).first().copied()
}

/// Whether `ty` is written as a string type, whose keys need no constraint.
pub(crate) fn is_string_like(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Reference(r) => is_string_like(&r.elem),
        _ => {
            last_segment(ty).is_some_and(|s| ["String", "str", "Cow", "Arc", "Rc", "Box"].iter().any(|n| s.ident == n))
        }
    }
}
