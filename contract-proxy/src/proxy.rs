//! The two halves: [`Proxy`], the server the downstream client talks to, which forwards
//! every request to the upstream `Peer<RoleClient>` (and enforces `tools/list`,
//! `tools/call` and the results of the tasks calls are answered with, on the way); and
//! [`Relay`], the client the upstream server talks to, which forwards the server's
//! requests (sampling, elicitation, roots) and notifications (progress, logging, list
//! changes, resource updates, task statuses, judged) back to the downstream peer.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};
use std::time::Duration;

#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities, ClientConfig,
    ClientNotification, ClientRequest, ClientResult, CompleteRequestParams, CompleteResult, CustomNotification,
    CustomRequest, CustomResult, DetailedTask, GetExtensions, GetPromptRequestParams, GetPromptResponse,
    GetSkillRequestParams, GetSkillResult, GetTaskParams, GetTaskResult, Implementation, InitializeRequestParams,
    InitializeResult, JsonObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListSkillsResult, ListToolsResult, NotificationMetaObject, PaginatedRequestParams, ProtocolVersion,
    ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult, ReadResourceRequestParams, ReadResourceResponse,
    Request, RequestNoParam, RequestOptionalParam, ServerConfig, ServerNotification, ServerRequest, ServerResult,
    SubscribeRequestParams, SubscriptionFilter, TaskPayload, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::model::{CancelledNotificationParam, ProgressToken};
use rmcp::service::{
    NotificationContext, Peer, PeerRequestOptions, RequestContext, RoleClient, RoleServer, Service, ServiceError,
    SubscriptionContext,
};
use rmcp::{ErrorData, ServerHandler};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use crate::policy::{error_result, Gate, Listing, Policy};
use contract_runtime::wire::ErrorCode;

/// What both halves share.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) policy: Arc<Policy>,
    /// The upstream connection, set once it is initialized.
    pub(crate) upstream: OnceLock<Peer<RoleClient>>,
    /// What the upstream answered `initialize` with; advertised downstream.
    pub(crate) info: OnceLock<InitializeResult>,
    /// The downstream clients that initialized, oldest first (closed ones are dropped
    /// as they are found).
    pub(crate) downstream: RwLock<Vec<Peer<RoleServer>>>,
    /// The latest upstream listing, judged.
    pub(crate) listing: tokio::sync::RwLock<Arc<Listing>>,
    /// How long one forwarded request may take.
    pub(crate) timeout: Duration,
    /// Each request in flight upstream, by the progress token rmcp gave it.
    pub(crate) progress: Mutex<HashMap<ProgressToken, Waiting>>,
    /// How many requests were forwarded: orders the ones in flight.
    pub(crate) forwarded: std::sync::atomic::AtomicU64,
    /// The tasks upstream `tools/call`s were answered with, by task id.
    pub(crate) tasks: Mutex<TaskBook>,
    /// Whether the downstream client declared tasks at `initialize`.
    pub(crate) downstream_tasks: AtomicBool,
}

/// How many tasks the proxy remembers; the oldest is forgotten first, and the result of
/// a task it no longer knows is withheld.
const TASK_MEMORY: usize = 16_384;

/// A request in flight upstream: whose it is, so that what the upstream sends while it
/// waits (progress, its own requests) reaches that client.
#[derive(Debug)]
pub(crate) struct Waiting {
    /// The progress token its client gave it (`None`: the client asked for no progress).
    theirs: Option<ProgressToken>,
    /// The client it came from (`None`: the proxy's own, such as a re-list).
    client: Option<Peer<RoleServer>>,
    /// When it was forwarded, in the order of `Shared::forwarded`.
    order: u64,
}

/// What the proxy knows of a task an upstream `tools/call` was answered with.
#[derive(Debug)]
struct TaskRecord {
    /// The client whose call created it: its status notifications go there.
    client: Option<Peer<RoleServer>>,
    tool: String,
    arguments: Value,
    /// The listing the call was judged with: its result is judged with the same.
    listing: Arc<Listing>,
    /// The judged result, once the task completed: every poll and notification sends it.
    judged: Option<JsonObject>,
}

