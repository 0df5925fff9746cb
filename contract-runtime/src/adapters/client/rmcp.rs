//! The harness on an rmcp client connection (feature `rmcp-client`).
//!
//! rmcp's client validates nothing: it hands `structuredContent` to the caller whatever
//! the declared `outputSchema` says. [`Harness`] puts the [`Catalog`] gates around
//! `tools/call`: the catalog is built from every `tools/list` page, refreshed before the
//! next call after `notifications/tools/list_changed` (seen by [`CatalogWatch`]) or a
//! reconnect ([`Harness::reconnected`]), arguments are checked before the request is
//! sent, and each result becomes a [`CallOutcome`].
//!
//! Every refresh is held to the catalog's pin (see [`Catalog`]): a tool the lock policy
//! quarantines is refused before `tools/call` is sent, with a
//! [`FailureKind::Quarantined`] failure. The pin outlives reconnects: it is the
//! catalog's, and [`Harness::reconnected`] keeps the catalog.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use contract_runtime::client::rmcp::{CatalogWatch, Harness};
//! use rmcp::ServiceExt;
//!
//! let watch = CatalogWatch::new("my-agent", "0.1.0");
//! // Any rmcp client transport: a child process's (stdout, stdin), a streamable HTTP
//! // client, or, as here, this process's own stdio.
//! let transport = rmcp::transport::stdio();
//! let running = watch.clone().serve(transport).await?;
//! let harness = Harness::new(running.peer().clone(), &watch);
//! let outcome = harness.call("search_tickets", serde_json::json!({"query": "login"})).await?;
//! println!("{}", outcome.model_view());
//! # Ok(())
//! # }
//! ```

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{NotificationContext, Peer, RoleClient, ServiceError};
use rmcp::ClientHandler;
use serde_json::Value;

use super::{CallOutcome, Catalog, ContractFailure, FailureKind, RefreshReport};
use crate::contract::validate::Violation;

/// An rmcp [`ClientHandler`] that marks the harness's catalog stale when the server
/// sends `notifications/tools/list_changed`.
///
/// On a 2026-07-28 connection rmcp routes list-changed notifications that a `listen`
/// subscription asked for to that subscription instead; a harness that opens one should
/// call [`Harness::invalidate`] itself when it reads such a notification.
#[derive(Clone, Debug)]
pub struct CatalogWatch {
    stale: Arc<AtomicBool>,
    config: ClientConfig,
}

impl CatalogWatch {
    /// A handler that introduces the client as `name` `version`.
    #[must_use]
    pub fn new(name: &str, version: &str) -> Self {
        let config = ClientConfig::new(ClientCapabilities::default(), Implementation::new(name, version));
        Self { stale: Arc::new(AtomicBool::new(true)), config }
    }
}

impl ClientHandler for CatalogWatch {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + Send + '_ {
        self.stale.store(true, Ordering::SeqCst);
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }
}

/// Why a harness call did not produce an outcome.
#[derive(Debug)]
pub enum HarnessError {
    /// The connection failed or the server answered with a protocol error.
    Service(ServiceError),
    /// A tool definition or result did not convert to JSON.
    Json(serde_json::Error),
}

impl std::fmt::Display for HarnessError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Service(err) => write!(f, "MCP request failed: {err}"),
            Self::Json(err) => write!(f, "cannot read the server's JSON: {err}"),
        }
    }
}

impl HarnessError {
    /// The JSON-RPC error the server answered the request with (its code, such as `-32602`
    /// for invalid params, and its message); `None` when the connection failed or the JSON
    /// could not be read.
    #[must_use]
    pub fn protocol_error(&self) -> Option<(i32, &str)> {
        match self {
            Self::Service(ServiceError::McpError(data)) => Some((data.code.0, &data.message)),
            _ => None,
        }
    }
}

impl std::error::Error for HarnessError {}

impl From<ServiceError> for HarnessError {
    fn from(err: ServiceError) -> Self {
        Self::Service(err)
    }
}

impl From<serde_json::Error> for HarnessError {
    fn from(err: serde_json::Error) -> Self {
        Self::Json(err)
    }
}

/// A validating client: a peer plus the catalog of its tools.
#[derive(Debug)]
pub struct Harness {
    peer: Mutex<Peer<RoleClient>>,
    stale: Arc<AtomicBool>,
    catalog: Mutex<Catalog>,
}

