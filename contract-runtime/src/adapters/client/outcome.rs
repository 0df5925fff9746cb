//! What a harness hands to a model after a call: a validated value, a declared error,
//! or a contract failure with masked violations.

use std::fmt;

use serde_json::{json, Value};

use super::catalog::ContractInfo;
use crate::contract::validate::Violation;
use crate::serve::wire::ErrorCode;

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
}

impl FailureKind {
    /// The error code a model sees, in the vocabulary of our error envelope.
    #[must_use]
    pub fn code(self) -> &'static str {
        match self {
            Self::UnknownTool => "unknown_tool",
            Self::InvalidArguments => ErrorCode::InvalidArguments.as_str(),
            Self::UnusableSchema => "unusable_schema",
            Self::MalformedResult => "malformed_result",
            Self::MissingStructuredContent | Self::OutputViolation => ErrorCode::OutputContractViolation.as_str(),
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
            };
        }
        Self { tool: tool.to_owned(), code: None, message: bounded(&text.join("\n")), retryable: None }
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
}

impl ContractFailure {
    /// A failure of `kind` for `tool`.
    #[must_use]
    pub fn new(tool: &str, kind: FailureKind, violations: Vec<Violation>) -> Self {
        Self { tool: tool.to_owned(), kind, violations }
    }
}

impl fmt::Display for ContractFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): ", self.tool, self.kind.code())?;
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
            Self::DeclaredError(error) => json!({"error": {
                "code": error.code.as_deref().unwrap_or(ErrorCode::ToolExecutionError.as_str()),
                "message": error.message,
                "retryable": error.retryable.unwrap_or(false),
            }}),
            Self::ContractFailure(failure) => json!({"error": {
                "code": failure.kind.code(),
                "message": failure.to_string(),
                "retryable": false,
                "violations": failure.violations.iter()
                    .map(|v| json!({"pointer": v.pointer(), "keyword": v.keyword()}))
                    .collect::<Vec<_>>(),
            }}),
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
