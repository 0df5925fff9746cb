//! The fast lane: `tools/call` when both sides are stdio (the proxy's stdin/stdout
//! downstream, a child process's pipes upstream), without rmcp's two service loops.
//!
//! The proxy owns the four pipe ends. [`Downstream`] and [`Upstream`] are the
//! `rmcp::transport::Transport`s of the two rmcp halves; each reads its pipe line by line
//! and looks at every line before rmcp does:
//!
//! - downstream, a `tools/call` request for a tool the current listing knows, that is not
//!   task-augmented and whose gate says forward, goes upstream as it came, under an id of
//!   the proxy's own (`"contract-proxy/N"`, a string rmcp's client half never uses: its
//!   ids are numbers); a gate refusal is answered at once; a `notifications/cancelled` for
//!   such a call is sent upstream for its id. Every other line goes to rmcp, as before.
//! - upstream, the answer to such a call is judged with the listing the call was gated
//!   with, its id restored, and written downstream: the upstream's own bytes when the
//!   judged result is the result unchanged, re-encoded otherwise. Progress reports with a
//!   string token (rmcp's own tokens are numbers, so only a client's can be a string) and
//!   log messages are written downstream as they came, so they keep their order with the
//!   answers. Everything else goes to rmcp's client half.
//!
//! Each pipe has one writer task ([`Outbox`]): rmcp's messages and the lane's are whole
//! lines pushed to it without waiting, so no line is ever interleaved with another and no
//! cancelled future leaves half a line behind.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rmcp::model::{
    CallToolResult, ClientJsonRpcMessage, ErrorData, NumberOrString, ProgressToken, RequestId, ServerJsonRpcMessage,
    ServerResult,
};
use rmcp::service::{RoleClient, RoleServer};
use rmcp::transport::Transport;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, Notify};
use tokio::time::Instant;

use crate::policy::{Gate, Judged, Listing};
use crate::proxy::{convert, Shared};

/// The prefix of the ids the lane gives the calls it forwards.
const PREFIX: &str = "contract-proxy/";

/// The longest line read (one JSON-RPC message), as rmcp's own stdio transport: longer
/// lines are dropped and logged, and the connection stays open.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// The read buffer of each pipe.
const READ_BUFFER: usize = 256 * 1024;

mod pipes;

pub(crate) use pipes::{Downstream, Outbox, Upstream};

// ------------------------------------------------------------------ the lane

/// A forwarded call awaiting its answer.
#[derive(Debug)]
struct Call {
    client_id: RequestId,
    tool: String,
    arguments: Value,
    /// The listing the call was gated with: its result is judged with the same.
    listing: Arc<Listing>,
}

#[derive(Debug, Default)]
struct Book {
    calls: HashMap<u64, Call>,
    by_client: HashMap<RequestId, u64>,
    /// When each call times out, oldest first (every call has the same timeout).
    deadlines: VecDeque<(Instant, u64)>,
}

impl Book {
    fn take(&mut self, key: u64) -> Option<Call> {
        let call = self.calls.remove(&key)?;
        self.by_client.remove(&call.client_id);
        // Deadlines of calls already answered are dropped from the front.
        while self.deadlines.front().is_some_and(|(_, k)| !self.calls.contains_key(k)) {
            self.deadlines.pop_front();
        }
        Some(call)
    }
}

/// The lane's state, shared by both transports and its timer.
#[derive(Debug)]
pub(crate) struct Lane {
    shared: Arc<Shared>,
    down: Outbox,
    up: Outbox,
    /// Whether the upstream's session allows the lane: it has tools. Set once it is
    /// initialized and listed.
    enabled: AtomicBool,
    /// For an upstream session without `initialize` (2026-07-28), the `_meta` envelope
    /// every request carries — what rmcp's client half adds on the other lane: the
    /// session's revision, the proxy's client info and capabilities. A key the client's
    /// own call carries wins, as it does there.
    envelope: std::sync::OnceLock<Map<String, Value>>,
    /// Whether the downstream client completed its handshake.
    ready: AtomicBool,
    next: AtomicU64,
    book: Mutex<Book>,
    /// Wakes the timer when a deadline is queued.
    wake: Notify,
    /// Signalled when the last call in flight is settled.
    settled: Notify,
}

