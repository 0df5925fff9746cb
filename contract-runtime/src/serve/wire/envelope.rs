//! The result envelope: success (`structuredContent`, one text block, `isError: false`,
//! the contract identity in `_meta`) or failure (`isError: true`, a sanitized error body, no
//! `structuredContent`).

use std::io;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::{write_json_string, ErrorCode, ToolError, CACHE_META_KEY, META_KEY};
use crate::contract::OutputContract;

/// The contract identity as a tool listing carries it under [`META_KEY`]: `qualified`,
/// `name`, `version`, `compatibility`, `sha256` and `id`, plus `opaque` when the contract
/// declares opaque values: their instance pointers into the contract's value, as the
/// inventory lists them ([`OutputContract::opaque_pointers`]; `*` for any key or index;
/// under a wrapped root that value is the `result`). A schema alone cannot tell
/// a declared pass-through value from one that accepts anything by accident; the listing
/// can.
#[must_use]
pub fn contract_meta(contract: &OutputContract) -> Value {
    let mut meta = json!({
        "qualified": true,
        "name": contract.name(),
        "version": contract.version().to_string(),
        "compatibility": contract.compatibility().as_str(),
        "sha256": contract.sha256(),
        "id": contract.id().to_string(),
    });
    if !contract.opaque_pointers().is_empty() {
        meta["opaque"] = json!(contract.opaque_pointers());
    }
    meta
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

/// A result's `_meta` object and the end of the serialized result that carries it
/// (`,"_meta":{…}}`), built once per contract and shared by every result of it.
#[derive(Debug)]
pub(crate) struct ResultMeta {
    value: Value,
    tail: Bytes,
}

impl PartialEq for ResultMeta {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

/// The `_meta` objects of one contract's results, with and without a cache status,
/// enforced or sent unchanged under report-only.
struct ContractMetas {
    plain: Arc<ResultMeta>,
    hit: Arc<ResultMeta>,
    miss: Arc<ResultMeta>,
    unenforced: Arc<ResultMeta>,
    unenforced_miss: Arc<ResultMeta>,
}

/// The member beside the contract identity (under [`META_KEY`]) of a result that broke
/// its contract and was sent unchanged because the tool is report-only: always
/// `false` there, and absent from every result that was enforced.
pub const ENFORCED_FIELD: &str = "enforced";

impl ResultMeta {
    pub(crate) fn new(value: Value) -> Self {
        let mut tail = b",\"_meta\":".to_vec();
        // Writing a value into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut tail, &value);
        tail.push(b'}');
        Self { value, tail: Bytes::from(tail) }
    }

    /// `{META_KEY: result_meta(contract)}`.
    pub(crate) fn for_contract(contract: &OutputContract) -> Self {
        Self::new(json!({ META_KEY: result_meta(contract) }))
    }

    fn metas(contract: &OutputContract) -> Arc<ContractMetas> {
        contract.memo(|contract| {
            let plain = Self::for_contract(contract);
            let with_status = |status: &str| {
                let mut value = plain.value.clone();
                value[CACHE_META_KEY] = Value::from(status);
                Arc::new(Self::new(value))
            };
            let mut unenforced = plain.value.clone();
            unenforced[META_KEY][ENFORCED_FIELD] = Value::Bool(false);
            let mut unenforced_miss = unenforced.clone();
            unenforced_miss[CACHE_META_KEY] = Value::from("miss");
            ContractMetas {
                hit: with_status("hit"),
                miss: with_status("miss"),
                plain: Arc::new(plain),
                unenforced: Arc::new(Self::new(unenforced)),
                unenforced_miss: Arc::new(Self::new(unenforced_miss)),
            }
        })
    }

    /// The `_meta` of a result sent unchanged although it broke its contract: the
    /// identity with [`ENFORCED_FIELD`] `false`, and the cache status of a call that asked
    /// the cache (a miss: such a result is never admitted).
    pub(crate) fn unenforced(contract: &OutputContract, status: CacheStatus) -> Arc<Self> {
        let metas = Self::metas(contract);
        Arc::clone(if status == CacheStatus::Bypass { &metas.unenforced } else { &metas.unenforced_miss })
    }

    /// [`ResultMeta::for_contract`], built once per contract and kept with it.
    pub(crate) fn of(contract: &OutputContract) -> Arc<Self> {
        Arc::clone(&Self::metas(contract).plain)
    }

    /// The contract's `_meta` with the cache status beside the identity
    /// ([`CACHE_META_KEY`]), built once per contract and status.
    pub(crate) fn cached(contract: &OutputContract, status: CacheStatus) -> Arc<Self> {
        let metas = Self::metas(contract);
        Arc::clone(match status {
            CacheStatus::Bypass => &metas.plain,
            CacheStatus::Hit => &metas.hit,
            CacheStatus::Miss => &metas.miss,
        })
    }
}

/// The end of a serialized result without `_meta`.
const CLOSE: &[u8] = b"}";

/// A validated success written once for the wire, to be shared by every hit of a cache
/// entry: the `result` of the JSON-RPC response up to its `_meta` (the text block
/// escaped, `structuredContent` raw, `isError`), for the natural root and, when the
/// contract's root is not an object, for peers before 2026-07-28 that get it wrapped.
/// Each form is written the first time a peer of its era asks for it.
///
/// Made by the pipeline from the text it validated, and bound to that text: a cache
/// keeps it beside the entry it was made from ([`crate::cache::ResultCache::keep_prepared`]).
#[derive(Clone, Debug)]
pub struct PreparedResult {
    text: Arc<str>,
    natural: Option<Bytes>,
    wrapped: Option<Bytes>,
}

impl PreparedResult {
    /// Nothing written yet for `text`.
    pub(crate) fn new(text: Arc<str>) -> Self {
        Self { text, natural: None, wrapped: None }
    }

    /// Whether this was made from `text` (the same allocation, not only equal text).
    #[must_use]
    pub fn is_for(&self, text: &Arc<str>) -> bool {
        Arc::ptr_eq(&self.text, text)
    }

    /// The bytes written so far (the text itself not counted), for a cache's memory bound.
    #[must_use]
    pub fn written_bytes(&self) -> usize {
        self.natural.as_ref().map_or(0, Bytes::len) + self.wrapped.as_ref().map_or(0, Bytes::len)
    }

    /// The form for a peer that gets the root wrapped (`wrapped`) or not, if written.
    pub(crate) fn form(&self, wrapped: bool) -> Option<&Bytes> {
        if wrapped {
            self.wrapped.as_ref()
        } else {
            self.natural.as_ref()
        }
    }

    /// Writes the form for `wrapped` if it is not written yet; returns it.
    pub(crate) fn write_form(&mut self, wrapped: bool) -> Bytes {
        if let Some(form) = self.form(wrapped) {
            return form.clone();
        }
        let form = if wrapped {
            Bytes::from(result_body(&wrapped_text(&self.text), true, false))
        } else {
            Bytes::from(result_body(&self.text, true, false))
        };
        *(if wrapped { &mut self.wrapped } else { &mut self.natural }) = Some(form.clone());
        form
    }
}

/// `{"result":<text>}`: a non-object root as peers before 2026-07-28 get it.
pub(crate) fn wrapped_text(text: &str) -> String {
    format!("{{\"result\":{text}}}")
}

/// A serialized result up to its `_meta`: the text block as an escaped string, then
/// the text again raw as `structuredContent` on a success, then `isError`.
fn result_body(text: &str, structured: bool, is_error: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(body_capacity(text));
    write_body(&mut out, text, structured, is_error);
    out
}

/// Room for a result body: the text twice with a quote escaped every few bytes, which
/// is what JSON text holds, and the fixed members.
fn body_capacity(text: &str) -> usize {
    text.len() * 2 + text.len() / 4 + 96
}

fn write_body(out: &mut Vec<u8>, text: &str, structured: bool, is_error: bool) {
    out.extend_from_slice(b"{\"content\":[{\"type\":\"text\",\"text\":");
    write_json_string(out, text);
    out.extend_from_slice(b"}]");
    if structured {
        out.extend_from_slice(b",\"structuredContent\":");
        out.extend_from_slice(text.as_bytes());
    }
    out.extend_from_slice(if is_error { b",\"isError\":true" } else { b",\"isError\":false" });
}

/// Wire bytes as a few pieces written in order, shared where they can be: a cache hit's
/// result is the cached entry's bytes, not a copy. A transport writes the pieces one
/// after the other ([`WireBytes::write_to`]) or hands them to a vectored write.
///
/// # Examples
///
/// ```
/// use contract_runtime::pipeline::{CallContext, Pipeline};
/// use contract_runtime::wire::ToolError;
/// use contract_runtime::ToolOutput;
///
/// #[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
/// #[tool_output(version = "1.0.0", compatibility = "exact")]
/// struct Health { healthy: u32 }
///
/// let ctx = CallContext::new("health", serde_json::json!({}));
/// let result = Pipeline::builder().build().call_sync(&ctx, || Ok::<_, ToolError>(Health { healthy: 3 }));
/// let response = result.to_jsonrpc_response(&serde_json::json!(7));
/// let mut written = Vec::new();
/// response.write_to(&mut written).unwrap();
/// let parsed: serde_json::Value = serde_json::from_slice(&written).unwrap();
/// assert_eq!(parsed["id"], 7);
/// assert_eq!(parsed["result"], result.to_json());
/// assert_eq!(written, response.to_vec());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WireBytes {
    parts: Vec<Bytes>,
}

impl WireBytes {
    /// The pieces, in order.
    #[must_use]
    pub fn parts(&self) -> &[Bytes] {
        &self.parts
    }

    /// The length of all pieces together.
    #[must_use]
    pub fn len(&self) -> usize {
        self.parts.iter().map(Bytes::len).sum()
    }

    /// Whether there is nothing to write.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.parts.iter().all(Bytes::is_empty)
    }

    /// The pieces copied into one buffer.
    #[must_use]
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len());
        for part in &self.parts {
            out.extend_from_slice(part);
        }
        out
    }

    /// Writes every piece to `writer`, in order.
    ///
    /// # Errors
    ///
    /// The writer's.
    pub fn write_to<W: io::Write + ?Sized>(&self, writer: &mut W) -> io::Result<()> {
        self.parts.iter().try_for_each(|part| writer.write_all(part))
    }
}

