//! The path every `tools/call` result takes:
//! handler → serialize → post-result middleware → validate → cache admission → emit.
//! Independent of any transport; the rmcp adapter and the tests drive the same code.
//!
#![doc = include_str!("../../../docs/enforcing.md")]

use std::fmt;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use serde::Serialize;
use serde_json::{json, Value};

use crate::contract::limits::Limits;
use crate::contract::redact::{sanitize, Sensitive};
use crate::contract::{OutputContract, ToolOutput};
use crate::serve::cache::ResultCache;
use crate::serve::observe::{Counters, Enforcement, Rollout, Stats};
use crate::serve::wire::{
    root_shape, CacheStatus, ErrorCode, ResultMeta, RootShape, ToolCallResult, ToolError, ToolFailure,
};

mod builder;
mod context;
mod hits;
mod middleware;
mod refusal;
mod unwind;

pub use builder::PipelineBuilder;
pub use context::CallContext;
pub use middleware::{middleware_fn, BoxError, FnMiddleware, Middleware};
pub(crate) use unwind::CatchUnwind;
use unwind::Panic;

#[cfg(feature = "rmcp")]
pub(crate) use refusal::serialization_error;
use refusal::{broken_contract, check, check_completeness, meta, serialization_failure, unfit};

/// The enforcement pipeline: middleware, an optional cache, and the contract of each
/// call's result type. Cheap to share (`Arc` it or clone it).
///
/// # Examples
///
/// ```
/// use contract_runtime::pipeline::{CallContext, Pipeline};
/// use contract_runtime::wire::{ErrorCode, ToolError};
/// use contract_runtime::ToolOutput;
///
/// #[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
/// #[tool_output(version = "1.0.0", compatibility = "exact")]
/// struct Health { healthy: u32 }
///
/// let pipeline = Pipeline::builder().build();
/// let ctx = CallContext::new("health", serde_json::json!({}));
///
/// let ok = pipeline.call_sync(&ctx, || Ok::<_, ToolError>(Health { healthy: 3 }));
/// assert!(!ok.is_error());
/// assert_eq!(ok.structured_content(), Some(&serde_json::json!({ "healthy": 3 })));
/// assert_eq!(ok.text(), r#"{"healthy":3}"#);
///
/// let failed = pipeline.call_sync(&ctx, || Err::<Health, _>(ToolError::unavailable("metrics store down")));
/// assert!(failed.is_error());
/// assert_eq!(failed.error_code(), Some(ErrorCode::Unavailable));
/// assert_eq!(failed.structured_content(), None);
/// ```
#[derive(Clone, Default)]
pub struct Pipeline {
    middleware: Vec<Arc<dyn Middleware>>,
    cache: Option<Arc<dyn ResultCache>>,
    limits: Limits,
    /// `true` to keep every result on the `Value` path.
    value_path_only: bool,
    /// Which tools are only reported, not enforced.
    rollout: Rollout,
    /// Shared by every clone.
    counters: Arc<Counters>,
}

impl fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.middleware.iter().map(|m| m.name()).collect();
        f.debug_struct("Pipeline")
            .field("middleware", &names)
            .field("cache", &self.cache)
            .field("limits", &self.limits)
            .field("fast_path", &!self.value_path_only)
            .field("rollout", &self.rollout)
            .finish_non_exhaustive()
    }
}

impl Pipeline {
    /// Starts a builder.
    pub fn builder() -> PipelineBuilder {
        PipelineBuilder::default()
    }

    /// What the pipeline has counted so far (shared by its clones).
    #[must_use]
    pub fn stats(&self) -> Stats {
        self.counters.snapshot()
    }

    /// How results of `tool` are enforced.
    #[must_use]
    pub fn enforcement(&self, tool: &str) -> Enforcement {
        self.rollout.of(tool)
    }

    /// The counters, for an adapter that makes results of its own.
    #[cfg(feature = "rmcp")]
    pub(crate) fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The rollout, for an adapter that sets report-only on the pipeline it serves.
    #[cfg(feature = "rmcp")]
    pub(crate) fn rollout(&self) -> &Rollout {
        &self.rollout
    }

    #[cfg(feature = "rmcp")]
    pub(crate) fn rollout_mut(&mut self) -> &mut Rollout {
        &mut self.rollout
    }

