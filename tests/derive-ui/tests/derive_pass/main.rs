//! Every shape `#[derive(ToolOutput)]` supports compiles and yields the contract it should:
//! each module is one shape, its test the contract it must give. These build with the
//! workspace's tests; the compile errors of the misuses are trybuild's (`derive_ui.rs`).

// Each shape is written as a user's crate writes it: its contract types are public and
// derive only what the contract needs.
#![allow(unreachable_pub, missing_debug_implementations)]

mod enum_representations;
mod generic;
mod macro_literal;
mod opaque_flattened_map;
mod raw_identifiers;
mod rename_markers;
mod serialize_with;
mod transform_markers;
mod type_named_tool_output;
