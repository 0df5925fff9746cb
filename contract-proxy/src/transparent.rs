//! Stdio on both sides: the client's own session with the server, and the server's own
//! bytes.
//!
//! The proxy owns the four pipe ends and runs one reader per direction. Each reads its
//! pipe line by line and writes every line it forwards to the other side's [`Outbox`] in
//! the order it came, so nothing overtakes anything else. A line is forwarded as the bytes
//! it came as, unless the proxy judges it:
//!
//! - from the client, a `tools/call` request is read (its name and arguments) and gated:
//!   a refusal is answered here and the server never sees the call; a call that passes goes
//!   on as it came (the client's id, `_meta`, `task` and every other field). A `server/discover`
//!   is refused here when `--upstream-protocol 2025-11-25` says the session is of that
//!   revision. Every other line goes on unread but for its id and method.
//! - from the server, the answers to the client's `tools/list`, `tools/call`, `tasks/get`
//!   and `tasks/result` and the `notifications/tasks` that carry a task's result are read
//!   and judged. Only what the judge changes is written anew (a refused call's error
//!   result, an advertised `outputSchema`, a lifted `structuredContent`, the contract's
//!   `_meta`, a quarantined tool left out of a page); every other field of the message
//!   keeps the server's bytes. Everything else goes on unread but for its id and method.
//!
//! The proxy sends the server requests of its own only to learn the tools when a call
//! names one its listing does not know (or after `notifications/tools/list_changed`):
//! `tools/list` under ids of its own (`"contract-proxy/<pid>/N"`), whose answers the
//! client never sees.

pub(crate) mod http;
mod pipes;
mod upstream_http;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet, VecDeque};
use std::process::{ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use contract_runtime::client::lock::ServerSource;
use rmcp::model::{ErrorData, ProtocolVersion};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::{oneshot, Notify};
use tokio::time::Instant;

use pipes::Lines;
pub(crate) use pipes::Outbox;

use crate::policy::{Gate, Judged, Listing};
use crate::proxy::Shared;

/// How many ids of requests whose answers are dropped (cancelled, timed out) are kept.
const DROPPED_MEMORY: usize = 4096;

/// The least time the request that starts a session (`initialize`, `server/discover`) is
/// given: it waits for the server's process to start too.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// The most `tools/list` pages the proxy reads for itself.
const MAX_PAGES: usize = 1000;

/// What the proxy does with the answer to a request of the client's.
#[derive(Debug)]
enum Judge {
    /// Forwarded unread.
    Plain,
    /// `initialize` or `server/discover`: whether the server has tools is read.
    Start,
    /// A page of `tools/list`; `first` when the request named no cursor.
    List { first: bool },
    /// A `tools/call`, judged with the listing it was gated with.
    Call { tool: String, arguments: Value, listing: Arc<Listing> },
    /// `tasks/get`: a completed task's `result` is judged.
    TaskGet,
    /// `tasks/result` (2025-11-25) of this task: the result is the tool's.
    TaskResult { task: String },
}

#[derive(Debug)]
struct Pending {
    method: String,
    judge: Judge,
    /// Which deadline is its own (a client may use an id again).
    seq: u64,
}

#[derive(Debug, Default)]
struct Book {
    /// The client's requests in flight, by their id's JSON text.
    pending: HashMap<String, Pending>,
    /// When each request times out, oldest first (every request has the same timeout).
    deadlines: VecDeque<(Instant, String, u64)>,
    seq: u64,
    /// Ids of requests whose late answers are dropped, oldest first.
    dropped: HashSet<String>,
    dropped_order: VecDeque<String>,
    /// The proxy's own requests in flight, by id.
    own: HashMap<String, oneshot::Sender<Result<Box<RawValue>, String>>>,
    /// The tools of the pages of the client's current `tools/list`, in order.
    pages: Vec<Value>,
}

impl Book {
    fn take(&mut self, id: &str) -> Option<Pending> {
        let pending = self.pending.remove(id)?;
        while self.deadlines.front().is_some_and(|(_, key, seq)| self.pending.get(key).is_none_or(|p| p.seq != *seq)) {
            self.deadlines.pop_front();
        }
        Some(pending)
    }

    fn drop_answer(&mut self, id: String) {
        if self.dropped.insert(id.clone()) {
            self.dropped_order.push_back(id);
        }
        while self.dropped_order.len() > DROPPED_MEMORY {
            if let Some(old) = self.dropped_order.pop_front() {
                self.dropped.remove(&old);
            }
        }
    }
}

/// The state both readers share.
#[derive(Debug)]
pub(crate) struct Wire {
    shared: Arc<Shared>,
    down: Down,
    up: Up,
    book: Mutex<Book>,
    /// The prefix of the proxy's own request ids.
    prefix: String,
    next: AtomicU64,
    /// Whether the server's `initialize` (or `server/discover`) answer declared tools.
    has_tools: AtomicBool,
    /// Set by `notifications/tools/list_changed`: the next call lists the tools afresh.
    stale: AtomicBool,
    /// The `_meta` envelope of the client's latest request (a session without
    /// `initialize`, 2026-07-28): the proxy's own requests carry the same.
    envelope: Mutex<Map<String, Value>>,
    /// Refuse a client's `server/discover` (`--upstream-protocol 2025-11-25`).
    legacy_only: bool,
    /// Whether the session is of the 2026-07-28 revision or newer: the results the proxy
    /// writes say `"resultType": "complete"`, as that revision's results do.
    modern: AtomicBool,
    wake: Notify,
    settled: Notify,
}

/// The top level of a JSON-RPC message, undecoded.
#[derive(Deserialize)]
struct Peek<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

/// The parameters of a `tools/call`, as far as the gate reads them.
#[derive(Deserialize)]
struct CallParams<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct Cancelled<'a> {
    #[serde(rename = "requestId", borrow)]
    request_id: &'a RawValue,
}

