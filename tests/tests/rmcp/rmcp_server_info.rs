//! The server's identity in every result's `_meta`: protocol 2026-07-28 says a server
//! SHOULD put its `Implementation` under `io.modelcontextprotocol/serverInfo` in every
//! result; earlier revisions define no such key. Driven in process over a duplex, for a
//! 2025-11-25 client (after `initialize`) and a 2026-07-28 client (every request carries
//! its `_meta`): `tools/list`, complete results, refused results, tasks and cache hits,
//! and the handler's own `_meta` keys beside the adapter's.

use std::sync::Arc;
use std::time::Duration;

use contract_runtime::cache::InMemoryCache;
use contract_runtime::pipeline::Pipeline;
use contract_runtime::rmcp::{ContractedServer, Json};
use contract_runtime::wire::{CACHE_META_KEY, META_KEY};
use contract_runtime::{contracts, ToolError, ToolOutput};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::{IntoCallToolResult, ToolCallContext};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CreateTaskResult, GetTaskParams, GetTaskResult, Implementation,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::support::rmcp_paths;

use rmcp_paths::{initialize_params, modern_meta, with_meta, WAIT};

/// The key the 2026-07-28 schema defines on every result's `_meta`.
const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// A key of the handler's own, beside the adapter's.
const TRACE: &str = "com.example/trace";

/// Health of a service.
#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Health {
    healthy: u32,
}

/// What the `broken` tool returns instead of a `Health`.
#[derive(Serialize)]
struct NotHealth {
    healthy: i64,
}

#[derive(Deserialize, JsonSchema)]
struct Count {
    n: u32,
}

/// The identity the probe declares in `get_info`: the oracle every stamped result must
/// carry, written here rather than read back from the adapter.
fn identity() -> Value {
    json!({ "name": "probe-server", "version": "9.9.9" })
}

/// `response` with `key: value` added to its `_meta`, as a handler adds its own keys.
fn with_key(mut response: CallToolResponse, key: &str, value: Value) -> CallToolResponse {
    if let CallToolResponse::Complete(result) = &mut response {
        result.meta.get_or_insert_with(Default::default).0.insert(key.to_owned(), value);
    }
    response
}

#[derive(Clone)]
struct Probe {
    tool_router: ToolRouter<Self>,
    tasks: TaskManager,
    /// Whether a client that declared tasks gets every call as a task.
    as_tasks: bool,
}

#[tool_router]
impl Probe {
    #[tool(description = "A healthy count.")]
    async fn health(&self, Parameters(c): Parameters<Count>) -> Result<Json<Health>, ToolError> {
        Ok(Json(Health { healthy: c.n }))
    }

    #[tool(description = "A healthy count, with a trace id of the handler's own in `_meta`.")]
    async fn traced(&self, Parameters(c): Parameters<Count>) -> Result<CallToolResponse, ErrorData> {
        let result = with_key(Json(Health { healthy: c.n }).into_call_tool_result()?, TRACE, json!("t-1"));
        // A key of the adapter's namespace is the adapter's to write, not the handler's.
        Ok(with_key(result, CACHE_META_KEY, json!("hit")))
    }

    #[tool(description = "Breaks its contract (a negative count), with a trace id in `_meta`.")]
    async fn broken(&self) -> Result<CallToolResponse, ErrorData> {
        Ok(with_key(Json(NotHealth { healthy: -1 }).into_call_tool_result()?, TRACE, json!("t-2")))
    }

    #[tool(description = "Names its server itself in `_meta`.")]
    async fn claims(&self) -> Result<CallToolResponse, ErrorData> {
        let own = json!({ "name": "handler-says", "version": "0.0.1" });
        Ok(with_key(Json(Health { healthy: 1 }).into_call_tool_result()?, SERVER_INFO, own))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Probe {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tasks().build())
            .with_server_info(Implementation::new("probe-server", "9.9.9"))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !self.as_tasks || !context.client_capabilities().is_some_and(|caps| caps.supports_tasks()) {
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

fn probe(as_tasks: bool) -> Probe {
    Probe { tool_router: Probe::tool_router(), tasks: TaskManager::new(), as_tasks }
}

fn contracted(probe: Probe, pipeline: Option<Pipeline>) -> ContractedServer<Probe> {
    let set = contracts![Health, Health => "traced", Health => "broken", Health => "claims"];
    let server = ContractedServer::new(probe, set).expect("every binding names a tool");
    match pipeline {
        Some(pipeline) => server.with_pipeline(pipeline),
        None => server,
    }
}

/// The client's protocol era.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Era {
    /// 2025-11-25, after an `initialize` handshake.
    Legacy,
    /// 2026-07-28: no handshake, every request carries its `_meta`.
    Modern,
}

/// A raw JSON-RPC client over an in-memory duplex (stdio framing: one JSON per line).
struct Wire {
    to_server: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    from_server: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    next: u64,
    meta: Option<Value>,
}

impl Wire {
    /// Must run inside the runtime: it spawns the server.
    async fn connect<S: ServerHandler>(server: S, era: Era, tasks: bool) -> Self {
        let (client, server_side) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(tokio::io::split(server_side)).await {
                let _ = running.waiting().await;
            }
        });
        let (read, write) = tokio::io::split(client);
        let mut wire = Self { to_server: write, from_server: BufReader::new(read).lines(), next: 0, meta: None };
        match era {
            Era::Legacy => {
                let init = wire.request("initialize", initialize_params(tasks)).await;
                assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
                wire.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await;
            }
            Era::Modern => wire.meta = Some(modern_meta(tasks)),
        }
        wire
    }

