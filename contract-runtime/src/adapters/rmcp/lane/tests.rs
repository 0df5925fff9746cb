//! The lane against rmcp's own transport: what it reads, what it writes, in order.

use std::cell::Cell;

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, RequestMetaObject};
use rmcp::service::RoleServer;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::Lane;
use crate::adapters::rmcp::json::TEXT_ONLY;
use crate::adapters::rmcp::{read_tools_call, ContractedServer};

/// Calls the tap read by their keys, in every test.
pub(super) static READ_BY_KEYS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A client's stream of every kind of line: calls the lane reads, calls it leaves
/// (escaped, with a byte-order mark, longer than its buffer), other requests and
/// notifications, text that is not JSON, JSON that is no message, blank lines, CRLF,
/// and a last line cut off by the end of the stream.
fn stream() -> Vec<u8> {
    let call = |id: u32, extra: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"search","arguments":{{"q":"t-{id}"{extra}}}}}}}"#
        )
    };
    let big = format!(r#","pad":"{}""#, "x".repeat(70_000));
    let lines = [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        call(1, ""),
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#.to_owned(),
        call(3, "") + "\r",
        String::new(),
        "not json at all".to_owned(),
        call(4, ""),
        r#"{"jsonrpc":"2.0","id":5,"method":"no/such/method"}"#.to_owned(),
        r#"{"hello":"world"}"#.to_owned(),
        call(6, ""),
        format!("\u{feff}{}", call(7, "")),
        call(8, &big),
        r#"{"jsonrpc":"2.0","method":"notifications/not_a_standard_one"}"#.to_owned(),
        call(9, "").replace("tools/call", r"tools\/call"),
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}"#.to_owned(),
        call(10, ""),
    ];
    let mut bytes = lines.join("\n").into_bytes();
    bytes.push(b'\n');
    bytes.extend_from_slice(call(11, "").as_bytes());
    bytes
}

/// What a transport delivers from `input` written in pieces of `piece` bytes, and
/// what it writes back.
async fn delivered<T: Transport<RoleServer>>(
    make: impl FnOnce(tokio::io::DuplexStream, tokio::io::DuplexStream) -> T,
    input: Vec<u8>,
    piece: usize,
) -> (Vec<Value>, Vec<u8>) {
    let (mut client, server_read) = tokio::io::duplex(1 << 20);
    let (server_write, mut back) = tokio::io::duplex(1 << 20);
    let mut transport = make(server_read, server_write);
    let writer = tokio::spawn(async move {
        for chunk in input.chunks(piece) {
            client.write_all(chunk).await.unwrap();
            tokio::task::yield_now().await;
        }
    });
    let mut messages = Vec::new();
    while let Some(message) = transport.receive().await {
        messages.push(serde_json::to_value(&message).unwrap());
    }
    writer.await.unwrap();
    transport.close().await.unwrap();
    drop(transport);
    let mut written = Vec::new();
    back.read_to_end(&mut written).await.unwrap();
    (messages, written)
}

/// rmcp's own stdio transport is the oracle: the lane delivers the same messages in
/// the same order and writes the same answers, whatever the pieces the stream
/// arrives in.
#[tokio::test]
async fn the_lane_delivers_what_rmcps_transport_delivers_in_its_order() {
    let input = stream();
    for piece in [input.len(), 4096, 7, 2] {
        let theirs = delivered(AsyncRwTransport::<RoleServer, _, _>::new, input.clone(), piece).await;
        let before = READ_BY_KEYS.load(std::sync::atomic::Ordering::Relaxed);
        let ours = delivered(Lane::new, input.clone(), piece).await;
        // The lane read the plain calls itself (1, 3, 4, 6 and 10).
        assert!(READ_BY_KEYS.load(std::sync::atomic::Ordering::Relaxed) - before >= 5, "pieces of {piece}");
        assert_eq!(ours.0, theirs.0, "pieces of {piece}");
        assert_eq!(ours.1, theirs.1, "pieces of {piece}");
        // Control: the stream holds what the comparison needs to see.
        let ids: Vec<&Value> = theirs.0.iter().filter_map(|m| m.get("id")).collect();
        assert!(ids.len() >= 9, "{ids:?}");
        assert!(!theirs.1.is_empty(), "an answer to the message rmcp refuses");
    }
}

