//! The MCP result envelope: what a `tools/call` result looks like on the wire, success
//! or failure (DESIGN.md decision 7), and the protocol-era rules for non-object roots
//! (decision 9).

use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::contract::OutputContract;

/// The namespaced `_meta` key under which a tool and its results carry the contract
/// identity.
pub const META_KEY: &str = "tool-contracts.dev/contract";

/// The namespaced `_meta` key that says whether a result was served from the cache
/// (`"hit"`) or computed and offered to it (`"miss"`); absent when no cache was asked.
/// Replicas behind one load balancer can then be told apart from the outside.
pub const CACHE_META_KEY: &str = "tool-contracts.dev/cache";

/// The first protocol revision whose `structuredContent` may be any JSON value
/// (SEP-2106). Older peers get a non-object root wrapped as `{"result": …}`.
pub const NATURAL_ROOTS_SINCE: &str = "2026-07-28";

/// A machine-readable error code, the `code` of an error result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
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
    /// nor sent (fail closed; see [`crate::finite::Limits`]).
    OutputLimitExceeded,
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
        }
    }

    /// Parses a wire name.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        ALL_CODES.iter().copied().find(|c| c.as_str() == name)
    }
}

const ALL_CODES: [ErrorCode; 8] = [
    ErrorCode::OutputContractViolation,
    ErrorCode::ToolExecutionError,
    ErrorCode::MiddlewareError,
    ErrorCode::SerializationError,
    ErrorCode::Unavailable,
    ErrorCode::FalseCompleteness,
    ErrorCode::InvalidArguments,
    ErrorCode::OutputLimitExceeded,
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

/// The negotiated protocol version of a peer, such as `2025-11-25`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProtocolVersion(String);

impl ProtocolVersion {
    /// The latest revision this crate knows.
    #[must_use]
    pub fn latest() -> Self {
        Self(NATURAL_ROOTS_SINCE.to_owned())
    }

    /// Wraps a negotiated version string.
    #[must_use]
    pub fn new(version: impl Into<String>) -> Self {
        Self(version.into())
    }

    /// The version string.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this peer accepts only object roots in `structuredContent` and
    /// `outputSchema` (revisions before 2026-07-28). Versions are dates, so they
    /// compare as strings.
    #[must_use]
    pub fn needs_object_root(&self) -> bool {
        self.0.as_str() < NATURAL_ROOTS_SINCE
    }
}

impl Default for ProtocolVersion {
    fn default() -> Self {
        Self::latest()
    }
}

/// The contract identity as it appears under [`META_KEY`].
#[must_use]
pub fn contract_meta(contract: &OutputContract) -> Value {
    json!({
        "qualified": true,
        "name": contract.name(),
        "version": contract.version().to_string(),
        "compatibility": contract.compatibility().as_str(),
        "sha256": contract.sha256(),
        "id": contract.id().to_string(),
    })
}

/// A result's `_meta` object and its serialized form, built once per contract and
/// shared by every result of it.
#[derive(Debug, PartialEq)]
pub(crate) struct ResultMeta {
    value: Value,
    json: String,
}

impl ResultMeta {
    pub(crate) fn new(value: Value) -> Self {
        let json = value.to_string();
        Self { value, json }
    }

    /// `{META_KEY: contract_meta(contract)}`.
    pub(crate) fn for_contract(contract: &OutputContract) -> Self {
        Self::new(json!({ META_KEY: contract_meta(contract) }))
    }
}

/// The `_meta` value of an uncontracted tool: visibly unqualified, never "validated".
#[must_use]
pub fn unqualified_meta() -> Value {
    json!({ "qualified": false })
}

/// How a contract's root is sent to a peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootShape {
    /// Sent as is.
    Natural,
    /// The root is an object for every instance but the schema does not say
    /// `type: object` at the top (a `oneOf` of objects): old peers need the type added.
    ObjectByComposition,
    /// Wrapped as `{"result": …}` for peers before 2026-07-28.
    Wrapped,
}

/// How `contract`'s results go to a peer on `protocol`.
#[must_use]
pub fn root_shape(contract: &OutputContract, protocol: &ProtocolVersion) -> RootShape {
    if !protocol.needs_object_root() {
        return RootShape::Natural;
    }
    let schema = contract.schema();
    if schema.get("type").and_then(Value::as_str) == Some("object") {
        RootShape::Natural
    } else if always_object(schema, schema, 0) {
        RootShape::ObjectByComposition
    } else {
        RootShape::Wrapped
    }
}