    /// Counts and reports a result on its way out.
    #[inline]
    fn served(&self, ctx: &CallContext, contract: Option<&OutputContract>, result: ToolCallResult) -> ToolCallResult {
        self.counters.served(ctx.tool(), contract, &result);
        result
    }

    /// Runs a synchronous handler through the pipeline. A panic in the handler or a
    /// middleware becomes an error result; it never unwinds into the caller.
    pub fn call_sync<T, E>(&self, ctx: &CallContext, handler: impl FnOnce() -> Result<T, E>) -> ToolCallResult
    where
        T: ToolOutput,
        E: ToolFailure,
    {
        // The contract bound to the tool: a generic type's instantiation is named after it.
        let contract = match T::try_contract_for(ctx.tool()) {
            Ok(contract) => contract,
            Err(err) => return self.served(ctx, None, broken_contract(&err)),
        };
        if let Some(hit) = self.lookup(ctx, contract) {
            return self.served(ctx, Some(contract), hit);
        }
        let outcome = catch_unwind(AssertUnwindSafe(handler));
        let result = self.finish(ctx, contract, outcome);
        self.served(ctx, Some(contract), result)
    }

    /// Runs an async handler through the pipeline. On a cache hit the handler future is
    /// dropped without being polled. Panics while polling become error results.
    pub async fn call<T, E, F>(&self, ctx: &CallContext, handler: F) -> ToolCallResult
    where
        T: ToolOutput,
        E: ToolFailure,
        F: Future<Output = Result<T, E>>,
    {
        // The contract bound to the tool: a generic type's instantiation is named after it.
        let contract = match T::try_contract_for(ctx.tool()) {
            Ok(contract) => contract,
            Err(err) => return self.served(ctx, None, broken_contract(&err)),
        };
        if let Some(hit) = self.lookup(ctx, contract) {
            return self.served(ctx, Some(contract), hit);
        }
        let outcome = CatchUnwind(Box::pin(handler)).await;
        let result = self.finish(ctx, contract, outcome);
        self.served(ctx, Some(contract), result)
    }

    /// The path after the handler, for a result the caller already has: serialize,
    /// middleware, validate, admit, emit.
    pub fn process<T: Serialize + ?Sized>(
        &self,
        ctx: &CallContext,
        contract: &OutputContract,
        output: &T,
    ) -> ToolCallResult {
        let result = self.process_output(ctx, contract, output);
        self.served(ctx, Some(contract), result)
    }

    fn process_output<T: Serialize + ?Sized>(
        &self,
        ctx: &CallContext,
        contract: &OutputContract,
        output: &T,
    ) -> ToolCallResult {
        if self.middleware.is_empty() && !self.value_path_only {
            // The fast path: checked while written. Anything it does not call valid
            // (invalid, over a limit, not judged) continues below, where the `Value`
            // path decides and writes the report, so reports do not depend on it.
            if let Ok(text) = crate::contract::fused::write(contract, output, &self.limits).map(String::from_utf8) {
                let Ok(text) = text else { return serialization_failure(contract, "the result is not UTF-8") };
                if contract.completeness_pointers().is_empty() && contract.completeness_counts().is_empty() {
                    // Nothing left reads the tree: `structuredContent` is parsed from
                    // the text if and when someone asks for it.
                    return self.admit(ctx, contract, None, text);
                }
                // The completeness invariants are read from the tree.
                if let Ok(value) = serde_json::to_value(output) {
                    return self.admit_if_complete(ctx, contract, value, text);
                }
            }
        }
        if let Err(err) = crate::contract::limits::measure(output, &self.limits) {
            return unfit(contract, &err);
        }
        let value = match serde_json::to_value(output) {
            Ok(value) => value,
            Err(err) => return serialization_failure(contract, &err.to_string()),
        };
        if self.middleware.is_empty() {
            // Nothing can change the value after serialization, so the text block is
            // written straight from the typed result: one cheap pass instead of a second
            // walk of the value tree. Same JSON; key order may differ from the value's.
            let Ok(text) = serde_json::to_string(output) else {
                return serialization_failure(contract, "the result serialized once but not twice");
            };
            return self.accept(ctx, contract, value, Some(text));
        }
        self.run_middleware(ctx, contract, value)
    }