/// The fields of a request's parameters the proxy reads besides a call's.
#[derive(Deserialize, Default)]
struct Params<'a> {
    #[serde(borrow, default)]
    cursor: Option<&'a RawValue>,
    #[serde(rename = "taskId", default)]
    task_id: Option<String>,
    #[serde(rename = "_meta", default)]
    meta: Option<Map<String, Value>>,
}

/// A task as `tasks/get` and `notifications/tasks` carry it.
#[derive(Deserialize)]
struct TaskPeek<'a> {
    #[serde(rename = "taskId", default)]
    task_id: Option<String>,
    #[serde(borrow, default)]
    status: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
}

/// The fields of a `tools/call` result the judge reads, the content left undecoded.
#[derive(Default)]
struct Fields<'a> {
    content: Option<&'a RawValue>,
    structured_content: Option<Value>,
    is_error: Option<Value>,
    meta: Option<Value>,
    result_type: Option<Value>,
    task_id: Option<Value>,
    task: Option<Value>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Fields<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Object<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Object<'a> {
            type Value = Fields<'a>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a result object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Fields<'a>, A::Error> {
                let mut fields = Fields::default();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match &*key {
                        "content" => fields.content = Some(map.next_value()?),
                        "structuredContent" => fields.structured_content = Some(map.next_value()?),
                        "isError" => fields.is_error = Some(map.next_value()?),
                        "_meta" => fields.meta = Some(map.next_value()?),
                        "resultType" => fields.result_type = Some(map.next_value()?),
                        "taskId" => fields.task_id = Some(map.next_value()?),
                        "task" => fields.task = Some(map.next_value()?),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(fields)
            }
        }
        deserializer.deserialize_map(Object(std::marker::PhantomData))
    }
}

impl Fields<'_> {
    /// The id of the task a `tools/call` was answered with: a 2026-07-28 `resultType:
    /// "task"` result, or a 2025-11-25 `{"task": {"taskId"}}` one.
    fn created_task(&self) -> Option<String> {
        if self.result_type.as_ref().is_some_and(|kind| kind == "task") {
            return self.task_id.as_ref().and_then(Value::as_str).map(str::to_owned);
        }
        if self.content.is_none() {
            return self.task.as_ref()?.get("taskId")?.as_str().map(str::to_owned);
        }
        None
    }

    /// The result as the judge sees it (an empty content array for its content), when
    /// its content is an array and its other fields have their types.
    fn skeleton(self) -> Option<Value> {
        let content_is_array = self.content.is_some_and(|c| c.get().trim_start().starts_with('['));
        if !content_is_array
            || self.structured_content.as_ref().is_some_and(|v| !v.is_object())
            || self.is_error.as_ref().is_some_and(|v| !v.is_boolean())
        {
            return None;
        }
        let mut object = Map::new();
        object.insert("content".to_owned(), Value::Array(Vec::new()));
        for (key, value) in
            [("structuredContent", self.structured_content), ("isError", self.is_error), ("_meta", self.meta)]
        {
            if let Some(value) = value {
                object.insert(key.to_owned(), value);
            }
        }
        Some(Value::Object(object))
    }
}

/// An object's members in the order written, their values undecoded.
struct Members<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Object<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Object<'a> {
            type Value = Members<'a>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Members<'a>, A::Error> {
                let mut members = Vec::new();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    members.push((key, map.next_value()?));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Object(std::marker::PhantomData))
    }
}

