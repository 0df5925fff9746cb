//! Contracts in an [rmcp](https://docs.rs/rmcp) server (cargo feature `rmcp`).
//!
//! Wrap your [`ServerHandler`] in a [`ContractedServer`] and list the contracts of its
//! tools. Tools stay `#[tool]` methods; return this module's [`Json<T>`](Json) (a
//! drop-in for rmcp's `Json<T>` that catches NaN and infinity before they turn into
//! `null`) and [`ToolError`](crate::wire::ToolError) for typed failures.
//!
//! [`ContractedServer`] is itself a [`ServerHandler`]: rmcp's dispatch makes its
//! protocol checks around it as for any handler, it enforces the methods whose results
//! carry tool output and passes every other method to the inner handler. Every method
//! is written out; clippy's `missing_trait_methods` (denied on that impl) turns a method
//! rmcp adds later into a build error rather than a silent default.
//!
//! - `tools/list`: a contracted tool advertises the checked-in schema (wrapped as
//!   `{"result": …}` for peers before 2026-07-28 when its root is not an object) and
//!   the contract identity under [`META_KEY`]. Any other tool advertises no
//!   `outputSchema` and `_meta` `{"qualified": false}`: it stays usable, visibly
//!   unvalidated.
//! - `tools/call`: arguments are checked against the tool's `inputSchema` first (a
//!   failure is an `isError` result with `invalid_arguments`, SEP-1303); the result
//!   then runs through the [`Pipeline`] — middleware, validation, cache admission —
//!   so a result that breaks its contract leaves as `output_contract_violation`,
//!   never as a success — unless the tool is report-only
//!   ([`ContractedServer::report_only`]): then it leaves unchanged, marked
//!   `"enforced": false` in its `_meta`, reported and counted, never cached. Handler errors and panics become sanitized `isError`
//!   results. An unknown tool stays a JSON-RPC error, answered by the inner handler.
//! - Tasks (SEP-2663): a `tools/call` the handler answers with a task is remembered,
//!   and the task's result is enforced when `tasks/get` returns it (rmcp 3.11 has no
//!   `tasks/result`); every poll sees the same enforced result. A contracted tool's
//!   `failed` task reads as the complete call's sanitized `isError` result; a task the
//!   adapter never saw created has its result withheld. A cache hit for a client that
//!   declared tasks is served as a task (the adapter's own) only when the handler has
//!   answered that tool with a task; a tool the handler answers completely is served
//!   complete, whatever the client declared: the adapter never turns a complete answer
//!   into a task.
//! - Errors are classified by type: [`ToolError`](crate::wire::ToolError) travels as a `_meta`
//!   marker (code, message, retryable) that the adapter reads and strips, because a
//!   marker survives every path — a task's result is stored as JSON in rmcp's
//!   `TaskManager`, where no task-local of the request exists. An rmcp `invalid_params`
//!   error is `invalid_arguments`; rmcp's own refusal of undeserializable arguments,
//!   whose type its router erases into a plain `isError` text, is recognised by its
//!   whole shape.
//! - Tools registered at run time: [`ContractedServer::bind`] binds a contract read from a
//!   checked-in file ([`ContractSet::load_dir`]) to a tool the handler added after start,
//!   for this server and every clone; [`ContractedServer::notify_tool_list_changed`]
//!   re-checks every binding before it sends `notifications/tools/list_changed`.
//! - `_meta`: for a peer on protocol 2026-07-28 or later, every result the adapter
//!   answers carries the inner handler's `get_info().server_info` under
//!   `io.modelcontextprotocol/serverInfo` (earlier revisions define no such key and get
//!   none); a success keeps the handler's own `_meta` keys beside the adapter's.
//! - Input-required results (MRTR) carry no output and pass; the retried call that
//!   completes is a `tools/call` like any other (never served from the cache).
//!
//! Not covered: a handler that sends `notifications/tasks` with a result through its
//! `Peer` itself bypasses every server-side wrapper; rmcp offers no hook there.
//!
//! # Examples
//!
//! ```no_run
//! use contract_runtime::rmcp::{ContractedServer, Json};
//! use contract_runtime::{contracts, ToolError, ToolOutput};
//! use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
//! use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};
//!
//! /// Health of the agent fleet.
//! #[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
//! #[tool_output(version = "1.0.0", compatibility = "exact")]
//! struct FleetStatus {
//!     healthy: u32,
//! }
//!
//! #[derive(Clone)]
//! struct Fleet {
//!     tool_router: ToolRouter<Self>,
//! }
//!
//! #[tool_router]
//! impl Fleet {
//!     #[tool(description = "Health of the agent fleet.")]
//!     async fn fleet_status(&self) -> Result<Json<FleetStatus>, ToolError> {
//!         Ok(Json(FleetStatus { healthy: 3 }))
//!     }
//! }
//!
//! #[tool_handler(router = self.tool_router)]
//! impl ServerHandler for Fleet {}
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let fleet = Fleet { tool_router: Fleet::tool_router() };
//! // One entry per contracted tool, matched by the contract name.
//! let server = ContractedServer::new(fleet, contracts![FleetStatus])?;
//! // Over stdio; `contract_runtime::rmcp::serve_stdio(server)` (feature `stdio`) is faster.
//! server.serve(rmcp::transport::stdio()).await?.waiting().await?;
//! # Ok(())
//! # }
//! ```
//!
#![doc = include_str!("../../../docs/rmcp.md")]