/// A JSON-RPC success, written by the lane.
#[derive(Serialize)]
struct Reply<'a, T: Serialize> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: &'a T,
}

/// `params` with `envelope`'s keys added to its `_meta` where the call has none of its
/// own; `None` when `params` is no object (rmcp's lane then answers it).
fn with_envelope(params: &str, envelope: &Map<String, Value>) -> Option<String> {
    let Ok(Value::Object(mut params)) = serde_json::from_str::<Value>(params) else { return None };
    let meta = params.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(meta) = meta else { return None };
    for (key, value) in envelope {
        meta.entry(key.clone()).or_insert_with(|| value.clone());
    }
    serde_json::to_string(&params).ok()
}

/// The top level of any JSON-RPC message.
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

/// A line from the upstream, read once: a result's fields as the judge needs them.
#[derive(Deserialize)]
struct ServerPeek<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<Fields<'a>>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

/// The result of a line, undecoded.
#[derive(Deserialize)]
struct RawResult<'a> {
    #[serde(borrow)]
    result: &'a RawValue,
}

/// The parameters of a `tools/call`, as far as the lane reads them.
#[derive(Deserialize)]
struct CallParams<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(rename = "_meta", default)]
    meta: Option<CallMeta>,
    #[serde(default)]
    task: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct CallMeta {
    #[serde(rename = "progressToken", default)]
    progress_token: Option<ProgressToken>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", default)]
    client_capabilities: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct Cancelled {
    #[serde(rename = "requestId")]
    request_id: RequestId,
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Deserialize)]
struct ProgressParams {
    #[serde(rename = "progressToken")]
    progress_token: ProgressToken,
}

impl Lane {
    /// The lane between `down` (the client's pipe) and `up` (the upstream's), with its timer.
    pub(crate) fn start(shared: Arc<Shared>, down: Outbox, up: Outbox) -> Arc<Self> {
        let lane = Arc::new(Self {
            shared,
            down,
            up,
            enabled: AtomicBool::new(false),
            envelope: std::sync::OnceLock::new(),
            ready: AtomicBool::new(false),
            next: AtomicU64::new(1),
            book: Mutex::new(Book::default()),
            wake: Notify::new(),
            settled: Notify::new(),
        });
        tokio::spawn(Arc::clone(&lane).expire());
        lane
    }

    /// Lets calls take the lane (or not), once the upstream is initialized and listed;
    /// with the `_meta` envelope of an upstream session that has no `initialize`.
    pub(crate) fn enable(&self, enabled: bool, envelope: Option<Map<String, Value>>) {
        if let Some(envelope) = envelope {
            let _ = self.envelope.set(envelope);
        }
        self.enabled.store(enabled, Ordering::Release);
    }

    /// The writer of the client's pipe.
    pub(crate) fn downstream_outbox(&self) -> &Outbox {
        &self.down
    }

    fn book(&self) -> MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn active(&self) -> bool {
        self.enabled.load(Ordering::Acquire) && self.ready.load(Ordering::Acquire)
    }

    fn send_down<T: Serialize>(&self, id: &RequestId, result: &T) {
        if let Err(err) = self.down.push_json(&Reply { jsonrpc: "2.0", id, result }) {
            tracing::debug!(error = %err, "an answer could not be written to the client");
        }
    }

    fn send_down_error(&self, id: RequestId, error: ErrorData) {
        let _ = self.down.push_json(&ServerJsonRpcMessage::error(error, Some(id)));
    }

    /// A line from the client: `true` when the lane took it.
    fn client_line(&self, line: &[u8]) -> bool {
        let Ok(peek) = serde_json::from_slice::<Peek<'_>>(line) else { return false };
        if peek.jsonrpc.as_deref() != Some("2.0") || peek.result.is_some() || peek.error.is_some() {
            return false;
        }
        match (peek.method.as_deref(), peek.id) {
            (Some("tools/call"), Some(id)) if self.active() => self.call(id, peek.params),
            (Some("notifications/cancelled"), None) => peek.params.is_some_and(|params| self.cancel(params)),
            (Some("notifications/initialized"), None) => {
                // The handshake completes with this line, which rmcp still gets.
                self.ready.store(true, Ordering::Release);
                false
            }
            _ => false,
        }
    }

