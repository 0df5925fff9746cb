//! What the rmcp adapter path tests share: protocol constants, request metadata of
//! both eras, and the checks every path applies to a result.

#![allow(dead_code, unused_imports, unreachable_pub)]

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use contract_runtime::cache::InMemoryCache;
use contract_runtime::pipeline::{CallContext, Pipeline};
use contract_runtime::rmcp::{ContractedServer, Json};
use contract_runtime::wire::{result_meta, META_KEY};
use contract_runtime::{contracts, OutputContract, ToolError, ToolOutput};
use qe_server::contracts::{FleetStatus, SecurityScan};
use qe_server::tools::{self, BROKEN_TASK_TOOL, BROKEN_TOOL, BROKEN_TOOL_SECRET};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::{IntoCallToolResult, RequestState, ToolCallContext};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CreateTaskResult, GetTaskParams, GetTaskResult, InputRequiredResult,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader as AsyncBufReader};

pub(crate) const WAIT: Duration = Duration::from_secs(20);
pub(crate) const LEGACY: &str = "2025-11-25";
pub(crate) const MODERN: &str = "2026-07-28";
pub(crate) const TASKS: &str = "io.modelcontextprotocol/tasks";
pub(crate) const MARKERS: [&str; 2] = ["tool-contracts.dev/checked", "tool-contracts.dev/error"];

/// Client capabilities; `tasks` declares the tasks extension (SEP-2663).
pub(crate) fn capabilities(tasks: bool) -> Value {
    if tasks {
        json!({ "extensions": { TASKS: {} } })
    } else {
        json!({})
    }
}

/// `initialize` params of a 2025-11-25 client.
pub(crate) fn initialize_params(tasks: bool) -> Value {
    json!({
        "protocolVersion": LEGACY,
        "capabilities": capabilities(tasks),
        "clientInfo": { "name": "paths", "version": "1" }
    })
}

/// The request `_meta` of a 2026-07-28 client, which skips `initialize`: every request
/// carries its protocol version, capabilities and identity.
pub(crate) fn modern_meta(tasks: bool) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities(tasks),
        "io.modelcontextprotocol/clientInfo": { "name": "paths", "version": "1" }
    })
}

/// `params` with the request `_meta` of a 2026-07-28 client, when there is one.
pub(crate) fn with_meta(params: &Value, meta: Option<&Value>) -> Value {
    let mut params = params.clone();
    if let (Some(meta), Some(object)) = (meta, params.as_object_mut()) {
        object.insert("_meta".to_owned(), meta.clone());
    }
    params
}

/// Which client talks to the real server.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Era {
    /// 2025-11-25: an `initialize` handshake; `tasks` declares the extension in it.
    Legacy { tasks: bool },
    /// 2026-07-28: no handshake; every request's `_meta` declares the tasks extension.
    Modern,
}

/// The `{"error": …}` body of an `isError` result, checked for the error shape.
pub(crate) fn error_body(result: &Value) -> Value {
    assert_eq!(result["isError"], true, "{result}");
    assert!(result.get("structuredContent").is_none(), "an error carries structuredContent: {result}");
    let text = result["content"][0]["text"].as_str().expect("a text block");
    serde_json::from_str::<Value>(text).expect("JSON error text")["error"].clone()
}

/// No adapter marker survives into a response.
pub(crate) fn assert_no_markers(result: &Value) {
    for marker in MARKERS {
        assert!(result["_meta"].get(marker).is_none(), "marker `{marker}` leaked: {result}");
    }
}