impl Harness {
    /// A harness on `peer`, whose list-changed notifications reach `watch`.
    /// The catalog pins the first complete listing and judges later ones by the default
    /// [`LockPolicy`](super::lock::LockPolicy).
    #[must_use]
    pub fn new(peer: Peer<RoleClient>, watch: &CatalogWatch) -> Self {
        Self::with_catalog(peer, watch, Catalog::new())
    }

    /// A harness on `peer` with `catalog`: for example [`Catalog::with_lock`], to hold the
    /// server to a lock file from the first call.
    #[must_use]
    pub fn with_catalog(peer: Peer<RoleClient>, watch: &CatalogWatch, catalog: Catalog) -> Self {
        Self { peer: Mutex::new(peer), stale: Arc::clone(&watch.stale), catalog: Mutex::new(catalog) }
    }

    /// Accepts `tool` as listed now (see [`Catalog::approve`]); `false` when it is not
    /// listed.
    pub fn approve(&self, tool: &str) -> bool {
        self.catalog().approve(tool)
    }

    /// The catalog (locked; do not hold it across an `.await`).
    pub fn catalog(&self) -> MutexGuard<'_, Catalog> {
        self.catalog.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The current peer.
    #[must_use]
    pub fn peer(&self) -> Peer<RoleClient> {
        self.peer.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Marks the catalog stale: the next call refreshes it first.
    pub fn invalidate(&self) {
        self.stale.store(true, Ordering::SeqCst);
    }

    /// Switches to a new connection (a reconnect): the catalog is refreshed before the
    /// next call, since the server may list other tools now.
    pub fn reconnected(&self, peer: Peer<RoleClient>) {
        *self.peer.lock().unwrap_or_else(PoisonError::into_inner) = peer;
        self.invalidate();
    }

    /// Lists every tool over all pages and rebuilds the catalog.
    pub async fn refresh(&self) -> Result<RefreshReport, HarnessError> {
        // Clear the flag first: a notification that arrives while we list marks the
        // catalog stale again, and the next call lists once more.
        self.stale.store(false, Ordering::SeqCst);
        let listed = match self.peer().list_all_tools().await {
            Ok(tools) => tools,
            Err(err) => {
                self.stale.store(true, Ordering::SeqCst);
                return Err(err.into());
            }
        };
        let tools = listed.iter().map(serde_json::to_value).collect::<Result<Vec<_>, _>>()?;
        Ok(self.catalog().refresh(tools))
    }

    /// Refreshes the catalog if it is stale, with what the refresh found (`None`: it was
    /// fresh).
    pub async fn ensure_fresh(&self) -> Result<Option<RefreshReport>, HarnessError> {
        if self.stale.load(Ordering::SeqCst) || self.catalog().is_stale() {
            return self.refresh().await.map(Some);
        }
        Ok(None)
    }

    /// Calls `tool` with `arguments` through the gates: a quarantined tool refused and
    /// the arguments checked against the `inputSchema` first (neither call is ever
    /// sent), the result judged after.
    /// Transport and protocol errors are `Err`; everything a model should see is an
    /// [`CallOutcome`]. Its [`notices`](CallOutcome::notices) (keys `structuredContent`
    /// lacks, a false success, a refusal) are logged as `tracing` warnings.
    pub async fn call(&self, tool: &str, arguments: Value) -> Result<CallOutcome, HarnessError> {
        self.ensure_fresh().await?;
        if let Err(failure) = self.catalog().check_arguments(tool, &arguments) {
            return Ok(CallOutcome::ContractFailure(failure));
        }
        let Value::Object(arguments) = arguments else {
            // check_arguments accepts objects only.
            let violation = Violation::new("", "type", "tool arguments must be a JSON object");
            return Ok(CallOutcome::ContractFailure(ContractFailure::new(
                tool,
                FailureKind::InvalidArguments,
                vec![violation],
            )));
        };
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let result = self.peer().call_tool(params).await?;
        let result = serde_json::to_value(&result)?;
        let outcome = self.catalog().check_result(tool, &result);
        // The report: what a client trusting isError and structuredContent would miss.
        // Kinds, escaped pointers and sanitized, bounded quotes only.
        for notice in outcome.notices() {
            tracing::warn!(tool, kind = notice.kind, pointer = %notice.pointer, "{}", notice.message);
        }
        Ok(outcome)
    }
}
