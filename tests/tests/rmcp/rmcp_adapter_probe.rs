//! Every path a tool result can take out of an rmcp server goes through the contract,
//! in process against a probe server: non-finite floats, a wrong `Json` import, typed
//! error classification, cache hits served as tasks only for a tool the handler answers
//! with one on the client's protocol version, input-required calls, and task results the
//! adapter did not see created. Each rejection has a clean control that must pass.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use contract_runtime::cache::InMemoryCache;
use contract_runtime::pipeline::{CallContext, Pipeline};
use contract_runtime::rmcp::{ContractedServer, Json};
use contract_runtime::{contracts, ToolError, ToolOutput};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::{IntoCallToolResult, RequestState, ToolCallContext};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CreateTaskResult, GetTaskParams, GetTaskResult, InputRequiredResult,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader as AsyncBufReader};

use crate::support::rmcp_paths;

use rmcp_paths::*;

// ------------------------------------------------------------------ in process

/// A score whose floats the handler chooses.
#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Score {
    score: f64,
    confidence: Option<f64>,
}

#[derive(Deserialize, JsonSchema)]
struct Pick {
    /// Which field gets the float, `score` or `confidence`.
    field: String,
    /// `nan`, `inf`, `-inf`, or a finite number as text.
    value: String,
}

fn float(text: &str) -> f64 {
    match text {
        "nan" => f64::NAN,
        "inf" => f64::INFINITY,
        "-inf" => f64::NEG_INFINITY,
        other => other.parse().expect("a number"),
    }
}

fn score_of(pick: &Pick) -> Score {
    if pick.field == "score" {
        Score { score: float(&pick.value), confidence: Some(0.5) }
    } else {
        Score { score: 1.0, confidence: Some(float(&pick.value)) }
    }
}

/// Rejects values over 10 while the schema says any integer: only deserialization
/// (rmcp's, not the inputSchema check) can refuse 11.
fn at_most_ten<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let n = u32::deserialize(d)?;
    if n > 10 {
        return Err(serde::de::Error::custom("more than ten"));
    }
    Ok(n)
}

#[derive(Deserialize, JsonSchema)]
struct Small {
    #[serde(deserialize_with = "at_most_ten")]
    n: u32,
}

#[derive(Clone)]
struct Probe {
    tool_router: ToolRouter<Self>,
    tasks: TaskManager,
    runs: Arc<AtomicU32>,
    /// The tools answered with a task for a client that declared tasks; `None`: every tool.
    task_tools: Option<&'static [&'static str]>,
    /// The first protocol version whose clients get tasks; `None`: every version.
    tasks_since: Option<&'static str>,
}