    /// A `tools/call` from the client: forwarded or refused here, or left to rmcp.
    fn call(&self, id: &RawValue, params: Option<&RawValue>) -> bool {
        let shared = &*self.shared;
        if !shared.has_tools() {
            return false;
        }
        let (Ok(client_id), Some(params)) = (serde_json::from_str::<RequestId>(id.get()), params) else {
            return false;
        };
        let Ok(call) = serde_json::from_str::<CallParams<'_>>(params.get()) else { return false };
        if call.task.is_some() {
            return false;
        }
        let (token, declares) =
            call.meta.as_ref().map_or((None, false), |m| (m.progress_token.as_ref(), m.client_capabilities.is_some()));
        // rmcp numbers its own progress tokens: a client's numeric token could be taken
        // for one of them, so such calls keep rmcp's mapping.
        if matches!(token, Some(ProgressToken(NumberOrString::Number(_)))) {
            return false;
        }
        // A client that declared tasks at `initialize` has them declared on the call for
        // it by rmcp's lane, unless the call declares them itself.
        if !declares && shared.downstream_tasks.load(Ordering::Acquire) {
            return false;
        }
        let arguments = match call.arguments {
            None => Value::Object(Map::new()),
            Some(arguments @ Value::Object(_)) => arguments,
            Some(_) => return false,
        };
        // A listing being replaced: rmcp's lane waits for it.
        let Ok(listing) = shared.listing.try_read().map(|l| Arc::clone(&*l)) else { return false };
        if !listing.knows(&call.name) {
            return false;
        }
        if let Gate::Refuse(result) = shared.policy.gate(&listing, &call.name, &arguments) {
            tracing::info!(tool = %call.name, "call refused before forwarding");
            self.send_down(&client_id, &result);
            return true;
        }
        let enveloped = match self.envelope.get() {
            Some(envelope) => match with_envelope(params.get(), envelope) {
                Some(params) => Some(params),
                None => return false,
            },
            None => None,
        };
        let params = enveloped.as_deref().unwrap_or(params.get());
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        let mut line = Vec::with_capacity(params.len() + 80);
        line.extend_from_slice(br#"{"jsonrpc":"2.0","id":""#);
        line.extend_from_slice(PREFIX.as_bytes());
        line.extend_from_slice(key.to_string().as_bytes());
        line.extend_from_slice(br#"","method":"tools/call","params":"#);
        line.extend_from_slice(params.as_bytes());
        line.push(b'}');
        let record = Call { client_id: client_id.clone(), tool: call.name.into_owned(), arguments, listing };
        {
            let mut book = self.book();
            let first = book.deadlines.is_empty();
            book.calls.insert(key, record);
            book.by_client.insert(client_id.clone(), key);
            book.deadlines.push_back((Instant::now() + shared.timeout, key));
            if first {
                self.wake.notify_one();
            }
        }
        if self.up.push(line).is_err() {
            self.closed_call(key);
        }
        true
    }

    /// A client's `notifications/cancelled`: taken when it names a call of the lane.
    fn cancel(&self, params: &RawValue) -> bool {
        let Ok(cancelled) = serde_json::from_str::<Cancelled>(params.get()) else { return false };
        let key = {
            let mut book = self.book();
            let Some(key) = book.by_client.get(&cancelled.request_id).copied() else { return false };
            book.take(key);
            key
        };
        self.notify_settled();
        // The client hears nothing more of the call (rmcp drops a cancelled request's answer).
        let _ = self.up.push_json(&serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": { "requestId": format!("{PREFIX}{key}"), "reason": cancelled.reason },
        }));
        true
    }