/// `raw` (a JSON object) with the members named in `changes` replaced by their new JSON
/// text (`None`: left out), new ones added at the end; every other member as written.
fn splice(raw: &str, changes: &[(&str, Option<String>)]) -> Result<String, serde_json::Error> {
    let Members(members) = serde_json::from_str(raw)?;
    let mut out = String::with_capacity(raw.len() + 64);
    out.push('{');
    let mut first = true;
    let mut member = |out: &mut String, key: &str, value: &str| {
        if !first {
            out.push(',');
        }
        first = false;
        out.push_str(&serde_json::to_string(key).unwrap_or_default());
        out.push(':');
        out.push_str(value);
    };
    for (key, value) in &members {
        match changes.iter().find(|(name, _)| name == key) {
            Some((_, Some(new))) => member(&mut out, key, new),
            Some((_, None)) => {}
            None => member(&mut out, key, value.get()),
        }
    }
    for (name, new) in changes {
        if let Some(new) = new {
            if !members.iter().any(|(key, _)| key == name) {
                member(&mut out, name, new);
            }
        }
    }
    out.push('}');
    Ok(out)
}

/// A JSON-RPC response line with `id` (its JSON text) and `field` (`result` or `error`).
fn response_line(id: &str, field: &str, body: &str) -> Vec<u8> {
    let mut line = Vec::with_capacity(id.len() + body.len() + 40);
    line.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    line.extend_from_slice(id.as_bytes());
    line.extend_from_slice(b",\"");
    line.extend_from_slice(field.as_bytes());
    line.extend_from_slice(b"\":");
    line.extend_from_slice(body.as_bytes());
    line.push(b'}');
    line
}

impl Wire {
    fn book(&self) -> MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn send_down_result(&self, id: &str, result: &str) {
        let _ = self.down.push(response_line(id, "result", result));
    }

    fn send_down_error(&self, id: &str, error: &ErrorData) {
        let body = serde_json::to_string(error).unwrap_or_else(|_| "{}".to_owned());
        let _ = self.down.push(response_line(id, "error", &body));
    }

    /// A result the proxy writes, in the session's revision.
    fn written(&self, mut result: Value) -> String {
        if self.modern.load(Ordering::Acquire) {
            if let Value::Object(object) = &mut result {
                object.entry("resultType").or_insert_with(|| Value::String("complete".to_owned()));
            }
        }
        result.to_string()
    }

    fn forward_up(&self, line: &[u8]) {
        let _ = self.up.push(line.to_vec());
    }

    fn forward_down(&self, line: &[u8]) {
        let _ = self.down.push(line.to_vec());
    }

    /// Records a request of the client's in flight.
    fn expect(&self, id: &RawValue, method: &str, judge: Judge) {
        // The request that starts the session waits for the server to start as well.
        let timeout = match judge {
            Judge::Start => self.shared.timeout.max(START_TIMEOUT),
            _ => self.shared.timeout,
        };
        let mut book = self.book();
        let key = id.get().to_owned();
        let deadline = Instant::now() + timeout;
        // Deadlines stay in order: one earlier than the last is put in its place.
        let at = book.deadlines.iter().rposition(|(d, _, _)| *d <= deadline).map_or(0, |i| i + 1);
        let first = at == 0;
        book.seq += 1;
        let seq = book.seq;
        book.deadlines.insert(at, (deadline, key.clone(), seq));
        book.dropped.remove(&key);
        book.pending.insert(key, Pending { method: method.to_owned(), judge, seq });
        if first {
            self.wake.notify_one();
        }
    }

    // -------------------------------------------------------------- from the client