/// What the lane reads of a request line is what rmcp's reader reads of it, member
/// for member, `_meta` included; and it leaves to rmcp every line it does not read
/// alike.
#[test]
fn a_call_read_by_its_keys_is_the_one_rmcp_reads() {
    let read = [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"t-","n":1}}}"#,
        r#"{"method":"tools/call","params":{"arguments":{"n":[1,{"a":null}]},"name":"s"},"id":"x-1","jsonrpc":"2.0"}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"s","_meta":{"progressToken":3,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"n\u00e4me","arguments":{},"task":{"ttl":1000}}}"#,
        " {\"jsonrpc\" : \"2.0\" , \"id\" : 9 , \"method\" : \"tools/call\" , \"params\" : {\"name\":\"s\"}} ",
    ];
    // Ids and arguments at the edges of their types.
    let edges = ["-1", "0", "18446744073709551615", "9223372036854775807", r#""""#, r#""\u00e9""#];
    let arguments = [r#"{"f":1.0,"e":1e300,"z":-0.0,"big":18446744073709551615,"neg":-9223372036854775808}"#];
    let edge_lines: Vec<String> = edges
        .iter()
        .map(|id| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"s","arguments":{}}}}}"#,
                arguments[0]
            )
        })
        .collect();
    // An id rmcp's type cannot hold is left to rmcp's reader, which says what it says.
    let edge_read: Vec<&str> =
        edge_lines.iter().map(String::as_str).filter(|l| !l.contains("18446744073709551615,\"method")).collect();
    assert_eq!(edge_read.len(), edges.len() - 1);
    assert!(read_tools_call(edge_lines[2].as_bytes()).is_none(), "{}", edge_lines[2]);
    for line in read.iter().copied().chain(edge_read) {
        let ours = read_tools_call(line.as_bytes()).unwrap_or_else(|| panic!("not read by its keys: {line}"));
        let theirs: ClientJsonRpcMessage = serde_json::from_str(line).unwrap();
        assert_eq!(serde_json::to_value(&ours).unwrap(), serde_json::to_value(&theirs).unwrap(), "{line}");
        let (ClientJsonRpcMessage::Request(ours), ClientJsonRpcMessage::Request(theirs)) = (ours, theirs) else {
            panic!("{line}")
        };
        let (ClientRequest::CallToolRequest(ours), ClientRequest::CallToolRequest(theirs)) =
            (ours.request, theirs.request)
        else {
            panic!("{line}")
        };
        assert_eq!(ours.params, theirs.params, "{line}");
        assert_eq!(ours.extensions.get::<RequestMetaObject>(), theirs.extensions.get::<RequestMetaObject>(), "{line}");
    }
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"tools/call"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s"},"extra":1}"#,
        r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"s"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/call","params":{"name":"s"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"s"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s"}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"s"}}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"s"}}"#,
    ] {
        assert!(read_tools_call(line.as_bytes()).is_none(), "read by its keys: {line}");
    }
}

/// A server with a tool of each kind the lane meets: contracted results with an object
/// and an array root (strings that need escaping, an `f32`, a `null`), a contracted
/// tool returning rmcp's own `Json` (refused), a failing tool, an uncontracted tool
/// whose text is not its `structuredContent`, and a tool whose result breaks its
/// contract. A 2026-07-28 client that declared the tasks extension gets every call as
/// a task, its tool run on a tokio task of its own, or, by an eager probe, run in the
/// call itself before the task is made and handed the finished result.
mod served {
    use std::sync::{Arc, Mutex, PoisonError};

