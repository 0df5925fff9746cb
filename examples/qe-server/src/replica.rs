//! Running the demo as one replica of several (feature `server`): the result cache it
//! shares with the others and, for rolling-deploy drills, the next version of one
//! contract. Both are chosen by environment variables, so a load balancer's start script
//! can set them without new flags:
//!
//! - `QE_SERVER_CACHE`: unset or `none` for no cache, `memory` for the in-process
//!   [`InMemoryCache`], or a Redis URL (`redis://127.0.0.1:6379/`) for the
//!   `contract_runtime::cache::RedisCache` shared by every replica (feature
//!   `redis`).
//! - `QE_SERVER_CACHE_PREFIX`: the Redis key namespace (default `qe-server`).
//! - `QE_SERVER_CACHE_TIMEOUT_MS`: the deadline of each Redis operation (default 200).
//! - `QE_SERVER_CONTRACT_NEXT=1`: `task_status` is served under [`TaskStatusNext`]
//!   (version 2.2.0, one more optional field) instead of [`TaskStatus`](crate::contracts::TaskStatus) (2.1.1): the
//!   replica then carries another contract identity, as a new build would in a rolling
//!   deploy.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use contract_runtime::cache::{InMemoryCache, ResultCache};
use contract_runtime::rmcp::ContractedServer;
use contract_runtime::{Pipeline, ToolOutput};
use schemars::JsonSchema;
use serde::Serialize;

use crate::contracts::TaskState;
use crate::server::QeServer;

/// `task_status` as the next release publishes it: [`TaskStatus`](crate::contracts::TaskStatus) and an optional
/// estimate, an additive change, hence a minor version bump. Served only with
/// `QE_SERVER_CONTRACT_NEXT=1`; its schema is not checked in, since no release of the
/// demo publishes it.
#[derive(Clone, Debug, Serialize, JsonSchema, ToolOutput)]
#[tool_output(name = "task_status", version = "2.2.0", compatibility = "exact")]
pub struct TaskStatusNext {
    pub task_id: String,
    #[serde(flatten)]
    pub state: TaskState,
    pub attempts: u32,
    pub assigned_agent: Option<String>,
    pub updated_at: DateTime<Utc>,
    /// Seconds until the task is expected to finish, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eta_seconds: Option<u32>,
}

/// What the environment asks of this replica.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplicaOptions {
    /// `QE_SERVER_CACHE`, if set and not `none`.
    pub cache: Option<String>,
    /// `QE_SERVER_CACHE_PREFIX`.
    pub prefix: Option<String>,
    /// `QE_SERVER_CACHE_TIMEOUT_MS`, in milliseconds.
    pub timeout_ms: Option<u64>,
    /// `QE_SERVER_CONTRACT_NEXT`.
    pub contract_next: bool,
}

impl ReplicaOptions {
    /// Reads the options from the environment.
    #[must_use]
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        Self {
            cache: var("QE_SERVER_CACHE").filter(|v| v != "none"),
            prefix: var("QE_SERVER_CACHE_PREFIX"),
            timeout_ms: var("QE_SERVER_CACHE_TIMEOUT_MS").and_then(|v| v.parse().ok()),
            contract_next: var("QE_SERVER_CONTRACT_NEXT").is_some_and(|v| v == "1" || v.eq_ignore_ascii_case("true")),
        }
    }
}

/// The demo server as [`crate::server::contracted`] builds it, with the cache and the
/// contract version `options` ask for.
///
/// # Errors
///
/// A contract that fails to bind, an unknown cache kind, or a Redis URL that cannot be
/// used (an unreachable Redis is not an error: calls are then served uncached).
pub fn contracted(broken: bool, options: &ReplicaOptions) -> Result<ContractedServer<QeServer>, String> {
    let server = if options.contract_next {
        let next = TaskStatusNext::try_contract();
        let set = crate::server::contract_set(broken);
        let errors = set.errors().iter().cloned().map(Err);
        // Every binding as the current release has it, but `task_status` on the next version.
        let bindings = set.bindings().map(|b| match (b.tool(), &next) {
            ("task_status", Ok(next)) => Ok((b.tool().to_owned(), *next)),
            ("task_status", Err(err)) => Err(err.clone()),
            (tool, _) => Ok((tool.to_owned(), b.contract())),
        });
        ContractedServer::with_tools(QeServer::new(broken), errors.chain(bindings).collect::<Vec<_>>())
    } else {
        crate::server::contracted(broken)
    }
    .map_err(|err| err.to_string())?;
    let Some(cache) = cache(options)? else { return Ok(server) };
    Ok(server.with_pipeline(Pipeline::builder().cache(cache).build()))
}

fn cache(options: &ReplicaOptions) -> Result<Option<Arc<dyn ResultCache>>, String> {
    let Some(kind) = options.cache.as_deref() else { return Ok(None) };
    if kind == "memory" {
        return Ok(Some(Arc::new(InMemoryCache::new())));
    }
    if kind.starts_with("redis://") || kind.starts_with("rediss://") || kind.starts_with("unix://") {
        return redis(kind, options).map(Some);
    }
    Err(format!("QE_SERVER_CACHE=`{kind}`: expected `none`, `memory` or a Redis URL such as redis://127.0.0.1:6379/"))
}

#[cfg(feature = "redis")]
fn redis(url: &str, options: &ReplicaOptions) -> Result<Arc<dyn ResultCache>, String> {
    use contract_runtime::cache::RedisCache;
    let timeout = options.timeout_ms.map_or(RedisCache::DEFAULT_TIMEOUT, std::time::Duration::from_millis);
    let cache = RedisCache::builder(url)
        .prefix(options.prefix.as_deref().unwrap_or("qe-server"))
        .timeout(timeout)
        .max_backoff(std::time::Duration::from_millis(500))
        .build()
        .map_err(|err| err.to_string())?;
    Ok(Arc::new(cache))
}

#[cfg(not(feature = "redis"))]
fn redis(_url: &str, _options: &ReplicaOptions) -> Result<Arc<dyn ResultCache>, String> {
    Err("QE_SERVER_CACHE names a Redis URL, but this qe-server was built without the `redis` feature".to_owned())
}