fn always_object(root: &Value, node: &Value, depth: usize) -> bool {
    if depth > 32 {
        return false;
    }
    if node.get("type").and_then(Value::as_str) == Some("object") {
        return true;
    }
    if let Some(target) =
        node.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#')).and_then(|p| root.pointer(p))
    {
        return always_object(root, target, depth + 1);
    }
    ["oneOf", "anyOf"].iter().any(|k| {
        node.get(*k)
            .and_then(Value::as_array)
            .is_some_and(|branches| !branches.is_empty() && branches.iter().all(|b| always_object(root, b, depth + 1)))
    })
}

/// The `outputSchema` to advertise to a peer on `protocol`: the contract's schema, or
/// for older peers and a non-object root, the `{"result": …}` wrapper with its `$ref`s
/// rewritten.
#[must_use]
pub fn advertised_output_schema(contract: &OutputContract, protocol: &ProtocolVersion) -> Value {
    let schema = contract.schema();
    match root_shape(contract, protocol) {
        RootShape::Natural => schema.clone(),
        RootShape::ObjectByComposition => {
            let mut out = schema.clone();
            if let Some(obj) = out.as_object_mut() {
                obj.insert("type".to_owned(), json!("object"));
            }
            out
        }
        RootShape::Wrapped => wrap_schema(schema),
    }
}

/// `{"type":"object","properties":{"result": <root>},"required":["result"],…}` with
/// `$schema` and `$defs` kept at the top and references to the old root rewritten.
fn wrap_schema(schema: &Value) -> Value {
    let mut inner = schema.clone();
    let mut outer = Map::new();
    if let Some(obj) = inner.as_object_mut() {
        for key in ["$schema", "$defs"] {
            if let Some(v) = obj.remove(key) {
                outer.insert(key.to_owned(), v);
            }
        }
    }
    rewrite_root_refs(&mut inner);
    if let Some(defs) = outer.get_mut("$defs") {
        rewrite_root_refs(defs);
    }
    outer.insert("type".to_owned(), json!("object"));
    outer.insert("properties".to_owned(), json!({ "result": inner }));
    outer.insert("required".to_owned(), json!(["result"]));
    outer.insert("additionalProperties".to_owned(), json!(false));
    Value::Object(outer)
}

fn rewrite_root_refs(node: &mut Value) {
    match node {
        Value::Object(obj) => {
            if let Some(Value::String(r)) = obj.get_mut("$ref") {
                if r == "#" || (r.starts_with("#/") && !r.starts_with("#/$defs/")) {
                    *r = format!("#/properties/result{}", &r[1..]);
                }
            }
            obj.values_mut().for_each(rewrite_root_refs);
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_root_refs),
        _ => {}
    }
}

/// A violation as it appears in an error result: where and which keyword, with a
/// masked, sanitized message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WireViolation {
    /// JSON pointer into the result.
    pub pointer: String,
    /// The failed keyword.
    pub keyword: String,
    /// Masked, sanitized message.
    pub message: String,
}

/// A [`ToolCallResult`] taken apart by [`ToolCallResult::into_parts`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ResultParts {
    /// `isError`.
    pub is_error: bool,
    /// The one text block.
    pub text: String,
    /// `structuredContent`, present on a success only.
    pub structured_content: Option<Value>,
    /// The `_meta` object.
    pub meta: Option<Value>,
}

/// Whether a result came from the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheStatus {
    /// No cache, or the call was not cacheable.
    Bypass,
    /// Served from the cache.
    Hit,
    /// Computed, and admitted to the cache if valid.
    Miss,
}

/// A `tools/call` result, success or failure, ready for any transport.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCallResult {
    pub(crate) text: String,
    pub(crate) structured: Option<Value>,
    pub(crate) error: Option<(ToolError, Vec<WireViolation>)>,
    pub(crate) meta: Option<Arc<ResultMeta>>,
    pub(crate) cache: CacheStatus,
}

impl ToolCallResult {
    /// A success whose `text` is the compact JSON of `structured`.
    pub(crate) fn success(structured: Value, text: String, meta: Option<Arc<ResultMeta>>, cache: CacheStatus) -> Self {
        Self { text, structured: Some(structured), error: None, meta, cache }
    }

    /// An error result. `error`'s message must already be sanitized.
    pub(crate) fn failure(error: ToolError, violations: Vec<WireViolation>, meta: Option<Arc<ResultMeta>>) -> Self {
        let mut body = json!({
            "code": error.code().as_str(),
            "message": error.message(),
            "retryable": error.retryable(),
        });
        if !violations.is_empty() {
            body["violations"] = serde_json::to_value(&violations).unwrap_or(Value::Null);
        }
        let text = json!({ "error": body }).to_string();
        Self { text, structured: None, error: Some((error, violations)), meta, cache: CacheStatus::Bypass }
    }