    async fn client_line(&self, line: &[u8]) {
        let peek = match serde_json::from_slice::<Peek<'_>>(line) {
            Ok(peek) => peek,
            Err(err) => {
                if serde_json::from_slice::<IgnoredAny>(line).is_ok() {
                    // JSON that is no JSON-RPC message.
                    self.send_down_error("null", &ErrorData::invalid_request("Invalid request", None));
                } else {
                    tracing::debug!(error = %err, "a line from the client that is not JSON is dropped");
                }
                return;
            }
        };
        let (Some(method), Some(id)) = (peek.method.as_deref(), peek.id) else {
            // A notification, or the client's answer to the server's request.
            if peek.method.as_deref() == Some("notifications/cancelled") {
                self.cancelled(peek.params);
            }
            self.forward_up(line);
            return;
        };
        if peek.jsonrpc.as_deref() != Some("2.0") || peek.result.is_some() || peek.error.is_some() {
            self.send_down_error(id.get(), &ErrorData::invalid_request("Invalid request", None));
            return;
        }
        // The parameters are read for a cursor, a task id or a 2026-07-28 envelope only.
        let wanted = matches!(method, "tools/list" | "tasks/result")
            || peek.params.is_some_and(|p| contains(p.get().as_bytes(), ENVELOPE_KEY.as_bytes()));
        let params = peek
            .params
            .filter(|_| wanted)
            .and_then(|p| serde_json::from_str::<Params<'_>>(p.get()).ok())
            .unwrap_or_default();
        if let Some(meta) = params.meta {
            let envelope: Map<String, Value> =
                meta.into_iter().filter(|(key, _)| key.starts_with("io.modelcontextprotocol/")).collect();
            if !envelope.is_empty() {
                if envelope.get(ENVELOPE_KEY).and_then(Value::as_str).is_some_and(modern) {
                    self.modern.store(true, Ordering::Release);
                }
                *self.envelope.lock().unwrap_or_else(PoisonError::into_inner) = envelope;
            }
        }
        let judge = match method {
            "tools/call" => return self.call(line, id, peek.params).await,
            "tools/list" => Judge::List { first: params.cursor.is_none_or(|c| c.get() == "null") },
            "server/discover" if self.legacy_only => {
                let error = ErrorData::unsupported_protocol_version(
                    ProtocolVersion::V_2026_07_28,
                    ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25),
                );
                self.send_down_error(id.get(), &error);
                return;
            }
            "initialize" | "server/discover" => Judge::Start,
            "tasks/get" => Judge::TaskGet,
            "tasks/result" => match params.task_id {
                Some(task) => Judge::TaskResult { task },
                None => Judge::Plain,
            },
            _ => Judge::Plain,
        };
        self.expect(id, method, judge);
        self.forward_up(line);
    }

    /// A client's `notifications/cancelled`: the request's answer, if one still comes, is
    /// dropped (the notification itself goes on to the server).
    fn cancelled(&self, params: Option<&RawValue>) {
        let Some(cancelled) = params.and_then(|p| serde_json::from_str::<Cancelled<'_>>(p.get()).ok()) else {
            return;
        };
        let key = cancelled.request_id.get().to_owned();
        let mut book = self.book();
        if book.take(&key).is_some() {
            book.drop_answer(key);
        }
        drop(book);
        self.notify_settled();
    }

    /// A `tools/call`: gated, then forwarded as it came or answered here.
    async fn call(&self, line: &[u8], id: &RawValue, params: Option<&RawValue>) {
        let Some(call) = params.and_then(|p| serde_json::from_str::<CallParams<'_>>(p.get()).ok()) else {
            let error = ErrorData::invalid_request("Invalid request: tools/call takes an object with a `name`", None);
            self.send_down_error(id.get(), &error);
            return;
        };
        if !self.has_tools.load(Ordering::Acquire) {
            // A server that declared no tools answers for itself.
            self.expect(id, "tools/call", Judge::Plain);
            self.forward_up(line);
            return;
        }
        let arguments = match call.arguments {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(arguments) => arguments,
        };
        let mut listing = Arc::clone(&*self.shared.listing.read().await);
        if self.stale.load(Ordering::Acquire) || !listing.knows(&call.name) {
            match self.relist().await {
                Ok(fresh) => listing = fresh,
                Err(err) => tracing::warn!(error = %err, "listing the upstream's tools failed"),
            }
        }
        if !listing.knows(&call.name) {
            let message = format!("tool `{}` is not in the upstream server's tools/list", call.name);
            self.send_down_error(id.get(), &ErrorData::invalid_params(message, None));
            return;
        }
        if let Gate::Refuse(result) = self.shared.policy.gate(&listing, &call.name, &arguments) {
            tracing::info!(tool = %call.name, "call refused before forwarding");
            self.send_down_result(id.get(), &self.written(result));
            return;
        }
        self.expect(id, "tools/call", Judge::Call { tool: call.name.into_owned(), arguments, listing });
        self.forward_up(line);
    }

    /// Lists every page of the server's tools with requests of the proxy's own, and
    /// judges the listing.
    async fn relist(&self) -> Result<Arc<Listing>, String> {
        self.stale.store(false, Ordering::Release);
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut params = Map::new();
            if let Some(cursor) = cursor.take() {
                params.insert("cursor".to_owned(), Value::String(cursor));
            }
            let envelope = self.envelope.lock().unwrap_or_else(PoisonError::into_inner).clone();
            if !envelope.is_empty() {
                params.insert("_meta".to_owned(), Value::Object(envelope));
            }
            let page = self.own_request("tools/list", Value::Object(params)).await?;
            let page: Value = serde_json::from_str(page.get()).map_err(|err| err.to_string())?;
            if let Some(listed) = page.get("tools").and_then(Value::as_array) {
                tools.extend(listed.iter().cloned());
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) if !next.is_empty() => cursor = Some(next.to_owned()),
                _ => break,
            }
        }
        if cursor.is_some() {
            return Err(format!("the upstream server's tools/list did not end within {MAX_PAGES} pages"));
        }
        let listing = Arc::new(self.shared.policy.listing(tools));
        *self.shared.listing.write().await = Arc::clone(&listing);
        Ok(listing)
    }

    /// Sends a request of the proxy's own upstream and waits for its result.
    async fn own_request(&self, method: &str, params: Value) -> Result<Box<RawValue>, String> {
        let id = format!("{}{}", self.prefix, self.next.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        self.book().own.insert(serde_json::to_string(&id).unwrap_or_default(), tx);
        let request = serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.up.push_json(&request).map_err(|err| err.to_string())?;
        match tokio::time::timeout(self.shared.timeout, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(format!("the upstream server closed the connection; {method} was not answered")),
            Err(_) => {
                self.book().own.remove(&serde_json::to_string(&id).unwrap_or_default());
                Err(format!(
                    "the upstream server did not answer {method} within {}s",
                    self.shared.timeout.as_secs_f64()
                ))
            }
        }
    }

    // -------------------------------------------------------------- from the server

    async fn server_line(&self, line: &[u8]) {
        let Ok(peek) = serde_json::from_slice::<Peek<'_>>(line) else {
            tracing::warn!("a line from the upstream that is no JSON-RPC message is dropped");
            return;
        };
        match (peek.method.as_deref(), peek.id) {
            (None, Some(id)) => self.answer(line, id, peek.result, peek.error).await,
            (Some("notifications/tools/list_changed"), None) => {
                self.stale.store(true, Ordering::Release);
                self.forward_down(line);
            }
            (Some("notifications/tasks"), None) => match peek.params {
                Some(params) => match self.judge_task(params.get()) {
                    Some(judged) => {
                        let changed = splice(line_str(line), &[("params", Some(judged))]);
                        match changed {
                            Ok(changed) => self.forward_down(changed.as_bytes()),
                            Err(_) => self.forward_down(line),
                        }
                    }
                    None => self.forward_down(line),
                },
                None => self.forward_down(line),
            },
            // The server's requests and other notifications, as they came.
            _ => self.forward_down(line),
        }
    }

    /// The server's answer to a request.
    async fn answer(&self, line: &[u8], id: &RawValue, result: Option<&RawValue>, error: Option<&RawValue>) {
        let key = id.get();
        let (own, pending) = {
            let mut book = self.book();
            if let Some(own) = book.own.remove(key) {
                (Some(own), None)
            } else {
                let pending = book.take(key);
                if pending.is_none() && book.dropped.remove(key) {
                    // The answer to a request the client cancelled or that timed out.
                    return;
                }
                (None, pending)
            }
        };
        if let Some(own) = own {
            let answer = match (result, error) {
                (Some(result), _) => Ok(result.to_owned()),
                (None, Some(error)) => Err(format!("the upstream server answered with an error: {}", error.get())),
                (None, None) => Err("the upstream server's answer holds no result".to_owned()),
            };
            let _ = own.send(answer);
            return;
        }
        self.notify_settled();
        let (Some(pending), Some(result)) = (pending, result) else {
            self.forward_down(line);
            return;
        };
        let judged = match pending.judge {
            Judge::Plain => None,
            Judge::Start => {
                self.started(result.get());
                None
            }
            Judge::List { first } => self.judge_page(result.get(), first).await,
            Judge::Call { tool, arguments, listing } => self.judge_call(result.get(), &tool, &arguments, &listing),
            Judge::TaskGet => self.judge_task(result.get()),
            Judge::TaskResult { task } => self.judge_task_result(&task, result.get()),
        };
        match judged {
            None => self.forward_down(line),
            Some(judged) => self.send_down_result(key, &judged),
        }
    }

    /// The server's `initialize` (or `server/discover`) result: does it have tools?
    fn started(&self, result: &str) {
        #[derive(Deserialize)]
        struct Started {
            #[serde(default)]
            capabilities: Option<Capabilities>,
            #[serde(rename = "protocolVersion", default)]
            protocol_version: Option<String>,
        }
        #[derive(Deserialize)]
        struct Capabilities {
            #[serde(default)]
            tools: Option<IgnoredAny>,
        }
        let Ok(started) = serde_json::from_str::<Started>(result) else { return };
        if started.protocol_version.as_deref().is_some_and(modern) {
            self.modern.store(true, Ordering::Release);
        }
        let tools = started.capabilities.is_some_and(|capabilities| capabilities.tools.is_some());
        self.has_tools.store(tools, Ordering::Release);
        self.stale.store(true, Ordering::Release);
    }

    /// A page of the client's `tools/list`: the listing is judged with every page of the
    /// listing so far; the page goes on with quarantined tools left out and declared
    /// contracts advertised (`None`: as it came).
    async fn judge_page(&self, result: &str, first: bool) -> Option<String> {
        #[derive(Deserialize)]
        struct Page<'a> {
            #[serde(borrow, default)]
            tools: Option<Vec<&'a RawValue>>,
        }
        let page = serde_json::from_str::<Page<'_>>(result).ok()?;
        let raw_tools = page.tools?;
        let parsed: Vec<Value> = raw_tools.iter().filter_map(|raw| serde_json::from_str(raw.get()).ok()).collect();
        let all = {
            let mut book = self.book();
            if first {
                book.pages.clear();
            }
            book.pages.extend(parsed.iter().cloned());
            book.pages.clone()
        };
        let listing = Arc::new(self.shared.policy.listing(all));
        *self.shared.listing.write().await = Arc::clone(&listing);
        if first {
            self.stale.store(false, Ordering::Release);
        }
        let mut changed = false;
        let mut out = Vec::with_capacity(raw_tools.len());
        for raw in &raw_tools {
            let Ok(tool) = serde_json::from_str::<Value>(raw.get()) else {
                out.push(raw.get().to_owned());
                continue;
            };
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                out.push(raw.get().to_owned());
                continue;
            };
            if listing.quarantined.contains_key(name) {
                changed = true;
                continue;
            }
            match listing.tools.iter().find(|t| t.get("name").and_then(Value::as_str) == Some(name)) {
                Some(judged) if *judged != tool => {
                    changed = true;
                    out.push(judged.to_string());
                }
                _ => out.push(raw.get().to_owned()),
            }
        }
        if !changed {
            return None;
        }
        splice(result, &[("tools", Some(format!("[{}]", out.join(","))))]).ok()
    }

    /// A `tools/call` result, judged (`None`: it passes as it came).
    fn judge_call(&self, result: &str, tool: &str, arguments: &Value, listing: &Arc<Listing>) -> Option<String> {
        let policy = &self.shared.policy;
        let fields = match serde_json::from_str::<Fields<'_>>(result) {
            Ok(fields) => fields,
            Err(err) => {
                // Not an object, or too deep to decode: the judge says what it makes of
                // what can be read; what cannot is refused for a tool with a contract.
                let Ok(mut value) = serde_json::from_str::<Value>(result) else {
                    return self.undecodable(listing, tool, &err);
                };
                return match policy.judge_in_place(listing, tool, arguments, &mut value) {
                    Judged::Unchanged => None,
                    Judged::Amended | Judged::Replaced => Some(self.written(value)),
                };
            }
        };
        if let Some(task) = fields.created_task() {
            self.shared.record_task(task, None, tool.to_owned(), arguments.clone(), Arc::clone(listing));
            return None;
        }
        // Input requests (2026-07-28) hold no output of the tool.
        if fields.result_type.as_ref().is_some_and(|kind| kind != "complete") {
            return None;
        }
        let lifts = policy.reads_content(listing, tool);
        // The judge reads no content block unless it lifts one: a result whose content is
        // an array is judged on its other fields, its content never decoded.
        if let Some(mut skeleton) = fields.skeleton().filter(|_| !lifts) {
            return match policy.judge_in_place(listing, tool, arguments, &mut skeleton) {
                Judged::Unchanged => None,
                Judged::Replaced => Some(self.written(skeleton)),
                // Nothing is lifted here: the judge added to `_meta`.
                Judged::Amended => {
                    let meta = skeleton.get("_meta").map(Value::to_string);
                    splice(result, &[("_meta", meta)]).ok()
                }
            };
        }
        let mut value: Value = match serde_json::from_str(result) {
            Ok(value) => value,
            Err(err) => return self.undecodable(listing, tool, &err),
        };
        let before = value.clone();
        match policy.judge_in_place(listing, tool, arguments, &mut value) {
            Judged::Unchanged => None,
            Judged::Replaced => Some(self.written(value)),
            Judged::Amended => {
                let mut changes = Vec::new();
                for key in ["structuredContent", "_meta"] {
                    if value.get(key) != before.get(key) {
                        changes.push((key, value.get(key).map(Value::to_string)));
                    }
                }
                splice(result, &changes).ok()
            }
        }
    }

    /// A result that cannot be decoded: refused for a tool whose results are judged,
    /// passed as it came for one whose are not.
    fn undecodable(&self, listing: &Listing, tool: &str, err: &serde_json::Error) -> Option<String> {
        if !self.shared.policy.judges_output(listing, tool) {
            return None;
        }
        let message = format!("the result of tool `{tool}` cannot be decoded to be judged: {err}");
        let code = contract_runtime::wire::ErrorCode::OutputContractViolation;
        Some(self.written(crate::policy::error_result(code, &message, &[], None)))
    }

    /// A task (`tasks/get`'s result, `notifications/tasks`'s params) whose completed
    /// result is judged (`None`: it passes as it came).
    fn judge_task(&self, task: &str) -> Option<String> {
        let peek = serde_json::from_str::<TaskPeek<'_>>(task).ok()?;
        if peek.status.as_deref() != Some("completed") {
            return None;
        }
        let (id, result) = (peek.task_id?, peek.result?);
        let judged = self.judge_task_result(&id, result.get())?;
        splice(task, &[("result", Some(judged))]).ok()
    }

    /// The result of task `id`, judged as its tool's (`None`: it passes as it came).
    fn judge_task_result(&self, id: &str, result: &str) -> Option<String> {
        let Ok(Value::Object(object)) = serde_json::from_str::<Value>(result) else { return None };
        let judged = self.shared.judge_task_result(id, object.clone());
        (judged != object).then(|| Value::Object(judged).to_string())
    }

    // -------------------------------------------------------------- endings

    fn notify_settled(&self) {
        if self.book().pending.is_empty() {
            self.settled.notify_waiters();
        }
    }

    /// Waits until no request of the client's is in flight.
    async fn all_settled(&self) {
        loop {
            let settled = self.settled.notified();
            if self.book().pending.is_empty() {
                return;
            }
            settled.await;
        }
    }

    /// The server closed its output: every request in flight gets an error.
    fn upstream_closed(&self) {
        let (pending, own) = {
            let mut book = self.book();
            book.deadlines.clear();
            (book.pending.drain().collect::<Vec<_>>(), book.own.drain().collect::<Vec<_>>())
        };
        for (id, pending) in pending {
            let message = format!("the upstream server closed the connection; {} was not answered", pending.method);
            self.send_down_error(&id, &ErrorData::internal_error(message, None));
        }
        drop(own);
        self.settled.notify_waiters();
    }

    /// Answers the requests the server did not answer in time, and cancels them upstream.
    async fn expire(self: Arc<Self>) {
        loop {
            let now = Instant::now();
            let (expired, next) = {
                let mut book = self.book();
                let mut expired = Vec::new();
                while let Some((deadline, _, _)) = book.deadlines.front() {
                    if *deadline > now {
                        break;
                    }
                    let Some((_, key, seq)) = book.deadlines.pop_front() else { break };
                    if book.pending.get(&key).is_some_and(|p| p.seq == seq) {
                        if let Some(pending) = book.pending.remove(&key) {
                            book.drop_answer(key.clone());
                            expired.push((key, pending.method));
                        }
                    }
                }
                (expired, book.deadlines.front().map(|(deadline, _, _)| *deadline))
            };
            if !expired.is_empty() {
                self.notify_settled();
            }
            for (id, method) in expired {
                let message = format!(
                    "the upstream server did not answer {method} within {}s",
                    self.shared.timeout.as_secs_f64()
                );
                self.send_down_error(&id, &ErrorData::internal_error(message, None));
                let cancel = format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id},"reason":"request timeout"}}}}"#
                );
                let _ = self.up.push(cancel.into_bytes());
            }
            // An earlier deadline queued meanwhile wakes the timer.
            match next {
                Some(deadline) => tokio::select! {
                    () = tokio::time::sleep_until(deadline) => {}
                    () = self.wake.notified() => {}
                },
                None => self.wake.notified().await,
            }
        }
    }
}