    /// A line from the upstream: `true` when the lane took it.
    fn server_line(&self, line: &[u8]) -> bool {
        if !self.enabled.load(Ordering::Acquire) {
            return false;
        }
        let Ok(peek) = serde_json::from_slice::<ServerPeek<'_>>(line) else { return false };
        if peek.jsonrpc.as_deref() != Some("2.0") {
            return false;
        }
        match peek.method.as_deref() {
            None => match peek.id.and_then(|id| Some((id, lane_key(id.get())?))) {
                Some((id, key)) => self.settle(key, Answer { line, id }, peek.result, peek.error),
                None => false,
            },
            Some("notifications/progress") if peek.id.is_none() && self.ready.load(Ordering::Acquire) => {
                let client_token = peek
                    .params
                    .and_then(|p| serde_json::from_str::<ProgressParams>(p.get()).ok())
                    .is_some_and(|p| matches!(p.progress_token.0, NumberOrString::String(_)));
                client_token && self.down.push(line.to_vec()).is_ok()
            }
            Some("notifications/message") if peek.id.is_none() && self.ready.load(Ordering::Acquire) => {
                self.down.push(line.to_vec()).is_ok()
            }
            _ => false,
        }
    }

    /// The upstream's answer to call `key`. An answer that cannot be decoded is dropped,
    /// as rmcp drops it, and the call ends in the timeout error.
    fn settle(&self, key: u64, answer: Answer<'_>, result: Option<Fields<'_>>, error: Option<&RawValue>) -> bool {
        let fields = match (result, error) {
            (Some(fields), None) => fields,
            (None, Some(error)) => {
                match serde_json::from_str::<ErrorData>(error.get()) {
                    Ok(error) => {
                        if let Some(call) = self.take(key) {
                            self.send_down_error(call.client_id, error);
                        }
                    }
                    Err(err) => {
                        tracing::warn!(error = %err, "the upstream's error for tools/call cannot be decoded; dropped");
                    }
                }
                return true;
            }
            _ => {
                tracing::warn!("the upstream's answer to tools/call is neither a result nor an error; dropped");
                return true;
            }
        };
        // An answer to no call in flight (cancelled, or timed out) is dropped unread.
        let lifts = self.book().calls.get(&key).map(|call| self.shared.policy.lift_text.contains(&call.tool));
        match lifts {
            None => true,
            // The judge reads no content block unless it lifts one: a plain result is
            // judged on its other fields, its content never decoded.
            Some(false) => match fields.skeleton() {
                Some(skeleton) => self.settle_plain(key, &answer, skeleton),
                None => self.settle_whole(key, &answer),
            },
            Some(true) => self.settle_whole(key, &answer),
        }
    }

    /// A plain result judged on `skeleton`: its fields but the content.
    fn settle_plain(&self, key: u64, answer: &Answer<'_>, mut skeleton: Value) -> bool {
        let Some(call) = self.take(key) else { return true };
        match self.shared.policy.judge_in_place(&call.listing, &call.tool, &call.arguments, &mut skeleton) {
            Judged::Unchanged => self.send_spliced(&call.client_id, answer),
            Judged::Replaced => self.send_down(&call.client_id, &skeleton),
            // Nothing is lifted here: the judge added to `_meta`, which goes on the whole result.
            Judged::Amended => match answer.whole() {
                Ok(mut whole) => {
                    if let (Some(object), Some(meta)) = (whole.as_object_mut(), skeleton.get_mut("_meta")) {
                        object.insert("_meta".to_owned(), meta.take());
                    }
                    self.send_down(&call.client_id, &whole);
                }
                Err(err) => {
                    let message = format!("the upstream server's answer to tools/call is malformed: {err}");
                    self.send_down_error(call.client_id, ErrorData::internal_error(message, None));
                }
            },
        }
        true
    }

    /// A result decoded whole, for the judge to lift its text or for rmcp's own steps.
    fn settle_whole(&self, key: u64, answer: &Answer<'_>) -> bool {
        let value = match answer.whole() {
            Ok(value) => value,
            Err(err) => {
                tracing::warn!(error = %err, "the upstream's answer to tools/call cannot be decoded; dropped");
                return true;
            }
        };
        if !is_plain(&value) {
            // Tasks, input requests and results of unusual shapes take rmcp's own steps.
            let Ok(typed) = serde_json::from_value::<ServerResult>(value) else {
                tracing::warn!("the upstream's answer to tools/call is no result rmcp reads; dropped");
                return true;
            };
            if let Some(call) = self.take(key) {
                match self.typed_answer(&call, typed) {
                    Ok(result) => self.send_down(&call.client_id, &result),
                    Err(error) => self.send_down_error(call.client_id, error),
                }
            }
            return true;
        }
        let Some(call) = self.take(key) else { return true };
        let mut value = value;
        match self.shared.policy.judge_in_place(&call.listing, &call.tool, &call.arguments, &mut value) {
            Judged::Unchanged => self.send_spliced(&call.client_id, answer),
            Judged::Amended | Judged::Replaced => self.send_down(&call.client_id, &value),
        }
        true
    }

