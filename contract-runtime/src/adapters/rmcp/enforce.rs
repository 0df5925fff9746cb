//! The enforcing half of [`ContractedServer`](super::ContractedServer): a private
//! [`ServerHandler`] that rmcp's own dispatch drives for `tools/list`, `tools/call` and
//! the `tasks/*` requests, so the protocol checks rmcp makes around them stay rmcp's.
//! It overrides only those methods; the service never routes another request to it.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::future::Future as _;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock, CreateTaskResult,
    DetailedTask, GetTaskParams, GetTaskResult, JsonObject, ListToolsResult, MetaObject, PaginatedRequestParams,
    ResultType, ServerConfig, TaskPayload, Tool, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::task_manager::{TaskManager, TaskOptions};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{json, Value};

use super::json::{error_from_marker, TextMark, CHECKED_KEY, ERROR_KEY};
use super::server_info;
use crate::contract::OutputContract;
use crate::serve::pipeline::{CallContext, Pipeline};
use crate::serve::wire::{
    advertised_output_schema, contract_meta, result_meta, unqualified_meta, ErrorCode, ProtocolVersion, ToolCallResult,
    ToolError, META_KEY,
};

/// The prefix of every `_meta` key the adapter writes.
const OWN_NAMESPACE: &str = "tool-contracts.dev/";

/// How many task-augmented calls the adapter remembers; the oldest is forgotten first,
/// and a task it no longer knows has its result withheld (fail closed).
const TASK_MEMORY: usize = 16_384;

/// Compiled `inputSchema` validators, by tool name, with the schema they came from.
type InputCache = Mutex<HashMap<String, (Arc<JsonObject>, Arc<jsonschema::Validator>)>>;

/// Advertised input schemas, by tool name, with the schema they came from.
type PortableCache = Mutex<HashMap<String, (Arc<JsonObject>, Arc<JsonObject>)>>;
/// Advertised output schemas, by contract (its address: contracts live for the whole
/// program and never change) and whether the peer needs an object root.
type OutputCache = Mutex<HashMap<(usize, bool), Option<Arc<JsonObject>>>>;

pub(super) struct Shared {
    /// Contract of each contracted tool, by tool name; written when a contract is bound
    /// at run time.
    contracts: RwLock<BTreeMap<String, &'static OutputContract>>,
    pub(super) pipeline: Pipeline,
    inputs: InputCache,
    /// Advertised (portable) input schemas, by tool name, with the schema they came from.
    portable: PortableCache,
    /// Advertised output schemas: streamable HTTP asks for the tool on every 2026-07-28
    /// call, and building the schema is most of what that costs.
    outputs: OutputCache,
    /// Tasks the handler created for tools, by task id.
    tasks: Mutex<TaskBook>,
    /// Tasks made by the adapter itself, for cache hits a task-capable client asked for.
    hits: TaskManager,
    /// Tools the handler has answered with a task, each with the protocol versions of
    /// the clients it did so for: a cache hit for a client on one of those versions that
    /// declared tasks is served as one.
    task_tools: Mutex<HashMap<String, std::collections::HashSet<ProtocolVersion>>>,
    /// The inner handler's `Implementation` (`get_info().server_info`) as JSON, read on
    /// first use: what results carry under `io.modelcontextprotocol/serverInfo`.
    server_info: OnceLock<Value>,
}

impl Shared {
    pub(super) fn new(contracts: BTreeMap<String, &'static OutputContract>, pipeline: Pipeline) -> Self {
        Self {
            contracts: RwLock::new(contracts),
            pipeline,
            inputs: Mutex::new(HashMap::new()),
            portable: Mutex::new(HashMap::new()),
            outputs: Mutex::new(HashMap::new()),
            tasks: Mutex::new(TaskBook::default()),
            hits: TaskManager::new(),
            task_tools: Mutex::new(HashMap::new()),
            server_info: OnceLock::new(),
        }
    }

