#![doc = include_str!("../../README.md")]
//!
//! # Modules
//!
//! - [`contract`]: [`ToolOutput`], [`OutputContract`], [`ContractId`], [`Compatibility`].
//! - [`schema`]: generation settings, markers, the canonical form and hashing.
//! - [`validate`]: violation reports.
//! - [`snapshot`]: writing and checking the checked-in `schemas/` folder.

pub mod contract;
pub mod schema;
pub mod snapshot;
pub mod validate;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use contract::{Compatibility, ContractError, ContractId, OutputContract, ToolOutput};
/// Derives [`ToolOutput`]; see the crate documentation.
pub use contract_derive::ToolOutput;
pub use schema::{opaque, sensitive};
pub use validate::{Report, Violation};