    use rmcp::handler::server::router::tool::ToolRouter;
    use rmcp::handler::server::tool::ToolCallContext;
    use rmcp::handler::server::wrapper::Parameters;
    use rmcp::model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CreateTaskResult, DetailedTask,
        GetTaskParams, GetTaskResult, Implementation, JsonObject, ServerCapabilities, ServerConfig, Task, TaskPayload,
        TaskStatus,
    };
    use rmcp::service::{RequestContext, RoleServer};
    use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler};
    use serde_json::Value;
    use tokio::sync::watch;

    use crate::adapters::rmcp::{ContractedServer, Json};
    use crate::{contracts, ToolError, ToolOutput};

    /// When each task says it was made and last updated: the same in every run, as are
    /// the task ids (`task-0`, `task-1`, … in the order of the calls), so two servers
    /// given the same calls answer with the same JSON.
    const MADE: &str = "2026-07-28T00:00:00Z";

    #[derive(Clone, serde::Serialize, schemars::JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = "exact")]
    pub(super) struct Reading {
        label: String,
        ratio: f32,
        note: Option<String>,
        count: u64,
    }

    #[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
    #[serde(transparent)]
    #[tool_output(version = "1.0.0", compatibility = "exact")]
    pub(super) struct Readings(Vec<Reading>);

    /// What `broken` returns for the `Reading` contract: no `ratio`, no `count`.
    #[derive(serde::Serialize, schemars::JsonSchema)]
    pub(super) struct Partial {
        label: String,
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    pub(super) struct Ask {
        label: String,
    }

    pub(super) fn reading(label: String) -> Reading {
        Reading { label, ratio: 0.8, note: None, count: u64::MAX }
    }

    /// What `readings` answers for `label`.
    pub(super) fn readings(label: &str) -> Readings {
        Readings(vec![reading(label.to_owned()), reading(format!("{label}\u{2028}\"2\""))])
    }

    #[derive(Clone)]
    pub(super) struct Probe {
        tool_router: ToolRouter<Self>,
        /// The tasks made, by their number: each one's payload once its tool finished.
        tasks: Arc<Mutex<Vec<watch::Receiver<Option<TaskPayload>>>>>,
        /// Runs a task's tool in the call, before it makes the task.
        eager: bool,
    }

    #[tool_router]
    impl Probe {
        #[tool(description = "One reading.")]
        async fn reading(&self, Parameters(ask): Parameters<Ask>) -> Result<Json<Reading>, ToolError> {
            Ok(Json(reading(ask.label)))
        }

        #[tool(description = "Readings, an array root.")]
        async fn readings(&self, Parameters(ask): Parameters<Ask>) -> Result<Json<Readings>, ToolError> {
            Ok(Json(readings(&ask.label)))
        }

        #[tool(description = "A contracted tool returning rmcp's own Json.")]
        async fn unchecked(&self) -> rmcp::Json<Reading> {
            rmcp::Json(reading("unchecked".to_owned()))
        }

        #[tool(description = "Fails.")]
        async fn failing(&self) -> Result<Json<Reading>, ToolError> {
            Err(ToolError::execution("the probe failed"))
        }

        #[tool(description = "Uncontracted: its text is not its structuredContent.")]
        async fn loose(&self) -> CallToolResult {
            let mut result = CallToolResult::success(vec![ContentBlock::text("not the structured content")]);
            result.structured_content = Some(serde_json::json!({ "b": 2, "a": 1 }));
            result
        }

        #[tool(description = "Breaks the contract of `reading`.")]
        async fn broken(&self, Parameters(ask): Parameters<Ask>) -> Result<Json<Partial>, ToolError> {
            Ok(Json(Partial { label: ask.label }))
        }
    }

    /// A task with the fixed times, as its tool finished (`payload`) or still working.
    fn task(id: String, payload: TaskPayload) -> DetailedTask {
        DetailedTask::new(Task::new(id, TaskStatus::Working, MADE, MADE).with_poll_interval_ms(10), payload)
    }

    /// What a task's tool came to, as its `tasks/get` carries it.
    fn payload(response: Result<CallToolResponse, ErrorData>) -> TaskPayload {
        let object = |value: Result<Value, serde_json::Error>| match value {
            Ok(Value::Object(object)) => object,
            _ => JsonObject::new(),
        };
        match response {
            Ok(CallToolResponse::Complete(result)) => {
                TaskPayload::Completed { result: object(serde_json::to_value(result)) }
            }
            Ok(_) => TaskPayload::Failed {
                error: object(serde_json::to_value(ErrorData::internal_error("the tool did not complete", None))),
            },
            Err(err) => TaskPayload::Failed { error: object(serde_json::to_value(err)) },
        }
    }

    #[tool_handler(router = self.tool_router)]
    impl ServerHandler for Probe {
        fn get_info(&self) -> ServerConfig {
            ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tasks().build())
                .with_server_info(Implementation::from_build_env())
        }

        async fn call_tool(
            &self,
            request: CallToolRequestParams,
            context: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, ErrorData> {
            let declared = context.client_capabilities().is_some_and(|caps| caps.supports_tasks());
            let tasks_era = context.protocol_version().is_some_and(|version| version.as_str() >= "2026-07-28");
            if !(declared && tasks_era) {
                return self.tool_router.call(ToolCallContext::new(self, request, context)).await;
            }
            let (finish, finished) = watch::channel(None);
            let id = {
                let mut tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
                tasks.push(finished);
                format!("task-{}", tasks.len() - 1)
            };
            if self.eager {
                let response = self.tool_router.call(ToolCallContext::new(self, request, context)).await;
                let _ = finish.send(Some(payload(response)));
            } else {
                // The tool runs on a task of its own, as rmcp's `TaskManager` runs it.
                let server = self.clone();
                tokio::spawn(async move {
                    let response = server.tool_router.call(ToolCallContext::new(&server, request, context)).await;
                    let _ = finish.send(Some(payload(response)));
                });
            }
            Ok(CallToolResponse::Task(CreateTaskResult::new(task(id, TaskPayload::Working).task)))
        }

        /// The task once its tool finished: every `tasks/get` sees it done, in every run.
        async fn get_task(
            &self,
            request: GetTaskParams,
            _context: RequestContext<RoleServer>,
        ) -> Result<GetTaskResult, ErrorData> {
            let finished = request
                .task_id
                .strip_prefix("task-")
                .and_then(|n| n.parse::<usize>().ok())
                .and_then(|n| self.tasks.lock().unwrap_or_else(PoisonError::into_inner).get(n).cloned());
            let Some(mut finished) = finished else {
                return Err(ErrorData::invalid_params("no such task", None));
            };
            let payload = finished
                .wait_for(Option::is_some)
                .await
                .ok()
                .and_then(|payload| payload.clone())
                .unwrap_or(TaskPayload::Cancelled);
            Ok(GetTaskResult::new(task(request.task_id, payload)))
        }
    }

    /// The probe, with an in-memory result cache when `cached`.
    pub(super) fn server(cached: bool) -> ContractedServer<Probe> {
        probe(cached, false)
    }

    /// The eager probe, without a cache.
    pub(super) fn eager_server() -> ContractedServer<Probe> {
        probe(false, true)
    }

    fn probe(cached: bool, eager: bool) -> ContractedServer<Probe> {
        let set = contracts![Reading, Readings, Reading => "unchecked", Reading => "broken"];
        let probe = Probe { tool_router: Probe::tool_router(), tasks: Arc::default(), eager };
        let server = ContractedServer::new(probe, set).unwrap();
        if !cached {
            return server;
        }
        let cache = std::sync::Arc::new(crate::serve::cache::InMemoryCache::new());
        server.with_pipeline(crate::serve::pipeline::Pipeline::builder().cache(cache).build())
    }
}