/// The tasks the proxy has seen created, oldest first.
#[derive(Debug, Default)]
pub(crate) struct TaskBook {
    records: HashMap<String, TaskRecord>,
    order: VecDeque<String>,
}

impl TaskBook {
    fn insert(&mut self, id: String, record: TaskRecord) {
        if let Some(known) = self.records.get_mut(&id) {
            *known = record;
            return;
        }
        while self.order.len() >= TASK_MEMORY {
            if let Some(old) = self.order.pop_front() {
                self.records.remove(&old);
            }
        }
        self.records.insert(id.clone(), record);
        self.order.push_back(id);
    }
}

/// Forgets a request's progress token when its wait ends, however it ends.
struct InFlight<'a> {
    shared: &'a Shared,
    token: ProgressToken,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.shared.progress.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.token);
    }
}

impl Shared {
    /// The state of a proxy with `policy` that has no upstream session yet.
    pub(crate) fn fresh(policy: Arc<Policy>, timeout: Duration) -> Self {
        Self {
            policy,
            upstream: OnceLock::new(),
            info: OnceLock::new(),
            downstream: RwLock::new(Vec::new()),
            listing: tokio::sync::RwLock::new(Arc::new(Listing::default())),
            timeout,
            progress: Mutex::new(HashMap::new()),
            forwarded: std::sync::atomic::AtomicU64::new(0),
            tasks: Mutex::new(TaskBook::default()),
            downstream_tasks: AtomicBool::new(false),
        }
    }

    fn upstream(&self) -> Result<&Peer<RoleClient>, ErrorData> {
        self.upstream.get().ok_or_else(|| ErrorData::internal_error("the upstream server is not connected", None))
    }

    /// Whether the upstream session is of the 2026-07-28 revision or newer.
    fn modern_upstream(&self) -> bool {
        self.info.get().is_some_and(|info| info.protocol_version >= ProtocolVersion::V_2026_07_28)
    }

    pub(crate) fn has_tools(&self) -> bool {
        self.info.get().is_some_and(|info| info.capabilities.tools.is_some())
    }

    fn tasks(&self) -> std::sync::MutexGuard<'_, TaskBook> {
        self.tasks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Remembers the task a `tools/call` of `tool` was answered with: its result is
    /// judged when `tasks/get` or `notifications/tasks` brings it.
    pub(crate) fn record_task(
        &self,
        id: String,
        client: Option<Peer<RoleServer>>,
        tool: String,
        arguments: Value,
        listing: Arc<Listing>,
    ) {
        self.tasks().insert(id, TaskRecord { client, tool, arguments, listing, judged: None });
    }

    /// Judges a completed task's result (from `tasks/get` or `notifications/tasks`) as
    /// the tool's direct result would be. A task the proxy did not see created has its
    /// result withheld: which tool's contract it must keep is unknown.
    fn judge_task(&self, task: &mut DetailedTask) {
        let TaskPayload::Completed { result } = &mut task.payload else { return };
        let raw = std::mem::take(result);
        *result = self.judge_task_result(&task.task.task_id, raw);
    }

    /// The judged form of the result of task `id` (from `tasks/get`, `tasks/result` or
    /// `notifications/tasks`): judged once as the tool's direct result would be, and the
    /// same form every later time; withheld when the proxy did not see the task created.
    pub(crate) fn judge_task_result(&self, id: &str, result: JsonObject) -> JsonObject {
        let known = self.tasks().records.get(id).map(|record| {
            (record.tool.clone(), record.arguments.clone(), Arc::clone(&record.listing), record.judged.clone())
        });
        match known {
            None => {
                tracing::info!(task = %id, "task result withheld: its tools/call was not seen");
                let message = format!(
                    "the result of task `{id}` is withheld: the proxy did not see the tools/call that created it \
                     (or has forgotten it), so it cannot tell which tool's contract the result must keep"
                );
                as_object(error_result(ErrorCode::OutputContractViolation, &message, &[], None))
            }
            Some((_, _, _, Some(judged))) => judged,
            Some((tool, arguments, listing, None)) => {
                let judged = as_object(self.policy.judge(&listing, &tool, &arguments, Value::Object(result)));
                match self.tasks().records.get_mut(id) {
                    // The first judged form wins, so every poll sees the same result.
                    Some(record) => record.judged.get_or_insert(judged).clone(),
                    None => judged,
                }
            }
        }
    }

