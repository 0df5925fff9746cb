//! Contracts in an [rmcp](https://docs.rs/rmcp) server (cargo feature `rmcp`).
//!
//! Wrap your [`ServerHandler`] in a [`ContractedServer`] and list the contracts of its
//! tools. Nothing else changes: tools stay `#[tool]` methods returning `Json<T>`.
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
//!   never as a success. Handler errors and panics become sanitized `isError`
//!   results. An unknown tool stays a JSON-RPC error, answered by the inner handler.
//!
//! # Examples
//!
//! ```no_run
//! use contract_runtime::rmcp::ContractedServer;
//! use contract_runtime::{contracts, ToolError, ToolOutput};
//! use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
//! use rmcp::{tool, tool_handler, tool_router, Json, ServerHandler, ServiceExt};
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
//! server.serve(rmcp::transport::stdio()).await?.waiting().await?;
//! # Ok(())
//! # }
//! ```

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex};

use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, CancelledNotificationParam,
    CompleteRequestParams, CompleteResult, ContentBlock, CustomNotification, CustomRequest, CustomResult,
    DiscoverResult, GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams, GetSkillResult, GetTaskParams,
    GetTaskResult, InitializeRequestParams, InitializeResult, JsonObject, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult, ListToolsResult, MetaObject,
    PaginatedRequestParams, ProgressNotificationParam, ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult,
    ReadResourceRequestParams, ReadResourceResponse, ResultType, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, Tool, UnsubscribeRequestParams, UpdateTaskParams,
};
// Logging (`logging/setLevel`) is deprecated upstream (SEP-2577) but still forwarded.
#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{json, Value};

use crate::contract::{ContractError, OutputContract};
use crate::pipeline::{CallContext, CatchUnwind, Pipeline};
use crate::set::ContractSet;
use crate::wire::{
    advertised_output_schema, contract_meta, unqualified_meta, ErrorCode, ProtocolVersion, ToolCallResult, ToolError,
    META_KEY,
};

/// The prefix rmcp gives its own argument deserialization failures.
const RMCP_ARGUMENT_ERROR: &str = "failed to deserialize parameters";

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

/// An rmcp [`ServerHandler`] whose tool results are enforced output contracts.
///
/// Every [`ServerHandler`] method is forwarded to the inner handler; `tools/list` and
/// `tools/call` are post-processed as the [module documentation](self) describes.
/// Cloning is cheap (the contracts, the pipeline and the compiled argument validators
/// are shared), so a clone can serve each streamable HTTP session.
pub struct ContractedServer<H> {
    inner: H,
    shared: Arc<Shared>,
}

struct Shared {
    /// Contract of each contracted tool, by tool name.
    contracts: BTreeMap<String, &'static OutputContract>,
    pipeline: Pipeline,
    /// Compiled `inputSchema` validators, by tool name, with the schema they came from.
    inputs: Mutex<HashMap<String, CompiledInput>>,
}

/// A tool's `inputSchema` and its compiled validator.
type CompiledInput = (Arc<JsonObject>, Arc<jsonschema::Validator>);

impl<H: Clone> Clone for ContractedServer<H> {
    fn clone(&self) -> Self {
        Self { inner: self.inner.clone(), shared: Arc::clone(&self.shared) }
    }
}

impl<H> fmt::Debug for ContractedServer<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ContractedServer")
            .field("contracts", &self.shared.contracts.keys().collect::<Vec<_>>())
            .field("pipeline", &self.shared.pipeline)
            .finish_non_exhaustive()
    }
}

impl<H: ServerHandler> ContractedServer<H> {
    /// Wraps `inner`, binding each contract to the tool of the same name (see
    /// [`contracts!`](crate::contracts)).
    ///
    /// # Errors
    ///
    /// Every contract that failed to build, every contract whose name the inner
    /// handler does not know as a tool (`get_tool`, which `#[tool_handler]`
    /// provides), and every tool named twice — all reported at once.
    pub fn new(inner: H, contracts: ContractSet) -> Result<Self, AdapterError> {
        let (errors, bindings) = contracts.into_parts();
        let bindings = bindings.into_iter().map(|b| Ok((b.tool().to_owned(), b.contract())));
        Self::with_tools(inner, errors.into_iter().map(Err).chain(bindings))
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
        let shared = Shared { contracts, pipeline: Pipeline::default(), inputs: Mutex::new(HashMap::new()) };
        Ok(Self { inner, shared: Arc::new(shared) })
    }