mod bind;
mod enforce;
mod json;
#[cfg(any(feature = "stdio", feature = "http"))]
mod keyed;
#[cfg(feature = "stdio")]
mod lane;
mod server_info;
#[cfg(feature = "stdio")]
mod stdio;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CancelledNotificationParam, CompleteRequestParams,
    CompleteResult, CustomNotification, CustomRequest, CustomResult, DiscoverResult, GetPromptRequestParams,
    GetPromptResponse, GetSkillRequestParams, GetSkillResult, GetTaskParams, GetTaskResult, InitializeRequestParams,
    InitializeResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ReadResourceDirectoryRequestParams,
    ReadResourceDirectoryResult, ReadResourceRequestParams, ReadResourceResponse, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, Tool, UnsubscribeRequestParams, UpdateTaskParams,
};
// Logging (`logging/setLevel`) is deprecated upstream (SEP-2577) but still forwarded.
#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData, ServerHandler};

use crate::contract::{ContractError, OutputContract};
use crate::serve::pipeline::Pipeline;
use crate::serve::set::{ContractSet, SetProblem};
#[cfg(doc)]
use crate::serve::wire::META_KEY;

use enforce::{Enforcer, Shared};
pub use json::Json;
#[cfg(any(feature = "stdio", feature = "http"))]
pub use keyed::read_tools_call;
#[cfg(feature = "stdio")]
pub use stdio::{serve_stdio, stdio_pipes, StdioError};

/// Why a [`ContractedServer`] could not be built.
#[derive(Debug)]
pub struct AdapterError {
    problems: Vec<String>,
}

impl AdapterError {
    /// Every problem found, one sentence each.
    #[must_use]
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for AdapterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the contracted server cannot start: {}", self.problems.join("; "))
    }
}

impl std::error::Error for AdapterError {}

/// An rmcp [`ServerHandler`] whose tool results are enforced output contracts, wrapping
/// another handler; serve it as you would serve the handler (`serve(transport)`,
/// `StreamableHttpService::new(move || Ok(server.clone()), …)`).
///
/// A contracted tool must return this module's [`Json<T>`](Json) (or
/// [`ToolError`](crate::wire::ToolError) on failure): a structured result made any other way
/// — rmcp's own `Json<T>`, a hand-built `CallToolResult` — has passed through a
/// conversion that turns NaN into `null`, so it is refused as `serialization_error`
/// naming the fix instead of being trusted. That happens at the call, not here: rmcp
/// 3.11 lists a tool returning its own `Json<T>` exactly as one returning ours (the
/// `#[tool]` macro builds the `outputSchema` from `T` alone), so nothing in the tool
/// list tells them apart; clippy's `disallowed-types` on
/// `rmcp::handler::server::wrapper::Json` fails the build instead (see the crate
/// documentation). Cloning is cheap (the handler, the
/// contracts, the pipeline and the compiled argument validators are shared), so a clone
/// can serve each streamable HTTP session.
pub struct ContractedServer<H> {
    enforcer: Enforcer<H>,
}

impl<H> Clone for ContractedServer<H> {
    fn clone(&self) -> Self {
        Self { enforcer: self.enforcer.clone() }
    }
}

impl<H> fmt::Debug for ContractedServer<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ContractedServer")
            .field("contracts", &self.enforcer.shared.contracts().keys().collect::<Vec<_>>())
            .field("pipeline", &self.enforcer.shared.pipeline)
            .finish_non_exhaustive()
    }
}