    /// Sends `request` upstream and waits for its answer, within the timeout and until
    /// the downstream client cancels it.
    async fn forward(
        &self,
        request: ClientRequest,
        context: Option<&RequestContext<RoleServer>>,
    ) -> Result<ServerResult, ErrorData> {
        let meta = context.map(|c| &c.meta);
        let method = request.method().to_owned();
        let mut options = PeerRequestOptions::with_timeout(self.timeout);
        if let Some(meta) = meta.filter(|m| !m.is_empty()) {
            options = options.with_meta(meta.clone());
        }
        let handle = self
            .upstream()?
            .send_request_with_option(request, options)
            .await
            .map_err(|err| upstream_error(&method, err))?;
        // rmcp gives every request a progress token of its own: the upstream's progress
        // reports are mapped back to the client's token (see `Relay::handle_notification`).
        let theirs = context.and_then(|c| c.meta.get_progress_token());
        let token = handle.progress_token.clone();
        let id = handle.id.clone();
        let order = self.forwarded.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let waiting = Waiting { theirs, client: context.map(|c| c.peer.clone()), order };
        self.progress.lock().unwrap_or_else(PoisonError::into_inner).insert(token.clone(), waiting);
        let _in_flight = InFlight { shared: self, token };
        let answer = handle.await_response();
        let result = match context {
            Some(context) => tokio::select! {
                result = answer => result,
                () = context.ct.cancelled() => {
                    let note = CancelledNotificationParam::new(Some(id), Some("the client cancelled the request".to_owned()));
                    let _ = self.upstream()?.notify_cancelled(note).await;
                    return Err(ErrorData::internal_error(format!("{method} was cancelled"), None));
                }
            },
            None => answer.await,
        };
        result.map_err(|err| upstream_error(&method, err))
    }

    /// Forwards `request` and reads its answer as `T`.
    async fn relay<T: DeserializeOwned>(
        &self,
        request: ClientRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<T, ErrorData> {
        let method = request.method().to_owned();
        let result = self.forward(request, Some(context)).await?;
        convert_result(&result, &method)
    }

    /// Lists every page of the upstream's tools and judges the listing.
    pub(crate) async fn relist(&self) -> Result<Arc<Listing>, ErrorData> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = PaginatedRequestParams::default().with_cursor(cursor.take());
            let request =
                ClientRequest::ListToolsRequest(RequestOptionalParam { params: Some(params), ..Default::default() });
            let page: Value = convert(&self.forward(request, None).await?, "tools/list")?;
            if let Some(listed) = page.get("tools").and_then(Value::as_array) {
                tools.extend(listed.iter().cloned());
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) if !next.is_empty() => cursor = Some(next.to_owned()),
                _ => break,
            }
        }
        if cursor.is_some() {
            return Err(ErrorData::internal_error(
                format!("the upstream server's tools/list did not end within {MAX_PAGES} pages"),
                None,
            ));
        }
        let listing = Arc::new(self.policy.listing(tools));
        *self.listing.write().await = Arc::clone(&listing);
        Ok(listing)
    }

    /// The client a server request or notification not tied to one request goes to: the
    /// client of the request forwarded last of those in flight (the server most likely
    /// acts for it), else the client that initialized last.
    fn downstream(&self) -> Option<Peer<RoleServer>> {
        let waiting = self.progress.lock().unwrap_or_else(PoisonError::into_inner);
        let busiest = waiting.values().filter(|w| w.client.is_some()).max_by_key(|w| w.order);
        if let Some(client) = busiest.and_then(|w| w.client.clone()) {
            return Some(client);
        }
        drop(waiting);
        self.clients().pop()
    }

    /// Every initialized client whose connection is still open.
    fn clients(&self) -> Vec<Peer<RoleServer>> {
        let mut clients = self.downstream.write().unwrap_or_else(PoisonError::into_inner);
        clients.retain(|peer| !peer.is_transport_closed());
        clients.clone()
    }

    /// Records a client that initialized.
    fn connected(&self, peer: Peer<RoleServer>) {
        let mut clients = self.downstream.write().unwrap_or_else(PoisonError::into_inner);
        clients.retain(|known| !known.is_transport_closed());
        clients.push(peer);
    }
}

