//! What a tool hands the adapter: our [`Json`] (a result checked for non-finite floats
//! and serialized once) and [`ToolError`] results, each carrying a `_meta` marker that
//! the adapter reads by field and strips before anything leaves the server.
//!
//! Why a `_meta` marker and not a task-local: a task-augmented call runs the tool in a
//! future rmcp's `TaskManager` spawns, where no task-local of the request exists, and its
//! result is stored as a JSON object until `tasks/get`. A marker travels with the result
//! on every path (complete call, task, cache admission) and costs one map entry.

use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, MetaObject, ResultType};
use rmcp::ErrorData;
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::contract::limits::Limits;
use crate::serve::wire::{ErrorCode, ToolCallResult, ToolError};

/// `_meta` key our [`Json`] sets on a success: the value was checked for NaN and
/// infinity before it was converted, and the first text block is its compact JSON.
pub(crate) const CHECKED_KEY: &str = "tool-contracts.dev/checked";

/// `_meta` key of a [`ToolError`] result: the code, message and retryable flag, so the
/// adapter recognises the error by its fields rather than by parsing the text back.
pub(crate) const ERROR_KEY: &str = "tool-contracts.dev/error";

/// A structured tool result, like rmcp's `Json<T>`, that keeps the contract's checks
/// intact. Return it from `#[tool]` methods (`Json<T>` or `Result<Json<T>, E>`); rmcp's
/// tool macros treat it as they treat their own `Json` (the `outputSchema` comes from
/// `T`).
///
/// rmcp's `Json<T>` converts with `serde_json::to_value` first, which writes NaN and
/// ±infinity as `null`: the contract then sees a `null` (accepted by an `Option<f64>`)
/// instead of the float. This one checks the typed value first, so such a result leaves
/// as `serialization_error` naming the pointer, exactly as [`Pipeline`] does, and it
/// serializes the text block from the typed value once instead of from the converted
/// tree. A contracted tool that returns rmcp's `Json` is refused by
/// [`ContractedServer`](super::ContractedServer) rather than trusted (see its docs).
///
/// [`Pipeline`]: crate::pipeline::Pipeline
///
/// # Examples
///
/// ```
/// use contract_runtime::rmcp::Json;
/// use rmcp::handler::server::tool::IntoCallToolResult;
/// use rmcp::model::CallToolResponse;
///
/// #[derive(serde::Serialize)]
/// struct Score { score: Option<f64> }
///
/// let Ok(CallToolResponse::Complete(ok)) = Json(Score { score: Some(0.5) }).into_call_tool_result() else { panic!() };
/// assert_eq!(ok.is_error, Some(false));
/// let Ok(CallToolResponse::Complete(nan)) = Json(Score { score: Some(f64::NAN) }).into_call_tool_result() else { panic!() };
/// assert_eq!(nan.is_error, Some(true));
/// assert_eq!(nan.structured_content, None);
///
/// // An `f32` arrives with the digits serde writes for it, in `structuredContent` as in
/// // the text block.
/// #[derive(serde::Serialize)]
/// struct Confidence { confidence: f32 }
///
/// let Ok(CallToolResponse::Complete(ok)) = Json(Confidence { confidence: 0.8 }).into_call_tool_result() else { panic!() };
/// assert_eq!(ok.structured_content, Some(serde_json::json!({ "confidence": 0.8 })));
/// assert_eq!(ok.content[0].as_text().map(|t| t.text.as_str()), Some(r#"{"confidence":0.8}"#));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoCallToolResult for Json<T> {
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        #[cfg(feature = "stdio")]
        if let Ok(Some(result)) = TEXT_LANE.try_with(|lane| lane.checked(&self.0)) {
            return Ok(result.into());
        }
        Ok(checked_result(&self.0).into())
    }
}

/// A text named by its address and length: the very string a result carries, not an
/// equal one, and not one that replaced it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct TextMark(usize, usize);

#[cfg_attr(not(feature = "stdio"), allow(dead_code))]
impl TextMark {
    pub(super) fn of(text: &str) -> Self {
        Self(text.as_ptr() as usize, text.len())
    }

    /// The one text block of `result` when it is the text this names.
    pub(super) fn text_of(self, result: &CallToolResult) -> Option<&str> {
        let [block] = result.content.as_slice() else { return None };
        let text = block.as_text()?.text.as_str();
        (Self::of(text) == self).then_some(text)
    }
}

/// A call of a contracted tool whose answer the stdio lane writes, as the adapter lends
/// it to [`Json`] for the time the handler runs: the contract to check the result
/// against while it is written, and, once it passed, which text passed (by address and
/// length, as the lane's vouch names a text).
#[cfg(feature = "stdio")]
#[derive(Clone)]
pub(super) struct TextLane {
    pub(super) contract: &'static crate::contract::OutputContract,
    pub(super) limits: Limits,
    pub(super) checked: std::sync::Arc<std::sync::Mutex<Option<TextMark>>>,
}