impl<H: ServerHandler> ContractedServer<H> {
    /// Wraps `inner`, binding each contract as the set binds it: to the tool of the
    /// contract's name, or to the tool named in `contracts![Type => "tool"]` /
    /// [`ContractSet::bind`] (each instantiation of a generic result type to its tool).
    ///
    /// # Errors
    ///
    /// Every problem of [`ContractSet::check`] (a contract that failed to build, a
    /// tool bound twice, two types of one contract name), and every binding whose
    /// tool the inner handler does not know (`get_tool`, which `#[tool_handler]`
    /// provides) — all reported at once, each with its fix.
    pub fn new(inner: H, contracts: ContractSet) -> Result<Self, AdapterError> {
        // The set's own problems first, each with its fix, as `ContractSet::check` and
        // the schemas CLI print them.
        let mut problems: Vec<String> = contracts
            .check()
            .err()
            .map(|err| err.problems().iter().map(ToString::to_string).collect())
            .unwrap_or_default();
        for binding in contracts.bindings() {
            if inner.get_tool(binding.tool()).is_none() {
                let problem = SetProblem::NoTool {
                    tool: binding.tool().to_owned(),
                    contract: binding.contract().name().to_owned(),
                    type_name: binding.contract().type_name().to_owned(),
                };
                problems.push(format!("{problem} (the handler's `get_tool` does not know it)"));
            }
        }
        if !problems.is_empty() {
            return Err(AdapterError { problems });
        }
        let (_, bindings) = contracts.into_parts();
        Self::with_tools(inner, bindings.into_iter().map(|b| Ok((b.tool().to_owned(), b.contract()))))
    }

    /// Like [`ContractedServer::new`], with the tool name given for each contract, for
    /// tools whose names differ from their contracts'.
    ///
    /// # Errors
    ///
    /// As for [`ContractedServer::new`].
    pub fn with_tools(
        inner: H,
        bindings: impl IntoIterator<Item = Result<(String, &'static OutputContract), ContractError>>,
    ) -> Result<Self, AdapterError> {
        let mut problems = Vec::new();
        let mut contracts = BTreeMap::new();
        for binding in bindings {
            match binding {
                Err(err) => problems.push(err.to_string()),
                Ok((tool, contract)) => {
                    if inner.get_tool(&tool).is_none() {
                        problems.push(format!(
                            "contract `{}` is bound to tool `{tool}`, which the server does not have \
                             (the handler's `get_tool` does not know it)",
                            contract.name()
                        ));
                    }
                    if contracts.insert(tool.clone(), contract).is_some() {
                        problems.push(format!("tool `{tool}` is bound to two contracts"));
                    }
                }
            }
        }
        if !problems.is_empty() {
            return Err(AdapterError { problems });
        }
        let shared = Shared::new(contracts, Pipeline::default());
        Ok(Self { enforcer: Enforcer { inner: Arc::new(inner), shared: Arc::new(shared) } })
    }

    /// Runs every contracted result through `pipeline` (its middleware and cache)
    /// instead of the default pipeline, which has neither.
    ///
    /// Validated results are admitted to the pipeline's cache (violations never are);
    /// a hit under the current contract identity is served without running the
    /// handler, and an entry written under another identity is evicted.
    ///
    /// Report-only settings made on the server ([`ContractedServer::report_only`],
    /// [`ContractedServer::report_only_for`]) carry over to `pipeline`, as do its own:
    /// a tool report-only in either is report-only. The counters are `pipeline`'s.
    #[must_use]
    pub fn with_pipeline(self, mut pipeline: Pipeline) -> Self {
        pipeline.rollout_mut().merge(self.enforcer.shared.pipeline.rollout());
        self.rebuilt(pipeline)
    }

    fn rebuilt(self, pipeline: Pipeline) -> Self {
        let shared = Shared::new(self.enforcer.shared.contracts().clone(), pipeline);
        Self { enforcer: Enforcer { inner: self.enforcer.inner, shared: Arc::new(shared) } }
    }

    /// Makes every contracted tool report-only
    /// ([`Enforcement::Report`](crate::observe::Enforcement)): a result that
    /// breaks its contract is sent unchanged — complete, as a task's result, never
    /// cached — with `"enforced": false` beside the contract identity in its `_meta`,
    /// and reported as a `warn` event and in [`ContractedServer::stats`]. Serialization
    /// failures, limits, handler errors and refused arguments stay errors. Removing the
    /// line enforces again. Call it while building the server, before serving.
    #[must_use]
    pub fn report_only(self) -> Self {
        let mut pipeline = self.enforcer.shared.pipeline.clone();
        pipeline.rollout_mut().report_all();
        self.rebuilt(pipeline)
    }

    /// Makes the contracted tool `tool` report-only (see
    /// [`ContractedServer::report_only`]); the other tools stay enforced.
    ///
    /// # Errors
    ///
    /// An [`AdapterError`] when no contract is bound to `tool`: a misspelt name would
    /// otherwise leave the tool enforced without a word.
    pub fn report_only_for(self, tool: &str) -> Result<Self, AdapterError> {
        {
            let contracts = self.enforcer.shared.contracts();
            if !contracts.contains_key(tool) {
                let bound: Vec<&str> = contracts.keys().map(String::as_str).collect();
                return Err(AdapterError {
                    problems: vec![format!(
                        "report_only_for(\"{tool}\"): no contract is bound to tool `{tool}`; the contracted tools are {}",
                        if bound.is_empty() { "none".to_owned() } else { format!("`{}`", bound.join("`, `")) }
                    )],
                });
            }
        }
        let mut pipeline = self.enforcer.shared.pipeline.clone();
        pipeline.rollout_mut().report_tool(tool);
        Ok(self.rebuilt(pipeline))
    }

    /// How results of `tool` are enforced.
    #[must_use]
    pub fn enforcement(&self, tool: &str) -> crate::serve::observe::Enforcement {
        self.enforcer.shared.pipeline.enforcement(tool)
    }

    /// What the server has counted so far: calls, error results by code, report-only
    /// findings, cache hits and misses ([`Stats`](crate::observe::Stats)). Shared
    /// by every clone of the server (each streamable HTTP session's).
    #[must_use]
    pub fn stats(&self) -> crate::serve::observe::Stats {
        self.enforcer.shared.pipeline.stats()
    }

    /// The wrapped handler.
    #[must_use]
    pub fn inner(&self) -> &H {
        &self.enforcer.inner
    }

    /// The contract bound to `tool`, if any.
    #[must_use]
    pub fn contract(&self, tool: &str) -> Option<&'static OutputContract> {
        self.enforcer.shared.contracts().get(tool).copied()
    }
}