/// The most `tools/list` pages read from the upstream.
const MAX_PAGES: usize = 1000;

/// An upstream failure as the downstream client sees it: the upstream's own JSON-RPC
/// error unchanged, or what went wrong on the way.
fn upstream_error(method: &str, err: ServiceError) -> ErrorData {
    match err {
        ServiceError::McpError(error) => error,
        ServiceError::Timeout { timeout } => ErrorData::internal_error(
            format!("the upstream server did not answer {method} within {}s", timeout.as_secs_f64()),
            None,
        ),
        ServiceError::TransportClosed => ErrorData::internal_error(
            format!("the upstream server closed the connection; {method} was not answered"),
            None,
        ),
        other => ErrorData::internal_error(format!("forwarding {method} to the upstream server failed: {other}"), None),
    }
}

/// A JSON object; anything else as an empty one.
fn as_object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

/// A result read as another type of the same JSON.
pub(crate) fn convert<T: DeserializeOwned>(result: &impl Serialize, method: &str) -> Result<T, ErrorData> {
    serde_json::to_value(result).and_then(serde_json::from_value).map_err(|err| malformed(method, &err))
}

/// An upstream result read as the rmcp result sent to the client. One without
/// `resultType` (an upstream of a revision before 2026-07-28, or one the proxy wrote) is
/// read as `"complete"`, which is what the field's absence means; rmcp's server half
/// leaves the field out again for a client of an older revision.
fn convert_result<T: DeserializeOwned>(result: &impl Serialize, method: &str) -> Result<T, ErrorData> {
    let mut value = serde_json::to_value(result).map_err(|err| malformed(method, &err))?;
    if let Value::Object(object) = &mut value {
        object.entry("resultType").or_insert_with(|| Value::String("complete".to_owned()));
    }
    serde_json::from_value(value).map_err(|err| malformed(method, &err))
}

fn malformed(method: &str, err: &serde_json::Error) -> ErrorData {
    ErrorData::internal_error(format!("the upstream server's answer to {method} is malformed: {err}"), None)
}

fn ping_request() -> ClientRequest {
    ClientRequest::PingRequest(RequestNoParam {
        method: rmcp::model::PingRequestMethod,
        extensions: rmcp::model::Extensions::default(),
    })
}

/// The server the downstream client talks to.
#[derive(Clone, Debug)]
pub(crate) struct Proxy(pub(crate) Arc<Shared>);

