//! What a harness hands to a model after a call: a validated value, a declared error,
//! or a contract failure with masked violations.

use std::fmt;

use serde_json::{json, Value};

use super::contract_meta::ContractInfo;
use super::lock::{DriftStatus, ToolDrift};
use super::signals::{refusal_of, FalseSuccess, KeyMismatch, SelfRefusal};
use crate::contract::validate::Violation;
use crate::serve::wire::{EnvelopeChange, ErrorCode, ErrorEnvelope, ToolError, WireViolation};

/// The longest error message kept from a server, in characters: a model needs the gist
/// to self-correct, not an unbounded payload.
const MAX_MESSAGE_CHARS: usize = 2000;

/// Why a call was refused or its result rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The tool is not in the catalog.
    UnknownTool,
    /// The arguments break the tool's `inputSchema` (checked before the call).
    InvalidArguments,
    /// A declared schema does not compile (for example an unresolvable `$ref`), so
    /// nothing can be judged against it: failing closed.
    UnusableSchema,
    /// The result is not a `tools/call` result.
    MalformedResult,
    /// The tool declares an `outputSchema` but the result has no `structuredContent`.
    MissingStructuredContent,
    /// `structuredContent` breaks the declared `outputSchema`.
    OutputViolation,
    /// The tool changed since it was pinned and the lock policy holds it back: the call
    /// is refused before anything is sent (or its result dropped), until the tool is
    /// approved again. The failure carries the tool's drift.
    Quarantined,
}

impl FailureKind {
    /// The error code a model sees, one of the error envelope's codes.
    #[must_use]
    pub fn code(self) -> ErrorCode {
        match self {
            Self::UnknownTool => ErrorCode::UnknownTool,
            Self::InvalidArguments => ErrorCode::InvalidArguments,
            Self::UnusableSchema => ErrorCode::UnusableSchema,
            Self::MalformedResult => ErrorCode::MalformedResult,
            Self::MissingStructuredContent | Self::OutputViolation => ErrorCode::OutputContractViolation,
            Self::Quarantined => ErrorCode::ToolQuarantined,
        }
    }
}

/// A result that passed: validated against the declared `outputSchema`, or unvalidated
/// because the tool declares none.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Success {
    /// The tool called.
    pub tool: String,
    /// `structuredContent`: validated when `validated` is true.
    pub structured: Option<Value>,
    /// Whether `structured` was validated against a declared `outputSchema`.
    pub validated: bool,
    /// The text content blocks, for display. Never preferred over validated JSON.
    pub text: Vec<String>,
    /// Our contract `_meta`, from the result or else from the tool definition.
    pub contract: Option<ContractInfo>,
    /// Keys in `structuredContent` and not in the one JSON text block, or the other way
    /// round ([`structured_text_mismatch`](super::structured_text_mismatch)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mismatch: Option<Box<KeyMismatch>>,
    /// The result says it failed although `isError` is unset
    /// ([`false_success`](super::false_success)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub false_success: Option<Box<FalseSuccess>>,
}

/// Whether a declared error is the server's SDK refusing the tool's own output, and
/// whose ([`SELF_REFUSALS`](super::SELF_REFUSALS)): by its envelope's code when it has one, else by its text.
/// [`DeclaredError::from_text`] fills [`DeclaredError::refused_by`] with it.
///
/// # Examples
///
/// ```
/// use contract_runtime::client::{self_refusal, DeclaredError};
///
/// let refused = DeclaredError::from_text(
///     "firecrawl_scrape",
///     &["Tool 'firecrawl_scrape' structured output validation failed: markdown: expected string".to_owned()],
/// );
/// assert_eq!(self_refusal(&refused).map(|r| r.sdk), Some("fastmcp 4.x"));
///
/// // The tool's own error is not a refusal.
/// let own = DeclaredError::from_text("firecrawl_scrape", &["Unauthorized".to_owned()]);
/// assert_eq!(self_refusal(&own), None);
/// ```
#[must_use]
pub fn self_refusal(error: &DeclaredError) -> Option<SelfRefusal> {
    refusal_of(error.code.as_deref(), &error.message)
}

/// An error the server declared with `isError: true`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DeclaredError {
    /// The tool called.
    pub tool: String,
    /// The code from our `{"error":{"code",…}}` envelope, when the text carries one.
    pub code: Option<String>,
    /// The message: the envelope's, or the text blocks', bounded in length.
    pub message: String,
    /// The envelope's `retryable`, when present.
    pub retryable: Option<bool>,
    /// Set when the error is the server's SDK refusing the tool's own output, not the
    /// tool's error ([`self_refusal`](self_refusal)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused_by: Option<SelfRefusal>,
}