/// The `_meta` value of an uncontracted tool: visibly unqualified, never "validated".
#[must_use]
pub fn unqualified_meta() -> Value {
    json!({ "qualified": false })
}

/// A violation as it appears in an error result: where and which keyword, with a
/// masked, sanitized message. Its members are written in the order of their names, as
/// error results have always written them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct WireViolation {
    /// The failed keyword.
    pub keyword: String,
    /// Masked, sanitized message.
    pub message: String,
    /// JSON pointer into the result.
    pub pointer: String,
}

impl From<&crate::contract::validate::Violation> for WireViolation {
    /// A report's violation as an error result lists it. The report's pointers are masked
    /// already and its messages quote no instance data, so nothing is rewritten here: text
    /// patterns would mangle field names.
    fn from(v: &crate::contract::validate::Violation) -> Self {
        Self { keyword: v.keyword().to_owned(), message: v.message().to_owned(), pointer: v.pointer().to_owned() }
    }
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

/// The text block of a result: its own, or shared with a cache entry.
#[derive(Clone, Debug)]
pub(crate) enum Text {
    Owned(String),
    Shared(Arc<str>),
    /// A cached non-object root for a peer that gets it wrapped: `{"result":…}` around
    /// the shared text, written when first read.
    Wrapped(Arc<str>, OnceLock<String>),
}

impl Text {
    fn as_str(&self) -> &str {
        match self {
            Self::Owned(text) => text,
            Self::Shared(text) => text,
            Self::Wrapped(inner, text) => text.get_or_init(|| wrapped_text(inner)),
        }
    }

