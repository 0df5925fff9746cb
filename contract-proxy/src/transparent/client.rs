//! The client's lines: each forwarded as it came, in order, but a `tools/call` that the
//! gate refuses (answered here) and a `server/discover` of a session held to 2025-11-25;
//! and the proxy's own `tools/list`, when a call names a tool its listing does not know.

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use rmcp::model::{ErrorData, ProtocolVersion};
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::oneshot;

use super::book::Judge;
use super::message::{holds_envelope, modern, CallParams, Cancelled, Params, Request, ENVELOPE_KEY};
use super::wire::Wire;
use crate::verdicts::{Gate, Listing};

/// The most `tools/list` pages the proxy reads for itself.
pub(super) const MAX_PAGES: usize = 1000;

impl Wire {
    pub(super) async fn client_line(&self, line: &[u8]) {
        let read = Request::read(line, &self.envelope_read.lock().unwrap_or_else(PoisonError::into_inner));
        let peek = match read {
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
            if let (None, Some(id)) = (peek.method.as_deref(), peek.id) {
                self.book().answered(id);
            }
            self.forward_up(line);
            return;
        };
        if peek.jsonrpc.as_deref() != Some("2.0") || peek.result.is_some() || peek.error.is_some() {
            self.send_down_error(id, &ErrorData::invalid_request("Invalid request", None));
            return;
        }
        // The parameters are read for a cursor, a task id or a 2026-07-28 envelope only; an
        // envelope in the very `_meta` text it was last read from is not read again.
        let envelope_here = match peek.meta {
            Some(meta) => {
                *self.envelope_read.lock().unwrap_or_else(PoisonError::into_inner) != meta && holds_envelope(meta)
            }
            None => peek.params.is_some_and(holds_envelope),
        };
        let wanted = matches!(method, "tools/list" | "tasks/result") || envelope_here;
        let params =
            peek.params.filter(|_| wanted).and_then(|p| serde_json::from_str::<Params<'_>>(p).ok()).unwrap_or_default();
        if let Some(meta) = params.meta {
            let envelope: Map<String, Value> =
                meta.into_iter().filter(|(key, _)| key.starts_with("io.modelcontextprotocol/")).collect();
            if !envelope.is_empty() {
                if envelope.get(ENVELOPE_KEY).and_then(Value::as_str).is_some_and(modern) {
                    self.modern.store(true, Ordering::Release);
                }
                *self.envelope.lock().unwrap_or_else(PoisonError::into_inner) = envelope;
                peek.meta
                    .unwrap_or_default()
                    .clone_into(&mut self.envelope_read.lock().unwrap_or_else(PoisonError::into_inner));
            }
        }
        let judge = match method {
            "tools/call" => return self.call(line, id, peek.params, peek.call).await,
            "tools/list" => Judge::List { first: params.cursor.is_none_or(|c| c.get() == "null") },
            "server/discover" if self.legacy_only => {
                let error = ErrorData::unsupported_protocol_version(
                    ProtocolVersion::V_2026_07_28,
                    ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25),
                );
                self.send_down_error(id, &error);
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
    pub(super) fn cancelled(&self, params: Option<&str>) {
        let Some(cancelled) = params.and_then(|p| serde_json::from_str::<Cancelled<'_>>(p).ok()) else {
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
    pub(super) async fn call(&self, line: &[u8], id: &str, params: Option<&str>, read: Option<CallParams<'_>>) {
        let invalid = || {
            let error = ErrorData::invalid_request("Invalid request: tools/call takes an object with a `name`", None);
            self.send_down_error(id, &error);
        };
        let Some(call) = read.or_else(|| params.and_then(CallParams::read)) else { return invalid() };
        let arguments = call.arguments.unwrap_or("{}");
        // Arguments that do not decode make the request invalid, as they always did.
        let undecodable = || serde_json::from_str::<Value>(arguments).is_err();
        if !self.has_tools.load(Ordering::Acquire) {
            if undecodable() {
                return invalid();
            }
            // A server that declared no tools answers for itself.
            self.expect(id, "tools/call", Judge::Plain);
            self.forward_up(line);
            return;
        }
        let mut listing = Arc::clone(&*self.shared.listing.read().await);
        if self.stale.load(Ordering::Acquire) || !listing.knows(&call.name) {
            match self.relist().await {
                Ok(fresh) => listing = fresh,
                Err(err) => tracing::warn!(error = %err, "listing the upstream's tools failed"),
            }
        }
        if !listing.knows(&call.name) {
            if undecodable() {
                return invalid();
            }
            let message = format!("tool `{}` is not in the upstream server's tools/list", call.name);
            self.send_down_error(id, &ErrorData::invalid_params(message, None));
            return;
        }
        // Arguments its input schema's plan passes as written go on unread; any others
        // are decoded (as every call's were before the plan) and gated by the validator.
        if !self.shared.policy.passes_arguments(&listing, &call.name, arguments) {
            let Ok(decoded) = serde_json::from_str::<Value>(arguments) else { return invalid() };
            if let Gate::Refuse(result) = self.shared.policy.gate(&listing, &call.name, &decoded) {
                tracing::info!(tool = %call.name, "call refused before forwarding");
                self.send_down_result(id, &self.written(result));
                return;
            }
        }
        let judge = Judge::Call { tool: call.name.into_owned(), arguments: arguments.into(), listing };
        self.expect(id, "tools/call", judge);
        self.forward_up(line);
    }

    /// Lists every page of the server's tools with requests of the proxy's own, and
    /// judges the listing.
    pub(super) async fn relist(&self) -> Result<Arc<Listing>, String> {
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
    pub(super) async fn own_request(&self, method: &str, params: Value) -> Result<Box<RawValue>, String> {
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
}
