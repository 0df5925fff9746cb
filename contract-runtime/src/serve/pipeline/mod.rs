//! The path every `tools/call` result takes:
//! handler → serialize → post-result middleware → validate → cache admission → emit.
//! Independent of any transport; the rmcp adapter and the tests drive the same code.
//!
#![doc = include_str!("../../../docs/enforcing.md")]

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use bytes::Bytes;
use serde::Serialize;
use serde_json::{json, Value};

use crate::contract::limits::Limits;
use crate::contract::redact::{sanitize, Sensitive};
use crate::contract::{OutputContract, ToolOutput};
use crate::serve::cache::{CacheKey, CachedResult, PreparedResult, ResultCache};
use crate::serve::observe::{Counters, Enforcement, Rollout, Stats};
use crate::serve::wire::{
    root_shape, CacheStatus, ErrorCode, ProtocolVersion, ResultMeta, RootShape, Text, ToolCallResult, ToolError,
    ToolFailure,
};

mod refusal;

#[cfg(feature = "rmcp")]
pub(crate) use refusal::serialization_error;
use refusal::{broken_contract, check, check_completeness, meta, serialization_failure, unfit};

/// The error type middleware returns.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A post-result hook. It sees the serialized result before validation, so whatever
/// it does is checked: a hook that drops or corrupts a field yields an
/// `output_contract_violation`, a hook that fails yields a `middleware_error`.
pub trait Middleware: Send + Sync {
    /// A short name for logs.
    fn name(&self) -> &str;

    /// Inspects or rewrites the result of `tool`.
    ///
    /// # Errors
    ///
    /// Any error; the call then fails with `middleware_error` and a sanitized message.
    fn after_result(&self, tool: &str, result: &mut Value) -> Result<(), BoxError>;
}

/// A middleware from a closure.
///
/// # Examples
///
/// ```
/// use contract_runtime::pipeline::{middleware_fn, Pipeline};
///
/// let stamp = middleware_fn("stamp", |_tool, result| {
///     if let Some(obj) = result.as_object_mut() {
///         obj.insert("served_by".into(), "replica-2".into());
///     }
///     Ok(())
/// });
/// let pipeline = Pipeline::builder().middleware(stamp).build();
/// # let _ = pipeline;
/// ```
pub fn middleware_fn<F>(name: &str, f: F) -> FnMiddleware<F>
where
    F: Fn(&str, &mut Value) -> Result<(), BoxError> + Send + Sync,
{
    FnMiddleware { name: name.to_owned(), f }
}

/// See [`middleware_fn`].
pub struct FnMiddleware<F> {
    name: String,
    f: F,
}

impl<F> fmt::Debug for FnMiddleware<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnMiddleware").field("name", &self.name).finish_non_exhaustive()
    }
}

impl<F> Middleware for FnMiddleware<F>
where
    F: Fn(&str, &mut Value) -> Result<(), BoxError> + Send + Sync,
{
    fn name(&self) -> &str {
        &self.name
    }
    fn after_result(&self, tool: &str, result: &mut Value) -> Result<(), BoxError> {
        (self.f)(tool, result)
    }
}

/// What the pipeline knows about one call.
#[derive(Clone, Debug)]
pub struct CallContext {
    tool: String,
    arguments: Value,
    protocol: ProtocolVersion,
    cacheable: bool,
}

impl CallContext {
    /// A call of `tool` with `arguments`, from a peer on the latest protocol.
    #[must_use]
    pub fn new(tool: impl Into<String>, arguments: Value) -> Self {
        Self { tool: tool.into(), arguments, protocol: ProtocolVersion::latest(), cacheable: true }
    }

    /// Sets the peer's negotiated protocol version.
    #[must_use]
    pub fn with_protocol(mut self, protocol: ProtocolVersion) -> Self {
        self.protocol = protocol;
        self
    }

    /// Sets whether the result may be cached (default: yes, when the pipeline has a cache).
    #[must_use]
    pub fn with_cacheable(mut self, cacheable: bool) -> Self {
        self.cacheable = cacheable;
        self
    }

    /// The tool name.
    #[must_use]
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The call's arguments.
    #[must_use]
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }

    /// The peer's protocol version.
    #[must_use]
    pub fn protocol(&self) -> &ProtocolVersion {
        &self.protocol
    }
}

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

/// Builds a [`Pipeline`].
#[derive(Default)]
#[must_use]
pub struct PipelineBuilder {
    pipeline: Pipeline,
}

impl fmt::Debug for PipelineBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.pipeline.fmt(f)
    }
}

impl PipelineBuilder {
    /// Adds a post-result middleware; they run in the order added.
    pub fn middleware(mut self, middleware: impl Middleware + 'static) -> Self {
        self.pipeline.middleware.push(Arc::new(middleware));
        self
    }

