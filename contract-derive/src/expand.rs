//! Checks the input as a whole and writes the `ToolOutput` impl.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields};

use crate::attr::{self, Compatibility, Ctxt};
use crate::case::to_snake_case;

pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    match expand(input) {
        Ok(tokens) => tokens,
        // On error emit the errors and a stub impl, so that uses of `T::contract()`
        // elsewhere do not add a second wave of unrelated errors.
        Err(err) => {
            let errors = err.to_compile_error();
            let stub = stub_impl(input);
            quote! { #errors #stub }
        }
    }
}

fn stub_impl(input: &DeriveInput) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        const _: () = {
            #[automatically_derived]
            impl #impl_generics ::contract_runtime::ToolOutput for #ident #ty_generics #where_clause {
                fn try_contract() -> ::core::result::Result<
                    &'static ::contract_runtime::OutputContract,
                    ::contract_runtime::ContractError,
                > {
                    ::core::unreachable!()
                }
            }
        };
    }
}

struct Marked {
    serde_name: String,
    sensitive: bool,
    opaque: bool,
}

fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let mut cx = Ctxt::default();
    let container = attr::container(&mut cx, &input.attrs);
    let serde_container = attr::serde_container(&mut cx, &input.attrs);
    let mut marked = Vec::new();

    match &input.data {
        Data::Struct(data) => {
            let has_flatten = check_fields(&mut cx, &data.fields, &serde_container, Some(&mut marked));
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
                check_fields(&mut cx, &variant.fields, &serde_container, None);
            }
        }
        Data::Union(data) => {
            cx.error(
                data.union_token.span(),
                "`ToolOutput` cannot be derived for a union: serde cannot serialize unions; use a struct or an enum",
            );
        }
    }

    let version = container.version.as_ref().map(|v| v.value.clone());
    let compatibility = container.compatibility.as_ref().map(|c| c.value);
    let missing_span = container.attr_span.unwrap_or_else(|| input.ident.span());
    if version.is_none() && container.attr_span.is_none() {
        cx.error(
            missing_span,
            "missing `#[tool_output(version = \"…\", compatibility = \"…\")]`: every contract declares a semantic version and `compatibility = \"exact\"` or `\"additive\"`",
        );
    } else {
        if version.is_none() && !container.seen.contains(&"version") {
            cx.error(
                missing_span,
                "missing `version`: add `version = \"1.0.0\"` (a semantic version) to `#[tool_output(...)]`",
            );
        }
        if compatibility.is_none() && !container.seen.contains(&"compatibility") {
            cx.error(
                missing_span,
                "missing `compatibility`: add `compatibility = \"exact\"` (every object closed) or `compatibility = \"additive\"` (objects open) to `#[tool_output(...)]`",
            );
        }
    }
    cx.finish()?;

    let (Some(version), Some(compatibility)) = (version, compatibility) else {
        return Err(syn::Error::new(Span::call_site(), "internal error: attributes incomplete"));
    };
    let ident = &input.ident;
    let type_name = ident.to_string();
    let name = container.name.map_or_else(|| to_snake_case(&type_name), |n| n.value);
    let compat = match compatibility {
        Compatibility::Exact => quote!(::contract_runtime::Compatibility::Exact),
        Compatibility::Additive => quote!(::contract_runtime::Compatibility::Additive),
    };
    let sensitive: Vec<&str> = marked.iter().filter(|m| m.sensitive).map(|m| m.serde_name.as_str()).collect();
    let opaque: Vec<&str> = marked.iter().filter(|m| m.opaque).map(|m| m.serde_name.as_str()).collect();

    let mut generics = input.generics.clone();
    let is_generic = generics.type_params().next().is_some();
    {
        let where_clause = generics.make_where_clause();
        for param in input.generics.type_params() {
            let p = &param.ident;
            where_clause.predicates.push(syn::parse_quote!(
                #p: ::contract_runtime::__private::serde::Serialize
                    + ::contract_runtime::__private::schemars::JsonSchema
                    + 'static
            ));
        }
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();

    let spec = quote! {
        ::contract_runtime::__private::ContractSpec {
            name: #name,
            version: #version,
            compatibility: #compat,
            type_name: #type_name,
            sensitive_fields: &[#(#sensitive),*],
            opaque_fields: &[#(#opaque),*],
        }
    };
    // A static inside a generic impl is shared by every instantiation, so generic
    // contracts are kept in a registry keyed by `TypeId` instead.
    let body = if is_generic {
        quote! {
            ::contract_runtime::__private::generic_contract::<Self>(&#spec)
        }
    } else {
        quote! {
            static CELL: ::contract_runtime::__private::ContractCell =
                ::contract_runtime::__private::ContractCell::new();
            CELL.get_or_build::<Self>(&#spec)
        }
    };

    Ok(quote! {
        const _: () = {
            #[automatically_derived]
            impl #impl_generics ::contract_runtime::ToolOutput for #ident #ty_generics #where_clause {
                fn try_contract() -> ::core::result::Result<
                    &'static ::contract_runtime::OutputContract,
                    ::contract_runtime::ContractError,
                > {
                    #body
                }
            }
        };
    })
}

/// Checks the fields of a struct or of one enum variant. `marked` is `Some` only for the
/// named fields of a struct contract, the one place where field markers can be resolved
/// to a JSON pointer at compile time. Returns whether any field is flattened.
fn check_fields(
    cx: &mut Ctxt,
    fields: &Fields,
    container: &attr::SerdeContainer,
    mut marked: Option<&mut Vec<Marked>>,
) -> bool {
    let mut has_flatten = false;
    for field in fields {
        let markers = attr::field(cx, &field.attrs);
        let serde = attr::serde_field(cx, &field.attrs);
        has_flatten |= serde.flatten;

        if let (Some((key, span)), false) = (&serde.custom_serialize, serde.schemars_with) {
            let ty = &field.ty;
            let ty = quote!(#ty).to_string().replace(' ', "");
            cx.push(syn::Error::new(
                *span,
                format!(
                    "`#[serde({key} = …)]` can write a different JSON type than `{ty}`, and schemars would describe `{ty}`: add `#[schemars(with = \"T\")]` naming the type it writes (for example `#[schemars(with = \"String\")]`), or `#[schemars(schema_with = \"path\")]`"
                ),
            ));
        }

        let Some(span) = markers.any_span() else { continue };
        let place_error = match (&field.ident, marked.as_deref_mut()) {
            (_, None) => Some(
                "field markers apply to the named fields of a struct contract; inside enum variants use `#[schemars(transform = contract_runtime::sensitive)]` or `#[schemars(transform = contract_runtime::opaque)]`",
            ),
            (None, Some(_)) => Some(
                "field markers need a named field; on a tuple or newtype struct use `#[schemars(transform = contract_runtime::sensitive)]` or `contract_runtime::opaque` on the inner type's fields",
            ),
            _ if serde.flatten => Some(
                "a flattened field has no JSON pointer of its own: mark the fields of the flattened type with `#[schemars(transform = contract_runtime::sensitive)]` or `contract_runtime::opaque`",
            ),
            _ if serde.skipped => Some("this field is never serialized, so it needs no marker: remove `#[tool_output(...)]`"),
            _ => None,
        };
        if let Some(msg) = place_error {
            cx.push(syn::Error::new(span, msg));
            continue;
        }
        if let (Some(ident), Some(list)) = (&field.ident, marked.as_deref_mut()) {
            let rust_name = ident.to_string();
            let rust_name = rust_name.strip_prefix("r#").unwrap_or(&rust_name);
            let serde_name = serde.rename.clone().unwrap_or_else(|| {
                container.rename_all.map_or_else(|| rust_name.to_owned(), |rule| rule.apply_to_field(rust_name))
            });
            list.push(Marked { serde_name, sensitive: markers.sensitive.is_some(), opaque: markers.opaque.is_some() });
        }
    }
    has_flatten
}