impl DeclaredError {
    /// Reads an error result's text blocks: our envelope when the first block is one,
    /// the plain text otherwise.
    #[must_use]
    pub fn from_text(tool: &str, text: &[String]) -> Self {
        let envelope = text
            .first()
            .and_then(|first| serde_json::from_str::<Value>(first).ok())
            .and_then(|value| value.get("error").filter(|e| e.is_object()).cloned());
        if let Some(error) = envelope {
            let code = error.get("code").and_then(Value::as_str).map(str::to_owned);
            let message = error.get("message").and_then(Value::as_str).unwrap_or_default();
            return Self {
                tool: tool.to_owned(),
                code,
                message: bounded(message),
                retryable: error.get("retryable").and_then(Value::as_bool),
                refused_by: None,
            }
            .with_refusal();
        }
        Self {
            tool: tool.to_owned(),
            code: None,
            message: bounded(&text.join("\n")),
            retryable: None,
            refused_by: None,
        }
        .with_refusal()
    }

    fn with_refusal(mut self) -> Self {
        self.refused_by = self_refusal(&self);
        self
    }

    /// The code as one of ours, when it is one.
    #[must_use]
    pub fn error_code(&self) -> Option<ErrorCode> {
        self.code.as_deref().and_then(ErrorCode::from_name)
    }
}

/// A call refused before it was made, or a result rejected after it came back. The
/// violations carry pointers, keywords and masked messages, never values.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ContractFailure {
    /// The tool called.
    pub tool: String,
    /// Why.
    pub kind: FailureKind,
    /// Where, masked.
    pub violations: Vec<Violation>,
    /// For [`FailureKind::Quarantined`]: how the tool differs from its pin (every change,
    /// the digests old → new). For the operator: a text change holds the new text, which
    /// never reaches [`CallOutcome::model_view`]. Serialized as the change kinds and the
    /// digests only.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "serialize_drift")]
    pub drift: Option<Box<ToolDrift>>,
}

impl ContractFailure {
    /// A failure of `kind` for `tool`.
    #[must_use]
    pub fn new(tool: &str, kind: FailureKind, violations: Vec<Violation>) -> Self {
        Self { tool: tool.to_owned(), kind, violations, drift: None }
    }

    /// The refusal of a quarantined tool, carrying its drift.
    #[must_use]
    pub fn quarantined(drift: &ToolDrift) -> Self {
        Self {
            tool: drift.name().to_owned(),
            kind: FailureKind::Quarantined,
            violations: Vec::new(),
            drift: Some(Box::new(drift.clone())),
        }
    }

    /// The kinds of a quarantined tool's changes, without repeats, in order
    /// (`text_changed`, `hint_less_safe`, `tool_added`, …): words of a fixed vocabulary,
    /// never text the server chose. Empty for any other failure.
    #[must_use]
    pub fn change_kinds(&self) -> Vec<&str> {
        let mut kinds: Vec<&str> = Vec::new();
        for change in self.drift.iter().flat_map(|d| d.changes()) {
            if !kinds.contains(&change.kind()) {
                kinds.push(change.kind());
            }
        }
        kinds
    }
}

/// A drift as the change kinds, verdicts and areas and the digests: nothing the server
/// wrote (texts, property names in pointers) is serialized.
#[allow(clippy::ref_option)] // serde's `serialize_with` hands the field itself.
fn serialize_drift<S: serde::Serializer>(drift: &Option<Box<ToolDrift>>, serializer: S) -> Result<S::Ok, S::Error> {
    let Some(drift) = drift else { return serializer.serialize_none() };
    let digests = |d: Option<&super::lock::Digests>| d.map(|d| json!({"text": d.text, "shape": d.shape}));
    serde::Serialize::serialize(
        &json!({
            "status": drift.status().as_str(),
            "old": digests(drift.old_digests()),
            "new": digests(drift.new_digests()),
            "changes": change_summary(drift),
        }),
        serializer,
    )
}

/// Each change's area, kind and verdict.
fn change_summary(drift: &ToolDrift) -> Vec<EnvelopeChange> {
    drift
        .changes()
        .iter()
        .map(|c| EnvelopeChange {
            area: c.area().as_str().to_owned(),
            kind: c.kind().to_owned(),
            verdict: c.verdict().as_str().to_owned(),
        })
        .collect()
}