#[allow(deprecated)] // `subscribe`, `unsubscribe` and `set_level` are deprecated upstream yet forwarded.
impl ServerHandler for Proxy {
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        self.0.downstream_tasks.store(request.capabilities.supports_tasks(), Ordering::Release);
        self.0.connected(context.peer.clone());
        self.negotiate_initialize(&request)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        // No newer revision than the upstream speaks: the proxy forwards, it does not translate.
        match self.0.info.get() {
            Some(info) => Cow::Borrowed(ProtocolVersion::known_up_to(&info.protocol_version)),
            None => Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS),
        }
    }

    fn get_info(&self) -> ServerConfig {
        self.0.info.get().cloned().unwrap_or_else(|| InitializeResult::new(rmcp::model::ServerCapabilities::default()))
    }

    async fn ping(&self, context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        self.0.forward(ping_request(), Some(&context)).await.map(drop)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.0.relay(ClientRequest::CompleteRequest(Request::new(request)), &context).await
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let request = ClientRequest::SetLevelRequest(Request::new(request));
        self.0.forward(request, Some(&context)).await.map(drop)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let request = ClientRequest::GetPromptRequest(Request::new(request));
        match self.0.forward(request, Some(&context)).await? {
            ServerResult::InputRequiredResult(result) => Ok(GetPromptResponse::InputRequired(result)),
            other => convert_result(&other, "prompts/get").map(GetPromptResponse::Complete),
        }
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let request = ClientRequest::ListPromptsRequest(RequestOptionalParam { params: request, ..Default::default() });
        self.0.relay(request, &context).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let request =
            ClientRequest::ListResourcesRequest(RequestOptionalParam { params: request, ..Default::default() });
        self.0.relay(request, &context).await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let request =
            ClientRequest::ListResourceTemplatesRequest(RequestOptionalParam { params: request, ..Default::default() });
        self.0.relay(request, &context).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let request = ClientRequest::ReadResourceRequest(Request::new(request));
        match self.0.forward(request, Some(&context)).await? {
            ServerResult::InputRequiredResult(result) => Ok(ReadResourceResponse::InputRequired(result)),
            other => convert_result(&other, "resources/read").map(ReadResourceResponse::Complete),
        }
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let request = ClientRequest::SubscribeRequest(Request::new(request));
        self.0.forward(request, Some(&context)).await.map(drop)
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let request = ClientRequest::UnsubscribeRequest(Request::new(request));
        self.0.forward(request, Some(&context)).await.map(drop)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        if !self.0.has_tools() {
            let request =
                ClientRequest::ListToolsRequest(RequestOptionalParam { params: request, ..Default::default() });
            return self.0.relay(request, &context).await;
        }
        // Listed afresh for every client request, so a listing that changed without a
        // notification is judged before it is shown. One page: every upstream page, joined.
        let listing = self.0.relist().await?;
        convert_result(&json!({ "tools": listing.tools }), "tools/list")
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !self.0.has_tools() {
            return Err(ErrorData::invalid_request("the upstream server offers no tools", None));
        }
        let name = request.name.to_string();
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        let mut listing = Arc::clone(&*self.0.listing.read().await);
        if !listing.knows(&name) {
            listing = self.0.relist().await?;
        }
        if !listing.knows(&name) {
            return Err(ErrorData::invalid_params(
                format!("tool `{name}` is not in the upstream server's tools/list"),
                None,
            ));
        }
        if let Gate::Refuse(result) = self.0.policy.gate(&listing, &name, &arguments) {
            tracing::info!(tool = %name, "call refused before forwarding");
            return convert_result::<CallToolResult>(&result, "tools/call").map(CallToolResponse::Complete);
        }
        let mut context = context;
        if context.meta.client_capabilities().is_none() {
            // A client that declared tasks at `initialize` declares them to the upstream
            // on the call itself: the proxy's own session with the upstream declares none.
            if let Some(capabilities) = context.client_capabilities().filter(ClientCapabilities::supports_tasks) {
                context.meta.set_client_capabilities(capabilities);
            }
        }
        let request = ClientRequest::CallToolRequest(Request::new(request));
        match self.0.forward(request, Some(&context)).await? {
            ServerResult::InputRequiredResult(result) => Ok(CallToolResponse::InputRequired(result)),
            ServerResult::CreateTaskResult(result) => {
                self.0.record_task(result.task.task_id.clone(), Some(context.peer.clone()), name, arguments, listing);
                Ok(CallToolResponse::Task(result))
            }
            other => {
                let result: Value = convert(&other, "tools/call")?;
                let judged = self.0.policy.judge(&listing, &name, &arguments, result);
                convert_result::<CallToolResult>(&judged, "tools/call").map(CallToolResponse::Complete)
            }
        }
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        if request.method == "tasks/result" {
            // The 2025-11-25 tasks protocol, which rmcp does not speak: no task of it is
            // created through the proxy (rmcp drops a call's `task` parameter), so a
            // result it returns would belong to no call the proxy judged.
            return Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                "tasks/result is not served through contract-proxy: no task of the 2025-11-25 tasks protocol \
                 is created through it, so the result could not be judged; use tasks/get",
                None,
            ));
        }
        // A custom result is the upstream's JSON as it is.
        let method = request.method.clone();
        let result = self.0.forward(ClientRequest::CustomRequest(request), Some(&context)).await?;
        convert(&result, &method)
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let mut result: GetTaskResult =
            self.0.relay(ClientRequest::GetTaskRequest(Request::new(request)), &context).await?;
        self.0.judge_task(&mut result.task);
        Ok(result)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let request = ClientRequest::UpdateTaskRequest(Request::new(request));
        self.0.forward(request, Some(&context)).await.map(drop)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let request = ClientRequest::CancelTaskRequest(Request::new(request));
        self.0.forward(request, Some(&context)).await.map(drop)
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let request = ClientRequest::ListSkillsRequest(RequestOptionalParam { params: request, ..Default::default() });
        self.0.relay(request, &context).await
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        self.0.relay(ClientRequest::GetSkillRequest(Request::new(request)), &context).await
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        self.0.relay(ClientRequest::ReadResourceDirectoryRequest(Request::new(request)), &context).await
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        // Only a 2026-07-28 upstream session has `subscriptions/listen` to forward to;
        // rmcp narrows the filter to what the advertised capabilities allow.
        self.0.modern_upstream().then(|| requested.clone())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let upstream = self.0.upstream()?.clone();
        // One upstream subscription per client subscription, for what rmcp accepted; its
        // notifications are sent on the client's stream (under the client's subscription
        // id), and a tools/list_changed is judged first, as one outside a subscription is.
        let mut subscription = upstream
            .listen(context.accepted().clone())
            .await
            .map_err(|err| upstream_error("subscriptions/listen", err))?;
        loop {
            let next = tokio::select! {
                () = context.cancelled() => return Ok(()),
                next = subscription.next() => next,
            };
            match next {
                Ok(Some(notification)) => {
                    if matches!(notification, ServerNotification::ToolListChangedNotification(_)) {
                        if let Err(err) = self.0.relist().await {
                            tracing::warn!(error = %err.message, "re-listing the upstream's tools after list_changed failed");
                        }
                    }
                    if let Err(err) = context.sink().send(notification).await {
                        tracing::info!(error = %err, "a notification of the upstream's subscription was not sent on");
                    }
                }
                // The upstream ended it: gracefully (the client gets the final result) or
                // by closing, which ends the proxy too.
                Ok(None) => return Ok(()),
                Err(err) => return Err(upstream_error("subscriptions/listen", err)),
            }
        }
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        if let Ok(upstream) = self.0.upstream() {
            let _ = upstream.notify_roots_list_changed().await;
        }
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        _context: NotificationContext<RoleServer>,
    ) {
        if let Ok(upstream) = self.0.upstream() {
            let _ = upstream.send_notification(ClientNotification::CustomNotification(notification)).await;
        }
    }
}