    fn into_string(self) -> String {
        match self {
            Self::Owned(text) => text,
            Self::Shared(text) => text.to_string(),
            Self::Wrapped(inner, text) => text.into_inner().unwrap_or_else(|| wrapped_text(&inner)),
        }
    }
}

/// A `tools/call` result, success or failure, ready for any transport.
#[derive(Clone, Debug)]
pub struct ToolCallResult {
    pub(crate) text: Text,
    /// `structuredContent` of a success. It may be empty until asked for: the text is
    /// its compact JSON, and a path that judged the result without a tree (the fast
    /// path, a cache hit) leaves it to be parsed from the text only when someone reads
    /// it. serde_json's `float_roundtrip` makes that parse exact.
    pub(crate) structured: Option<OnceLock<Value>>,
    pub(crate) error: Option<(ToolError, Vec<WireViolation>)>,
    pub(crate) meta: Option<Arc<ResultMeta>>,
    pub(crate) cache: CacheStatus,
    /// The serialized result up to its `_meta`, when it was written already (a cache
    /// hit's shared bytes); otherwise written from the text when asked for.
    pub(crate) body: Option<Bytes>,
}

impl ToolCallResult {
    /// A success whose `text` is the compact JSON of `structured`.
    pub(crate) fn success(structured: Value, text: String, meta: Option<Arc<ResultMeta>>, cache: CacheStatus) -> Self {
        Self {
            text: Text::Owned(text),
            structured: Some(OnceLock::from(structured)),
            error: None,
            meta,
            cache,
            body: None,
        }
    }

