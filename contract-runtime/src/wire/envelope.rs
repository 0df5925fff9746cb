//! The result envelope: success (`structuredContent`, one text block, `isError: false`,
//! the contract identity in `_meta`) or failure (`isError: true`, a sanitized error body, no
//! `structuredContent`).

use std::sync::{Arc, OnceLock};

use serde::Serialize;
use serde_json::{json, Map, Value};

use super::{ErrorCode, ToolError, META_KEY};
use crate::contract::OutputContract;

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

/// The contract identity as every result of it carries it under [`META_KEY`]:
/// `qualified` and the `id` (`name@version+sha256:…`), which holds the name, version
/// and hash. The tool listing carries the details ([`contract_meta`]); repeating them
/// on every result would cost bytes, allocations and parsing on each call for nothing
/// the `id` does not say.
#[must_use]
pub fn result_meta(contract: &OutputContract) -> Value {
    json!({ "qualified": true, "id": contract.id().to_string() })
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

    /// `{META_KEY: result_meta(contract)}`.
    pub(crate) fn for_contract(contract: &OutputContract) -> Self {
        Self::new(json!({ META_KEY: result_meta(contract) }))
    }

    /// [`ResultMeta::for_contract`], built once per contract and kept with it.
    pub(crate) fn of(contract: &OutputContract) -> Arc<Self> {
        contract.memo(Self::for_contract)
    }
}

/// The `_meta` value of an uncontracted tool: visibly unqualified, never "validated".
#[must_use]
pub fn unqualified_meta() -> Value {
    json!({ "qualified": false })
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
#[derive(Clone, Debug)]
pub struct ToolCallResult {
    pub(crate) text: String,
    /// `structuredContent` of a success. It may be empty until asked for: the text is
    /// its compact JSON, and a path that judged the result without a tree (the fast
    /// path, a cache hit) leaves it to be parsed from the text only when someone reads
    /// it. serde_json's `float_roundtrip` makes that parse exact.
    pub(crate) structured: Option<OnceLock<Value>>,
    pub(crate) error: Option<(ToolError, Vec<WireViolation>)>,
    pub(crate) meta: Option<Arc<ResultMeta>>,
    pub(crate) cache: CacheStatus,
}

impl ToolCallResult {
    /// A success whose `text` is the compact JSON of `structured`.
    pub(crate) fn success(structured: Value, text: String, meta: Option<Arc<ResultMeta>>, cache: CacheStatus) -> Self {
        Self { text, structured: Some(OnceLock::from(structured)), error: None, meta, cache }
    }

    /// A success whose `structuredContent` is the JSON `text`, parsed when first read.
    /// `text` must be well-formed JSON.
    pub(crate) fn success_from_text(text: String, meta: Option<Arc<ResultMeta>>, cache: CacheStatus) -> Self {
        Self { text, structured: Some(OnceLock::new()), error: None, meta, cache }
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
        let meta =
            contract.map_or_else(|| Arc::new(ResultMeta::new(json!({ META_KEY: unqualified_meta() }))), ResultMeta::of);
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
        self.structured.as_ref().map(|cell| cell.get_or_init(|| parse(&self.text)))
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
        let structured_content = self.structured.map(|cell| cell.into_inner().unwrap_or_else(|| parse(&self.text)));
        ResultParts {
            is_error: self.error.is_some(),
            text: self.text,
            structured_content,
            meta: self.meta.map(|m| m.value.clone()),
        }
    }

    /// The MCP `CallToolResult` as a JSON value.
    #[must_use]
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("content".to_owned(), json!([{ "type": "text", "text": self.text }]));
        if let Some(structured) = self.structured_content() {
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

impl PartialEq for ToolCallResult {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
            && self.structured_content() == other.structured_content()
            && self.error == other.error
            && self.meta == other.meta
            && self.cache == other.cache
    }
}

/// The tree of a success's text, which the pipeline wrote or checked as JSON.
fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}