/// The `_meta` key a 2026-07-28 request names its revision with.
const ENVELOPE_KEY: &str = "io.modelcontextprotocol/protocolVersion";

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle)
}

/// Whether a protocol revision is 2026-07-28 or newer (revisions are dates).
fn modern(version: &str) -> bool {
    version >= "2026-07-28"
}

fn line_str(line: &[u8]) -> &str {
    std::str::from_utf8(line).unwrap_or_default()
}

/// Where the lines for the client go: the proxy's stdout, or the HTTP front's routing
/// of one session.
#[derive(Debug)]
pub(crate) enum Down {
    Pipe(Outbox),
    Http(Arc<http::Routes>),
}

impl Down {
    fn push(&self, line: Vec<u8>) -> std::io::Result<()> {
        match self {
            Self::Pipe(outbox) => outbox.push(line),
            Self::Http(routes) => {
                routes.deliver(line);
                Ok(())
            }
        }
    }

    async fn drained(&self) {
        if let Self::Pipe(outbox) = self {
            outbox.drained().await;
        }
    }
}

/// Where the lines for the server go: its process's stdin, or POSTs to its URL.
#[derive(Debug)]
pub(crate) enum Up {
    Pipe(Outbox),
    Http(upstream_http::HttpUp),
}

impl Up {
    fn push(&self, line: Vec<u8>) -> std::io::Result<()> {
        match self {
            Self::Pipe(outbox) => outbox.push(line),
            Self::Http(http) => http.push(line),
        }
    }

