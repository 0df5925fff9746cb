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
use super::message::{contains, modern, CallParams, Cancelled, Params, Peek, ENVELOPE_KEY};
use super::wire::Wire;
use crate::verdicts::{Gate, Listing};

/// The most `tools/list` pages the proxy reads for itself.
pub(super) const MAX_PAGES: usize = 1000;

impl Wire {
    pub(super) async fn client_line(&self, line: &[u8]) {
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
            if let (None, Some(id)) = (peek.method.as_deref(), peek.id) {
                self.book().answered(id.get());
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
    pub(super) fn cancelled(&self, params: Option<&RawValue>) {
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
    pub(super) async fn call(&self, line: &[u8], id: &RawValue, params: Option<&RawValue>) {
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