/// Lines a client sends in turn, each once the answer to the one before arrived,
/// with the ids that get an answer.
fn session(era: &str) -> Vec<(Option<u64>, String)> {
    let stateless = era != "2025-11-25";
    let meta = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": era,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "lane", "version": "1" },
    });
    let mut lines = Vec::new();
    if !stateless {
        let init = serde_json::json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": era, "capabilities": {}, "clientInfo": { "name": "lane", "version": "1" } } });
        lines.push((Some(0), init.to_string()));
        lines.push((None, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned()));
    }
    let calls = [
        ("reading", serde_json::json!({ "label": "a \"quoted\"\nline é 🚀" })),
        ("readings", serde_json::json!({ "label": "r" })),
        ("unchecked", serde_json::json!({})),
        ("failing", serde_json::json!({})),
        ("loose", serde_json::json!({})),
        ("reading", serde_json::json!({ "label": 7 })),
        ("no_such_tool", serde_json::json!({})),
        ("reading", serde_json::json!({ "label": "again" })),
        // The same call again: a hit where the server caches.
        ("reading", serde_json::json!({ "label": "again" })),
    ];
    for (n, (name, arguments)) in calls.into_iter().enumerate() {
        let id = 10 + n as u64;
        let mut params = serde_json::json!({ "name": name, "arguments": arguments });
        if stateless {
            params["_meta"] = meta.clone();
        }
        let line = serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params });
        lines.push((Some(id), line.to_string()));
    }
    // A string id, and a request rmcp reads itself.
    let mut named = serde_json::json!({ "jsonrpc": "2.0", "id": "r-30", "method": "tools/call",
        "params": { "name": "reading", "arguments": { "label": "named" } } });
    let mut ping = serde_json::json!({ "jsonrpc": "2.0", "id": 31, "method": "ping" });
    if stateless {
        named["params"]["_meta"] = meta.clone();
        ping["params"] = serde_json::json!({ "_meta": meta });
    }
    lines.push((Some(30), named.to_string()));
    lines.push((Some(31), ping.to_string()));
    lines
}