    /// A success whose `structuredContent` is the JSON `text`, parsed when first read.
    /// `text` must be well-formed JSON.
    pub(crate) fn success_from_text(text: String, meta: Option<Arc<ResultMeta>>, cache: CacheStatus) -> Self {
        Self { text: Text::Owned(text), structured: Some(OnceLock::new()), error: None, meta, cache, body: None }
    }

    /// A success served from `body`, the result written once for the wire (up to its
    /// `_meta`) from `text`, which is well-formed JSON; the tree is parsed when first read.
    pub(crate) fn success_prepared(text: Text, body: Bytes, meta: Arc<ResultMeta>, cache: CacheStatus) -> Self {
        Self { text, structured: Some(OnceLock::new()), error: None, meta: Some(meta), cache, body: Some(body) }
    }

    /// An error result. `error`'s message must already be sanitized.
    pub(crate) fn failure(error: ToolError, violations: Vec<WireViolation>, meta: Option<Arc<ResultMeta>>) -> Self {
        let envelope = super::ErrorEnvelope::new(&error).with_violations(violations);
        let text = envelope.to_text();
        let violations = envelope.error.violations;
        Self {
            text: Text::Owned(text),
            structured: None,
            error: Some((error, violations)),
            meta,
            cache: CacheStatus::Bypass,
            body: None,
        }
    }

    /// The error result for `error`, its message sanitized. `contract` is the tool's
    /// contract, whose identity goes in `_meta`; `None` marks the tool unqualified.
    #[must_use]
    pub fn from_error(error: &ToolError, contract: Option<&OutputContract>) -> Self {
        let clean = ToolError::new(error.code(), crate::contract::redact::sanitize(error.message(), &[]))
            .with_retryable(error.retryable());
        let meta =
            contract.map_or_else(|| Arc::new(ResultMeta::new(json!({ META_KEY: unqualified_meta() }))), ResultMeta::of);
        Self::failure(clean, Vec::new(), Some(meta))
    }

    /// An `invalid_arguments` error result (SEP-1303), sanitized; `meta` is the whole
    /// `_meta` object to attach, if any.
    #[must_use]
    pub fn invalid_arguments(message: &str, meta: Option<Value>) -> Self {
        Self::refusal(&ToolError::new(ErrorCode::InvalidArguments, message), Vec::new(), meta)
    }

    /// The error result of a refusal made outside the pipeline (a proxy's, a harness's):
    /// `error`'s code and retryable flag, its message sanitized, the `violations` (their
    /// messages written from structure, never from values), and `meta` as the whole
    /// `_meta` object, if any.
    ///
    /// # Examples
    ///
    /// ```
    /// use contract_runtime::wire::{ErrorCode, ToolCallResult, ToolError};
    ///
    /// let error = ToolError::new(ErrorCode::ToolQuarantined, "tool `scan` changed; see /home/ci/tools.lock.json");
    /// let result = ToolCallResult::refusal(&error, Vec::new(), None).to_json();
    /// assert_eq!(result["isError"], true);
    /// let text = result["content"][0]["text"].as_str().unwrap();
    /// assert!(text.contains("\"code\":\"tool_quarantined\"") && !text.contains("/home/ci"), "{text}");
    /// ```
    #[must_use]
    pub fn refusal(error: &ToolError, violations: Vec<WireViolation>, meta: Option<Value>) -> Self {
        let clean = ToolError::new(error.code(), crate::contract::redact::sanitize(error.message(), &[]))
            .with_retryable(error.retryable());
        Self::failure(clean, violations, meta.map(|m| Arc::new(ResultMeta::new(m))))
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
        self.structured.as_ref().map(|cell| cell.get_or_init(|| parse(self.text.as_str())))
    }