    fn push_json(&self, message: &impl serde::Serialize) -> std::io::Result<()> {
        self.push(serde_json::to_vec(message).map_err(std::io::Error::other)?)
    }

    async fn drained(&self) {
        if let Self::Pipe(outbox) = self {
            outbox.drained().await;
        }
    }

    /// Ends an HTTP upstream's session.
    async fn close(&self) {
        if let Self::Http(http) = self {
            http.close().await;
        }
    }
}

/// What the upstream is: a command line to start, or a URL.
#[derive(Clone, Debug)]
pub(crate) enum Target {
    Command(Vec<String>),
    Url(String),
}

/// The relay's state for one session, its timer started.
fn wire(shared: Arc<Shared>, legacy_only: bool, down: Down, up: Up) -> Arc<Wire> {
    let wire = Arc::new(Wire {
        shared,
        down,
        up,
        book: Mutex::new(Book::default()),
        prefix: format!("contract-proxy/{}/", std::process::id()),
        next: AtomicU64::new(1),
        has_tools: AtomicBool::new(false),
        stale: AtomicBool::new(true),
        envelope: Mutex::new(Map::new()),
        legacy_only,
        modern: AtomicBool::new(false),
        wake: Notify::new(),
        settled: Notify::new(),
    });
    if let Up::Http(http) = &wire.up {
        http.attach(&wire);
    }
    tokio::spawn(Arc::clone(&wire).expire());
    wire
}

