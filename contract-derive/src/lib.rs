//! The `#[derive(ToolOutput)]` macro. Depend on `contract-runtime`, which re-exports it.
//!
//! The macro reads its input in stages, each in its own file: `attr` parses the
//! attributes, `valid` checks the input as a whole into an `ast::Contract` (every error
//! collected in one `ctxt::Ctxt`), and `expand` writes a small `impl` (or, on errors, the
//! errors beside a stub). It only reads attributes and writes that `impl`; schema generation,
//! closing, linting and hashing happen in `contract-runtime` on first use, so that the
//! xtask and the server see exactly the same bytes.

mod ast;
mod attr;
mod case;
mod ctxt;
mod expand;
mod valid;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

/// Derives `contract_runtime::ToolOutput`. See the `contract-runtime` documentation.
///
/// In an rmcp server, return the type as `contract_runtime::rmcp::Json<T>` (not rmcp's
/// `Json`, which turns NaN and infinity into `null` before the contract can see them).
///
/// A generic type has one contract per instantiation: bind each to the tool that returns
/// it (`contracts![ToolOutput<GoalData> => "set_goal"]`), which names the contract; the
/// type's `version` and `compatibility` apply to every instantiation. A type of your own
/// named `ToolOutput` clashes with this derive's name: derive it by path,
/// `#[derive(contract_runtime::ToolOutput)]`, without importing it.
#[proc_macro_derive(ToolOutput, attributes(tool_output))]
pub fn derive_tool_output(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input).into()
}