impl fmt::Display for ContractFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): ", self.tool, self.kind.code())?;
        if self.kind == FailureKind::Quarantined {
            let kinds = self.change_kinds();
            let kinds = if kinds.is_empty() { "its bytes".to_owned() } else { kinds.join(", ") };
            let added = self.drift.as_deref().is_some_and(|d| d.status() == DriftStatus::Added);
            let what = if added {
                "the tool is not in the lock, so it was never approved"
            } else {
                "the tool changed since it was approved"
            };
            return write!(f, "{what} ({kinds}); its calls are refused until it is approved again");
        }
        if self.violations.is_empty() {
            return f.write_str("no such tool");
        }
        for (i, v) in self.violations.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            let pointer = if v.pointer().is_empty() { "(root)" } else { v.pointer() };
            write!(f, "{pointer} [{}] {}", v.keyword(), v.message())?;
        }
        Ok(())
    }
}

impl std::error::Error for ContractFailure {}

/// The typed outcome of one call, ready to be handed to a model.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum CallOutcome {
    /// The call succeeded and, when a schema is declared, its value is valid.
    Success(Success),
    /// The server reported an error.
    DeclaredError(DeclaredError),
    /// The call was refused or its result broke the contract.
    ContractFailure(ContractFailure),
}

impl CallOutcome {
    /// Whether the model must see this as an error.
    #[must_use]
    pub fn is_error(&self) -> bool {
        !matches!(self, Self::Success(_))
    }

    /// What to put in the model's context: the validated value; the text when the tool
    /// declares no schema; otherwise an error object with a code (and, for a contract
    /// failure, the masked violations) so the model can self-correct.
    #[must_use]
    pub fn model_view(&self) -> Value {
        match self {
            Self::Success(Success { structured: Some(value), validated: true, .. }) => value.clone(),
            Self::Success(success) => Value::String(success.text.join("\n")),
            Self::DeclaredError(error) => {
                // A code outside the envelope's vocabulary (a server's own) reads as the
                // tool's failure; the message keeps what the server said.
                let code =
                    error.code.as_deref().and_then(ErrorCode::from_name).unwrap_or(ErrorCode::ToolExecutionError);
                let declared =
                    ToolError::new(code, error.message.clone()).with_retryable(error.retryable.unwrap_or(false));
                envelope_value(&ErrorEnvelope::new(&declared))
            }
            Self::ContractFailure(failure) => {
                let envelope = ErrorEnvelope::new(&ToolError::new(failure.kind.code(), failure.to_string()));
                let envelope = if failure.kind == FailureKind::Quarantined {
                    envelope.with_changes(failure.drift.as_deref().map(change_summary).unwrap_or_default())
                } else {
                    envelope.with_violations(failure.violations.iter().map(WireViolation::from).collect())
                };
                envelope_value(&envelope)
            }
        }
    }
}

/// `message` cut to [`MAX_MESSAGE_CHARS`] characters.
fn bounded(message: &str) -> String {
    match message.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((cut, _)) => format!("{}…", &message[..cut]),
        None => message.to_owned(),
    }
}

/// An envelope as the JSON value a model's context takes.
fn envelope_value(envelope: &ErrorEnvelope) -> Value {
    serde_json::to_value(envelope).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::{self_refusal, DeclaredError};

    #[test]
    fn refusals_are_recognized_by_sdk_and_ordinary_errors_are_not() {
        let sdk = |text: &str| self_refusal(&DeclaredError::from_text("t", &[text.to_owned()])).map(|r| r.sdk);
        assert_eq!(sdk("Tool 'scrape' structured output validation failed: x: bad"), Some("fastmcp 4.x"));
        assert_eq!(
            sdk("MCP error -32602: Output validation error: Invalid structured content for tool t: x"),
            Some("TypeScript SDK v1")
        );
        assert_eq!(sdk("Output validation error: Invalid structured content for tool t: x"), Some("TypeScript SDK v2"));
        assert_eq!(sdk(r#"{"error":{"code":"output_contract_violation","message":"broke"}}"#), Some("tool-contracts"));
        // Clean controls: a tool's own errors, and the words in the middle of one.
        assert_eq!(sdk("Task not found: x"), None);
        assert_eq!(sdk("Error executing tool t"), None);
        assert_eq!(sdk("upstream said: Output validation error: x"), None);
        assert_eq!(sdk(r#"{"error":{"code":"tool_execution_error","message":"Output validation error: x"}}"#), None);
    }
}
