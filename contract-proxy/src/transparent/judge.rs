//! The server's lines: the answers the relay judges (`tools/list` pages, `tools/call`
//! results, the results tasks carry) rewritten only where the judge changes them; every
//! other line as the server wrote it.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use rmcp::model::ErrorData;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::book::Judge;
use super::message::{line_str, modern, splice, Cancelled, Fields, Peek, TaskPeek};
use super::wire::Wire;
use crate::verdicts::{Judged, Listing};

impl Wire {
    pub(super) async fn server_line(&self, line: &[u8]) {
        if self.quick_answer(line) {
            return;
        }
        let Ok(peek) = serde_json::from_slice::<Peek<'_>>(line) else {
            let what = if serde_json::from_slice::<IgnoredAny>(line).is_ok() {
                "a JSON line from the upstream that is no JSON-RPC message"
            } else {
                "a line from the upstream that is not JSON"
            };
            self.unread_line(what, line);
            return;
        };
        match (peek.method.as_deref(), peek.id) {
            (None, Some(id)) => self.answer(line, id, peek.result, peek.error).await,
            (None, None) => self.unread_line("a JSON object from the upstream with neither a method nor an id", line),
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
            // The server's requests and other notifications, as they came; a request is
            // remembered until the client answers it.
            (Some(method), id) => {
                if let Some(id) = id {
                    self.book().asked(id.get());
                } else if method == "notifications/cancelled" {
                    // The server withdrew a request of its own.
                    if let Some(cancelled) =
                        peek.params.and_then(|p| serde_json::from_str::<Cancelled<'_>>(p.get()).ok())
                    {
                        self.book().answered(cancelled.request_id.get());
                    }
                }
                self.forward_down(line);
            }
        }
    }

    /// A line of the server's that is dropped: logged (its length, not its bytes) and
    /// counted, so that a request it may have been meant to answer times out saying so.
    pub(super) fn unread_line(&self, what: &str, line: &[u8]) {
        self.unread.fetch_add(1, Ordering::AcqRel);
        tracing::warn!(bytes = line.len(), "{what} is dropped");
    }

    /// The server's answer to a request.
    pub(super) async fn answer(&self, line: &[u8], id: &RawValue, result: Option<&RawValue>, error: Option<&RawValue>) {
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
        let Some(pending) = pending else {
            // No request in flight has this id: the client never sent it, or it was
            // answered already (by the proxy, or by an earlier answer). It never reaches
            // the client.
            self.unread_line("an answer from the upstream to no request in flight", line);
            return;
        };
        self.notify_settled();
        let Some(result) = result else {
            if error.is_some() {
                self.forward_down(line);
            } else {
                let message =
                    format!("the upstream server's answer to {} holds neither a result nor an error", pending.method);
                self.send_down_error(key, &ErrorData::internal_error(message, None));
            }
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
    pub(super) fn started(&self, result: &str) {
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
    pub(super) async fn judge_page(&self, result: &str, first: bool) -> Option<String> {
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
    pub(super) fn judge_call(
        &self,
        result: &str,
        tool: &str,
        arguments: &str,
        listing: &Arc<Listing>,
    ) -> Option<String> {
        let policy = &self.shared.policy;
        // The gate made sure they decode.
        let arguments = &serde_json::from_str::<Value>(arguments).unwrap_or_else(|_| Value::Object(Map::new()));
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
            self.shared.record_task(task, tool.to_owned(), arguments.clone(), Arc::clone(listing));
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
    pub(super) fn undecodable(&self, listing: &Listing, tool: &str, err: &serde_json::Error) -> Option<String> {
        if !self.shared.policy.judges_output(listing, tool) {
            return None;
        }
        let message = format!("the result of tool `{tool}` cannot be decoded to be judged: {err}");
        let code = contract_runtime::wire::ErrorCode::OutputContractViolation;
        Some(self.written(crate::verdicts::error_result(code, &message, &[], None)))
    }

    /// A task (`tasks/get`'s result, `notifications/tasks`'s params) whose completed
    /// result is judged (`None`: it passes as it came).
    pub(super) fn judge_task(&self, task: &str) -> Option<String> {
        let peek = serde_json::from_str::<TaskPeek<'_>>(task).ok()?;
        if peek.status.as_deref() != Some("completed") {
            return None;
        }
        let (id, result) = (peek.task_id?, peek.result?);
        let judged = self.judge_task_result(&id, result.get())?;
        splice(task, &[("result", Some(judged))]).ok()
    }

    /// The result of task `id`, judged as its tool's (`None`: it passes as it came).
    pub(super) fn judge_task_result(&self, id: &str, result: &str) -> Option<String> {
        let Ok(Value::Object(object)) = serde_json::from_str::<Value>(result) else { return None };
        let judged = self.shared.judge_task_result(id, object.clone());
        (judged != object).then(|| Value::Object(judged).to_string())
    }
}
