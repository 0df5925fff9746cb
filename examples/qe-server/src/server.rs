//! The MCP server (feature `server`): the demo tools as rmcp `#[tool]` methods, wrapped
//! in a [`ContractedServer`], served over stdio or streamable HTTP. The tools that are
//! long by nature ([`TASK_TOOLS`]) run as tasks for a client whose negotiated protocol
//! version is 2026-07-28 or later ([`TASKS_SINCE`]) and that declared the tasks extension
//! (`io.modelcontextprotocol/tasks`, SEP-2663). Every other call answers with its complete
//! result: every tool for a client on an older revision, extension declared or not, and
//! the quick tools for every client.

use contract_runtime::rmcp::{AdapterError, ContractedServer, Json};
use contract_runtime::ToolError;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CreateTaskResult, GetTaskParams, GetTaskResult,
    Implementation, ProtocolVersion, ServerCapabilities, ServerConfig, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler};

use crate::contracts::{
    CoverageGaps, FleetStatus, PipelineStatus, QualityAssess, ScrapePage, SearchTickets, SecurityScan, TaskStatus,
    TicketPage,
};
use crate::tools::{
    self, CoverageGapsArgs, PipelineStatusArgs, QualityAssessArgs, ScrapePageArgs, SearchTicketsArgs,
    SearchTicketsPageArgs, SecurityScanArgs, TaskStatusArgs, BROKEN_TASK_TOOL, BROKEN_TOOL,
};
#[cfg(doc)]
use crate::tools::{TASKS_SINCE, TASK_TOOLS};

/// The largest request body the HTTP transport accepts by default (the SDK default is 4
/// MiB; tool arguments here are a few hundred bytes).
pub const MAX_REQUEST_BODY_BYTES: usize = contract_runtime::http::HttpLimits::DEFAULT_MAX_BODY_BYTES;

/// The quality-engineering tools, as an rmcp handler. Wrap it with [`contracted`].
#[derive(Clone)]
pub struct QeServer {
    tool_router: ToolRouter<Self>,
    /// Tasks of task-augmented calls, shared by every clone (every HTTP session).
    tasks: TaskManager,
}

impl std::fmt::Debug for QeServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QeServer").field("tool_router", &self.tool_router).finish_non_exhaustive()
    }
}

#[tool_router]
impl QeServer {
    #[tool(description = "Health of the agent fleet: every agent, with healthy/degraded counts.")]
    async fn fleet_status(&self) -> Result<Json<FleetStatus>, ToolError> {
        tools::fleet_status().map(Json)
    }

    #[tool(description = "The state of one orchestrated task (queued, running, succeeded, failed or cancelled).")]
    async fn task_status(&self, Parameters(args): Parameters<TaskStatusArgs>) -> Result<Json<TaskStatus>, ToolError> {
        tools::task_status(&args).map(Json)
    }

    #[tool(description = "A CI pipeline run and its stages.")]
    async fn pipeline_status(
        &self,
        Parameters(args): Parameters<PipelineStatusArgs>,
    ) -> Result<Json<PipelineStatus>, ToolError> {
        tools::pipeline_status(&args).map(Json)
    }

    #[tool(description = "A quality-gate assessment of one change: score, verdict, metrics.")]
    async fn quality_assess(
        &self,
        Parameters(args): Parameters<QualityAssessArgs>,
    ) -> Result<Json<QualityAssess>, ToolError> {
        tools::quality_assess(&args).map(Json)
    }

    #[tool(description = "Findings of a static security scan of a repository revision. Long-running: a 2026-07-28 \
                       client that declared the tasks extension gets the call as a task.")]
    async fn security_scan(
        &self,
        Parameters(args): Parameters<SecurityScanArgs>,
    ) -> Result<Json<SecurityScan>, ToolError> {
        tools::security_scan(&args).map(Json)
    }

    #[tool(name = "qe/coverage_gaps", description = "Files whose line coverage is under a threshold.")]
    async fn coverage_gaps(
        &self,
        Parameters(args): Parameters<CoverageGapsArgs>,
    ) -> Result<Json<CoverageGaps>, ToolError> {
        tools::coverage_gaps(&args).map(Json)
    }

    #[tool(description = "Search tickets by query string. The result is an array of tickets.")]
    async fn search_tickets(
        &self,
        Parameters(args): Parameters<SearchTicketsArgs>,
    ) -> Result<Json<SearchTickets>, ToolError> {
        tools::search_tickets(&args).map(Json)
    }

