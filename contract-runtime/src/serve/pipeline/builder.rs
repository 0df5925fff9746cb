//! Building a [`Pipeline`]: middleware, cache, limits, the fused path and report-only
//! rollout.

use std::fmt;
use std::sync::Arc;

use super::{Middleware, Pipeline};
use crate::contract::limits::Limits;
use crate::serve::cache::ResultCache;

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

    /// Makes every tool report-only ([`Enforcement::Report`](crate::observe::Enforcement::Report)): a result that breaks its
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
