//! Error codes and the error a handler returns: the `code`, `message` and `retryable`
//! of an error result.

use std::fmt;

use serde::Serialize;

/// A machine-readable error code, the `code` of an error result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    /// The result broke its contract.
    OutputContractViolation,
    /// The handler failed.
    ToolExecutionError,
    /// A post-result middleware failed.
    MiddlewareError,
    /// The result could not be serialized to JSON.
    SerializationError,
    /// The evidence the tool needs is not available now.
    Unavailable,
    /// The result claimed to be complete while its own counts say otherwise.
    FalseCompleteness,
    /// The arguments broke the tool's `inputSchema` (SEP-1303).
    InvalidArguments,
    /// The result passed the pipeline's depth or size limit, so it was neither judged
    /// nor sent (fail closed; see [`crate::limits::Limits`]).
    OutputLimitExceeded,
    /// The tool changed since it was pinned in a tools lock and is held back until it is
    /// reviewed and pinned again: the call was refused before it was sent.
    ToolQuarantined,
    /// A client asked for a tool the server does not list.
    UnknownTool,
    /// A declared schema does not compile (an unresolvable `$ref`, say), so nothing can
    /// be judged against it: the client refuses the result (fail closed).
    UnusableSchema,
    /// What came back is not a `tools/call` result.
    MalformedResult,
}

impl ErrorCode {
    /// The snake-case wire name, such as `output_contract_violation`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::OutputContractViolation => "output_contract_violation",
            ErrorCode::ToolExecutionError => "tool_execution_error",
            ErrorCode::MiddlewareError => "middleware_error",
            ErrorCode::SerializationError => "serialization_error",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::FalseCompleteness => "false_completeness",
            ErrorCode::InvalidArguments => "invalid_arguments",
            ErrorCode::OutputLimitExceeded => "output_limit_exceeded",
            ErrorCode::ToolQuarantined => "tool_quarantined",
            ErrorCode::UnknownTool => "unknown_tool",
            ErrorCode::UnusableSchema => "unusable_schema",
            ErrorCode::MalformedResult => "malformed_result",
        }
    }

    /// Parses a wire name.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        ALL_CODES.iter().copied().find(|c| c.as_str() == name)
    }

    /// Every code, in a fixed order (the order of the declaration).
    #[must_use]
    pub fn all() -> &'static [ErrorCode] {
        &ALL_CODES
    }

    /// The code's place in [`ErrorCode::all`].
    pub(crate) fn index(self) -> usize {
        ALL_CODES.iter().position(|c| *c == self).unwrap_or(0)
    }
}

/// How many codes there are.
pub(crate) const CODE_COUNT: usize = 12;

const ALL_CODES: [ErrorCode; CODE_COUNT] = [
    ErrorCode::OutputContractViolation,
    ErrorCode::ToolExecutionError,
    ErrorCode::MiddlewareError,
    ErrorCode::SerializationError,
    ErrorCode::Unavailable,
    ErrorCode::FalseCompleteness,
    ErrorCode::InvalidArguments,
    ErrorCode::OutputLimitExceeded,
    ErrorCode::ToolQuarantined,
    ErrorCode::UnknownTool,
    ErrorCode::UnusableSchema,
    ErrorCode::MalformedResult,
];

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error a tool reports: a code, a message a model can act on, and whether trying
/// again may help. The message is sanitized before it leaves the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolError {
    code: ErrorCode,
    message: String,
    retryable: bool,
}

impl ToolError {
    /// An error with `code`, not retryable.
    #[must_use]
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), retryable: false }
    }

    /// A `tool_execution_error`.
    #[must_use]
    pub fn execution(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::ToolExecutionError, message)
    }

    /// An `unavailable` error, retryable.
    #[must_use]
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Unavailable, message).with_retryable(true)
    }

    /// Sets whether trying again may help.
    #[must_use]
    pub fn with_retryable(mut self, retryable: bool) -> Self {
        self.retryable = retryable;
        self
    }

    /// The code.
    #[must_use]
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The message, as written (not yet sanitized).
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether trying again may help.
    #[must_use]
    pub fn retryable(&self) -> bool {
        self.retryable
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}

/// How a handler's error type becomes an error result. Implement it for your error type
/// to choose the code and the retryable flag; the defaults give a non-retryable
/// `tool_execution_error` with the `Display` text as the message.
///
/// # Examples
///
/// ```
/// use contract_runtime::wire::{ErrorCode, ToolFailure};
///
/// #[derive(Debug)]
/// enum ScanError { Timeout, BadRepo(String) }
///
/// impl std::fmt::Display for ScanError {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         match self {
///             ScanError::Timeout => f.write_str("the scanner timed out"),
///             ScanError::BadRepo(r) => write!(f, "cannot read repository {r}"),
///         }
///     }
/// }
///
/// impl ToolFailure for ScanError {
///     fn code(&self) -> ErrorCode {
///         match self {
///             ScanError::Timeout => ErrorCode::Unavailable,
///             ScanError::BadRepo(_) => ErrorCode::ToolExecutionError,
///         }
///     }
///     fn retryable(&self) -> bool {
///         matches!(self, ScanError::Timeout)
///     }
/// }
///
/// assert_eq!(ScanError::Timeout.to_tool_error().code(), ErrorCode::Unavailable);
/// ```
pub trait ToolFailure: fmt::Display {
    /// The error code; `tool_execution_error` unless overridden.
    fn code(&self) -> ErrorCode {
        ErrorCode::ToolExecutionError
    }

    /// Whether trying again may help; `false` unless overridden.
    fn retryable(&self) -> bool {
        false
    }

    /// The error as a [`ToolError`].
    fn to_tool_error(&self) -> ToolError {
        ToolError::new(self.code(), self.to_string()).with_retryable(self.retryable())
    }
}

impl ToolFailure for ToolError {
    fn code(&self) -> ErrorCode {
        self.code
    }
    fn retryable(&self) -> bool {
        self.retryable
    }
    fn to_tool_error(&self) -> ToolError {
        self.clone()
    }
}

// Any other error is a tool_execution_error.
impl ToolFailure for String {}
impl ToolFailure for &str {}
impl ToolFailure for std::io::Error {}
impl ToolFailure for serde_json::Error {}
impl ToolFailure for std::fmt::Error {}
impl ToolFailure for Box<dyn std::error::Error + Send + Sync> {}
impl ToolFailure for Box<dyn std::error::Error> {}
impl ToolFailure for std::convert::Infallible {}