    #[tool(
        description = "Search tickets by query string, one page at a time, saying whether the page holds every match."
    )]
    async fn search_tickets_page(
        &self,
        Parameters(args): Parameters<SearchTicketsPageArgs>,
    ) -> Result<Json<TicketPage>, ToolError> {
        tools::search_tickets_page(&args).map(Json)
    }

    #[tool(description = "Scrape one web page: markdown, links and provider metadata.")]
    async fn scrape_page(&self, Parameters(args): Parameters<ScrapePageArgs>) -> Result<Json<ScrapePage>, ToolError> {
        tools::scrape_page(&args).map(Json)
    }

    #[tool(description = "The server's name and version. Uncontracted: its result is plain text.")]
    async fn server_version(&self) -> String {
        tools::server_version()
    }

    #[tool(
        name = "broken_fleet_status",
        description = "A deliberately broken fleet_status: its handler drops the required `healthy` field."
    )]
    async fn broken_fleet_status(&self) -> Json<serde_json::Value> {
        Json(tools::broken_fleet_status())
    }

    #[tool(
        name = "broken_security_scan",
        description = "A deliberately broken security_scan: runs as a task like it, but its handler drops the \
                       required `counts` field."
    )]
    async fn broken_security_scan(&self) -> Json<serde_json::Value> {
        Json(tools::broken_security_scan())
    }
}

#[tool_handler(router = self.tool_router, name = "qe-server")]
impl ServerHandler for QeServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tasks().build())
            .with_server_info(Implementation::new("qe-server", env!("CARGO_PKG_VERSION")))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // A task only for work that is long by nature, and only for a client of the
        // protocol that defines tasks which declared it can take one: the request's
        // `_meta` says both for a 2026-07-28 client, the handshake for a session.
        let protocol = context.protocol_version();
        let declared = context.client_capabilities().is_some_and(|caps| caps.supports_tasks());
        let as_task = tools::runs_as_task(&request.name, protocol.as_ref().map(ProtocolVersion::as_str), declared);
        if !as_task || self.tool_router.get(&request.name).is_none() {
            return self.tool_router.call(ToolCallContext::new(self, request, context)).await;
        }
        // The same route runs inside the task, so a task's result is exactly what the
        // complete call would have returned.
        let server = self.clone();
        let task = self.tasks.spawn(TaskOptions::new().with_poll_interval_ms(10), move |_task| {
            Box::pin(async move {
                match server.tool_router.call(ToolCallContext::new(&server, request, context)).await {
                    Ok(CallToolResponse::Complete(result)) => Ok(result),
                    Ok(_) => Err(TaskExit::Error(ErrorData::internal_error("the tool did not complete", None))),
                    Err(err) => Err(TaskExit::Error(err)),
                }
            })
        });
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel_task(&request.task_id)
    }
}

impl QeServer {
    /// The demo tools; with `broken`, also [`BROKEN_TOOL`] and [`BROKEN_TASK_TOOL`].
    #[must_use]
    pub fn new(broken: bool) -> Self {
        let mut tool_router = Self::tool_router();
        if !broken {
            tool_router.remove_route(BROKEN_TOOL);
            tool_router.remove_route(BROKEN_TASK_TOOL);
        }
        Self { tool_router, tasks: TaskManager::new() }
    }
}

/// Every tool the demo server lists (the broken ones left out), as clients see it in
/// `tools/list` through [`contracted`]: what `schemas/tools/` snapshots
/// (`cargo xtask schemas`) and what a test compares with the checked-in snapshots.
///
/// # Panics
///
/// When the contracts do not bind (a test of this crate fails first).
#[must_use]
pub fn listed_tools() -> Vec<rmcp::model::Tool> {
    let server = contracted(false).expect("the demo contracts bind");
    let names: Vec<String> = server.inner().tool_router.list_all().into_iter().map(|t| t.name.to_string()).collect();
    names.iter().filter_map(|name| ServerHandler::get_tool(&server, name)).collect()
}

/// The demo server with its contracts bound: one entry per contracted tool. The broken
/// tools, when present, are bound to the contracts they claim to honour.
///
/// # Errors
///
/// A contract that fails to build or names no tool (see [`ContractedServer::new`]).
pub fn contracted(broken: bool) -> Result<ContractedServer<QeServer>, AdapterError> {
    ContractedServer::new(QeServer::new(broken), contract_set(broken))
}

/// The contracts of the demo server; with `broken`, also the bindings of the broken
/// tools: [`BROKEN_TOOL`] to `fleet_status`, [`BROKEN_TASK_TOOL`] to `security_scan`.
#[must_use]
pub fn contract_set(broken: bool) -> contract_runtime::ContractSet {
    let set = crate::all_contracts();
    if broken {
        set.bind::<FleetStatus>(BROKEN_TOOL).bind::<SecurityScan>(BROKEN_TASK_TOOL)
    } else {
        set
    }
}