    /// Runs every contracted result through `pipeline` (its middleware and cache)
    /// instead of the default pipeline, which has neither.
    ///
    /// Validated results are admitted to the pipeline's cache (violations never are);
    /// a hit under the current contract identity is served without running the
    /// handler, and an entry written under another identity is evicted.
    #[must_use]
    pub fn with_pipeline(self, pipeline: Pipeline) -> Self {
        let shared = Shared { contracts: self.shared.contracts.clone(), pipeline, inputs: Mutex::new(HashMap::new()) };
        Self { inner: self.inner, shared: Arc::new(shared) }
    }

    /// The wrapped handler.
    #[must_use]
    pub fn inner(&self) -> &H {
        &self.inner
    }

    /// The contract bound to `tool`, if any.
    #[must_use]
    pub fn contract(&self, tool: &str) -> Option<&'static OutputContract> {
        self.shared.contracts.get(tool).copied()
    }

    /// `tool` as a peer on `protocol` sees it in `tools/list`.
    fn advertise(&self, mut tool: Tool, protocol: &ProtocolVersion) -> Tool {
        // Input schemas come from rmcp's own schemars settings; advertise them without
        // the non-standard formats strict clients warn about, as contract schemas are.
        let mut input = Value::Object(JsonObject::clone(&tool.input_schema));
        crate::schema::make_portable(&mut input);
        if let Value::Object(input) = input {
            if input != *tool.input_schema {
                tool.input_schema = Arc::new(input);
            }
        }
        let mut meta = tool.meta.take().unwrap_or_default();
        if let Some(contract) = self.contract(&tool.name) {
            let schema = match advertised_output_schema(contract, protocol) {
                Value::Object(schema) => Some(Arc::new(schema)),
                // A contract schema is always an object; never advertise anything else.
                _ => None,
            };
            tool.output_schema = schema;
            meta.0.insert(META_KEY.to_owned(), contract_meta(contract));
        } else {
            tool.output_schema = None;
            meta.0.insert(META_KEY.to_owned(), unqualified_meta());
        }
        tool.meta = Some(meta);
        tool
    }

    /// The compiled validator of `tool`'s input schema.
    fn input_validator(&self, tool: &Tool) -> Result<Arc<jsonschema::Validator>, String> {
        let mut inputs = self.shared.inputs.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((schema, validator)) = inputs.get(tool.name.as_ref()) {
            if Arc::ptr_eq(schema, &tool.input_schema) || **schema == *tool.input_schema {
                return Ok(Arc::clone(validator));
            }
        }
        let schema = Value::Object(JsonObject::clone(&tool.input_schema));
        let validator = Arc::new(jsonschema::validator_for(&schema).map_err(|err| err.to_string())?);
        inputs.insert(tool.name.to_string(), (Arc::clone(&tool.input_schema), Arc::clone(&validator)));
        Ok(validator)
    }

    /// Checks the arguments of a call against the tool's `inputSchema`; the message
    /// names each failing pointer and keyword, never the values.
    fn check_arguments(&self, tool: &Tool, arguments: &Value) -> Result<(), String> {
        // A broken input schema is the server's problem, not the caller's; let the
        // handler's own deserialization decide.
        let Ok(validator) = self.input_validator(tool) else { return Ok(()) };
        if validator.is_valid(arguments) {
            return Ok(());
        }
        let problems: Vec<String> = validator
            .iter_errors(arguments)
            .map(|err| {
                let at = err.instance_path().to_string();
                let path = err.schema_path().to_string();
                let keyword = keyword_of(&path);
                format!("`{}` breaks `{keyword}`", if at.is_empty() { "/" } else { at.as_str() })
            })
            .collect();
        Err(format!("the arguments do not match the tool's inputSchema: {}", problems.join(", ")))
    }

    async fn contracted_call(
        &self,
        contract: &'static OutputContract,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
        ctx: &CallContext,
    ) -> Result<CallToolResponse, ErrorData> {
        // A hit is served without running the handler, as `Pipeline::call` does.
        if let Some(hit) = self.shared.pipeline.cached(ctx, contract) {
            return Ok(to_rmcp(hit));
        }
        let outcome = CatchUnwind(Box::pin(self.inner.call_tool(request, context))).await;
        let result = match outcome {
            Ok(Ok(CallToolResponse::Complete(result))) => result,
            // Input requests and tasks carry no result yet; they pass through.
            Ok(Ok(other)) => return Ok(other),
            Ok(Err(err)) => {
                let message = err.message.to_string();
                let code = if message.starts_with(RMCP_ARGUMENT_ERROR) {
                    ErrorCode::InvalidArguments
                } else {
                    ErrorCode::ToolExecutionError
                };
                return Ok(failure(Some(contract), &ToolError::new(code, message)));
            }
            Err(_) => {
                let error = ToolError::execution(
                    "the tool failed unexpectedly (it panicked); the details are in the server log",
                );
                return Ok(failure(Some(contract), &error));
            }
        };
        if result.is_error == Some(true) {
            return Ok(failure(Some(contract), &handler_error(&result)));
        }
        let Some(value) = result.structured_content else {
            let error = ToolError::new(
                ErrorCode::OutputContractViolation,
                format!(
                    "the tool returned no structuredContent, but its output contract {}@{} requires one; \
                     return `Json<T>` from the handler",
                    contract.name(),
                    contract.version()
                ),
            );
            return Ok(failure(Some(contract), &error));
        };
        Ok(to_rmcp(self.shared.pipeline.process_value(ctx, contract, value)))
    }
}

