//! Checks the input as a whole: attributes, fields, serde's and schemars' view of them.
//! Every problem goes into one [`Ctxt`], so the user sees all of them at once.

use proc_macro2::Span;
use quote::quote;
use syn::ext::IdentExt as _;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields};

use crate::ast::{is_string_like, is_value_map, map_key, single_arg, Collected, Contract, Marked};
use crate::attr;
use crate::case::to_snake_case;
use crate::ctxt::Ctxt;

/// Where a field sits, which decides whether `#[tool_output(sensitive)]` and
/// `#[tool_output(opaque)]` can be resolved to a JSON pointer at compile time.
#[derive(Clone, Copy)]
enum FieldPlace {
    /// A field of the contract struct itself.
    Struct,
    /// A field of an enum variant.
    Variant,
}

/// Reads and checks the input: every problem is reported at once, or the contract the
/// impl is written from.
pub(crate) fn check(input: &DeriveInput) -> syn::Result<Contract> {
    let mut cx = Ctxt::new();
    let container = attr::container(&mut cx, &input.attrs);
    let serde_container = attr::serde_container(&input.attrs);
    let mut collected = Collected::default();
    let owner = input.ident.unraw().to_string();

    match &input.data {
        Data::Struct(data) => {
            let has_flatten =
                check_fields(&mut cx, &data.fields, &serde_container, (FieldPlace::Struct, &owner), &mut collected);
            // serde writes the tag of a tagged struct, but schemars 1.2 leaves it out of
            // the schema, so an exact contract would reject every result.
            if let Some(span) = serde_container.tag {
                cx.error(
                    span,
                    "`#[serde(tag = \"…\")]` on a struct is not described by schemars, so the contract would reject the tag serde writes: remove it and add the tag as a field (for example `kind: MyKind` with a one-variant enum), or use an internally tagged enum",
                );
            }
            if let (Some(span), true) = (serde_container.deny_unknown_fields, has_flatten) {
                cx.error(
                    span,
                    "`deny_unknown_fields` cannot be combined with `#[serde(flatten)]` (serde does not support it, and schemars then drops the flattened fields from the schema): remove it; `compatibility = \"exact\"` closes the object correctly",
                );
            }
        }
        Data::Enum(data) => {
            for variant in &data.variants {
                attr::forbid_on_variant(&mut cx, &variant.attrs);
                let serde = attr::serde_field(&variant.attrs);
                check_custom_serialize(&mut cx, &serde, "variant", || format!("the fields of `{}`", variant.ident));
                let owner = format!("{owner}::{}", variant.ident.unraw());
                check_fields(&mut cx, &variant.fields, &serde_container, (FieldPlace::Variant, &owner), &mut collected);
            }
        }
        Data::Union(data) => {
            cx.error(
                data.union_token.span(),
                "`ToolOutput` cannot be derived for a union: serde cannot serialize unions; use a struct or an enum",
            );
        }
    }

    if let (Some((into, span)), false) = (&serde_container.into, serde_container.schemars_with) {
        cx.error(
            *span,
            format!(
                "`#[serde(into = \"{into}\")]` makes serde write a `{into}`, but schemars would describe `{}`: add `#[schemars(with = \"{into}\")]` to the type",
                input.ident
            ),
        );
    }

    check_missing(&mut cx, input, &container, &collected.misplaced);
    cx.finish()?;

    let (Some(version), Some(compatibility)) = (container.version, container.compatibility) else {
        return Err(syn::Error::new(Span::call_site(), "internal error: attributes incomplete"));
    };
    let version = version.value;
    // `r#Match` is the type `Match`; serde and schemars drop the prefix too.
    let type_name = input.ident.unraw().to_string();
    let name = container.name.map_or_else(|| to_snake_case(&type_name), |n| n.value);
    Ok(Contract { name, version, compatibility: compatibility.value, type_name, collected })
}

/// Reports a missing `version` or `compatibility`. A key that was written with a bad
/// value, or written on a field instead of the type, has been reported already.
fn check_missing(cx: &mut Ctxt, input: &DeriveInput, container: &attr::ContainerAttrs, misplaced: &[&str]) {
    let written = |key: &str| container.seen.contains(&key) || misplaced.contains(&key);
    let missing_version = container.version.is_none() && !written("version");
    let missing_compatibility = container.compatibility.is_none() && !written("compatibility");
    match &container.attr {
        None if missing_version && missing_compatibility => cx.error(
            input.ident.span(),
            "missing `#[tool_output(version = \"…\", compatibility = \"…\")]`: every contract declares a semantic version and `compatibility = \"exact\"` or `\"additive\"`, for example `#[tool_output(version = \"1.0.0\", compatibility = \"exact\")]` above the type",
        ),
        attr => {
            let at = |cx: &mut Ctxt, msg: &str| match attr {
                Some(attr) => cx.error_spanned_by(attr, msg),
                None => cx.error(input.ident.span(), msg),
            };
            if missing_version {
                at(cx, "missing `version`: add `version = \"1.0.0\"` (a semantic version) to `#[tool_output(...)]`");
            }
            if missing_compatibility {
                at(
                    cx,
                    "missing `compatibility`: add `compatibility = \"exact\"` (every object closed) or `compatibility = \"additive\"` (objects open) to `#[tool_output(...)]`",
                );
            }
        }
    }
}