/// The answer lines of `server` on the transport `make` makes to `lines`, sent in turn.
async fn answers<T, F>(
    make: F,
    server: ContractedServer<served::Probe>,
    lines: Vec<(Option<u64>, String)>,
) -> Vec<String>
where
    T: Transport<RoleServer> + Send + 'static,
    F: FnOnce(tokio::io::DuplexStream, tokio::io::DuplexStream) -> T + Send + 'static,
{
    use rmcp::ServiceExt;
    use tokio::io::AsyncBufReadExt;
    let (mut client, server_read) = tokio::io::duplex(1 << 16);
    let (server_write, back) = tokio::io::duplex(1 << 16);
    let serving = tokio::spawn(async move {
        if let Ok(running) = server.serve(make(server_read, server_write)).await {
            let _ = running.waiting().await;
        }
    });
    let mut back = tokio::io::BufReader::new(back).lines();
    let mut answers = Vec::new();
    for (id, line) in lines {
        client.write_all(format!("{line}\n").as_bytes()).await.unwrap();
        if id.is_some() {
            answers.push(back.next_line().await.unwrap().expect("an answer"));
        }
    }
    drop(client);
    serving.await.unwrap();
    answers
}

/// rmcp's own transport is the oracle for what the lane writes: the same answers, as
/// JSON, in both protocol eras; and the lane wrote the contracted successes'
/// `structuredContent` from their text (it puts that member first, serde puts it
/// after `content`), and nothing else that way: not the uncontracted tool's result,
/// whose text is not its `structuredContent`.
#[tokio::test]
async fn the_lanes_answers_are_rmcps() {
    const FIRST: &str = r#""result":{"structuredContent":"#;
    for (era, cached) in [("2025-11-25", false), ("2026-07-28", false), ("2025-11-25", true), ("2026-07-28", true)] {
        let theirs = answers(AsyncRwTransport::<RoleServer, _, _>::new, served::server(cached), session(era)).await;
        let text_only = TEXT_ONLY.with(Cell::get);
        let ours = answers(Lane::new, served::server(cached), session(era)).await;
        // The lane's run handed over the contracted results as their text alone, no
        // tree built: the three `reading`s, `readings` and the named call, less the
        // cache's hit (the repeated `reading`) when cached.
        let handed = TEXT_ONLY.with(Cell::get) - text_only;
        assert_eq!(handed, if cached { 4 } else { 5 }, "{era}, cached: {cached}");
        assert_eq!(ours.len(), theirs.len());
        let mut from_text = Vec::new();
        for (ours, theirs) in ours.iter().zip(&theirs) {
            let (a, b): (Value, Value) = (serde_json::from_str(ours).unwrap(), serde_json::from_str(theirs).unwrap());
            assert_eq!(a, b, "{era}\nlane: {ours}\nrmcp: {theirs}");
            assert!(!theirs.contains(FIRST), "{theirs}");
            if ours.contains(FIRST) {
                from_text.push(a["id"].clone());
            }
        }
        // reading (four times, one a hit when cached, one by a string id) and readings; the control: the
        // loose tool's result carries a `structuredContent` the lane left to serde.
        assert_eq!(
            from_text,
            [10, 11, 17, 18].map(Value::from).into_iter().chain([Value::from("r-30")]).collect::<Vec<_>>(),
            "{era}: {ours:#?}"
        );
        let loose = theirs.iter().find(|line| line.contains(r#""id":14"#)).unwrap();
        assert!(loose.contains(r#""structuredContent":{"a":1,"b":2}"#), "{loose}");
    }
}

/// A 2026-07-28 session (the era that has tasks) of task-augmented calls of contracted
/// tools, each followed by its `tasks/get`, with plain calls of the same tools beside
/// them: ids 40 to 45 in turn, a call then a poll (`task-0` to `task-2`) for `reading`,
/// `readings` and `broken`; then the plain calls 47 (`reading`), 48 (`readings`) and
/// 49 (`broken`), from a client that declared no tasks.
fn task_session() -> Vec<(Option<u64>, String)> {
    let meta = |tasks: bool| {
        let capabilities = if tasks {
            serde_json::json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } })
        } else {
            serde_json::json!({})
        };
        serde_json::json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": capabilities,
            "io.modelcontextprotocol/clientInfo": { "name": "lane", "version": "1" },
        })
    };
    let call = |id: u64, tool: &str, label: &str, tasks: bool| {
        let line = serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": tool, "arguments": { "label": label }, "_meta": meta(tasks) } });
        (Some(id), line.to_string())
    };
    let poll = |id: u64, task: &str| {
        let line = serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": "tasks/get",
            "params": { "taskId": task, "_meta": meta(true) } });
        (Some(id), line.to_string())
    };
    let mut lines = Vec::new();
    for (n, (tool, label)) in TASK_CALLS.into_iter().enumerate() {
        let id = 40 + 2 * n as u64;
        lines.push(call(id, tool, label, true));
        lines.push(poll(id + 1, &format!("task-{n}")));
    }
    for (n, (tool, label)) in TASK_CALLS.into_iter().enumerate() {
        lines.push(call(47 + n as u64, tool, label, false));
    }
    lines
}