/// The relay in front of an HTTP upstream, for one client session.
fn start_url(url: &str, shared: Arc<Shared>, legacy_only: bool, down: Down) -> Arc<Wire> {
    wire(shared, legacy_only, down, Up::Http(upstream_http::HttpUp::new(url)))
}

/// One upstream session: the server's process, started, and the relay's state.
struct Session {
    wire: Arc<Wire>,
    child: tokio::process::Child,
    stdout: tokio::process::ChildStdout,
}

/// Starts the upstream command line for one client session, whose lines go to `down`.
fn start(
    command: &[String],
    source: &ServerSource,
    shared: Arc<Shared>,
    legacy_only: bool,
    down: Down,
) -> Result<Session, String> {
    let (program, rest) = command.split_first().ok_or("give a command line after `--` or --upstream-url")?;
    // The upstream's stderr is the proxy's: its own messages reach whoever reads ours.
    let mut child = tokio::process::Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|err| format!("cannot start {source}: {err}"))?;
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        return Err(format!("cannot reach the pipes of {source}"));
    };
    let wire = wire(shared, legacy_only, down, Up::Pipe(Outbox::spawn(stdin)));
    Ok(Session { wire, child, stdout })
}

/// Reads the server's lines in order until it closes its output; then every request in
/// flight gets an error, and the exit status of the process is returned.
async fn relay_upstream(
    wire: Arc<Wire>,
    stdout: tokio::process::ChildStdout,
    mut child: tokio::process::Child,
) -> String {
    let mut lines = Lines::new(stdout);
    while lines.next().await {
        wire.server_line(&lines.line).await;
        lines.line.clear();
    }
    wire.upstream_closed();
    match tokio::time::timeout(Duration::from_secs(2), child.wait()).await {
        Ok(Ok(status)) => format!(" ({status})"),
        _ => String::new(),
    }
}