    /// The path after serialization, for a result whose value and compact text the
    /// caller made from one typed result (the rmcp adapter's `Json`): the text is
    /// reused unless a middleware may change the value, then as [`Pipeline::process_value`].
    pub fn process_serialized(
        &self,
        ctx: &CallContext,
        contract: &OutputContract,
        value: Value,
        text: String,
    ) -> ToolCallResult {
        let result = if self.middleware.is_empty() {
            self.accept(ctx, contract, value, Some(text))
        } else {
            self.judge_value(ctx, contract, value)
        };
        self.served(ctx, Some(contract), result)
    }

    /// Whether a result checked while written (the fast path) is served as its text:
    /// no middleware may change it and the fast path is on. What
    /// [`Pipeline::process_checked_text`] needs to be called at all.
    #[cfg(feature = "stdio")]
    pub(crate) fn serves_checked_text(&self) -> bool {
        self.middleware.is_empty() && !self.value_path_only
    }

    /// The fast path's end, for a result an adapter wrote with
    /// `fused::write(contract, …, self.limits())`, which passed: the completeness
    /// invariants, then admit and emit; no tree is built unless the invariants read one.
    /// Only when [`Pipeline::serves_checked_text`].
    #[cfg(feature = "stdio")]
    pub(crate) fn process_checked_text(
        &self,
        ctx: &CallContext,
        contract: &OutputContract,
        text: String,
    ) -> ToolCallResult {
        let result = if contract.completeness_pointers().is_empty() && contract.completeness_counts().is_empty() {
            self.admit(ctx, contract, None, text)
        } else {
            match serde_json::from_str::<Value>(&text) {
                Ok(value) => self.admit_if_complete(ctx, contract, value, text),
                Err(err) => serialization_failure(contract, &err.to_string()),
            }
        };
        self.served(ctx, Some(contract), result)
    }