/// The tools [`task_session`] calls, each with its label, as a task and plainly.
const TASK_CALLS: [(&str, &str); 3] = [("reading", "a \"quoted\"\nline é 🚀"), ("readings", "r"), ("broken", "b")];

/// Task-augmented calls through the lane are answered as rmcp's own transport answers
/// them, whether their tools run on a task of their own, out of the lane's reach, or
/// in the call itself before the task is made (where a `Json` hands over its text
/// alone): the task made, and its `tasks/get` with the completed result, are the same
/// JSON; that result carries the contracted value as its `structuredContent` and the
/// compact JSON of it as its text, the very result of the plain call; a result that
/// breaks its contract is the same refusal (`output_contract_violation`) as a task and
/// plainly. The control: in the same run the lane still wrote the plain calls'
/// successes from their text.
#[tokio::test]
async fn a_task_augmented_call_is_answered_over_the_lane_as_over_rmcps_transport() {
    for eager in [false, true] {
        let server = || if eager { served::eager_server() } else { served::server(false) };
        let theirs = answers(AsyncRwTransport::<RoleServer, _, _>::new, server(), task_session()).await;
        let text_only = TEXT_ONLY.with(Cell::get);
        let ours = answers(Lane::new, server(), task_session()).await;
        // The plain `reading` and `readings` were handed over as their text alone, and
        // so were the eager probe's tasks of them, run in the call.
        assert_eq!(TEXT_ONLY.with(Cell::get) - text_only, if eager { 4 } else { 2 }, "eager: {eager}");
        the_task_answers_are_rmcps(&ours, &theirs);
    }
}

