//! An in-process rmcp server for the report-only, operator and HTTP disconnect tests
//! (report_only_rmcp.rs, observe_events.rs, http_disconnect.rs): tools whose results
//! break their contract on request, one of them answered with a task for a client that
//! declared the tasks extension, a slow one that counts its cancellations, with a count of
//! handler runs; and a raw JSON-RPC client over an in-memory duplex.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use contract_runtime::pipeline::Pipeline;
use contract_runtime::rmcp::{ContractedServer, Json};
use contract_runtime::{contracts, ToolError, ToolOutput};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CreateTaskResult, GetTaskParams, GetTaskResult, ProgressNotificationParam,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader as AsyncBufReader};

use super::rmcp_paths::{initialize_params, modern_meta, with_meta};

/// A ratio that must not pass 1, with a token the contract marks sensitive.
#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub(crate) struct Ratio {
    #[schemars(range(max = 1.0))]
    pub(crate) ratio: f64,
    #[tool_output(sensitive)]
    #[schemars(length(max = 64))]
    pub(crate) token: String,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct RatioArgs {
    /// The ratio to return: over 1 breaks the contract.
    pub(crate) ratio: f64,
    /// Returned in the sensitive `token`.
    pub(crate) token: String,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct SlowArgs {
    /// How long the tool works before it answers, unless it is cancelled first.
    pub(crate) ms: u64,
}

/// The tool answered with a task for a client that declared the tasks extension.
pub(crate) const TASK_TOOL: &str = "ratio_task";

#[derive(Clone)]
pub(crate) struct RolloutProbe {
    tool_router: ToolRouter<Self>,
    tasks: TaskManager,
    /// Handler runs, every tool together.
    pub(crate) runs: Arc<AtomicU32>,
    /// Runs of `ratio_slow` whose cancellation token fired before they answered.
    pub(crate) cancelled: Arc<AtomicU32>,
}

#[tool_router]
impl RolloutProbe {
    #[tool(description = "A ratio, answered complete.")]
    async fn ratio(&self, Parameters(args): Parameters<RatioArgs>) -> Result<Json<Ratio>, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Ok(Json(Ratio { ratio: args.ratio, token: args.token }))
    }

    #[tool(description = "A ratio, answered with a task when the client takes tasks.")]
    async fn ratio_task(&self, Parameters(args): Parameters<RatioArgs>) -> Result<Json<Ratio>, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Ok(Json(Ratio { ratio: args.ratio, token: args.token }))
    }

    #[tool(description = "A ratio after `ms` milliseconds, unless cancelled first; one progress \
                          notification first when the call names a progress token.")]
    async fn ratio_slow(
        &self,
        Parameters(args): Parameters<SlowArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<Ratio>, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        if let Some(token) = context.meta.get_progress_token() {
            let _ = context.peer.notify_progress(ProgressNotificationParam::new(token, 0.0)).await;
        }
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(args.ms)) => {
                Ok(Json(Ratio { ratio: 0.5, token: "slow".to_owned() }))
            }
            () = context.ct.cancelled() => {
                self.cancelled.fetch_add(1, Ordering::SeqCst);
                Err(ToolError::unavailable("cancelled"))
            }
        }
    }

    #[tool(description = "Fails with a typed error.")]
    async fn ratio_down(&self) -> Result<Json<Ratio>, ToolError> {
        Err(ToolError::unavailable("the ratio store is down"))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for RolloutProbe {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tasks().build())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let takes_tasks = context.client_capabilities().is_some_and(|caps| caps.supports_tasks());
        if request.name != TASK_TOOL || !takes_tasks {
            return self.tool_router.call(ToolCallContext::new(self, request, context)).await;
        }
        let probe = self.clone();
        let task = self.tasks.spawn(TaskOptions::new().with_poll_interval_ms(5), move |_| {
            Box::pin(async move {
                match probe.tool_router.call(ToolCallContext::new(&probe, request, context)).await {
                    Ok(CallToolResponse::Complete(result)) => Ok(result),
                    Ok(_) => Err(TaskExit::Error(ErrorData::internal_error("not complete", None))),
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
}

pub(crate) fn probe() -> RolloutProbe {
    RolloutProbe {
        tool_router: RolloutProbe::tool_router(),
        tasks: TaskManager::new(),
        runs: Arc::new(AtomicU32::new(0)),
        cancelled: Arc::new(AtomicU32::new(0)),
    }
}

/// The probe with every tool contracted, on `pipeline` when one is given.
pub(crate) fn contracted(probe: RolloutProbe, pipeline: Option<Pipeline>) -> ContractedServer<RolloutProbe> {
    let set = contracts![Ratio, Ratio => "ratio_task", Ratio => "ratio_down", Ratio => "ratio_slow"];
    let server = ContractedServer::new(probe, set).expect("bindings");
    match pipeline {
        Some(pipeline) => server.with_pipeline(pipeline),
        None => server,
    }
}

const WAIT: Duration = Duration::from_secs(10);

/// A raw JSON-RPC client over an in-memory duplex (stdio framing: one JSON per line).
pub(crate) struct Wire {
    to_server: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    from_server: tokio::io::Lines<AsyncBufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    next: u64,
    meta: Option<Value>,
}

impl Wire {
    /// A 2025-11-25 client after the `initialize` handshake; `tasks` declares the tasks
    /// extension. Must run inside the runtime: it spawns the server.
    pub(crate) async fn legacy(server: ContractedServer<RolloutProbe>, tasks: bool) -> Self {
        let mut wire = Self::open(server);
        wire.request("initialize", initialize_params(tasks)).await;
        wire.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await;
        wire
    }

    /// A 2026-07-28 client: no handshake, every request carries its `_meta`.
    pub(crate) fn modern(server: ContractedServer<RolloutProbe>, tasks: bool) -> Self {
        let mut wire = Self::open(server);
        wire.meta = Some(modern_meta(tasks));
        wire
    }

    fn open(server: ContractedServer<RolloutProbe>) -> Self {
        let (client, server_side) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(tokio::io::split(server_side)).await {
                let _ = running.waiting().await;
            }
        });
        let (read, write) = tokio::io::split(client);
        Self { to_server: write, from_server: AsyncBufReader::new(read).lines(), next: 0, meta: None }
    }

    async fn send(&mut self, message: &Value) {
        let line = format!("{message}\n");
        self.to_server.write_all(line.as_bytes()).await.expect("write");
    }

    pub(crate) async fn request(&mut self, method: &str, params: Value) -> Value {
        let params = with_meta(&params, self.meta.as_ref());
        self.next += 1;
        let id = self.next;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).await;
        loop {
            let line = tokio::time::timeout(WAIT, self.from_server.next_line())
                .await
                .expect("an answer in time")
                .expect("read")
                .expect("open");
            let message: Value = serde_json::from_str(&line).expect("JSON");
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// The first answer to a `tools/call`: a result, or a created task.
    pub(crate) async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let reply = self.request("tools/call", json!({ "name": tool, "arguments": arguments })).await;
        reply.get("result").cloned().unwrap_or_else(|| panic!("`{tool}` gave no result: {reply}"))
    }

    /// A created task polled with `tasks/get` until it completes: its result.
    pub(crate) async fn task_result(&mut self, created: &Value) -> Value {
        assert_eq!(created["resultType"], "task", "no task: {created}");
        let id = created["taskId"].clone();
        for _ in 0..2000 {
            let task = self.request("tasks/get", json!({ "taskId": id })).await["result"].clone();
            if task["status"] == "completed" {
                return task["result"].clone();
            }
            assert_eq!(task["status"], "working", "{task}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("the task did not complete");
    }
}

pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}