    /// Sets the result cache.
    pub fn cache(mut self, cache: Arc<dyn ResultCache>) -> Self {
        self.pipeline.cache = Some(cache);
        self
    }

    /// Sets the depth and size limits a result must keep to be judged (default:
    /// [`Limits::default`], 128 levels and 16 MiB). A result beyond them fails with
    /// `output_limit_exceeded`; it is never passed unchecked.
    ///
    /// # Examples
    ///
    /// ```
    /// use contract_runtime::limits::Limits;
    /// use contract_runtime::pipeline::{CallContext, Pipeline};
    /// use contract_runtime::wire::{ErrorCode, ToolError};
    /// use contract_runtime::ToolOutput;
    ///
    /// #[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
    /// #[tool_output(version = "1.0.0", compatibility = "exact")]
    /// struct Page { body: String }
    ///
    /// let pipeline = Pipeline::builder().limits(Limits::default().with_max_bytes(1024)).build();
    /// let ctx = CallContext::new("page", serde_json::json!({}));
    /// let r = pipeline.call_sync(&ctx, || Ok::<_, ToolError>(Page { body: "x".repeat(2000) }));
    /// assert_eq!(r.error_code(), Some(ErrorCode::OutputLimitExceeded));
    /// ```
    pub fn limits(mut self, limits: Limits) -> Self {
        self.pipeline.limits = limits;
        self
    }

    /// Whether results of covered contracts are judged on the fast path when no
    /// middleware is set (default: yes; see [`crate::fused`]). Off, every result takes
    /// the `Value` path, as for comparisons.
    pub fn fast_path(mut self, on: bool) -> Self {
        self.pipeline.value_path_only = !on;
        self
    }

    /// Makes every tool report-only ([`Enforcement::Report`]): a result that breaks its
    /// contract is sent unchanged, with `"enforced": false` in its `_meta`, reported and
    /// counted, never cached. Removing the line enforces again.
    ///
    /// # Examples
    ///
    /// ```
    /// use contract_runtime::pipeline::{CallContext, Pipeline};
    /// use contract_runtime::wire::{ToolError, META_KEY};
    /// use contract_runtime::ToolOutput;
    ///
    /// #[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
    /// #[tool_output(version = "1.0.0", compatibility = "exact")]
    /// struct Ratio {
    ///     #[schemars(range(max = 1.0))]
    ///     ratio: f64,
    /// }
    ///
    /// let ctx = CallContext::new("ratio", serde_json::json!({}));
    /// let broken = || Ok::<_, ToolError>(Ratio { ratio: 1.5 });
    ///
    /// let enforced = Pipeline::builder().build().call_sync(&ctx, broken);
    /// assert!(enforced.is_error());
    ///
    /// let reporting = Pipeline::builder().report_only().build();
    /// let sent = reporting.call_sync(&ctx, broken);
    /// assert!(!sent.is_error());
    /// assert_eq!(sent.structured_content(), Some(&serde_json::json!({ "ratio": 1.5 })));
    /// assert_eq!(sent.meta().unwrap()[META_KEY]["enforced"], false);
    /// assert_eq!(reporting.stats().report_only, 1);
    /// ```
    pub fn report_only(mut self) -> Self {
        self.pipeline.rollout.report_all();
        self
    }

    /// Makes the tool `tool` report-only (see [`PipelineBuilder::report_only`]); other
    /// tools stay enforced. May be called once per tool.
    pub fn report_only_for(mut self, tool: impl Into<String>) -> Self {
        self.pipeline.rollout.report_tool(tool);
        self
    }

    /// The pipeline.
    #[must_use]
    pub fn build(self) -> Pipeline {
        self.pipeline
    }
}