/// The checks of [`a_task_augmented_call_is_answered_over_the_lane_as_over_rmcps_transport`]
/// on the answers to [`task_session`] over the lane (`ours`) and over rmcp's transport.
fn the_task_answers_are_rmcps(ours: &[String], theirs: &[String]) {
    const FIRST: &str = r#""result":{"structuredContent":"#;
    assert_eq!(ours.len(), theirs.len());
    let mut by_id = std::collections::BTreeMap::new();
    let mut from_text = Vec::new();
    for (ours, theirs) in ours.iter().zip(theirs) {
        let (a, b): (Value, Value) = (serde_json::from_str(ours).unwrap(), serde_json::from_str(theirs).unwrap());
        assert_eq!(a, b, "\nlane: {ours}\nrmcp: {theirs}");
        if ours.contains(FIRST) {
            from_text.push(a["id"].clone());
        }
        by_id.insert(a["id"].as_u64().unwrap(), a["result"].clone());
    }
    // The control: the plain successes, and nothing else, were written from their text.
    assert_eq!(from_text, [47, 48].map(Value::from), "{ours:#?}");
    for (n, (tool, label)) in TASK_CALLS.into_iter().enumerate() {
        let id = 40 + 2 * n as u64;
        let (made, polled, plain) = (&by_id[&id], &by_id[&(id + 1)], &by_id[&(47 + n as u64)]);
        assert_eq!(made["resultType"], "task", "{made}");
        assert_eq!(made["taskId"], format!("task-{n}"), "{made}");
        assert_eq!(polled["status"], "completed", "{polled}");
        let result = &polled["result"];
        let text = result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("a text block: {result}"));
        assert_eq!(result["content"].as_array().map(Vec::len), Some(1), "{result}");
        assert!(result["_meta"].get("tool-contracts.dev/checked").is_none(), "{result}");
        // The task's result is the plain call's.
        for member in ["structuredContent", "content", "isError"] {
            assert_eq!(result.get(member), plain.get(member), "{tool}: {member}\ntask: {result}\nplain: {plain}");
        }
        if tool == "broken" {
            assert_eq!(result["isError"], true, "{result}");
            assert!(result.get("structuredContent").is_none(), "{result}");
            let body: Value = serde_json::from_str(text).unwrap();
            assert_eq!(body["error"]["code"], "output_contract_violation", "{result}");
            continue;
        }
        // The contracted value, and its compact JSON as serde writes it from the type.
        let compact = match tool {
            "reading" => serde_json::to_string(&served::reading(label.to_owned())),
            _ => serde_json::to_string(&served::readings(label)),
        }
        .unwrap();
        assert_eq!(result["isError"], false, "{result}");
        assert_eq!(result["structuredContent"], serde_json::from_str::<Value>(&compact).unwrap(), "{result}");
        assert_eq!(text, compact, "{result}");
    }
}

