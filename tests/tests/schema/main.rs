//! The schema tests: what the derive generates for every serde shape, its lints and fix
//! lines, the fast path, the validation corpus and mutations, generics, completeness, the
//! schemas folder; the derive's compile errors are the `contract-derive-ui` package.
//! One binary: each module is one file of this folder; the helpers they share are the
//! `support` module (`tests/tests/support/`), included once.

#[path = "../support/mod.rs"]
mod support;

pub mod advertised_roots;
pub mod completeness;
pub mod fast_path;
pub mod generics;
pub mod schema_additive;
pub mod schema_enums;
pub mod schema_fix_lines;
pub mod schema_flatten;
pub mod schema_generics;
pub mod schema_known_gaps;
pub mod schema_lints;
pub mod schema_maps;
pub mod schema_opaque;
pub mod schema_portable;
pub mod schema_preserve_order;
pub mod schema_recursion;
pub mod schema_scalars;
pub mod schema_structs;
pub mod schema_type_lists;
pub mod schemas_folder;
pub mod schemas_up_to_date;
pub mod validate_mutation_generator;
pub mod validate_mutations;
pub mod validate_search_tickets;