/// The failed keyword at the end of a schema path such as `/properties/query/minLength`.
fn keyword_of(schema_path: &str) -> &str {
    schema_path.rsplit('/').next().filter(|k| !k.is_empty()).unwrap_or("schema")
}

/// A [`ToolError`] recovered from a handler's own `isError` result: the code and
/// retryable flag when the handler returned a [`ToolError`], else the text as a
/// `tool_execution_error`. The message is sanitized later.
fn handler_error(result: &CallToolResult) -> ToolError {
    let text: Vec<&str> = result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.as_str())).collect();
    let text = text.join("\n");
    if let Ok(Value::Object(body)) = serde_json::from_str::<Value>(&text) {
        if let Some(Value::Object(error)) = body.get("error") {
            let code = error.get("code").and_then(Value::as_str).and_then(ErrorCode::from_name);
            let message = error.get("message").and_then(Value::as_str);
            if let (Some(code), Some(message)) = (code, message) {
                let retryable = error.get("retryable").and_then(Value::as_bool).unwrap_or(false);
                return ToolError::new(code, message).with_retryable(retryable);
            }
        }
    }
    if text.is_empty() {
        ToolError::execution("the tool failed without saying why")
    } else {
        ToolError::execution(text)
    }
}

/// The `isError` result for `error`, sanitized, in the pipeline's envelope.
fn failure(contract: Option<&OutputContract>, error: &ToolError) -> CallToolResponse {
    to_rmcp(ToolCallResult::from_error(error, contract))
}

/// The pipeline's result as an rmcp `CallToolResult`. The text block is the pipeline's
/// own serialization of the value it validated, reused as is.
fn to_rmcp(result: ToolCallResult) -> CallToolResponse {
    let parts = result.into_parts();
    let text = vec![ContentBlock::text(parts.text)];
    let mut out = match (parts.is_error, parts.structured_content) {
        (false, Some(value)) => {
            let mut out = CallToolResult::success(text);
            out.structured_content = Some(value);
            out
        }
        _ => CallToolResult::error(text),
    };
    out.result_type = Some(ResultType::COMPLETE);
    out.meta = match parts.meta {
        Some(Value::Object(meta)) => Some(MetaObject(meta)),
        _ => None,
    };
    out.into()
}