/// A vouched-for answer is the one serde writes for the same result, whatever the
/// result carries beside its text: a `resultType`, a `_meta` holding a member named
/// like the content with the value the lane looks for, a text block with annotations
/// (written by serde then), text that needs escaping.
#[test]
fn an_answer_written_from_its_text_is_the_one_serde_writes() {
    use rmcp::model::{CallToolResult, ContentBlock, JsonRpcResponse, MetaObject, ResultType, ServerResult};
    use rmcp::model::{NumberOrString, ServerJsonRpcMessage};

    let text = r#"{"b":"a \"quote\" and \\ and \n","a":[1,2.5,null,"é🚀\u2028"],"content":[]}"#;
    let plain = || {
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(serde_json::from_str(text).unwrap());
        result
    };
    let mut with_type = plain();
    with_type.result_type = Some(ResultType::COMPLETE);
    let mut meta = serde_json::Map::new();
    meta.insert("x".to_owned(), serde_json::json!({ "content": [], "y": "\"content\":[]" }));
    with_type.meta = Some(MetaObject(meta));
    let mut annotated = plain();
    if let ContentBlock::Text(block) = &mut annotated.content[0] {
        block.annotations = Some(serde_json::from_value(serde_json::json!({ "priority": 0.5 })).unwrap());
    }
    for (n, result) in (0_i64..).zip([plain(), with_type, annotated]) {
        for id in [NumberOrString::Number(n), NumberOrString::String(format!("s-{n}").into())] {
            let message = ServerJsonRpcMessage::Response(JsonRpcResponse {
                jsonrpc: rmcp::model::JsonRpcVersion2_0,
                id: id.clone(),
                result: ServerResult::CallToolResult(result.clone()),
            });
            let line = super::written_from_text(&id, result.clone()).unwrap();
            let ours: Value = serde_json::from_slice(&line).unwrap();
            assert_eq!(ours, serde_json::to_value(&message).unwrap(), "{}", String::from_utf8_lossy(&line));
            assert!(line.starts_with(b"{\"jsonrpc\""), "{}", String::from_utf8_lossy(&line));
        }
    }
}

/// Calls written all at once, answered as the server finishes them: every answer the
/// lane writes from a text carries the text of its own call, not of another in flight
/// (each call's label comes back in its result).
#[tokio::test]
async fn calls_in_flight_each_get_their_own_answer() {
    use rmcp::ServiceExt;
    use tokio::io::AsyncBufReadExt;
    let (mut client, server_read) = tokio::io::duplex(1 << 20);
    let (server_write, back) = tokio::io::duplex(1 << 20);
    let serving = tokio::spawn(async move {
        if let Ok(running) = served::server(false).serve(Lane::new(server_read, server_write)).await {
            let _ = running.waiting().await;
        }
    });
    let init = serde_json::json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "lane", "version": "1" } } });
    let mut batch = format!("{init}\n{}\n", r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let calls: u64 = 64;
    for id in 1..=calls {
        let tool = if id % 2 == 0 { "reading" } else { "readings" };
        let call = serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": tool, "arguments": { "label": format!("call-{id}") } } });
        batch.push_str(&call.to_string());
        batch.push('\n');
    }
    client.write_all(batch.as_bytes()).await.unwrap();
    let mut back = tokio::io::BufReader::new(back).lines();
    let mut answered = std::collections::BTreeSet::new();
    while (answered.len() as u64) < calls {
        let line = back.next_line().await.unwrap().expect("an answer");
        let answer: Value = serde_json::from_str(&line).unwrap();
        let Some(id) = answer["id"].as_u64().filter(|id| *id > 0) else { continue };
        let label = format!("call-{id}");
        let structured = &answer["result"]["structuredContent"];
        let first = if id % 2 == 0 { &structured["label"] } else { &structured["result"][0]["label"] };
        assert_eq!(first, &Value::from(label.clone()), "{line}");
        let text: Value = serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(&text, structured, "{line}");
        // Written by the lane from the text (it puts `structuredContent` first).
        assert!(line.contains(r#""result":{"structuredContent":"#), "{line}");
        assert!(answered.insert(id), "answered twice: {id}");
    }
    drop(client);
    serving.await.unwrap();
}