    /// The one text block: the serialized JSON of a success, or the error JSON.
    #[must_use]
    pub fn text(&self) -> &str {
        self.text.as_str()
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
        let (mut parts, unparsed) = self.into_parts_unparsed();
        if unparsed {
            parts.structured_content = Some(parse(&parts.text));
        }
        parts
    }

    /// [`ToolCallResult::into_parts`] without parsing a success's tree from its text when
    /// no one built it: then `structured_content` is `None` and the flag `true`, the text
    /// standing for it (for a writer that copies the text as `structuredContent`).
    pub(crate) fn into_parts_unparsed(self) -> (ResultParts, bool) {
        let text = self.text.into_string();
        let (structured_content, unparsed) = match self.structured.map(OnceLock::into_inner) {
            Some(Some(value)) => (Some(value), false),
            Some(None) => (None, true),
            None => (None, false),
        };
        let parts = ResultParts {
            is_error: self.error.is_some(),
            text,
            structured_content,
            meta: self.meta.map(|m| m.value.clone()),
        };
        (parts, unparsed)
    }

    /// The MCP `CallToolResult` as a JSON value.
    #[must_use]
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("content".to_owned(), json!([{ "type": "text", "text": self.text() }]));
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
    /// `structuredContent`, with no second conversion of the value. A cache hit copies
    /// the bytes its entry holds; [`ToolCallResult::to_wire`] shares them instead.
    #[must_use]
    pub fn to_wire_bytes(&self) -> Vec<u8> {
        let tail = self.meta.as_ref().map_or(CLOSE, |meta| &meta.tail[..]);
        if let Some(body) = &self.body {
            let mut out = Vec::with_capacity(body.len() + tail.len());
            out.extend_from_slice(body);
            out.extend_from_slice(tail);
            return out;
        }
        let text = self.text();
        let mut out = Vec::with_capacity(body_capacity(text) + tail.len());
        write_body(&mut out, text, self.structured.is_some(), self.is_error());
        out.extend_from_slice(tail);
        out
    }

    /// The bytes of [`ToolCallResult::to_wire_bytes`] as pieces: the result up to its
    /// `_meta`, then `_meta` and the closing brace. A cache hit's first piece is the
    /// entry's bytes, shared, so serving it copies nothing.
    #[must_use]
    pub fn to_wire(&self) -> WireBytes {
        let body = self
            .body
            .clone()
            .unwrap_or_else(|| Bytes::from(result_body(self.text(), self.structured.is_some(), self.is_error())));
        let tail = self.meta.as_ref().map_or_else(|| Bytes::from_static(CLOSE), |meta| meta.tail.clone());
        WireBytes { parts: vec![body, tail] }
    }

    /// The JSON-RPC response carrying this result for the request `id` (a number or a
    /// string): `{"jsonrpc":"2.0","id":…,"result":…}`, as pieces around those of
    /// [`ToolCallResult::to_wire`].
    #[must_use]
    pub fn to_jsonrpc_response(&self, id: &Value) -> WireBytes {
        let mut head = b"{\"jsonrpc\":\"2.0\",\"id\":".to_vec();
        // Writing a value into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut head, id);
        head.extend_from_slice(b",\"result\":");
        let WireBytes { parts } = self.to_wire();
        let mut pieces = Vec::with_capacity(parts.len() + 2);
        pieces.push(Bytes::from(head));
        pieces.extend(parts);
        pieces.push(Bytes::from_static(CLOSE));
        WireBytes { parts: pieces }
    }
}

impl PartialEq for ToolCallResult {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text()
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