/// A handler error as an rmcp result: the `isError` envelope the adapter reads back,
/// so the code and retryable flag survive the trip through rmcp.
impl IntoCallToolResult for ToolError {
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        Ok(failure(None, &self))
    }
}

/// The negotiated protocol version of the peer behind `context`; the oldest
/// conservative reading (object roots only) when it is unknown.
fn protocol_of(context: &RequestContext<RoleServer>) -> ProtocolVersion {
    context.protocol_version().map_or_else(|| ProtocolVersion::new("2025-03-26"), |v| ProtocolVersion::new(v.as_str()))
}

#[allow(deprecated)] // `subscribe`, `unsubscribe` and `set_level` are deprecated upstream yet still served.
impl<H: ServerHandler> ServerHandler for ContractedServer<H> {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = self.inner.get_tool(&request.name) else {
            // Unknown to us: the inner handler answers (a JSON-RPC error for an unknown tool).
            return self.inner.call_tool(request, context).await;
        };
        let contract = self.contract(&tool.name);
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        if let Err(message) = self.check_arguments(&tool, &arguments) {
            let meta = json!({ META_KEY: contract.map_or_else(unqualified_meta, contract_meta) });
            return Ok(to_rmcp(ToolCallResult::invalid_arguments(&message, Some(meta))));
        }
        let Some(contract) = contract else {
            // Unqualified: served as the handler made it, marked as not validated.
            let mut response = self.inner.call_tool(request, context).await?;
            if let CallToolResponse::Complete(result) = &mut response {
                result.meta.get_or_insert_with(MetaObject::default).0.insert(META_KEY.to_owned(), unqualified_meta());
            }
            return Ok(response);
        };
        let ctx = CallContext::new(tool.name.to_string(), arguments).with_protocol(protocol_of(&context));
        self.contracted_call(contract, request, context, &ctx).await
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
        Ok(result)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        // Without a peer the natural (latest) form is the honest answer.
        self.inner.get_tool(name).map(|tool| self.advertise(tool, &ProtocolVersion::latest()))
    }

    async fn ping(&self, context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        self.inner.ping(context).await
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        self.inner.initialize(request, context).await
    }

    fn negotiate_initialize(&self, request: &InitializeRequestParams) -> Result<InitializeResult, ErrorData> {
        self.inner.negotiate_initialize(request)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [rmcp::model::ProtocolVersion]> {
        self.inner.supported_protocol_versions()
    }

    async fn discover(&self, context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        self.inner.discover(context).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.inner.complete(request, context).await
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.set_level(request, context).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.inner.get_prompt(request, context).await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.inner.list_prompts(request, context).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.inner.list_resources(request, context).await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.inner.list_resource_templates(request, context).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.inner.read_resource(request, context).await
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        self.inner.accepted_subscription_filter(requested)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.inner.listen(context).await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.subscribe(request, context).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.unsubscribe(request, context).await
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        self.inner.on_custom_request(request, context).await
    }

    async fn on_cancelled(&self, notification: CancelledNotificationParam, context: NotificationContext<RoleServer>) {
        self.inner.on_cancelled(notification, context).await;
    }

    async fn on_progress(&self, notification: ProgressNotificationParam, context: NotificationContext<RoleServer>) {
        self.inner.on_progress(notification, context).await;
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.inner.on_initialized(context).await;
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.inner.on_roots_list_changed(context).await;
    }

    async fn on_custom_notification(&self, notification: CustomNotification, context: NotificationContext<RoleServer>) {
        self.inner.on_custom_notification(notification, context).await;
    }

    fn get_info(&self) -> ServerConfig {
        self.inner.get_info()
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.inner.get_task(request, context).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.update_task(request, context).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.cancel_task(request, context).await
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        self.inner.list_skills(request, context).await
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        self.inner.get_skill(request, context).await
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        self.inner.read_resource_directory(request, context).await
    }
}
