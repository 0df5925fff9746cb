//! Post-result middleware: hooks that see a serialized result before it is judged.

use std::fmt;

use serde_json::Value;

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