#[tool_router]
impl Probe {
    #[tool(description = "A score, through contract_runtime's Json.")]
    async fn score(&self, Parameters(pick): Parameters<Pick>) -> Result<Json<Score>, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Ok(Json(score_of(&pick)))
    }

    #[tool(description = "The same score through rmcp's own Json: the wrong import.")]
    async fn rmcp_score(&self, Parameters(pick): Parameters<Pick>) -> Result<rmcp::Json<Score>, ToolError> {
        Ok(rmcp::Json(score_of(&pick)))
    }

    #[tool(description = "A small number, checked only by deserialization.")]
    async fn small(&self, Parameters(s): Parameters<Small>) -> Result<Json<Score>, ToolError> {
        Ok(Json(Score { score: f64::from(s.n), confidence: None }))
    }

    #[tool(description = "Fails with a protocol error that says invalid params.")]
    async fn bad_params(&self) -> Result<Json<Score>, ErrorData> {
        Err(ErrorData::invalid_params("token=ghp_0123456789abcdefghijklmnopqrstuvwxyz is not accepted", None))
    }

    #[tool(description = "Asks for input first (MRTR), then returns the score.")]
    async fn confirm(
        &self,
        RequestState(state): RequestState,
        Parameters(pick): Parameters<Pick>,
    ) -> Result<CallToolResponse, ErrorData> {
        if state.as_deref() == Some("confirmed") {
            return Json(score_of(&pick)).into_call_tool_result();
        }
        Ok(InputRequiredResult::from_request_state("confirmed").into())
    }

    #[tool(description = "Fails with a typed, retryable error.")]
    async fn typed(&self) -> Result<Json<Score>, ToolError> {
        Err(ToolError::unavailable("the scorer is down"))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Probe {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tasks().build())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let as_task = self.task_tools.is_none_or(|tools| tools.contains(&request.name.as_ref()))
            && self.tasks_since.is_none_or(|since| context.protocol_version().is_some_and(|v| v.as_str() >= since));
        if !as_task || !context.client_capabilities().is_some_and(|caps| caps.supports_tasks()) {
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

fn probe() -> Probe {
    Probe {
        tool_router: Probe::tool_router(),
        tasks: TaskManager::new(),
        runs: Arc::new(AtomicU32::new(0)),
        task_tools: None,
        tasks_since: None,
    }
}

fn bound(probe: Probe, pipeline: Option<Pipeline>) -> ContractedServer<Probe> {
    let set = ["rmcp_score", "small", "bad_params", "typed", "confirm"]
        .into_iter()
        .fold(contracts![Score], contract_runtime::ContractSet::bind::<Score>);
    let server = ContractedServer::new(probe, set).expect("bindings");
    match pipeline {
        Some(pipeline) => server.with_pipeline(pipeline),
        None => server,
    }
}

/// A raw JSON-RPC client over an in-memory duplex (stdio framing: one JSON per line).
struct Wire {
    to_server: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    from_server: tokio::io::Lines<AsyncBufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    next: u64,
    /// The request `_meta` of a 2026-07-28 client, which skips `initialize`.
    meta: Option<Value>,
}

impl Wire {
    async fn connect(server: ContractedServer<Probe>, tasks: bool) -> Self {
        let mut wire = Self::open(server);
        wire.request("initialize", initialize_params(tasks)).await;
        wire.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await;
        wire
    }

    /// A 2026-07-28 client: no handshake, every request carries its `_meta`; `tasks`
    /// declares the tasks extension there.
    fn modern(server: ContractedServer<Probe>, tasks: bool) -> Self {
        let mut wire = Self::open(server);
        wire.meta = Some(modern_meta(tasks));
        wire
    }

    /// Must run inside the runtime: it spawns the server.
    fn open(server: ContractedServer<Probe>) -> Self {
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

    async fn request(&mut self, method: &str, params: Value) -> Value {
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

    async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let reply = self.request("tools/call", json!({ "name": tool, "arguments": arguments })).await;
        reply.get("result").cloned().unwrap_or_else(|| panic!("`{tool}` gave no result: {reply}"))
    }

    /// The final result of a call, polled to its end when it comes back as a task.
    async fn outcome(&mut self, tool: &str, arguments: Value) -> Value {
        let first = self.call(tool, arguments).await;
        if first["resultType"] != "task" {
            return first;
        }
        let id = first["taskId"].clone();
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

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}

/// What the pipeline says for the same handler result.
fn pipeline_says(pick: &Pick) -> Value {
    let ctx = CallContext::new("score", json!({}));
    Pipeline::default().call_sync(&ctx, || Ok::<_, ToolError>(score_of(pick))).to_json()
}

#[test]
fn non_finite_floats_are_serialization_errors_with_the_pointer_as_in_the_pipeline_complete_or_task() {
    runtime().block_on(async {
        for tasks in [false, true] {
            let mut wire = Wire::connect(bound(probe(), None), tasks).await;
            for field in ["score", "confidence"] {
                for value in ["nan", "inf", "-inf"] {
                    let pick = Pick { field: field.to_owned(), value: value.to_owned() };
                    let result = wire.outcome("score", json!({ "field": field, "value": value })).await;
                    let error = error_body(&result);
                    assert_eq!(error["code"], "serialization_error", "{field}={value} tasks={tasks}: {result}");
                    let message = error["message"].as_str().expect("a message");
                    assert!(message.contains(&format!("`/{field}`")), "no pointer: {message}");
                    // Identical to the in-process pipeline on the same value.
                    let expected = pipeline_says(&pick);
                    assert_eq!(result["content"], expected["content"], "{field}={value} tasks={tasks}");
                    assert_eq!(result["_meta"], expected["_meta"], "{field}={value} tasks={tasks}");
                }
                // Control: a finite value passes, on the same path.
                let result = wire.outcome("score", json!({ "field": field, "value": "0.25" })).await;
                assert_eq!(result["isError"], false, "{result}");
                assert_no_markers(&result);
                let pick = Pick { field: field.to_owned(), value: "0.25".to_owned() };
                assert_eq!(result["structuredContent"], pipeline_says(&pick)["structuredContent"]);
            }
        }
    });
}

#[test]
fn rmcps_own_json_is_refused_loudly_not_trusted() {
    runtime().block_on(async {
        for tasks in [false, true] {
            let mut wire = Wire::connect(bound(probe(), None), tasks).await;
            // The dangerous case: NaN in an `Option<f64>` arrives as `null`, which the
            // contract would accept. It must not leave as a success.
            let nan = wire.outcome("rmcp_score", json!({ "field": "confidence", "value": "nan" })).await;
            let error = error_body(&nan);
            assert_eq!(error["code"], "serialization_error", "{nan}");
            assert!(error["message"].as_str().unwrap_or_default().contains("contract_runtime::rmcp::Json"), "{nan}");
            // Even a finite value is refused: the check did not run, so nothing is proven.
            let finite = wire.outcome("rmcp_score", json!({ "field": "confidence", "value": "0.5" })).await;
            assert_eq!(error_body(&finite)["code"], "serialization_error", "{finite}");
            // Control: the same value through our Json passes.
            let ours = wire.outcome("score", json!({ "field": "confidence", "value": "0.5" })).await;
            assert_eq!(ours["isError"], false, "{ours}");
        }
    });
}

#[test]
fn errors_are_classified_by_type_argument_failures_handler_errors_and_tool_errors() {
    runtime().block_on(async {
        for tasks in [false, true] {
            let mut wire = Wire::connect(bound(probe(), None), tasks).await;
            // rmcp's own argument deserialization refuses 11 (the inputSchema allows it).
            // Inside a task it settles the task as `failed`; the adapter shows it as the
            // same `isError` result a complete call gives.
            let refused = wire.outcome("small", json!({ "n": 11 })).await;
            assert_eq!(error_body(&refused)["code"], "invalid_arguments", "tasks={tasks}: {refused}");
            // Control: 3 passes both checks.
            let ok = wire.outcome("small", json!({ "n": 3 })).await;
            assert_eq!(ok["structuredContent"], json!({ "score": 3.0, "confidence": null }), "{ok}");

            let typed = wire.outcome("typed", json!({})).await;
            let error = error_body(&typed);
            assert_eq!(error["code"], "unavailable", "{typed}");
            assert_eq!(error["retryable"], true, "the flag survives: {typed}");
            assert_eq!(error["message"], "the scorer is down", "{typed}");
            assert_no_markers(&typed);
        }
        // A handler's own invalid-params protocol error is `invalid_arguments`, sanitized.
        let mut wire = Wire::connect(bound(probe(), None), false).await;
        let bad = wire.call("bad_params", json!({})).await;
        let error = error_body(&bad);
        assert_eq!(error["code"], "invalid_arguments", "{bad}");
        assert!(!bad.to_string().contains("ghp_0123456789"), "the token leaked: {bad}");
    });
}

#[test]
fn a_cache_hit_under_a_task_request_comes_back_as_a_task() {
    runtime().block_on(async {
        let cache = Arc::new(InMemoryCache::new());
        let probe = probe();
        let runs = Arc::clone(&probe.runs);
        let server = bound(probe, Some(Pipeline::builder().cache(cache.clone()).build()));
        let arguments = json!({ "field": "score", "value": "0.75" });

        let mut tasks = Wire::connect(server.clone(), true).await;
        let first = tasks.outcome("score", arguments.clone()).await;
        assert_eq!(first["isError"], false, "{first}");
        assert_eq!(runs.load(Ordering::SeqCst), 1);

        // The hit: a task again, whose result is the cached one; the handler does not run.
        let created = tasks.call("score", arguments.clone()).await;
        assert_eq!(created["resultType"], "task", "{created}");
        let hit = tasks.outcome("score", arguments.clone()).await;
        assert_eq!(hit["structuredContent"], first["structuredContent"], "{hit}");
        assert_eq!(runs.load(Ordering::SeqCst), 1, "a hit ran the handler");
        assert!(cache.stats().hits >= 2, "{:?}", cache.stats());

        // Control: a client without the tasks extension gets the hit as a complete result.
        let mut plain = Wire::connect(server, false).await;
        let complete = plain.call("score", arguments).await;
        assert!(complete.get("taskId").is_none(), "{complete}");
        assert_eq!(complete["structuredContent"], first["structuredContent"], "{complete}");
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn a_cache_hit_is_a_task_only_for_a_tool_the_handler_answers_with_a_task() {
    runtime().block_on(async {
        let cache = Arc::new(InMemoryCache::new());
        let mut probe = probe();
        // `score` is the long-running tool; `small` answers completely, whoever asks.
        probe.task_tools = Some(&["score"]);
        let runs = Arc::clone(&probe.runs);
        let server = bound(probe, Some(Pipeline::builder().cache(cache.clone()).build()));
        let mut tasks = Wire::connect(server.clone(), true).await;

        // A tool that answers completely: the call and its cache hit are both complete
        // for a client that declared tasks, on a server that offers tasks.
        let first = tasks.call("small", json!({ "n": 3 })).await;
        assert!(first.get("taskId").is_none(), "{first}");
        assert_eq!(first["structuredContent"], json!({ "score": 3.0, "confidence": null }), "{first}");
        let hits = cache.stats().hits;
        let hit = tasks.call("small", json!({ "n": 3 })).await;
        assert!(hit.get("taskId").is_none(), "a complete answer was turned into a task: {hit}");
        assert_ne!(hit["resultType"], "task", "{hit}");
        assert_eq!(hit["structuredContent"], first["structuredContent"], "{hit}");
        assert_eq!(cache.stats().hits, hits + 1, "served from the cache: {:?}", cache.stats());

        // The task tool: once the handler has answered it with a task, its hit is a task.
        let arguments = json!({ "field": "score", "value": "0.75" });
        let computed = tasks.outcome("score", arguments.clone()).await;
        let before = runs.load(Ordering::SeqCst);
        let created = tasks.call("score", arguments.clone()).await;
        assert_eq!(created["resultType"], "task", "{created}");
        let from_cache = tasks.outcome("score", arguments.clone()).await;
        assert_eq!(from_cache["structuredContent"], computed["structuredContent"], "{from_cache}");
        assert_eq!(runs.load(Ordering::SeqCst), before, "a hit ran the handler");

        // Control: a client without the extension gets both hits complete.
        let mut plain = Wire::connect(server, false).await;
        for (tool, args) in [("small", json!({ "n": 3 })), ("score", arguments)] {
            let complete = plain.call(tool, args).await;
            assert!(complete.get("taskId").is_none(), "{tool}: {complete}");
            assert_eq!(complete["isError"], false, "{tool}: {complete}");
        }
        assert_eq!(runs.load(Ordering::SeqCst), before, "a hit ran the handler");
    });
}

#[test]
fn a_cache_hit_is_a_task_only_for_a_protocol_version_the_handler_answers_with_a_task() {
    runtime().block_on(async {
        let cache = Arc::new(InMemoryCache::new());
        let mut probe = probe();
        // Tasks only for 2026-07-28 clients; a 2025-11-25 client gets complete results
        // even when it declared the extension.
        probe.tasks_since = Some(MODERN);
        let runs = Arc::clone(&probe.runs);
        let server = bound(probe, Some(Pipeline::builder().cache(cache.clone()).build()));
        let arguments = json!({ "field": "score", "value": "0.75" });

        let mut modern = Wire::modern(server.clone(), true);
        let created = modern.call("score", arguments.clone()).await;
        assert_eq!(created["resultType"], "task", "{created}");
        let computed = modern.outcome("score", arguments.clone()).await;
        assert_eq!(computed["isError"], false, "{computed}");
        let before = runs.load(Ordering::SeqCst);

        // The hit for a 2025-11-25 client that declared tasks: complete, as the handler
        // answers that client, and served from the cache.
        let hits = cache.stats().hits;
        let mut legacy = Wire::connect(server.clone(), true).await;
        let complete = legacy.call("score", arguments.clone()).await;
        assert!(complete.get("taskId").is_none(), "a legacy client got a task from the cache: {complete}");
        assert_ne!(complete["resultType"], "task", "{complete}");
        assert_eq!(complete["structuredContent"], computed["structuredContent"], "{complete}");
        assert_eq!(cache.stats().hits, hits + 1, "served from the cache: {:?}", cache.stats());
        assert_eq!(runs.load(Ordering::SeqCst), before, "a hit ran the handler");

        // Control: the hit for a 2026-07-28 client that declared tasks is a task.
        let again = modern.call("score", arguments.clone()).await;
        assert_eq!(again["resultType"], "task", "{again}");
        let from_cache = modern.outcome("score", arguments).await;
        assert_eq!(from_cache["structuredContent"], computed["structuredContent"], "{from_cache}");
        assert_eq!(runs.load(Ordering::SeqCst), before, "a hit ran the handler");
    });
}

#[test]
fn an_input_required_call_passes_and_its_retry_is_enforced_and_never_cached() {
    runtime().block_on(async {
        let cache = Arc::new(InMemoryCache::new());
        let server = bound(probe(), Some(Pipeline::builder().cache(cache.clone()).build()));
        let mut wire = Wire::modern(server, false);
        for value in ["nan", "0.5"] {
            let arguments = json!({ "field": "confidence", "value": value });
            // The first round asks for input: no output yet, nothing to enforce.
            let asked = wire.call("confirm", arguments.clone()).await;
            assert_eq!(asked["resultType"], "input_required", "{asked}");
            assert_eq!(asked["requestState"], "confirmed", "{asked}");
            assert_no_markers(&asked);
            // The retry completes, and is enforced like any call.
            let params =
                json!({ "name": "confirm", "arguments": arguments, "requestState": "confirmed", "inputResponses": {} });
            let done = wire.request("tools/call", params).await["result"].clone();
            assert_no_markers(&done);
            if value == "nan" {
                assert_eq!(error_body(&done)["code"], "serialization_error", "{done}");
            } else {
                assert_eq!(done["isError"], false, "{done}");
                assert_eq!(done["structuredContent"], json!({ "score": 1.0, "confidence": 0.5 }), "{done}");
            }
        }
        // A retried call depends on more than its arguments: it never enters the cache.
        assert_eq!(cache.len(), 0, "{:?}", cache.stats());
        // Control: a plain call on the same server is admitted.
        let plain = wire.call("score", json!({ "field": "confidence", "value": "0.5" })).await;
        assert_eq!(plain["isError"], false, "{plain}");
        assert_eq!(cache.len(), 1, "{:?}", cache.stats());
    });
}

#[test]
fn a_task_result_the_adapter_did_not_see_created_is_withheld() {
    runtime().block_on(async {
        let probe = probe();
        let store = probe.tasks.clone();
        let mut wire = Wire::connect(bound(probe, None), true).await;
        // A task made behind the adapter's back (not through tools/call), holding a
        // result that breaks every contract and names a secret.
        let smuggled = store.spawn(TaskOptions::new(), |_| {
            Box::pin(async { Ok(rmcp::model::CallToolResult::structured(json!({ "score": "password=hunter2" }))) })
        });
        let id = smuggled.task_id;
        let mut task = Value::Null;
        for _ in 0..2000 {
            task = wire.request("tasks/get", json!({ "taskId": id })).await["result"].clone();
            if task["status"] != "working" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(task["status"], "completed", "{task}");
        let error = error_body(&task["result"]);
        assert_eq!(error["code"], "output_contract_violation", "{task}");
        assert!(error["message"].as_str().unwrap_or_default().contains("withheld"), "{task}");
        assert!(!task.to_string().contains("hunter2"), "{task}");
        // Control: a task made through tools/call on the same store is served, enforced.
        let served = wire.outcome("score", json!({ "field": "score", "value": "2" })).await;
        assert_eq!(served["structuredContent"], json!({ "score": 2.0, "confidence": 0.5 }), "{served}");
    });
}