    /// The upstream's own line, under the client's id.
    fn send_spliced(&self, client_id: &RequestId, answer: &Answer<'_>) {
        let id = serde_json::to_vec(client_id).unwrap_or_default();
        let (before, after) = answer.around_id();
        let mut line = Vec::with_capacity(before.len() + id.len() + after.len() + 1);
        line.extend_from_slice(before);
        line.extend_from_slice(&id);
        line.extend_from_slice(after);
        let _ = self.down.push(line);
    }

    /// What rmcp's lane answers a result that is not a plain `CallToolResult` with.
    fn typed_answer(&self, call: &Call, typed: ServerResult) -> Result<Value, ErrorData> {
        match typed {
            // Input requests belong to protocol revisions the lane never runs on.
            ServerResult::InputRequiredResult(_) => Err(ErrorData::invalid_request(
                "InputRequiredResult requires negotiated protocol version 2026-07-28 or newer",
                None,
            )),
            ServerResult::CreateTaskResult(task) => {
                // One client over stdio: its status notifications go to it without a name.
                self.shared.record_task(
                    task.task.task_id.clone(),
                    None,
                    call.tool.clone(),
                    call.arguments.clone(),
                    Arc::clone(&call.listing),
                );
                convert(&ServerResult::CreateTaskResult(task), "tools/call")
            }
            other => {
                let result: Value = convert(&other, "tools/call")?;
                let judged = self.shared.policy.judge(&call.listing, &call.tool, &call.arguments, result);
                let result: CallToolResult = convert(&judged, "tools/call")?;
                let mut result = ServerResult::CallToolResult(result);
                result.strip_result_type_for_legacy_peer();
                result.strip_non_object_output_for_legacy_peer();
                convert(&result, "tools/call")
            }
        }
    }

    fn take(&self, key: u64) -> Option<Call> {
        let call = self.book().take(key);
        self.notify_settled();
        call
    }

    fn notify_settled(&self) {
        if self.book().calls.is_empty() {
            self.settled.notify_waiters();
        }
    }

    /// A call that could not be forwarded: the upstream's pipe is closed.
    fn closed_call(&self, key: u64) {
        if let Some(call) = self.take(key) {
            self.send_down_error(call.client_id, closed_error());
        }
    }

    /// The upstream closed its pipe: every call in flight gets the error rmcp's lane gives.
    fn upstream_closed(&self) {
        let calls: Vec<Call> = {
            let mut book = self.book();
            book.by_client.clear();
            book.deadlines.clear();
            book.calls.drain().map(|(_, call)| call).collect()
        };
        for call in calls {
            self.send_down_error(call.client_id, closed_error());
        }
        self.settled.notify_waiters();
    }

    /// Waits until no call of the lane is in flight.
    async fn all_settled(&self) {
        loop {
            let settled = self.settled.notified();
            if self.book().calls.is_empty() {
                return;
            }
            settled.await;
        }
    }

    /// Answers the calls the upstream did not answer in time, and cancels them upstream.
    async fn expire(self: Arc<Self>) {
        loop {
            let now = Instant::now();
            let (expired, next) = {
                let mut book = self.book();
                let mut expired = Vec::new();
                while let Some(&(deadline, key)) = book.deadlines.front() {
                    if deadline > now {
                        break;
                    }
                    book.deadlines.pop_front();
                    if let Some(call) = book.calls.remove(&key) {
                        book.by_client.remove(&call.client_id);
                        expired.push((key, call.client_id));
                    }
                }
                (expired, book.deadlines.front().map(|(deadline, _)| *deadline))
            };
            if !expired.is_empty() {
                self.notify_settled();
            }
            for (key, client_id) in expired {
                let message = format!(
                    "the upstream server did not answer tools/call within {}s",
                    self.shared.timeout.as_secs_f64()
                );
                self.send_down_error(client_id, ErrorData::internal_error(message, None));
                let _ = self.up.push_json(&serde_json::json!({
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": { "requestId": format!("{PREFIX}{key}"), "reason": "request timeout" },
                }));
            }
            match next {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => self.wake.notified().await,
            }
        }
    }
}

