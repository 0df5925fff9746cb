//! The server's identity in every result's `_meta` (`io.modelcontextprotocol/serverInfo`).
//!
//! Protocol 2026-07-28 says a server SHOULD put its `Implementation` under that key in
//! every result's `_meta`; rmcp 3.11 writes it only on `server/discover` and the end of
//! `subscriptions/listen`, so the adapter writes it on the results it answers
//! (`tools/list`, `tools/call` in every shape, `tasks/get`). Earlier revisions define no
//! such key (the identity travels once, in the `initialize` result) and reserve the
//! `io.modelcontextprotocol/` prefix for the protocol, so their peers get none from the
//! adapter. A value the handler put there itself is kept.

use rmcp::model::{CallToolResponse, GetTaskResult, JsonObject, MetaObject, TaskPayload};
use serde_json::Value;

use crate::serve::wire::ProtocolVersion;

/// The `_meta` key of the server's identity in a result.
pub(crate) const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// The first revision whose results carry [`SERVER_INFO_KEY`].
const SERVER_INFO_SINCE: &str = "2026-07-28";

/// Whether a peer on `protocol` gets [`SERVER_INFO_KEY`] in its results. Versions are
/// dates, so they compare as strings.
pub(crate) fn wanted(protocol: &ProtocolVersion) -> bool {
    protocol.as_str() >= SERVER_INFO_SINCE
}

/// Puts `info` under [`SERVER_INFO_KEY`] unless the map already has a value there.
fn insert(meta: &mut serde_json::Map<String, Value>, info: &Value) {
    if !meta.contains_key(SERVER_INFO_KEY) {
        meta.insert(SERVER_INFO_KEY.to_owned(), info.clone());
    }
}

/// `info` in the `_meta` of `meta`, which is created when absent.
pub(crate) fn stamp(meta: &mut Option<MetaObject>, info: &Value) {
    insert(&mut meta.get_or_insert_with(MetaObject::default).0, info);
}

/// `info` in every shape a `tools/call` answer takes.
pub(crate) fn stamp_response(response: &mut CallToolResponse, info: &Value) {
    match response {
        CallToolResponse::Complete(result) => stamp(&mut result.meta, info),
        CallToolResponse::InputRequired(result) => stamp(&mut result.meta, info),
        CallToolResponse::Task(created) => stamp(&mut created.meta, info),
        // A shape a later rmcp adds passes as the handler made it.
        _ => {}
    }
}

/// `info` in a `tasks/get` answer and, when the task completed, in the tool result it
/// carries (what the complete call would have answered).
pub(crate) fn stamp_task(result: &mut GetTaskResult, info: &Value) {
    stamp(&mut result.meta, info);
    if let TaskPayload::Completed { result } = &mut result.task.payload {
        stamp_object(result, info);
    }
}

/// `info` in the `_meta` of a result held as a JSON object.
fn stamp_object(result: &mut JsonObject, info: &Value) {
    let meta = result.entry("_meta").or_insert_with(|| Value::Object(serde_json::Map::new()));
    if let Value::Object(meta) = meta {
        insert(meta, info);
    }
}