/// The client the upstream server talks to.
#[derive(Clone, Debug)]
pub(crate) struct Relay(pub(crate) Arc<Shared>);

impl Service<RoleClient> for Relay {
    async fn handle_request(
        &self,
        request: ServerRequest,
        _context: RequestContext<RoleClient>,
    ) -> Result<ClientResult, ErrorData> {
        if matches!(request, ServerRequest::PingRequest(_)) {
            return Ok(ClientResult::empty(()));
        }
        let Some(downstream) = self.0.downstream() else {
            return Err(ErrorData::internal_error("no client is connected to the proxy yet", None));
        };
        downstream.send_request(request).await.map_err(|err| match err {
            ServiceError::McpError(error) => error,
            other => ErrorData::internal_error(format!("the proxy's client did not answer: {other}"), None),
        })
    }

    async fn handle_notification(
        &self,
        mut notification: ServerNotification,
        _context: NotificationContext<RoleClient>,
    ) -> Result<(), ErrorData> {
        if matches!(notification, ServerNotification::ToolListChangedNotification(_)) && self.0.has_tools() {
            // Judged before the client hears of it, so its next tools/list sees the verdict.
            if let Err(err) = self.0.relist().await {
                tracing::warn!(error = %err.message, "re-listing the upstream's tools after list_changed failed");
            }
        }
        // Whom it goes to: progress to the client of its request, a task's status to the
        // client whose call created it, list changes and resource updates to every client,
        // anything else as a server request would go.
        let mut to: Option<Vec<Peer<RoleServer>>> = None;
        if let ServerNotification::TaskStatusNotification(status) = &mut notification {
            self.0.judge_task(&mut status.params.task);
            let owner = self.0.tasks().records.get(&status.params.task.task.task_id).and_then(|r| r.client.clone());
            to = owner.map(|client| vec![client]);
        }
        if let ServerNotification::ProgressNotification(progress) = &mut notification {
            let mapped = self
                .0
                .progress
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(&progress.params.progress_token)
                .map(|waiting| (waiting.theirs.clone(), waiting.client.clone()));
            match mapped {
                Some((Some(theirs), client)) => {
                    progress.params.progress_token = theirs;
                    to = client.map(|client| vec![client]);
                }
                // Progress of a request whose client asked for none.
                Some((None, _)) => return Ok(()),
                None => {}
            }
        }
        if matches!(
            notification,
            ServerNotification::ToolListChangedNotification(_)
                | ServerNotification::PromptListChangedNotification(_)
                | ServerNotification::ResourceListChangedNotification(_)
                | ServerNotification::ResourceUpdatedNotification(_)
        ) {
            to = Some(self.0.clients());
        }
        // An absent `_meta` stays absent: the read side keeps an empty one.
        if notification.extensions().get::<NotificationMetaObject>().is_some_and(|meta| meta.is_empty()) {
            notification.extensions_mut().remove::<NotificationMetaObject>();
        }
        let to = to.unwrap_or_else(|| self.0.downstream().into_iter().collect());
        for client in to {
            let _ = client.send_notification(notification.clone()).await;
        }
        Ok(())
    }