    async fn send(&mut self, message: &Value) {
        let line = format!("{message}\n");
        self.to_server.write_all(line.as_bytes()).await.expect("write");
    }

    /// The whole JSON-RPC answer to one request.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        let params = with_meta(&params, self.meta.as_ref());
        self.next += 1;
        let id = self.next;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).await;
        loop {
            let line = tokio::time::timeout(WAIT, self.from_server.next_line())
                .await
                .unwrap_or_else(|_| panic!("no answer to `{method}` in time"))
                .expect("read")
                .expect("the server closed the stream");
            let message: Value = serde_json::from_str(&line).expect("JSON");
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    async fn result(&mut self, method: &str, params: Value) -> Value {
        let reply = self.request(method, params).await;
        reply.get("result").cloned().unwrap_or_else(|| panic!("`{method}` gave no result: {reply}"))
    }

    async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.result("tools/call", json!({ "name": tool, "arguments": arguments })).await
    }

    /// The completed `tasks/get` answer of the task `created` names.
    async fn completed(&mut self, created: &Value) -> Value {
        assert_eq!(created["resultType"], "task", "{created}");
        for _ in 0..2000 {
            let task = self.result("tasks/get", json!({ "taskId": created["taskId"] })).await;
            if task["status"] == "completed" {
                return task;
            }
            assert_eq!(task["status"], "working", "{task}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("the task did not complete");
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}

/// Whether `result` carries the server's identity as an `era` peer must see it: the
/// probe's own for 2026-07-28, none for 2025-11-25.
fn assert_identity(result: &Value, era: Era) {
    match era {
        Era::Modern => assert_eq!(result["_meta"][SERVER_INFO], identity(), "{result}"),
        Era::Legacy => assert!(result["_meta"].get(SERVER_INFO).is_none(), "a 2025-11-25 peer got it: {result}"),
    }
}

#[test]
fn complete_results_and_the_listing_carry_the_identity_for_2026_07_28_peers_only() {
    runtime().block_on(async {
        for era in [Era::Legacy, Era::Modern] {
            let mut wire = Wire::connect(contracted(probe(false), None), era, false).await;

            let listing = wire.result("tools/list", json!({})).await;
            assert_identity(&listing, era);

            let ok = wire.call("health", json!({ "n": 3 })).await;
            assert_eq!(ok["isError"], false, "{ok}");
            assert_eq!(ok["_meta"][META_KEY]["qualified"], true, "{ok}");
            assert_identity(&ok, era);

            // A refused result carries it too, beside the contract identity.
            let broken = wire.call("broken", json!({})).await;
            assert_eq!(broken["isError"], true, "{broken}");
            assert_eq!(broken["_meta"][META_KEY], ok["_meta"][META_KEY], "{broken}");
            assert_identity(&broken, era);

            // So does an argument refusal, made before the handler runs.
            let bad_args = wire.call("health", json!({ "n": "three" })).await;
            assert_eq!(bad_args["isError"], true, "{bad_args}");
            assert_identity(&bad_args, era);
        }
    });
}

#[test]
fn the_handlers_own_meta_stays_beside_the_adapters_keys_on_a_success_and_goes_with_a_refused_result() {
    runtime().block_on(async {
        for era in [Era::Legacy, Era::Modern] {
            let mut wire = Wire::connect(contracted(probe(false), None), era, false).await;

            let traced = wire.call("traced", json!({ "n": 2 })).await;
            assert_eq!(traced["isError"], false, "{traced}");
            assert_eq!(traced["_meta"][TRACE], "t-1", "the handler's key was dropped: {traced}");
            assert_eq!(traced["_meta"][META_KEY]["qualified"], true, "{traced}");
            assert_identity(&traced, era);
            rmcp_paths::assert_no_markers(&traced);
            assert!(traced["_meta"].get(CACHE_META_KEY).is_none(), "the handler claimed a cache hit: {traced}");

            // The refused result's `_meta` is refused with it: only the adapter's keys.
            let broken = wire.call("broken", json!({})).await;
            assert_eq!(rmcp_paths::error_body(&broken)["code"], "output_contract_violation", "{broken}");
            assert!(broken["_meta"].get(TRACE).is_none(), "a refused result kept the handler's key: {broken}");

            // A value the handler put under the key itself is its own, and is kept.
            let claims = wire.call("claims", json!({})).await;
            assert_eq!(claims["isError"], false, "{claims}");
            assert_eq!(claims["_meta"][SERVER_INFO]["name"], "handler-says", "{claims}");
        }
    });
}

#[test]
fn tasks_carry_the_identity_when_created_when_polled_and_in_their_result() {
    runtime().block_on(async {
        for era in [Era::Legacy, Era::Modern] {
            let mut wire = Wire::connect(contracted(probe(true), None), era, true).await;
            let created = wire.call("traced", json!({ "n": 4 })).await;
            assert_identity(&created, era);
            let task = wire.completed(&created).await;
            assert_identity(&task, era);
            let result = &task["result"];
            assert_eq!(result["structuredContent"], json!({ "healthy": 4 }), "{task}");
            assert_eq!(result["_meta"][TRACE], "t-1", "{task}");
            assert_identity(result, era);

            // A task whose result breaks the contract: refused, and still identified.
            let created = wire.call("broken", json!({})).await;
            let task = wire.completed(&created).await;
            assert_eq!(rmcp_paths::error_body(&task["result"])["code"], "output_contract_violation", "{task}");
            assert_identity(&task["result"], era);
        }
    });
}

#[test]
fn cache_hits_carry_the_identity_complete_or_as_a_task() {
    runtime().block_on(async {
        for era in [Era::Legacy, Era::Modern] {
            // Complete: the second call is a hit.
            let cache = Arc::new(InMemoryCache::new());
            let server = contracted(probe(false), Some(Pipeline::builder().cache(cache.clone()).build()));
            let mut wire = Wire::connect(server, era, false).await;
            let first = wire.call("traced", json!({ "n": 5 })).await;
            let hit = wire.call("traced", json!({ "n": 5 })).await;
            assert_eq!(cache.stats().hits, 1, "{:?}", cache.stats());
            assert_eq!(hit["structuredContent"], first["structuredContent"], "{hit}");
            assert_identity(&hit, era);
            // The handler's own keys belong to the call that made them, not to the entry.
            assert_eq!(first["_meta"][TRACE], "t-1", "{first}");
            assert!(hit["_meta"].get(TRACE).is_none(), "{hit}");

            // As a task: the tool is answered with tasks, so the hit is a task of the adapter's own.
            let cache = Arc::new(InMemoryCache::new());
            let server = contracted(probe(true), Some(Pipeline::builder().cache(cache.clone()).build()));
            let mut wire = Wire::connect(server, era, true).await;
            let created = wire.call("health", json!({ "n": 6 })).await;
            wire.completed(&created).await;
            let created = wire.call("health", json!({ "n": 6 })).await;
            assert_identity(&created, era);
            let task = wire.completed(&created).await;
            assert!(cache.stats().hits >= 1, "{:?}", cache.stats());
            assert_eq!(task["result"]["structuredContent"], json!({ "healthy": 6 }), "{task}");
            assert_identity(&task, era);
            assert_identity(&task["result"], era);
        }
    });
}

/// Why the adapter writes the key: rmcp 3.11 alone puts it on `server/discover` only.
#[test]
fn rmcp_alone_identifies_the_server_on_discover_but_not_on_a_tool_result() {
    runtime().block_on(async {
        let mut wire = Wire::connect(probe(false), Era::Modern, false).await;
        // Control: rmcp's own `server/discover` carries it.
        let discover = wire.result("server/discover", json!({})).await;
        assert_eq!(discover["_meta"][SERVER_INFO], identity(), "{discover}");
        let ok = wire.call("health", json!({ "n": 1 })).await;
        assert_eq!(ok["isError"], false, "{ok}");
        assert!(ok["_meta"].get(SERVER_INFO).is_none(), "rmcp now sends it itself: {ok}");
    });
}