    /// The contract of each contracted tool, by tool name.
    pub(super) fn contracts(&self) -> RwLockReadGuard<'_, BTreeMap<String, &'static OutputContract>> {
        self.contracts.read().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn contracts_mut(&self) -> RwLockWriteGuard<'_, BTreeMap<String, &'static OutputContract>> {
        self.contracts.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What the adapter knows of a task the handler created.
struct TaskRecord {
    /// `None` for an uncontracted tool.
    contract: Option<&'static OutputContract>,
    ctx: CallContext,
    /// The enforced result, once the task completed: every poll returns the same.
    enforced: Option<JsonObject>,
}

#[derive(Default)]
struct TaskBook {
    records: HashMap<String, TaskRecord>,
    order: VecDeque<String>,
}

impl TaskBook {
    fn insert(&mut self, id: String, record: TaskRecord) {
        while self.order.len() >= TASK_MEMORY {
            if let Some(old) = self.order.pop_front() {
                self.records.remove(&old);
            }
        }
        if self.records.insert(id.clone(), record).is_none() {
            self.order.push_back(id);
        }
    }
}

pub(super) struct Enforcer<H> {
    pub(super) inner: Arc<H>,
    pub(super) shared: Arc<Shared>,
}

impl<H> Clone for Enforcer<H> {
    fn clone(&self) -> Self {
        Self { inner: Arc::clone(&self.inner), shared: Arc::clone(&self.shared) }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<H: ServerHandler> Enforcer<H> {
    fn contract(&self, tool: &str) -> Option<&'static OutputContract> {
        self.shared.contracts().get(tool).copied()
    }

    /// The server's identity for the results of a peer on `protocol`, when that peer's
    /// revision puts it in every result's `_meta`.
    fn server_info(&self, protocol: &ProtocolVersion) -> Option<&Value> {
        if !server_info::wanted(protocol) {
            return None;
        }
        let info = self
            .shared
            .server_info
            .get_or_init(|| serde_json::to_value(self.inner.get_info().server_info).unwrap_or(Value::Null));
        info.is_object().then_some(info)
    }

    /// `tool` as a peer on `protocol` sees it in `tools/list`.
    fn advertise(&self, mut tool: Tool, protocol: &ProtocolVersion) -> Tool {
        tool.input_schema = self.portable_input(&tool);
        let mut meta = tool.meta.take().unwrap_or_default();
        if let Some(contract) = self.contract(&tool.name) {
            tool.output_schema = self.advertised_output(contract, protocol);
            meta.0.insert(META_KEY.to_owned(), contract_meta(contract));
        } else {
            tool.output_schema = None;
            meta.0.insert(META_KEY.to_owned(), unqualified_meta());
        }
        tool.meta = Some(meta);
        tool
    }

    /// `contract`'s output schema as a peer on `protocol` sees it, made once per contract
    /// and root shape.
    fn advertised_output(
        &self,
        contract: &'static OutputContract,
        protocol: &ProtocolVersion,
    ) -> Option<Arc<JsonObject>> {
        let key = (std::ptr::from_ref(contract) as usize, protocol.needs_object_root());
        let mut outputs = lock(&self.shared.outputs);
        outputs
            .entry(key)
            .or_insert_with(|| match advertised_output_schema(contract, protocol) {
                Value::Object(schema) => Some(Arc::new(schema)),
                // A contract schema is always an object; never advertise anything else.
                _ => None,
            })
            .clone()
    }

    /// `tool`'s input schema as advertised. Input schemas come from rmcp's own schemars
    /// settings; they are advertised without the non-standard formats strict clients
    /// warn about, as contract schemas are. Made once per schema: streamable HTTP asks
    /// for the tool on every call.
    fn portable_input(&self, tool: &Tool) -> Arc<JsonObject> {
        let mut portable = lock(&self.shared.portable);
        if let Some((source, made)) = portable.get(tool.name.as_ref())
            && Arc::ptr_eq(source, &tool.input_schema)
        {
            return Arc::clone(made);
        }
        let mut input = Value::Object(JsonObject::clone(&tool.input_schema));
        crate::contract::schema::make_portable(&mut input);
        let made = match input {
            Value::Object(input) if input != *tool.input_schema => Arc::new(input),
            _ => Arc::clone(&tool.input_schema),
        };
        portable.insert(tool.name.to_string(), (Arc::clone(&tool.input_schema), Arc::clone(&made)));
        made
    }

    /// The compiled validator of `tool`'s input schema.
    fn input_validator(&self, tool: &Tool) -> Result<Arc<jsonschema::Validator>, String> {
        let mut inputs = lock(&self.shared.inputs);
        if let Some((schema, validator)) = inputs.get(tool.name.as_ref())
            && (Arc::ptr_eq(schema, &tool.input_schema) || **schema == *tool.input_schema)
        {
            return Ok(Arc::clone(validator));
        }
        let schema = Value::Object(JsonObject::clone(&tool.input_schema));
        let validator = Arc::new(jsonschema::validator_for(&schema).map_err(|err| err.to_string())?);
        inputs.insert(tool.name.to_string(), (Arc::clone(&tool.input_schema), Arc::clone(&validator)));
        Ok(validator)
    }

    /// Checks the arguments of a call against the tool's `inputSchema`; the message
    /// names each failing argument and keyword, never a value nor a name the schema
    /// does not declare.
    fn check_arguments(&self, tool: &Tool, arguments: &Value) -> Result<(), String> {
        // A broken input schema is the server's problem, not the caller's; let the
        // handler's own deserialization decide.
        let Ok(validator) = self.input_validator(tool) else { return Ok(()) };
        if validator.is_valid(arguments) {
            return Ok(());
        }
        let schema = Value::Object(JsonObject::clone(&tool.input_schema));
        crate::contract::arguments::message(&schema, &validator, arguments).map_or(Ok(()), Err)
    }

    /// Whether a cache hit should be served as a task to this request: the client
    /// declared tasks, and the handler has answered this tool with a task for a client on
    /// the same protocol version. A tool the handler answers completely keeps its complete
    /// answer, whatever the client declared or the server offers; so does a task tool
    /// before its first task, and a task tool for a protocol version the handler answers
    /// completely.
    fn hit_as_task(&self, ctx: &CallContext, context: &RequestContext<RoleServer>) -> bool {
        context.client_capabilities().is_some_and(|caps| caps.supports_tasks())
            && lock(&self.shared.task_tools).get(ctx.tool()).is_some_and(|versions| versions.contains(ctx.protocol()))
    }

    async fn contracted_call(
        &self,
        contract: &'static OutputContract,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
        ctx: CallContext,
    ) -> Result<CallToolResponse, ErrorData> {
        // Whether the stdio lane writes this call's answer.
        #[cfg(feature = "stdio")]
        let lane = context.extensions.get::<super::lane::Vouch>().is_some();
        // A hit is served without running the handler, as `Pipeline::call` does, in the
        // shape the client would have got from the handler.
        if let Some(hit) = self.shared.pipeline.cached(&ctx, contract) {
            if self.hit_as_task(&ctx, &context) {
                let result = to_rmcp(hit);
                let task = self.shared.hits.spawn(TaskOptions::new(), move |_| Box::pin(async move { Ok(result) }));
                return Ok(CallToolResponse::Task(CreateTaskResult::new(task)));
            }
            #[cfg(feature = "stdio")]
            if lane {
                return Ok(to_rmcp_text_only(hit).into());
            }
            return Ok(to_rmcp(hit).into());
        }
        // The stdio lane writes this call's answer: `Json` may hand over its text alone,
        // checked while written, and the tree is never built.
        #[cfg(feature = "stdio")]
        // A contract with completeness invariants reads them from the tree, which `Json`
        // then builds in the same pass as the text, so it keeps that path.
        let lane = (lane
            && self.shared.pipeline.serves_checked_text()
            && contract.completeness_pointers().is_empty()
            && contract.completeness_counts().is_empty())
        .then(|| super::json::TextLane {
            contract,
            limits: *self.shared.pipeline.limits(),
            checked: std::sync::Arc::default(),
        });
        // Pinned in place rather than boxed: the handler's future can be large, and a
        // box would cost an allocation and a copy of it on every call.
        let mut call = std::pin::pin!(self.inner.call_tool(request, context));
        let outcome = std::future::poll_fn(|cx| {
            let poll = || {
                #[cfg(feature = "stdio")]
                if let Some(lane) = &lane {
                    return super::json::TEXT_LANE.sync_scope(lane.clone(), || call.as_mut().poll(cx));
                }
                call.as_mut().poll(cx)
            };
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(poll)) {
                Ok(std::task::Poll::Pending) => std::task::Poll::Pending,
                Ok(std::task::Poll::Ready(output)) => std::task::Poll::Ready(Ok(output)),
                Err(panic) => std::task::Poll::Ready(Err(panic)),
            }
        })
        .await;
        let response = match outcome {
            Ok(Ok(response)) => response,
            Ok(Err(err)) => return Ok(self.shared.fail(ctx.tool(), Some(contract), &handler_error(&err)).into()),
            Err(_) => {
                crate::serve::observe::panicked(ctx.tool(), Some(contract));
                return Ok(self.shared.fail(ctx.tool(), Some(contract), &panicked()).into());
            }
        };
        match response {
            CallToolResponse::Complete(result) => {
                #[cfg(feature = "stdio")]
                let checked = lane.and_then(|lane| *lane.checked.lock().unwrap_or_else(PoisonError::into_inner));
                #[cfg(not(feature = "stdio"))]
                let checked = None;
                Ok(self.enforce(contract, &ctx, result, checked).into())
            }
            CallToolResponse::Task(create) => {
                {
                    let mut task_tools = lock(&self.shared.task_tools);
                    if !task_tools.get(ctx.tool()).is_some_and(|versions| versions.contains(ctx.protocol())) {
                        task_tools.entry(ctx.tool().to_owned()).or_default().insert(ctx.protocol().clone());
                    }
                }
                let record = TaskRecord { contract: Some(contract), ctx, enforced: None };
                lock(&self.shared.tasks).insert(create.task.task_id.clone(), record);
                Ok(CallToolResponse::Task(create))
            }
            // An input request carries no output; the retried call that completes is
            // enforced like any other.
            other => Ok(other),
        }
    }

    /// The enforced form of a complete result the handler made for `contract`.
    fn enforce(
        &self,
        contract: &'static OutputContract,
        ctx: &CallContext,
        mut result: CallToolResult,
        checked: Option<TextMark>,
    ) -> CallToolResult {
        let mut meta = result.meta.take().unwrap_or_default();
        if let Some(error) = meta.0.remove(ERROR_KEY).as_ref().and_then(error_from_marker) {
            return self.shared.fail(ctx.tool(), Some(contract), &error);
        }
        if result.is_error == Some(true) {
            return self.shared.fail(ctx.tool(), Some(contract), &text_error(&result, meta.0.is_empty()));
        }
        #[cfg(feature = "stdio")]
        if let (Some(mark), None) = (checked, &result.structured_content) {
            // This call's `Json` checked its text against the contract while writing it,
            // and this is that very text: it goes on without a tree.
            if mark.text_of(&result).is_some() && meta.0.remove(CHECKED_KEY).is_some() {
                let text = first_text(result.content).unwrap_or_default();
                let processed = self.shared.pipeline.process_checked_text(ctx, contract, text);
                return with_handler_meta(to_rmcp_text_only(processed), meta);
            }
        }
        #[cfg(not(feature = "stdio"))]
        let _ = checked;
        #[cfg(feature = "stdio")]
        if result.structured_content.is_none() && meta.0.contains_key(CHECKED_KEY) {
            // This call's `Json` handed over its text alone, but the result came back
            // another way than the call's own answer (a task the handler made holds it)
            // and no mark names its text: its tree is read from the text and the
            // pipeline judges it in full, as it judges a result carrying its tree.
            if let [ContentBlock::Text(block)] = result.content.as_slice()
                && let Ok(value) = serde_json::from_str::<Value>(&block.text)
            {
                meta.0.remove(CHECKED_KEY);
                let text = first_text(result.content).unwrap_or_default();
                let processed = self.shared.pipeline.process_serialized(ctx, contract, value, text);
                return with_handler_meta(to_rmcp(processed), meta);
            }
        }
        let Some(value) = result.structured_content.take() else {
            let error = ToolError::new(
                ErrorCode::OutputContractViolation,
                format!(
                    "the tool returned no structuredContent, but its output contract {}@{} requires one; \
                     return `contract_runtime::rmcp::Json<T>` from the handler",
                    contract.name(),
                    contract.version()
                ),
            );
            return self.shared.fail(ctx.tool(), Some(contract), &error);
        };
        if meta.0.remove(CHECKED_KEY).is_none() {
            // Made by rmcp's `Json` or by hand: converted by someone who writes NaN and
            // infinity as `null`, so a passing value proves nothing. Refuse loudly.
            let error = ToolError::new(
                ErrorCode::SerializationError,
                format!(
                    "the tool's structured result was not made by `contract_runtime::rmcp::Json`, so it cannot be \
                     checked for NaN or infinity (rmcp's `Json` writes them as null); return \
                     `contract_runtime::rmcp::Json<T>` for the output contract {}@{}",
                    contract.name(),
                    contract.version()
                ),
            );
            return self.shared.fail(ctx.tool(), Some(contract), &error);
        }
        let processed = match first_text(result.content) {
            Some(text) => self.shared.pipeline.process_serialized(ctx, contract, value, text),
            None => self.shared.pipeline.process_value(ctx, contract, value),
        };
        with_handler_meta(to_rmcp(processed), meta)
    }

    /// The enforced result of a completed task, or the withheld one when the adapter
    /// never saw the task created (or forgot it).
    fn enforce_task_result(&self, task_id: &str, result: JsonObject) -> JsonObject {
        // The lock is not held while the pipeline runs: a cache may do I/O.
        let known = lock(&self.shared.tasks)
            .records
            .get(task_id)
            .map(|record| (record.contract, record.ctx.clone(), record.enforced.clone()));
        let Some((contract, ctx, enforced)) = known else {
            let error = ToolError::new(
                ErrorCode::OutputContractViolation,
                "the task's result is withheld: the output-contract adapter did not see this task created by a \
                 tools/call (or has forgotten it), so it cannot tell which contract the result must keep",
            );
            // The tool is unknown too: the event names none.
            return to_object(&self.shared.fail("", None, &error));
        };
        if let Some(enforced) = enforced {
            return enforced;
        }
        let enforced = match (contract, serde_json::from_value::<CallToolResult>(Value::Object(result))) {
            (Some(contract), Ok(result)) => self.enforce(contract, &ctx, result, None),
            (None, Ok(result)) => unqualified(result),
            (contract, Err(_)) => {
                let error = ToolError::new(
                    ErrorCode::OutputContractViolation,
                    "the task completed with something that is not a tools/call result",
                );
                self.shared.fail(ctx.tool(), contract, &error)
            }
        };
        let enforced = to_object(&enforced);
        if let Some(record) = lock(&self.shared.tasks).records.get_mut(task_id) {
            // The first enforced form wins, so every poll sees the same result.
            return record.enforced.get_or_insert(enforced).clone();
        }
        enforced
    }

    fn enforce_task(&self, mut result: GetTaskResult) -> GetTaskResult {
        let task_id = result.task.task.task_id.clone();
        match &mut result.task.payload {
            TaskPayload::Completed { result } => {
                let raw = std::mem::take(result);
                *result = self.enforce_task_result(&task_id, raw);
            }
            TaskPayload::Failed { error } => {
                // A contracted tool's failure reads as it would from a complete call: a
                // completed task whose result is the sanitized, classified `isError`,
                // made (and counted) once: every poll sees the same.
                let known = lock(&self.shared.tasks)
                    .records
                    .get(&task_id)
                    .and_then(|record| Some((record.contract?, record.ctx.tool().to_owned(), record.enforced.clone())));
                let parsed = serde_json::from_value::<ErrorData>(Value::Object(error.clone()));
                match (known, parsed) {
                    (Some((_, _, Some(failed))), _) => {
                        let task = result.task.task.clone();
                        result.task = DetailedTask::new(task, TaskPayload::Completed { result: failed });
                    }
                    (Some((contract, tool, None)), Ok(err)) => {
                        let failed = to_object(&self.shared.fail(&tool, Some(contract), &handler_error(&err)));
                        let failed = match lock(&self.shared.tasks).records.get_mut(&task_id) {
                            Some(record) => record.enforced.get_or_insert(failed).clone(),
                            None => failed,
                        };
                        let task = result.task.task.clone();
                        result.task = DetailedTask::new(task, TaskPayload::Completed { result: failed });
                    }
                    _ => sanitize_error_object(error),
                }
            }
            _ => {}
        }
        result
    }

    /// A `tools/call` as the adapter answers it, before the server's identity is added,
    /// and whether the adapter made the answer (every result it makes has one text block,
    /// the compact JSON of its `structuredContent` when it has one).
    async fn route_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(CallToolResponse, bool), ErrorData> {
        let Some(tool) = self.inner.get_tool(&request.name) else {
            // Unknown to us: the inner handler answers (a JSON-RPC error for an unknown tool).
            return Ok((self.inner.call_tool(request, context).await?, false));
        };
        let contract = self.contract(&tool.name);
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        if let Err(message) = self.check_arguments(&tool, &arguments) {
            let meta = json!({ META_KEY: contract.map_or_else(unqualified_meta, result_meta) });
            let refused = ToolCallResult::invalid_arguments(&message, Some(meta));
            self.shared.pipeline.counters().served(&tool.name, contract, &refused);
            return Ok((to_rmcp(refused).into(), true));
        }
        let Some(contract) = contract else {
            // Unqualified: served as the handler made it, marked as not validated.
            let response = self.inner.call_tool(request, context).await?;
            let response = match response {
                CallToolResponse::Complete(result) => unqualified(result).into(),
                CallToolResponse::Task(create) => {
                    let ctx = CallContext::new(tool.name.to_string(), arguments);
                    let record = TaskRecord { contract: None, ctx, enforced: None };
                    lock(&self.shared.tasks).insert(create.task.task_id.clone(), record);
                    CallToolResponse::Task(create)
                }
                other => other,
            };
            return Ok((response, false));
        };
        // A retried call answers an input request: its result depends on more than the
        // arguments, so it neither comes from nor goes to the cache.
        let continuation = request.input_responses.is_some() || request.request_state.is_some();
        let ctx = CallContext::new(tool.name.to_string(), arguments)
            .with_protocol(protocol_of(&context))
            .with_cacheable(!continuation);
        Ok((self.contracted_call(contract, request, context, ctx).await?, true))
    }
}

impl<H: ServerHandler> ServerHandler for Enforcer<H> {
    fn get_info(&self) -> ServerConfig {
        self.inner.get_info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [rmcp::model::ProtocolVersion]> {
        self.inner.supported_protocol_versions()
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        // Without a peer the natural (latest) form is the honest answer.
        self.inner.get_tool(name).map(|tool| self.advertise(tool, &ProtocolVersion::latest()))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let protocol = protocol_of(&context);
        let mut result = self.inner.list_tools(request, context).await?;
        result.tools =
            std::mem::take(&mut result.tools).into_iter().map(|tool| self.advertise(tool, &protocol)).collect();
        if let Some(info) = self.server_info(&protocol) {
            server_info::stamp(&mut result.meta, info);
        }
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let protocol = protocol_of(&context);
        #[cfg(feature = "stdio")]
        let vouch = context.extensions.get::<super::lane::Vouch>().cloned();
        let (mut response, made_here) = self.route_call(request, context).await?;
        if let Some(info) = self.server_info(&protocol) {
            server_info::stamp_response(&mut response, info);
        }
        #[cfg(feature = "stdio")]
        if let (true, Some(vouch), CallToolResponse::Complete(result)) = (made_here, vouch, &response) {
            vouch.vouch(result);
        }
        #[cfg(not(feature = "stdio"))]
        let _ = made_here;
        Ok(response)
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let protocol = protocol_of(&context);
        let mut result = if let Ok(task) = self.shared.hits.get_task(&request.task_id) {
            GetTaskResult::new(task)
        } else {
            let result = self.inner.get_task(request, context).await?;
            self.enforce_task(result)
        };
        if let Some(info) = self.server_info(&protocol) {
            server_info::stamp_task(&mut result, info);
        }
        Ok(result)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if self.shared.hits.get_task(&request.task_id).is_ok() {
            return self.shared.hits.update_task(&request.task_id, request.input_responses);
        }
        self.inner.update_task(request, context).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if self.shared.hits.get_task(&request.task_id).is_ok() {
            return self.shared.hits.cancel_task(&request.task_id);
        }
        self.inner.cancel_task(request, context).await
    }
}

/// A handler's protocol error, classified by its JSON-RPC code: rmcp reports arguments
/// it cannot deserialize as `invalid_params`, so that code means `invalid_arguments`;
/// anything else is a `tool_execution_error`. The message is sanitized later.
fn handler_error(err: &ErrorData) -> ToolError {
    let code = if err.code == rmcp::model::ErrorCode::INVALID_PARAMS {
        ErrorCode::InvalidArguments
    } else {
        ErrorCode::ToolExecutionError
    };
    ToolError::new(code, err.message.to_string())
}

fn panicked() -> ToolError {
    ToolError::execution("the tool failed unexpectedly (it panicked); the details are in the server log")
}

/// What rmcp 3.11's tool router writes before the message of an `invalid_params` error
/// from its own argument deserialization, when it turns that typed error into a plain
/// `isError` result (SEP-1303) — before any wrapper can see the type.
const RMCP_ARGUMENT_REFUSAL: &str = "failed to deserialize parameters:";

/// An `isError` result made without [`ToolError`]: its text is the message. The one
/// such result rmcp makes itself — the router's refusal of arguments its deserializer
/// rejects, whose type it erases — is recognised by its whole shape (no `_meta`, no
/// structured content, a single text block with rmcp's prefix) and is
/// `invalid_arguments`. Should rmcp change that shape, the result degrades to a
/// `tool_execution_error`, still an error, and `rmcp_adapter_paths.rs` fails.
fn text_error(result: &CallToolResult, without_meta: bool) -> ToolError {
    let text: Vec<&str> = result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.as_str())).collect();
    let text = text.join("\n");
    let rmcp_refusal = without_meta
        && result.structured_content.is_none()
        && result.content.len() == 1
        && text.starts_with(RMCP_ARGUMENT_REFUSAL);
    if rmcp_refusal {
        ToolError::new(ErrorCode::InvalidArguments, text)
    } else if text.is_empty() {
        ToolError::execution("the tool failed without saying why")
    } else {
        ToolError::execution(text)
    }
}

/// The text of the first block, taken without a copy.
fn first_text(content: Vec<ContentBlock>) -> Option<String> {
    match content.into_iter().next()? {
        ContentBlock::Text(text) => Some(text.text),
        _ => None,
    }
}

/// An uncontracted tool's result, with our markers removed and marked as not validated.
fn unqualified(mut result: CallToolResult) -> CallToolResult {
    let meta = result.meta.get_or_insert_with(MetaObject::default);
    meta.0.remove(CHECKED_KEY);
    meta.0.remove(ERROR_KEY);
    meta.0.insert(META_KEY.to_owned(), unqualified_meta());
    result
}

/// A failed task's JSON-RPC error with its message sanitized and its free-form `data`
/// dropped, as a failing `tools/call` would be.
fn sanitize_error_object(error: &mut JsonObject) {
    if let Some(Value::String(message)) = error.get_mut("message") {
        *message = crate::contract::redact::sanitize(message, &[]);
    }
    error.remove("data");
}

impl Shared {
    /// The `isError` result for `error`, sanitized, in the pipeline's envelope; counted
    /// and reported as the pipeline's own refusals are.
    fn fail(&self, tool: &str, contract: Option<&OutputContract>, error: &ToolError) -> CallToolResult {
        let result = ToolCallResult::from_error(error, contract);
        self.pipeline.counters().served(tool, contract, &result);
        to_rmcp(result)
    }
}

/// `enforced` with what else the handler put in `meta`: beside the adapter's keys, except
/// keys of the adapter's own namespace (the contract identity, the cache status), which
/// only the adapter writes; a refused result's `_meta` is refused with it.
fn with_handler_meta(mut enforced: CallToolResult, meta: MetaObject) -> CallToolResult {
    if enforced.is_error != Some(true) {
        let out = enforced.meta.get_or_insert_with(MetaObject::default);
        for (key, value) in meta.0 {
            if !key.starts_with(OWN_NAMESPACE) {
                out.0.entry(key).or_insert(value);
            }
        }
    }
    enforced
}

fn to_object(result: &CallToolResult) -> JsonObject {
    match serde_json::to_value(result) {
        Ok(Value::Object(object)) => object,
        _ => JsonObject::new(),
    }
}

/// The pipeline's result as an rmcp `CallToolResult`. The text block is the pipeline's
/// own serialization of the value it validated, reused as is.
pub(super) fn to_rmcp(result: ToolCallResult) -> CallToolResult {
    rmcp_result(result.into_parts(), false)
}

/// [`to_rmcp`] for an answer the stdio lane writes: a success whose tree no one built
/// carries none, its text standing for it (the lane copies the text as its
/// `structuredContent`).
#[cfg(feature = "stdio")]
fn to_rmcp_text_only(result: ToolCallResult) -> CallToolResult {
    let (parts, unparsed) = result.into_parts_unparsed();
    rmcp_result(parts, unparsed)
}

fn rmcp_result(parts: crate::serve::wire::ResultParts, text_only: bool) -> CallToolResult {
    let text = vec![ContentBlock::text(parts.text)];
    let mut out = match (parts.is_error, parts.structured_content) {
        (false, Some(value)) => {
            let mut out = CallToolResult::success(text);
            out.structured_content = Some(value);
            out
        }
        (false, None) if text_only => CallToolResult::success(text),
        _ => CallToolResult::error(text),
    };
    out.result_type = Some(ResultType::COMPLETE);
    out.meta = match parts.meta {
        Some(Value::Object(meta)) => Some(MetaObject(meta)),
        _ => None,
    };
    out
}

/// The negotiated protocol version of the peer behind `context`; the oldest
/// conservative reading (object roots only) when it is unknown.
fn protocol_of(context: &RequestContext<RoleServer>) -> ProtocolVersion {
    context.protocol_version().map_or_else(|| ProtocolVersion::new("2025-03-26"), |v| ProtocolVersion::new(v.as_str()))
}
