//! Compiled validators and violation reports.

use std::fmt;

use serde_json::Value;

use crate::contract::ContractId;

/// Compiles a contract schema with the options every contract uses: draft 2020-12,
/// formats asserted (as the TypeScript SDK's Ajv does), no network or file `$ref`s.
pub(crate) fn compile(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(schema)
        .map_err(|err| err.masked().to_string())
}

/// One way in which a value breaks a contract.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Violation {
    pointer: String,
    keyword: String,
    message: String,
}

impl Violation {
    pub(crate) fn from_error(err: &jsonschema::ValidationError<'_>) -> Self {
        Self {
            pointer: err.instance_path().to_string(),
            keyword: err.kind().keyword().to_owned(),
            message: err.masked().to_string(),
        }
    }

    pub(crate) fn serialization(err: &serde_json::Error) -> Self {
        Self { pointer: String::new(), keyword: "serialize".to_owned(), message: err.to_string() }
    }

    /// A violation with the given parts, for checks beyond JSON Schema.
    #[must_use]
    pub fn new(pointer: impl Into<String>, keyword: impl Into<String>, message: impl Into<String>) -> Self {
        Self { pointer: pointer.into(), keyword: keyword.into(), message: message.into() }
    }

    /// JSON pointer into the instance, `""` for the root.
    #[must_use]
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// The schema keyword that failed, such as `required`, `type` or `enum`.
    #[must_use]
    pub fn keyword(&self) -> &str {
        &self.keyword
    }

    /// A human-readable message with instance values masked.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() { "(root)" } else { &self.pointer };
        write!(f, "{pointer}: {} ({})", self.message, self.keyword)
    }
}

/// Every violation of one value against one contract.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    contract: ContractId,
    violations: Vec<Violation>,
}

impl Report {
    pub(crate) fn new(contract: ContractId, violations: Vec<Violation>) -> Self {
        Self { contract, violations }
    }

    /// The contract the value was checked against.
    #[must_use]
    pub fn contract(&self) -> &ContractId {
        &self.contract
    }

    /// The violations, in the order the validator found them; never empty.
    #[must_use]
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} violation(s) of {}", self.violations.len(), self.contract)?;
        for v in &self.violations {
            write!(f, "\n  {v}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Report {}
