//! What the derive emits when the input has errors: the errors and, next to them, a
//! stub impl, so that uses of `T::contract()` elsewhere type-check and the user sees
//! only the errors that matter.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput};

use crate::expand::tool_output_impl;

pub(crate) fn expand(input: &DeriveInput, error: &syn::Error) -> TokenStream {
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
