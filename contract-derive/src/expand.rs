//! Writes the `ToolOutput` impl from the checked input, or, when the input has errors,
//! the errors and beside them a stub impl, so that uses of `T::contract()` elsewhere
//! type-check and the user sees only the errors that matter.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Generics};

use crate::ast::Contract;
use crate::attr::Compatibility;
use crate::valid;

pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    match valid::check(input) {
        Ok(contract) => expand(input, &contract),
        Err(err) => stub(input, &err),
    }
}

/// The input's generics with the bounds every contract type parameter needs.
pub(crate) fn bounded_generics(input: &DeriveInput) -> Generics {
    let mut generics = input.generics.clone();
    let where_clause = generics.make_where_clause();
    for param in input.generics.type_params() {
        let p = &param.ident;
        where_clause.predicates.push(syn::parse_quote!(
            #p: ::contract_runtime::__private::serde::Serialize
                + ::contract_runtime::__private::schemars::JsonSchema
                + 'static
        ));
    }
    generics
}

fn expand(input: &DeriveInput, contract: &Contract) -> TokenStream {
    let Contract { name, version, compatibility, type_name, collected } = contract;
    let compat = match compatibility {
        Compatibility::Exact => quote!(::contract_runtime::Compatibility::Exact),
        Compatibility::Additive => quote!(::contract_runtime::Compatibility::Additive),
    };
    let marked = &collected.marked;
    let opaque_flattened = collected.opaque_flattened;
    // Generic contracts get none of these: a key or field type may name a type or
    // lifetime parameter, which the `'static` tables below cannot hold.
    let is_generic_type = !input.generics.params.is_empty();
    let empty = (Vec::new(), Vec::new(), Vec::new());
    let (keyed, flattened_keys, flattened_options) = if is_generic_type {
        (&empty.0, &empty.1, &empty.2)
    } else {
        (&collected.keyed, &collected.flattened_keys, &collected.flattened_options)
    };
    let keyed = keyed
        .iter()
        .map(|(name, key)| quote!((#name, ::contract_runtime::__private::key_names_of::<#key> as fn() -> _)));
    let flattened_keys =
        flattened_keys.iter().map(|key| quote!(::contract_runtime::__private::key_names_of::<#key> as fn() -> _));
    let flattened_options =
        flattened_options.iter().map(|ty| quote!(::contract_runtime::__private::all_or_none_of::<#ty> as fn() -> _));
    let sensitive: Vec<&str> = marked.iter().filter(|m| m.sensitive).map(|m| m.serde_name.as_str()).collect();
    let opaque: Vec<&str> = marked.iter().filter(|m| m.opaque).map(|m| m.serde_name.as_str()).collect();
    let (counters, counted): (Vec<&str>, Vec<&str>) =
        marked.iter().filter_map(|m| Some((m.serde_name.as_str(), m.counts.as_deref()?))).unzip();

    // Const parameters count too: `Grid<2>` and `Grid<3>` can have different schemas.
    let is_generic = input.generics.type_params().next().is_some() || input.generics.const_params().next().is_some();
    let spec = quote! {
        ::contract_runtime::__private::ContractSpec {
            name: #name,
            version: #version,
            compatibility: #compat,
            type_name: #type_name,
            sensitive_fields: &[#(#sensitive),*],
            opaque_fields: &[#(#opaque),*],
            completeness_counts: &[#((#counters, #counted)),*],
            opaque_flattened: #opaque_flattened,
            keyed_fields: &[#(#keyed),*],
            flattened_keys: &[#(#flattened_keys),*],
            flattened_options: &[#(#flattened_options),*],
        }
    };
    // A static inside a generic impl is shared by every instantiation, so generic
    // contracts are kept in a registry keyed by `TypeId` instead.
    // Each instantiation bound to a tool gets a contract named after that tool.
    let body = if is_generic {
        quote! {
            ::contract_runtime::__private::generic_contract::<Self>(&#spec, ::core::option::Option::None)
        }
    } else {
        quote! {
            static CELL: ::contract_runtime::__private::ContractCell =
                ::contract_runtime::__private::ContractCell::new();
            CELL.get_or_build::<Self>(&#spec)
        }
    };
    let bound = if is_generic {
        quote! {
            fn try_contract_for(
                tool: &str,
            ) -> ::core::result::Result<&'static ::contract_runtime::OutputContract, ::contract_runtime::ContractError> {
                ::contract_runtime::__private::generic_contract::<Self>(&#spec, ::core::option::Option::Some(tool))
            }
        }
    } else {
        TokenStream::new()
    };
    tool_output_impl(input, &body, &bound)
}
/// The `ToolOutput` impl with `body` as `try_contract` and `more` items, inside
/// `const _: () = { … };`, with the bounds every generic contract needs. The stub
/// uses it too.
pub(crate) fn tool_output_impl(input: &DeriveInput, body: &TokenStream, more: &TokenStream) -> TokenStream {
    let ident = &input.ident;
    let generics = bounded_generics(input);
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    quote! {
        const _: () = {
            #[automatically_derived]
            impl #impl_generics ::contract_runtime::ToolOutput for #ident #ty_generics #where_clause {
                fn try_contract() -> ::core::result::Result<
                    &'static ::contract_runtime::OutputContract,
                    ::contract_runtime::ContractError,
                > {
                    #body
                }
                #more
            }
        };
    }
}

/// The errors, and a stub impl with the bounds of the real one.
fn stub(input: &DeriveInput, error: &syn::Error) -> TokenStream {
    let errors = error.to_compile_error();
    // A union can implement neither `Serialize` nor `JsonSchema`, the supertraits of
    // `ToolOutput`; a stub would only add errors about them.
    if matches!(input.data, Data::Union(_)) {
        return errors;
    }
    // The stub has the bounds of the real impl: without them a generic type would be
    // reported as not `Serialize`, which it is only for serializable parameters.
    let stub = tool_output_impl(input, &quote!(::core::unreachable!()), &TokenStream::new());
    quote! {
        #errors
        #stub
    }
}