    fn get_info(&self) -> ClientConfig {
        // Every client capability, so the upstream may ask for what the downstream client
        // offers; a request the downstream client cannot answer comes back as its error.
        let capabilities: ClientCapabilities =
            serde_json::from_value(json!({ "roots": { "listChanged": true }, "sampling": {}, "elicitation": {} }))
                .unwrap_or_default();
        ClientConfig::new(capabilities, Implementation::new("contract-proxy", env!("CARGO_PKG_VERSION")))
    }
}

#[cfg(test)]
mod tests {
    use super::{Listing, TaskBook, TaskRecord, TASK_MEMORY};
    use serde_json::json;
    use std::sync::Arc;

    fn record(tool: &str) -> TaskRecord {
        TaskRecord {
            client: None,
            tool: tool.to_owned(),
            arguments: json!({}),
            listing: Arc::new(Listing::default()),
            judged: None,
        }
    }

    #[test]
    fn the_task_book_forgets_the_oldest_task_first() {
        let mut book = TaskBook::default();
        for n in 0..=TASK_MEMORY {
            book.insert(format!("t-{n}"), record("report"));
        }
        assert_eq!(book.records.len(), TASK_MEMORY);
        assert!(!book.records.contains_key("t-0"), "the oldest is forgotten");
        // Control: the second oldest and the newest are still known.
        assert!(book.records.contains_key("t-1"));
        assert!(book.records.contains_key(&format!("t-{TASK_MEMORY}")));
        // A task id seen again keeps its place and is not counted twice.
        book.insert("t-1".to_owned(), record("report_ok"));
        assert_eq!(book.order.len(), TASK_MEMORY);
        assert_eq!(book.order.front().map(String::as_str), Some("t-1"));
        assert_eq!(book.records["t-1"].tool, "report_ok");
        assert!(book.records.contains_key("t-2"), "nothing else is forgotten for it");
    }
}