// Every method is written out, and clippy's `missing_trait_methods` turns a method rmcp
// adds later into a build failure here instead of a silent default that would bypass the
// inner handler. (rmcp 3.11's `StreamableHttpService` accepts only a `ServerHandler`, and
// every `ServerHandler` already is a `Service` through rmcp's blanket impl, so wrapping at
// the `Service` level, as rmcp's `Router` does, would lose streamable HTTP.)
#[deny(clippy::missing_trait_methods)]
#[allow(deprecated)] // `subscribe`, `unsubscribe` and `set_level` are deprecated upstream yet still served.
impl<H: ServerHandler> ServerHandler for ContractedServer<H> {
    // The methods whose results carry tool output, or advertise contracts, are enforced.

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.enforcer.call_tool(request, context).await
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.enforcer.list_tools(request, context).await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        ServerHandler::get_tool(&self.enforcer, name)
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.enforcer.get_task(request, context).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.enforcer.update_task(request, context).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.enforcer.cancel_task(request, context).await
    }

    // The rest carry no tool output and reach the inner handler unchanged.

    async fn ping(&self, context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        self.inner().ping(context).await
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        self.inner().initialize(request, context).await
    }

    fn negotiate_initialize(&self, request: &InitializeRequestParams) -> Result<InitializeResult, ErrorData> {
        self.inner().negotiate_initialize(request)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [rmcp::model::ProtocolVersion]> {
        self.inner().supported_protocol_versions()
    }

    async fn discover(&self, context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        self.inner().discover(context).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.inner().complete(request, context).await
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner().set_level(request, context).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.inner().get_prompt(request, context).await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.inner().list_prompts(request, context).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.inner().list_resources(request, context).await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.inner().list_resource_templates(request, context).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.inner().read_resource(request, context).await
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        self.inner().accepted_subscription_filter(requested)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.inner().listen(context).await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner().subscribe(request, context).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner().unsubscribe(request, context).await
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        self.inner().on_custom_request(request, context).await
    }

    async fn on_cancelled(&self, notification: CancelledNotificationParam, context: NotificationContext<RoleServer>) {
        self.inner().on_cancelled(notification, context).await;
    }

    async fn on_progress(&self, notification: ProgressNotificationParam, context: NotificationContext<RoleServer>) {
        self.inner().on_progress(notification, context).await;
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.inner().on_initialized(context).await;
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.inner().on_roots_list_changed(context).await;
    }

    async fn on_custom_notification(&self, notification: CustomNotification, context: NotificationContext<RoleServer>) {
        self.inner().on_custom_notification(notification, context).await;
    }

    fn get_info(&self) -> ServerConfig {
        self.inner().get_info()
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        self.inner().list_skills(request, context).await
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        self.inner().get_skill(request, context).await
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        self.inner().read_resource_directory(request, context).await
    }
}
