//! The fast path: validation fused into the one serialization pass (issue #12).
//!
//! Each contract's canonical schema is compiled once into a plan that a
//! `serde::Serializer` checks while it writes the wire bytes, so a valid result is
//! judged without building a `serde_json::Value` first. Whatever the plan cannot judge
//! exactly (composition that needs backtracking, `multipleOf`, `patternProperties`, …)
//! is found when the plan is compiled, and [`coverage`] says so with the reason: such a
//! contract keeps the `Value` + `jsonschema` path.
//!
//! The fast path only ever says "valid, here are the bytes" or gives the result back.
//! A result it finds invalid, or cannot judge (a limit, a non-finite float, a serde
//! shape it does not write), is handed to the `Value` path, which decides and writes
//! the report: reports are the same whichever path saw the result first.
//!
//! # Examples
//!
//! ```
//! use contract_runtime::fast::{coverage, write, Coverage};
//! use contract_runtime::finite::Limits;
//! use contract_runtime::ToolOutput;
//!
//! #[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
//! #[tool_output(version = "1.0.0", compatibility = "exact")]
//! struct Health { healthy: u32 }
//!
//! let contract = Health::contract();
//! assert_eq!(coverage(contract), Coverage::Covered);
//! let bytes = write(contract, &Health { healthy: 3 }, &Limits::default()).unwrap();
//! assert_eq!(bytes, br#"{"healthy":3}"#);
//! // A `Value` that breaks the contract is refused, never written.
//! assert!(write(contract, &serde_json::json!({ "healthy": -1 }), &Limits::default()).is_err());
//! ```

mod plan;
mod ser;

use serde::Serialize;

pub use ser::Miss;

use crate::contract::OutputContract;
use crate::finite::Limits;
use plan::Plan;

/// Whether a contract's results are judged on the fast path.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Coverage {
    /// The plan judges every keyword of the schema.
    Covered,
    /// The schema uses something the plan does not judge; the reason names it and
    /// where. Results of this contract take the `Value` path.
    Fallback(String),
}

/// The compiled plan of a contract, kept with the contract.
pub(crate) type Compiled = Result<Plan, String>;

pub(crate) fn compile(contract: &OutputContract) -> Compiled {
    Plan::compile(contract.schema())
}

/// Whether `contract` is judged on the fast path, and if not, why.
#[must_use]
pub fn coverage(contract: &OutputContract) -> Coverage {
    match contract.fast_plan() {
        Ok(_) => Coverage::Covered,
        Err(reason) => Coverage::Fallback(reason.clone()),
    }
}

/// Writes `output` as compact JSON (the bytes `serde_json::to_vec` writes) while
/// checking it against `contract` and within `limits`.
///
/// # Errors
///
/// [`Miss`] when the contract is not covered, the result is invalid, or the result is
/// something the fast path does not judge; the caller then takes the `Value` path.
pub fn write<T: Serialize + ?Sized>(contract: &OutputContract, output: &T, limits: &Limits) -> Result<Vec<u8>, Miss> {
    match contract.fast_plan() {
        Ok(plan) => ser::write(plan, output, limits),
        Err(_) => Err(Miss::Unsupported("the contract is not covered")),
    }
}

/// Writes `output` as compact JSON while checking only what every result keeps whatever
/// its contract: no non-finite float (serde_json would write `null`), within `limits`.
/// The same single pass as [`write`], with a plan that accepts any JSON.
pub(crate) fn write_any<T: Serialize + ?Sized>(output: &T, limits: &Limits) -> Result<Vec<u8>, Miss> {
    static ANY: std::sync::LazyLock<Result<Plan, String>> =
        std::sync::LazyLock::new(|| Plan::compile(&serde_json::Value::Bool(true)));
    match &*ANY {
        Ok(plan) => ser::write(plan, output, limits),
        Err(_) => Err(Miss::Unsupported("the accept-anything plan did not compile")),
    }
}