#[cfg(all(test, feature = "stdio"))]
thread_local! {
    /// Results a `Json` handed over as their checked text alone, on this thread: a test
    /// on its own single-threaded runtime counts its own, whatever runs beside it.
    pub(super) static TEXT_ONLY: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[cfg(feature = "stdio")]
tokio::task_local! {
    /// Set by the adapter around a direct call whose answer the stdio lane writes; a task
    /// the handler spawns (a task-augmented call) does not see it. A handler that runs
    /// the tool in the call and puts the result in a task hands that task the text
    /// alone: the adapter reads its tree back from the text when `tasks/get` returns it.
    pub(super) static TEXT_LANE: TextLane;
}

#[cfg(feature = "stdio")]
impl TextLane {
    /// The success holding only the text of `output`, checked against the contract
    /// while written, or `None` when the check did not pass it (invalid, over a limit, a
    /// non-finite float, not covered): then the usual conversion decides and reports.
    fn checked<T: Serialize + ?Sized>(&self, output: &T) -> Option<CallToolResult> {
        let text = String::from_utf8(crate::contract::fused::write(self.contract, output, &self.limits).ok()?).ok()?;
        *self.checked.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(TextMark::of(&text));
        #[cfg(test)]
        TEXT_ONLY.with(|n| n.set(n.get() + 1));
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.result_type = Some(ResultType::COMPLETE);
        let mut meta = Map::with_capacity(1);
        meta.insert(CHECKED_KEY.to_owned(), Value::Bool(true));
        result.meta = Some(MetaObject(meta));
        Some(result)
    }
}

/// The success for `output`, or the `serialization_error` result when it holds a
/// non-finite float or its `Serialize` impl fails.
fn checked_result<T: Serialize + ?Sized>(output: &T) -> CallToolResult {
    // The text block, the tree and the check for NaN, infinity and the limits in one pass
    // over the typed value. The tree is the one the text reads back as, so both carry the
    // same numbers: `serde_json::to_value` would widen an `f32` to the nearest `f64` (0.8
    // becomes 0.800000011920929) where the text has the `f32`'s own digits. When that pass
    // gives the value back, the separate check names the pointer (or the `Serialize`
    // failure) exactly as the pipeline does.
    let fused = crate::contract::fused::write_any_value(output, &Limits::default())
        .map(|(bytes, value)| (String::from_utf8(bytes), value));
    if let Ok((Ok(text), value)) = fused {
        return success(text, value);
    }
    if let Err(err) = crate::contract::limits::check_finite(output) {
        return error_result(&crate::serve::pipeline::serialization_error(&err.to_string()));
    }
    let text = match serde_json::to_string(output) {
        Ok(text) => text,
        Err(err) => return error_result(&crate::serve::pipeline::serialization_error(&err.to_string())),
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(value) => success(text, value),
        Err(err) => error_result(&crate::serve::pipeline::serialization_error(&err.to_string())),
    }
}

/// The success carrying `text` and its tree, marked as made by this `Json`.
fn success(text: String, value: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(value);
    result.result_type = Some(ResultType::COMPLETE);
    let mut meta = Map::with_capacity(1);
    meta.insert(CHECKED_KEY.to_owned(), Value::Bool(true));
    result.meta = Some(MetaObject(meta));
    result
}

/// The `isError` result for `error`: the sanitized envelope as text (what a client of a
/// server without the adapter sees) and the typed marker the adapter reads.
pub(crate) fn error_result(error: &ToolError) -> CallToolResult {
    let text = ToolCallResult::from_error(error, None).into_parts().text;
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    result.result_type = Some(ResultType::COMPLETE);
    let mut meta = Map::with_capacity(1);
    meta.insert(
        ERROR_KEY.to_owned(),
        json!({ "code": error.code().as_str(), "message": error.message(), "retryable": error.retryable() }),
    );
    result.meta = Some(MetaObject(meta));
    result
}

/// The [`ToolError`] a marker holds, if it is well formed.
pub(crate) fn error_from_marker(marker: &Value) -> Option<ToolError> {
    let code = marker.get("code").and_then(Value::as_str).and_then(ErrorCode::from_name)?;
    let message = marker.get("message").and_then(Value::as_str)?;
    let retryable = marker.get("retryable").and_then(Value::as_bool).unwrap_or(false);
    Some(ToolError::new(code, message).with_retryable(retryable))
}

/// A handler error as an rmcp result: the sanitized envelope plus the typed marker, so
/// the code and retryable flag reach the adapter without a trip through text.
impl IntoCallToolResult for ToolError {
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        Ok(error_result(&self).into())
    }
}