    /// The error result for `error`, its message sanitized. `contract` is the tool's
    /// contract, whose identity goes in `_meta`; `None` marks the tool unqualified.
    #[must_use]
    pub fn from_error(error: &ToolError, contract: Option<&OutputContract>) -> Self {
        let clean = ToolError::new(error.code(), crate::redact::sanitize(error.message(), &[]))
            .with_retryable(error.retryable());
        let meta = contract.map_or_else(
            || Arc::new(ResultMeta::new(json!({ META_KEY: unqualified_meta() }))),
            OutputContract::result_meta,
        );
        Self::failure(clean, Vec::new(), Some(meta))
    }

    /// An `invalid_arguments` error result (SEP-1303), sanitized; `meta` is the whole
    /// `_meta` object to attach, if any.
    #[must_use]
    pub fn invalid_arguments(message: &str, meta: Option<Value>) -> Self {
        let error = ToolError::new(ErrorCode::InvalidArguments, crate::redact::sanitize(message, &[]));
        Self::failure(error, Vec::new(), meta.map(|m| Arc::new(ResultMeta::new(m))))
    }

    /// Whether this is an error result (`isError: true`).
    #[must_use]
    pub fn is_error(&self) -> bool {
        self.error.is_some()
    }

    /// The error code of an error result.
    #[must_use]
    pub fn error_code(&self) -> Option<ErrorCode> {
        self.error.as_ref().map(|(e, _)| e.code())
    }

    /// The error of an error result (sanitized message).
    #[must_use]
    pub fn error(&self) -> Option<&ToolError> {
        self.error.as_ref().map(|(e, _)| e)
    }

    /// The violations of an `output_contract_violation`.
    #[must_use]
    pub fn violations(&self) -> &[WireViolation] {
        self.error.as_ref().map_or(&[], |(_, v)| v)
    }

    /// `structuredContent`: the validated value of a success, `None` for an error.
    #[must_use]
    pub fn structured_content(&self) -> Option<&Value> {
        self.structured.as_ref()
    }

    /// The one text block: the serialized JSON of a success, or the error JSON.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The result's `_meta` object, holding [`META_KEY`] when the tool has a contract.
    #[must_use]
    pub fn meta(&self) -> Option<&Value> {
        self.meta.as_deref().map(|m| &m.value)
    }

    /// Whether the result was served from the cache.
    #[must_use]
    pub fn cache_status(&self) -> CacheStatus {
        self.cache
    }

    /// Takes the result apart without copying the payload: the text block, the
    /// `structuredContent` of a success, and the `_meta` object. For adapters that build
    /// their SDK's own result type.
    #[must_use]
    pub fn into_parts(self) -> ResultParts {
        ResultParts {
            is_error: self.error.is_some(),
            text: self.text,
            structured_content: self.structured,
            meta: self.meta.map(|m| m.value.clone()),
        }
    }

    /// The MCP `CallToolResult` as a JSON value.
    #[must_use]
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("content".to_owned(), json!([{ "type": "text", "text": self.text }]));
        if let Some(structured) = &self.structured {
            out.insert("structuredContent".to_owned(), structured.clone());
        }
        out.insert("isError".to_owned(), Value::Bool(self.is_error()));
        if let Some(meta) = &self.meta {
            out.insert("_meta".to_owned(), meta.value.clone());
        }
        Value::Object(out)
    }

    /// The MCP `CallToolResult` serialized, equal to `to_json()` serialized. A success's
    /// payload is written once: the text block's JSON is reused as the raw
    /// `structuredContent`, with no second conversion of the value.
    #[must_use]
    pub fn to_wire_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.text.len() * 2 + 128);
        out.extend_from_slice(b"{\"content\":[{\"type\":\"text\",\"text\":");
        // Writing a string into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut out, &self.text);
        out.extend_from_slice(b"}]");
        if self.structured.is_some() {
            out.extend_from_slice(b",\"structuredContent\":");
            out.extend_from_slice(self.text.as_bytes());
        }
        out.extend_from_slice(if self.is_error() { b",\"isError\":true" } else { b",\"isError\":false" });
        if let Some(meta) = &self.meta {
            out.extend_from_slice(b",\"_meta\":");
            out.extend_from_slice(meta.json.as_bytes());
        }
        out.push(b'}');
        out
    }
}
