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
    pub(crate) pointer: String,
    keyword: String,
    message: String,
}

impl Violation {
    /// A violation from the validator's structured error. The message is written from the
    /// error kind and the schema's own words (types, limits, property names the contract
    /// declares); it never quotes the instance, so no value and no attacker-chosen key
    /// (such as the name of an unexpected property) can ride along in it.
    pub(crate) fn from_error(err: &jsonschema::ValidationError<'_>) -> Self {
        Self {
            pointer: err.instance_path().to_string(),
            keyword: err.kind().keyword().to_owned(),
            message: crate::contract::redact::cut(describe(err.kind())),
        }
    }

    /// A limit of the walk before validation was passed (keyword `maxDepth` or
    /// `maxBytes`, which are not JSON Schema keywords: the contract did not say it, the
    /// server's limits did). `pointer` is the error's pointer, already masked.
    pub(crate) fn limit(err: &crate::contract::limits::NonFinite, pointer: &str) -> Self {
        let keyword = match err.kind() {
            crate::contract::limits::ProblemKind::TooLarge { .. } => "maxBytes",
            _ => "maxDepth",
        };
        Self { pointer: pointer.to_owned(), keyword: keyword.to_owned(), message: err.message_at(pointer) }
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

fn plural(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The message of one error kind, from structured data only.
pub(crate) fn describe(kind: &jsonschema::error::ValidationErrorKind) -> String {
    use jsonschema::error::{TypeKind, ValidationErrorKind as K};
    let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
    match kind {
        K::AdditionalProperties { unexpected } | K::UnevaluatedProperties { unexpected } => format!(
            "{} not allowed here (names not shown)",
            plural(count(unexpected.len()), "unexpected property", "unexpected properties")
        ),
        K::UnevaluatedItems { unexpected } => {
            format!("{} not allowed here", plural(count(unexpected.len()), "unexpected item", "unexpected items"))
        }
        K::AdditionalItems { limit } => format!("value has more than {}", plural(count(*limit), "item", "items")),
        K::AnyOf { .. } => "value matches none of the allowed alternatives".to_owned(),
        K::OneOfNotValid { .. } => "value matches none of the alternatives of `oneOf`".to_owned(),
        K::OneOfMultipleValid { .. } => "value matches more than one alternative of `oneOf`".to_owned(),
        K::Constant { .. } => "value is not the constant the contract requires".to_owned(),
        K::Enum { .. } => "value is not one of the values the contract allows".to_owned(),
        K::Contains => "no item matches the `contains` schema".to_owned(),
        K::ContentEncoding { content_encoding } => format!("value is not valid \"{content_encoding}\" content"),
        K::ContentMediaType { content_media_type } => format!("value is not valid \"{content_media_type}\" content"),
        K::FromUtf8 { .. } => "value does not decode to UTF-8 text".to_owned(),
        K::ExclusiveMaximum { limit } => format!("value is not less than {limit}"),
        K::ExclusiveMinimum { limit } => format!("value is not greater than {limit}"),
        K::Maximum { limit } => format!("value is greater than the maximum of {limit}"),
        K::Minimum { limit } => format!("value is less than the minimum of {limit}"),
        K::MultipleOf { multiple_of } => format!("value is not a multiple of {multiple_of}"),
        K::MaxLength { limit } => format!("value is longer than {}", plural(*limit, "character", "characters")),
        K::MinLength { limit } => format!("value is shorter than {}", plural(*limit, "character", "characters")),
        K::MaxItems { limit } => format!("value has more than {}", plural(*limit, "item", "items")),
        K::MinItems { limit } => format!("value has fewer than {}", plural(*limit, "item", "items")),
        K::MaxProperties { limit } => format!("value has more than {}", plural(*limit, "property", "properties")),
        K::MinProperties { limit } => format!("value has fewer than {}", plural(*limit, "property", "properties")),
        K::FalseSchema => "no value is allowed here".to_owned(),
        K::Format { format } => format!("value is not a valid \"{format}\""),
        K::Not { .. } => "value matches a schema it must not match".to_owned(),
        K::Pattern { pattern } => format!("value does not match the pattern \"{pattern}\""),
        K::BacktrackLimitExceeded { .. } | K::RegexEngineFailure { .. } => {
            "value could not be checked against its pattern (limit reached)".to_owned()
        }
        K::PropertyNames { .. } => "a property name is not allowed here (names not shown)".to_owned(),
        K::Required { property } => format!("{property} is a required property"),
        K::Type { kind: TypeKind::Single(ty) } => format!("value is not of type \"{ty}\""),
        K::Type { kind: TypeKind::Multiple(types) } => {
            let names: Vec<String> = types.iter().map(|t| format!("\"{t}\"")).collect();
            format!("value is not of types {}", names.join(", "))
        }
        K::UniqueItems => "value has non-unique items".to_owned(),
        K::Custom { keyword, .. } => format!("value fails the `{keyword}` check"),
        K::Referencing(_) => "a schema reference could not be resolved".to_owned(),
    }
}

/// The most violations a [`Report`] keeps; the rest are counted, not listed, so a
/// result with a million bad items yields a report of bounded size.
pub const MAX_REPORTED_VIOLATIONS: usize = 100;

/// Every violation of one value against one contract.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    contract: ContractId,
    violations: Vec<Violation>,
    total: usize,
}

impl Report {
    pub(crate) fn new(contract: ContractId, violations: Vec<Violation>) -> Self {
        let total = violations.len();
        Self { contract, violations, total }
    }

    /// A report listing `violations` (the first ones found) out of `total`.
    pub(crate) fn with_total(contract: ContractId, violations: Vec<Violation>, total: usize) -> Self {
        let total = total.max(violations.len());
        Self { contract, violations, total }
    }

    /// How many violations the validator found; more than [`Report::violations`] lists
    /// when there were more than [`MAX_REPORTED_VIOLATIONS`].
    #[must_use]
    pub fn total(&self) -> usize {
        self.total
    }

    /// The contract the value was checked against.
    #[must_use]
    pub fn contract(&self) -> &ContractId {
        &self.contract
    }

    /// The violations, in the order the validator found them; never empty, and at most
    /// [`MAX_REPORTED_VIOLATIONS`] of them.
    #[must_use]
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} violation(s) of {}", self.total, self.contract)?;
        for v in &self.violations {
            write!(f, "\n  {v}")?;
        }
        if self.total > self.violations.len() {
            write!(f, "\n  … and {} more", self.total - self.violations.len())?;
        }
        Ok(())
    }
}

impl std::error::Error for Report {}
