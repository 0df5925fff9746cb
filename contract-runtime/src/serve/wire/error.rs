//! The one error envelope: the JSON every error result carries as its one text block,
//! `{"error": {"code", "message", "retryable", "violations"?, "changes"?}}`. Its JSON
//! Schema is a contract like any tool's ([`ErrorEnvelope::contract`]), checked in as
//! `contract-runtime/schemas/error_envelope.json`.

use schemars::JsonSchema;
use serde::Serialize;

use super::{ErrorCode, ToolError, WireViolation};

/// What an error result says, as its one text block holds it.
///
/// # Examples
///
/// ```
/// use contract_runtime::wire::{ErrorCode, ErrorEnvelope, ToolError};
/// use contract_runtime::ToolOutput;
///
/// let envelope = ErrorEnvelope::new(&ToolError::new(ErrorCode::ToolQuarantined, "tool `scan` changed"));
/// let text = serde_json::to_string(&envelope).unwrap();
/// assert_eq!(text, r#"{"error":{"code":"tool_quarantined","message":"tool `scan` changed","retryable":false}}"#);
/// assert!(ErrorEnvelope::contract().validate(&serde_json::from_str(&text).unwrap()).is_ok());
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema, contract_derive::ToolOutput)]
#[tool_output(name = "error_envelope", version = "1.0.0", compatibility = "exact")]
pub struct ErrorEnvelope {
    /// The error.
    pub error: ErrorBody,
}

/// The `error` member of an [`ErrorEnvelope`].
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct ErrorBody {
    /// What went wrong, for a program to act on.
    pub code: ErrorCode,
    /// What went wrong, for a model or a person to read: sanitized, with no instance
    /// values.
    pub message: String,
    /// Whether trying again may help.
    pub retryable: bool,
    /// Where the result broke its contract, when it did.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<WireViolation>,
    /// How a quarantined tool changed since it was pinned.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<EnvelopeChange>,
}

/// One change of a quarantined tool, as an [`ErrorBody`] lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct EnvelopeChange {
    /// Where in the tool's definition: `input`, `output`, `annotations`, `text`, ….
    pub area: String,
    /// What changed, such as `required added`.
    pub kind: String,
    /// How bad it is: `cosmetic`, `additive`, `lost`, `text` or `breaking`.
    pub verdict: String,
}

impl ErrorEnvelope {
    /// The envelope of `error`, as written (sanitize the message first where it may
    /// quote anything).
    #[must_use]
    pub fn new(error: &ToolError) -> Self {
        Self {
            error: ErrorBody {
                code: error.code(),
                message: error.message().to_owned(),
                retryable: error.retryable(),
                violations: Vec::new(),
                changes: Vec::new(),
            },
        }
    }

    /// With the contract's `violations`.
    #[must_use]
    pub fn with_violations(mut self, violations: Vec<WireViolation>) -> Self {
        self.error.violations = violations;
        self
    }

    /// With a quarantined tool's `changes`.
    #[must_use]
    pub fn with_changes(mut self, changes: Vec<EnvelopeChange>) -> Self {
        self.error.changes = changes;
        self
    }

    /// The envelope as JSON text, the error result's one text block.
    #[must_use]
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).expect("strings, a bool and a code always serialize")
    }
}