/// Serves the client on the proxy's stdin and stdout in front of the upstream command
/// line, until either side goes away.
pub(crate) async fn serve(
    target: &Target,
    source: &ServerSource,
    shared: Arc<Shared>,
    legacy_only: bool,
) -> Result<ExitCode, String> {
    let (client_read, client_write) = contract_runtime::rmcp::stdio_pipes();
    let down = Down::Pipe(Outbox::spawn(client_write));
    let command = match target {
        Target::Command(command) => command,
        Target::Url(url) => {
            let wire = start_url(url, shared, legacy_only, down);
            eprintln!("contract-proxy: the client's own session goes to {source}");
            return serve_client(wire, client_read).await;
        }
    };
    let Session { wire, child, stdout } = start(command, source, shared, legacy_only, down)?;
    eprintln!("contract-proxy: upstream {source} started; the client's own session goes to it");

    // The server's side: its lines in order; its end ends the proxy.
    let server = Arc::clone(&wire);
    let source_name = source.to_string();
    tokio::spawn(async move {
        let status = relay_upstream(Arc::clone(&server), stdout, child).await;
        // The errors of the requests in flight reach the client first.
        let _ = tokio::time::timeout(Duration::from_secs(2), server.down.drained()).await;
        eprintln!("contract-proxy: the upstream server closed the connection{status}: {source_name} ended; exiting");
        std::process::exit(1);
    });

    serve_client(wire, client_read).await
}

/// The client's side, in order: its end ends the proxy once what it waits for is answered.
async fn serve_client(
    wire: Arc<Wire>,
    client_read: impl tokio::io::AsyncRead + Unpin + Send + 'static,
) -> Result<ExitCode, String> {
    let mut lines = Lines::new(client_read);
    while lines.next().await {
        wire.client_line(&lines.line).await;
        lines.line.clear();
    }
    let limit = wire.shared.timeout;
    let _ = tokio::time::timeout(limit, wire.all_settled()).await;
    let _ = tokio::time::timeout(limit, wire.down.drained()).await;
    let _ = tokio::time::timeout(limit, wire.up.drained()).await;
    let _ = tokio::time::timeout(limit, wire.up.close()).await;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::splice;

    #[test]
    fn a_splice_keeps_every_other_member_as_written() {
        let raw = r#"{"b":0.7,"a":1,"_meta":{"x":1.0}}"#;
        let out = splice(raw, &[("_meta", Some(r#"{"y":2}"#.to_owned())), ("c", Some("3".to_owned()))]).unwrap();
        assert_eq!(out, r#"{"b":0.7,"a":1,"_meta":{"y":2},"c":3}"#);
        // A member left out; control: no change is the same text.
        assert_eq!(splice(raw, &[("a", None)]).unwrap(), r#"{"b":0.7,"_meta":{"x":1.0}}"#);
        assert_eq!(splice(raw, &[]).unwrap(), raw);
    }
}
