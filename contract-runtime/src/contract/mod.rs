//! The first layer: what a contract *is*. Nothing here knows of serving, caches or
//! MCP's wire; the other layers use this one, never the other way round.
//!
//! - The identity and the compiled contract ([`ToolOutput`], [`OutputContract`],
//!   [`ContractId`], [`Compatibility`], [`ContractError`]), in `output.rs`.
//! - [`schema`]: generation settings, closing objects, markers, lints, the canonical
//!   form and its SHA-256, and the helpers for shapes schemars cannot express.
//! - [`validate`]: compiled validators and violation reports built from structure,
//!   never from values.
//! - `arguments` (feature `rmcp`): the `invalid_arguments` message, naming only declared
//!   arguments.
//! - [`fused`]: validation fused into the one serialization pass.
//! - [`limits`]: the size and depth limits, and the pass that checks them and NaN/±inf before conversion.
//! - [`redact`]: masking by structure and sanitizing of free text.
//! - [`pointer`](mod@pointer): JSON pointers and the one local `$ref` resolver.
//! - [`completeness`]: completeness metadata and its invariants.
//! - `escape`: a string written as a JSON string literal, byte for byte what
//!   serde_json writes.
//! - [`scan`]: JSON text read where it lies, its grammar checked, nothing decoded.
//! - Run-time contracts ([`OutputContract::from_file`], [`OutputContract::from_json`],
//!   [`Declared`], [`LoadError`]): contracts read from checked-in canonical schema files,
//!   for tools whose result type is not known at build time, in `load.rs`; a server's
//!   declared error shape ([`ErrorShape`]) beside its contract, in `error_shape.rs`.
//!

mod error_shape;
mod load;
mod output;

#[cfg(any(feature = "rmcp", test))]
pub(crate) mod arguments;
pub mod completeness;
pub(crate) mod escape;
#[cfg(feature = "evolution")]
pub mod evolution;
pub mod fused;
pub mod limits;
pub mod pointer;
pub mod redact;
pub mod scan;
pub mod schema;
#[cfg(test)]
mod testing;
pub mod validate;

pub use error_shape::ErrorShape;
pub(crate) use load::load_dir;
pub use load::{Declared, LoadError, LoadProblem, INVENTORY_FILE, MANIFEST_FILE};
pub use output::*;