    /// The limits a result is checked against.
    #[cfg(feature = "stdio")]
    pub(crate) fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The path after serialization, for a result that is already JSON (an adapter's
    /// handler wrote it): middleware, validate, admit, emit.
    pub fn process_value(&self, ctx: &CallContext, contract: &OutputContract, value: Value) -> ToolCallResult {
        let result = self.judge_value(ctx, contract, value);
        self.served(ctx, Some(contract), result)
    }

    fn judge_value(&self, ctx: &CallContext, contract: &OutputContract, value: Value) -> ToolCallResult {
        // Measured before any middleware walks it, and again after them: a middleware
        // may grow the value past the limits.
        if let Err(err) = crate::contract::limits::measure_value(&value, &self.limits) {
            return unfit(contract, &err);
        }
        self.run_middleware(ctx, contract, value)
    }

    /// Middleware, then validation, for a value already measured against the limits.
    fn run_middleware(&self, ctx: &CallContext, contract: &OutputContract, mut value: Value) -> ToolCallResult {
        for middleware in &self.middleware {
            let outcome = catch_unwind(AssertUnwindSafe(|| middleware.after_result(ctx.tool(), &mut value)));
            let message = match outcome {
                Ok(Ok(())) => continue,
                Ok(Err(err)) => format!("middleware `{}` failed: {err}", middleware.name()),
                Err(_) => format!("middleware `{}` failed unexpectedly", middleware.name()),
            };
            let sensitive = Sensitive::collect(&value, contract.sensitive_pointers());
            let error = ToolError::new(ErrorCode::MiddlewareError, sensitive.message(&message));
            return ToolCallResult::failure(error, Vec::new(), Some(meta(contract)));
        }
        if !self.middleware.is_empty()
            && let Err(err) = crate::contract::limits::measure_value(&value, &self.limits)
        {
            return unfit(contract, &err);
        }
        self.accept(ctx, contract, value, None)
    }

    fn finish<T: Serialize, E: ToolFailure>(
        &self,
        ctx: &CallContext,
        contract: &OutputContract,
        outcome: Result<Result<T, E>, Panic>,
    ) -> ToolCallResult {
        match outcome {
            Ok(Ok(output)) => self.process_output(ctx, contract, &output),
            Ok(Err(err)) => {
                let err = err.to_tool_error();
                let clean = ToolError::new(err.code(), sanitize(err.message(), &[])).with_retryable(err.retryable());
                ToolCallResult::failure(clean, Vec::new(), Some(meta(contract)))
            }
            Err(_) => {
                crate::serve::observe::panicked(ctx.tool(), Some(contract));
                ToolCallResult::failure(
                    ToolError::execution(
                        "the tool failed unexpectedly (it panicked); the details are in the server log",
                    ),
                    Vec::new(),
                    Some(meta(contract)),
                )
            }
        }
    }

    /// Validates a serialized result (already measured against the limits), checks
    /// completeness, admits it to the cache and builds the success.
    fn accept(
        &self,
        ctx: &CallContext,
        contract: &OutputContract,
        value: Value,
        text: Option<String>,
    ) -> ToolCallResult {
        if let Err(failure) = check(contract, &value) {
            let text = text.unwrap_or_else(|| value.to_string());
            return self.refuse_or_report(ctx, contract, *failure, value, text);
        }
        let text = text.unwrap_or_else(|| value.to_string());
        self.admit(ctx, contract, Some(value), text)
    }

    /// A result checked against its contract while written, with its tree: its
    /// completeness invariants, then admitted, or refused (reported under report-only).
    fn admit_if_complete(
        &self,
        ctx: &CallContext,
        contract: &OutputContract,
        value: Value,
        text: String,
    ) -> ToolCallResult {
        if let Err(failure) = check_completeness(contract, &value) {
            return self.refuse_or_report(ctx, contract, *failure, value, text);
        }
        self.admit(ctx, contract, Some(value), text)
    }

    /// A result that broke its contract: the refusal when the tool is enforced; under
    /// report-only, the finding reported and the result sent unchanged, marked
    /// `"enforced": false` and never cached. Only a contract's judgement is ever waived
    /// (a violation or a broken completeness invariant); the size limit still holds.
    fn refuse_or_report(
        &self,
        ctx: &CallContext,
        contract: &OutputContract,
        failure: ToolCallResult,
        value: Value,
        text: String,
    ) -> ToolCallResult {
        let waivable =
            matches!(failure.error_code(), Some(ErrorCode::OutputContractViolation | ErrorCode::FalseCompleteness));
        if !waivable || self.rollout.of(ctx.tool()) == Enforcement::Enforce {
            return failure;
        }
        if let Some(limit) = self.over_size(contract, &text) {
            return limit;
        }
        self.counters.reported(ctx.tool(), contract, &failure);
        let status = if self.cache.is_some() && ctx.cacheable { CacheStatus::Miss } else { CacheStatus::Bypass };
        let meta = ResultMeta::unenforced(contract, status);
        let (value, text) = match root_shape(contract, ctx.protocol()) {
            RootShape::Natural | RootShape::ObjectByComposition => (value, text),
            RootShape::Wrapped => (json!({ "result": value }), crate::serve::wire::wrapped_text(&text)),
        };
        ToolCallResult::success(value, text, Some(meta), status)
    }

    /// The `output_limit_exceeded` refusal of a text larger than the size limit.
    fn over_size(&self, contract: &OutputContract, text: &str) -> Option<ToolCallResult> {
        if text.len() <= self.limits.max_bytes() {
            return None;
        }
        // The walk before conversion counts no escapes; this is the exact size.
        let error = ToolError::new(
            ErrorCode::OutputLimitExceeded,
            format!("the result is larger than {} bytes of JSON (Limits::with_max_bytes)", self.limits.max_bytes()),
        );
        Some(ToolCallResult::failure(error, Vec::new(), Some(meta(contract))))
    }
}

/// The success envelope, with the root wrapped for peers that need an object.
/// `value` is the tree of `text` when one was built; `None` leaves it to be parsed
/// from the text when read.
fn emit(
    ctx: &CallContext,
    contract: &OutputContract,
    value: Option<Value>,
    text: String,
    cache: CacheStatus,
) -> ToolCallResult {
    let meta = ResultMeta::cached(contract, cache);
    let (value, text) = match root_shape(contract, ctx.protocol()) {
        RootShape::Natural | RootShape::ObjectByComposition => (value, text),
        RootShape::Wrapped => (value.map(|value| json!({ "result": value })), crate::serve::wire::wrapped_text(&text)),
    };
    match value {
        Some(value) => ToolCallResult::success(value, text, Some(meta), cache),
        None => ToolCallResult::success_from_text(text, Some(meta), cache),
    }
}