fn closed_error() -> ErrorData {
    ErrorData::internal_error("the upstream server closed the connection; tools/call was not answered", None)
}

/// The key of a lane id (`"contract-proxy/N"`, as the raw JSON text).
fn lane_key(raw: &str) -> Option<u64> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    let digits = inner.strip_prefix(PREFIX)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// A `tools/call` result rmcp's lane would pass on as it is: an object with a content
/// array, object (or no) `structuredContent`, a boolean (or no) `isError`, and no
/// `resultType` but `"complete"` (rmcp strips it, or reads another kind as a task or an input request).
fn is_plain(result: &Value) -> bool {
    let Some(object) = result.as_object() else { return false };
    // A 2026-07-28 upstream marks a complete result as such; any other kind is not plain.
    object.get("resultType").is_none_or(|kind| kind == "complete")
        && object.get("content").is_some_and(Value::is_array)
        && object.get("structuredContent").is_none_or(Value::is_object)
        && object.get("isError").is_none_or(Value::is_boolean)
}

/// An upstream line answering a call of the lane, and its id in it.
#[derive(Clone, Copy)]
struct Answer<'a> {
    line: &'a [u8],
    /// Borrowed from `line`.
    id: &'a RawValue,
}

impl<'a> Answer<'a> {
    /// The line before its id and after it.
    fn around_id(&self) -> (&'a [u8], &'a [u8]) {
        let start = (self.id.get().as_ptr() as usize).saturating_sub(self.line.as_ptr() as usize);
        let end = (start + self.id.get().len()).min(self.line.len());
        (&self.line[..start.min(end)], &self.line[end..])
    }

    /// The result, decoded whole.
    fn whole(&self) -> Result<Value, serde_json::Error> {
        let raw = serde_json::from_slice::<RawResult<'_>>(self.line)?;
        serde_json::from_str(raw.result.get())
    }
}

/// The fields of a `tools/call` result the judge reads, the content left undecoded. A
/// field present as `null` is present (`Some(Value::Null)`), as rmcp's types keep it;
/// only an object is read (a result is one).
#[derive(Default)]
struct Fields<'a> {
    content: Option<&'a RawValue>,
    structured_content: Option<Value>,
    is_error: Option<Value>,
    meta: Option<Value>,
    result_type: Option<Value>,
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
    /// The result as the judge sees it (an empty content array for its content), when it
    /// is plain (see [`is_plain`]).
    fn skeleton(self) -> Option<Value> {
        let content_is_array = self.content.is_some_and(|c| c.get().trim_start().starts_with('['));
        if self.result_type.as_ref().is_some_and(|kind| kind != "complete")
            || !content_is_array
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

#[cfg(test)]
mod tests {
    use super::{is_plain, lane_key};
    use serde_json::json;

    #[test]
    fn only_the_lanes_own_ids_are_read_as_its_keys() {
        assert_eq!(lane_key(r#""contract-proxy/17""#), Some(17));
        // Controls: rmcp's numeric ids, other strings, and near misses are not the lane's.
        for other in ["17", r#""17""#, r#""contract-proxy/""#, r#""contract-proxy/1a""#, r#""contract-proxy/-1""#] {
            assert_eq!(lane_key(other), None, "{other}");
        }
    }

    #[test]
    fn a_plain_result_is_told_from_the_ones_rmcp_reshapes() {
        assert!(is_plain(&json!({ "content": [], "structuredContent": { "a": 1 }, "isError": false })));
        // A 2026-07-28 upstream marks a complete result; it is still a plain one.
        assert!(is_plain(&json!({ "content": [], "resultType": "complete" })));
        for reshaped in [
            json!({ "content": [], "resultType": "input_required" }),
            json!({ "resultType": "task", "taskId": "t" }),
            json!({ "structuredContent": { "a": 1 } }),
            json!({ "content": [], "structuredContent": [1] }),
            json!({ "content": [], "isError": "yes" }),
            json!([]),
        ] {
            assert!(!is_plain(&reshaped), "{reshaped}");
        }
    }
}