/// Reports a `serialize_with` or `with` that schemars cannot see through: serde may
/// write another JSON type than the Rust type schemars describes. `what` is "field" or
/// "variant"; `described` names what schemars would describe.
fn check_custom_serialize(cx: &mut Ctxt, serde: &attr::SerdeField, what: &str, described: impl FnOnce() -> String) {
    if let (Some((key, span)), false) = (&serde.custom_serialize, serde.schemars_with) {
        let described = described();
        cx.error(
            *span,
            format!(
                "`#[serde({key} = …)]` can write another JSON type than {described}, which is what schemars would describe: add `#[schemars(with = \"T\")]` to this {what}, naming the type it writes (for example `#[schemars(with = \"String\")]`), or `#[schemars(schema_with = \"path\")]`"
            ),
        );
    }
}

/// Checks the fields of a struct or of one enum variant (`owner` names it in messages),
/// and records in `collected` the serialized names of marked struct fields, container keys
/// found on fields and an opaque flattened map. Returns whether any field is flattened.
fn check_fields(
    cx: &mut Ctxt,
    fields: &Fields,
    container: &attr::SerdeContainer,
    (place, owner): (FieldPlace, &str),
    collected: &mut Collected,
) -> bool {
    let mut has_flatten = false;
    let serde_name_of = |field: &syn::Field, serde: &attr::SerdeField| {
        let rust_name = field.ident.as_ref()?.unraw().to_string();
        Some(serde.rename.clone().unwrap_or_else(|| {
            container.rename_all.map_or_else(|| rust_name.clone(), |rule| rule.apply_to_field(&rust_name))
        }))
    };
    for field in fields {
        let markers = attr::field(cx, &field.attrs);
        collected.misplaced.extend(&markers.misplaced);
        let serde = attr::serde_field(&field.attrs);
        has_flatten |= serde.flatten;
        check_flattened_value_map(cx, field, &serde, &markers, (place, owner));
        if matches!(place, FieldPlace::Struct)
            && !serde.skipped
            && !serde.schemars_with
            && serde.custom_serialize.is_none()
            // An opaque flattened map keeps its values as they are, whatever its keys.
            && !(serde.flatten && markers.opaque.is_some())
        {
            collect_schema_facts(field, &serde, container, collected);
        }
        check_custom_serialize(cx, &serde, "field", || {
            let ty = &field.ty;
            format!("`{}`", quote!(#ty).to_string().replace(' ', ""))
        });

        let mut placed = true;
        for (key, span) in markers.markers() {
            if let Some(msg) = misplaced_marker(place, field, container, &serde, key) {
                cx.error(span, msg);
                placed = false;
            }
        }
        // An opaque flattened map has no key of its own: the values it adds are opaque.
        if serde.flatten && placed && markers.opaque.is_some() {
            collected.opaque_flattened = true;
            continue;
        }
        let (Some(_), true, true) = (&field.ident, placed, markers.markers().next().is_some()) else {
            continue;
        };
        let Some(serde_name) = serde_name_of(field, &serde) else { continue };
        let counts = markers.counts.as_ref().and_then(|counts| {
            // The counted field is named as in Rust and written under its serialized name.
            let sibling = fields.iter().find(|f| f.ident.as_ref().is_some_and(|i| i.unraw() == counts.value.as_str()));
            let found = sibling.map(|f| (f, attr::serde_field(&f.attrs)));
            match found {
                Some((f, s)) if !s.flatten && !s.skipped => serde_name_of(f, &s),
                Some(_) => {
                    cx.error(
                        counts.span,
                        format!(
                            "`counts = \"{}\"` names a field that is flattened or never serialized: name the array field the `returned_count` of this `Completeness` counts",
                            counts.value
                        ),
                    );
                    None
                }
                None => {
                    cx.error(
                        counts.span,
                        format!(
                            "`counts = \"{}\"`: this struct has no field `{}`; name the array field (as written in Rust) whose items `returned_count` counts",
                            counts.value, counts.value
                        ),
                    );
                    None
                }
            }
        });
        collected.marked.push(Marked {
            serde_name,
            sensitive: markers.sensitive.is_some(),
            opaque: markers.opaque.is_some(),
            counts,
        });
    }
    has_flatten
}

/// Why `#[tool_output(key)]` cannot mark this field, as a message that says what to
/// write instead; `None` when the marker resolves to a root property of the contract.
fn misplaced_marker(
    place: FieldPlace,
    field: &syn::Field,
    container: &attr::SerdeContainer,
    serde: &attr::SerdeField,
    key: &str,
) -> Option<String> {
    if key == "counts" {
        let root_field = matches!((place, &field.ident), (FieldPlace::Struct, Some(_)))
            && !container.transparent
            && !serde.flatten
            && !serde.skipped;
        return (!root_field).then(|| {
            "`#[tool_output(counts = \"…\")]` works only on a named, serialized, not flattened `Completeness` field of a struct contract, next to the array it counts".to_owned()
        });
    }
    let msg = match (place, &field.ident) {
        (FieldPlace::Variant, _) => format!(
            "`#[tool_output({key})]` works only on the fields of a struct contract; on a field of an enum variant write `#[schemars(transform = contract_runtime::{key})]` instead"
        ),
        (FieldPlace::Struct, None) => format!(
            "`#[tool_output({key})]` needs a named field; on a tuple or newtype field write `#[schemars(transform = contract_runtime::{key})]` instead"
        ),
        _ if container.transparent => format!(
            "a `#[serde(transparent)]` struct is written as this field alone, which has no key of its own: write `#[schemars(transform = contract_runtime::{key})]` instead of `#[tool_output({key})]`"
        ),
        // `opaque` on a flattened map marks the values it adds (checked when the contract
        // is built: a flattened struct or enum adds no map values and is refused there).
        _ if serde.flatten && key == "opaque" => return None,
        _ if serde.flatten => format!(
            "a flattened field has no JSON pointer of its own: remove `#[tool_output({key})]` and mark the fields of the flattened type with `#[schemars(transform = contract_runtime::{key})]`"
        ),
        _ if serde.skipped => {
            format!("this field is never serialized, so it needs no marker: remove `#[tool_output({key})]`")
        }
        _ => return None,
    };
    Some(msg)
}

/// Refuses a flattened map of `serde_json::Value` that is not declared opaque: it accepts
/// any key with any value, so the contract would check nothing there. The same refusal
/// happens when the contract is built, but without the field's name, which only the
/// derive knows.
fn check_flattened_value_map(
    cx: &mut Ctxt,
    field: &syn::Field,
    serde: &attr::SerdeField,
    markers: &attr::FieldAttrs,
    (place, owner): (FieldPlace, &str),
) {
    if !serde.flatten || serde.schemars_with || markers.opaque.is_some() || !is_value_map(&field.ty) {
        return;
    }
    let ty = &field.ty;
    let ty = quote!(#ty).to_string().replace(' ', "");
    let name =
        field.ident.as_ref().map_or_else(|| "the flattened field".to_owned(), |i| format!("field `{}`", i.unraw()));
    let fix = match place {
        FieldPlace::Struct => "`#[tool_output(opaque)]` on this field",
        FieldPlace::Variant => "`#[schemars(with = \"contract_runtime::OpaqueMap\")]` on this field",
    };
    cx.error_spanned_by(
        &field.ty,
        format!(
            "{name} of `{owner}` is a flattened `{ty}`: it accepts any key with any JSON value, so the contract would check nothing there; declare it opaque with {fix} (its values are then listed as opaque), or give the values a concrete type"
        ),
    );
}

/// Records what schemars loses about a field of the contract type and the runtime can put
/// back: the key type of a map whose keys are not strings, and the struct inside a
/// flattened `Option`.
fn collect_schema_facts(
    field: &syn::Field,
    serde: &attr::SerdeField,
    container: &attr::SerdeContainer,
    collected: &mut Collected,
) {
    if serde.flatten {
        if let Some(key) = map_key(&field.ty).filter(|k| !is_string_like(k)) {
            collected.flattened_keys.push(key.clone());
        } else if let Some(inner) = single_arg(&field.ty, &["Option"]).filter(|t| map_key(t).is_none()) {
            collected.flattened_options.push(inner.clone());
        }
        return;
    }
    let mut ty = &field.ty;
    while let Some(inner) = single_arg(ty, &["Option", "Vec", "Box", "VecDeque"]) {
        ty = inner;
    }
    let (Some(key), Some(ident)) = (map_key(ty).filter(|k| !is_string_like(k)), &field.ident) else { return };
    let rust_name = ident.unraw().to_string();
    let name = serde.rename.clone().unwrap_or_else(|| {
        container.rename_all.map_or_else(|| rust_name.clone(), |rule| rule.apply_to_field(&rust_name))
    });
    collected.keyed.push((name, key.clone()));
}