type Panic = Box<dyn Any + Send>;

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
                    if let Err(failure) = check_completeness(contract, &value) {
                        return self.refuse_or_report(ctx, contract, *failure, value, text);
                    }
                    return self.admit(ctx, contract, Some(value), text);
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
        if !self.middleware.is_empty() {
            if let Err(err) = crate::contract::limits::measure_value(&value, &self.limits) {
                return unfit(contract, &err);
            }
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

    /// Admits a checked result (its tree, when one was built, and its text) to the cache
    /// and builds the success.
    fn admit(
        &self,
        ctx: &CallContext,
        contract: &OutputContract,
        value: Option<Value>,
        text: String,
    ) -> ToolCallResult {
        if let Some(limit) = self.over_size(contract, &text) {
            return limit;
        }
        if let (Some(cache), true) = (&self.cache, ctx.cacheable) {
            cache.put(
                CacheKey::new(ctx.tool(), contract.id(), ctx.arguments()),
                CachedResult { contract: contract.id().clone(), text: Arc::from(text.as_str()) },
            );
        }
        emit(
            ctx,
            contract,
            value,
            text,
            if self.cache.is_some() && ctx.cacheable { CacheStatus::Miss } else { CacheStatus::Bypass },
        )
    }

    /// A usable cache hit for the call, or `None`: what [`Pipeline::call`] serves
    /// instead of running the handler. Entries written under another contract identity,
    /// and entries that fail revalidation, are evicted. Adapters that run handlers
    /// themselves call it first.
    pub fn cached(&self, ctx: &CallContext, contract: &OutputContract) -> Option<ToolCallResult> {
        let hit = self.lookup(ctx, contract)?;
        Some(self.served(ctx, Some(contract), hit))
    }

    /// `find`, counted as a cache hit or miss when the cache was asked.
    fn lookup(&self, ctx: &CallContext, contract: &OutputContract) -> Option<ToolCallResult> {
        self.cache.as_ref().filter(|_| ctx.cacheable)?;
        let found = self.find(ctx, contract);
        if found.is_some() {
            self.counters.cache_hit();
        } else {
            self.counters.cache_miss();
        }
        found
    }

    fn find(&self, ctx: &CallContext, contract: &OutputContract) -> Option<ToolCallResult> {
        let cache = self.cache.as_ref().filter(|_| ctx.cacheable)?;
        let key = CacheKey::new(ctx.tool(), contract.id(), ctx.arguments());
        let (entry, prepared) = cache.get_prepared(&key)?;
        if entry.contract != *contract.id() {
            cache.evict(&key);
            return None;
        }
        // The tree is built only when something here reads it: a tighter depth limit or
        // revalidation. Otherwise the text is only checked to be JSON (without building
        // anything), and `structuredContent` is parsed from it if someone asks.
        let needs_tree =
            cache.revalidate_hits() || self.limits.max_depth() < crate::contract::limits::DEFAULT_MAX_DEPTH;
        if entry.text.len() > self.limits.max_bytes() {
            // Too big for this pipeline, but valid: another pipeline may serve it.
            return None;
        }
        let wrapped = root_shape(contract, ctx.protocol()) == RootShape::Wrapped;
        if !needs_tree {
            // Bytes this cache wrote from this very text at an earlier hit of this era:
            // served as they are, shared, with nothing parsed, copied or escaped.
            if let Some(body) = prepared.as_ref().filter(|p| p.is_for(&entry.text)).and_then(|p| p.form(wrapped)) {
                return Some(prepared_hit(contract, entry.text, wrapped, body.clone()));
            }
        }
        let value = if needs_tree {
            let Ok(value) = serde_json::from_str::<Value>(&entry.text) else {
                cache.evict(&key);
                return None;
            };
            Some(value)
        } else {
            if serde_json::from_str::<serde::de::IgnoredAny>(&entry.text).is_err() {
                cache.evict(&key);
                return None;
            }
            None
        };
        // An entry admitted under other limits must fit these too. serde_json parses at
        // most 128 levels, so only a tighter depth limit needs the walk.
        let fits = value.as_ref().is_none_or(|value| {
            self.limits.max_depth() >= crate::contract::limits::DEFAULT_MAX_DEPTH
                || crate::contract::limits::measure_value(value, &self.limits).is_ok()
        });
        if !fits {
            return None;
        }
        if cache.revalidate_hits() && value.as_ref().is_some_and(|value| check(contract, value).is_err()) {
            cache.evict(&key);
            return None;
        }
        if value.is_none() && cache.keeps_prepared() {
            // The first hit of this era: the text is JSON (checked just above) and was
            // validated when admitted, so its wire bytes are written once, kept beside
            // it, and shared by every later hit.
            let mut prepared = prepared
                .filter(|p| p.is_for(&entry.text))
                .unwrap_or_else(|| PreparedResult::new(Arc::clone(&entry.text)));
            let body = prepared.write_form(wrapped);
            cache.keep_prepared(&key, prepared);
            return Some(prepared_hit(contract, entry.text, wrapped, body));
        }
        Some(emit(ctx, contract, value, entry.text.to_string(), CacheStatus::Hit))
    }
}

/// A hit served from the wire bytes written for its entry's text.
fn prepared_hit(contract: &OutputContract, text: Arc<str>, wrapped: bool, body: Bytes) -> ToolCallResult {
    let text = if wrapped { Text::Wrapped(text, OnceLock::new()) } else { Text::Shared(text) };
    ToolCallResult::success_prepared(text, body, ResultMeta::cached(contract, CacheStatus::Hit), CacheStatus::Hit)
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

/// Catches a panic while polling the inner future.
pub(crate) struct CatchUnwind<F>(pub(crate) Pin<Box<F>>);

impl<F: Future> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Panic>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.0.as_mut();
        match catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}
