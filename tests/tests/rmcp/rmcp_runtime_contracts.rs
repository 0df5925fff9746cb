//! Tools registered at run time, with contracts read from checked-in files: a
//! registry-backed handler adds a tool after `initialize`, the server binds the tool's
//! contract (`ContractSet::load_dir` on `tests/fixtures/dynamic`) and sends
//! `notifications/tools/list_changed`; the listing then advertises the contract and every
//! call is enforced like a derived contract's. Driven in process over a duplex, for a
//! 2025-11-25 client (which gets the notification) and a 2026-07-28 client.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use contract_runtime::rmcp::{ContractedServer, Json};
use contract_runtime::wire::{contract_meta, result_meta, META_KEY};
use contract_runtime::{ContractSet, OutputContract};
use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::support::rmcp_paths;

use rmcp_paths::{error_body, initialize_params, modern_meta, with_meta, WAIT};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/dynamic")
}

/// The `weather` contract, read from its checked-in file.
fn weather() -> &'static OutputContract {
    let set = ContractSet::load_dir(fixtures()).unwrap_or_else(|err| panic!("{err}"));
    set.get("weather").expect("the fixture holds `weather`")
}

/// A registry-backed server: its tools are entries of a map filled at run time, each
/// answering with the JSON value it was registered with.
#[derive(Clone, Default)]
struct Registry {
    tools: Arc<RwLock<BTreeMap<String, Value>>>,
}

impl Registry {
    fn register(&self, tool: &str, answer: Value) {
        self.tools.write().expect("lock").insert(tool.to_owned(), answer);
    }

    fn unregister(&self, tool: &str) {
        self.tools.write().expect("lock").remove(tool);
    }

    fn tool(name: &str) -> Tool {
        let input = json!({ "type": "object", "properties": {} });
        let Value::Object(input) = input else { unreachable!() };
        Tool::new(name.to_owned(), "A tool the registry serves.", Arc::new(input))
    }
}

impl ServerHandler for Registry {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build())
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.read().expect("lock").contains_key(name).then(|| Self::tool(name))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self.tools.read().expect("lock").keys().map(|name| Self::tool(name)).collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let answer = self.tools.read().expect("lock").get(request.name.as_ref()).cloned();
        let answer = answer.ok_or_else(|| ErrorData::invalid_params("tool not found", None))?;
        // A value known only at run time goes out through our `Json`, as a typed one does.
        Json(answer).into_call_tool_result()
    }
}

/// A raw JSON-RPC client over an in-memory duplex, with the server's peer handle.
struct Wire {
    to_server: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    from_server: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    next: u64,
    meta: Option<Value>,
    /// Notifications read while waiting for answers.
    notifications: Vec<Value>,
    peer: Option<Peer<RoleServer>>,
}

impl Wire {
    /// Must run inside the runtime: it spawns the server. `modern`: a 2026-07-28 client.
    async fn connect(server: ContractedServer<Registry>, modern: bool) -> Self {
        let (client, server_side) = tokio::io::duplex(1 << 20);
        let (peer_tx, peer_rx) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            if let Ok(running) = server.serve(tokio::io::split(server_side)).await {
                let _ = peer_tx.send(running.peer().clone());
                let _ = running.waiting().await;
            }
        });
        let (read, write) = tokio::io::split(client);
        let mut wire = Self {
            to_server: write,
            from_server: BufReader::new(read).lines(),
            next: 0,
            meta: None,
            notifications: Vec::new(),
            peer: None,
        };
        if modern {
            wire.meta = Some(modern_meta(false));
        } else {
            let init = wire.request("initialize", initialize_params(false)).await;
            assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], true, "{init}");
            wire.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await;
            wire.peer = Some(tokio::time::timeout(WAIT, peer_rx).await.expect("served in time").expect("a peer"));
        }
        wire
    }

    async fn send(&mut self, message: &Value) {
        let line = format!("{message}\n");
        self.to_server.write_all(line.as_bytes()).await.expect("write");
    }

    async fn next_message(&mut self) -> Value {
        let line = tokio::time::timeout(WAIT, self.from_server.next_line())
            .await
            .expect("a message in time")
            .expect("read")
            .expect("the server closed the stream");
        serde_json::from_str(&line).expect("JSON")
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        let params = with_meta(&params, self.meta.as_ref());
        self.next += 1;
        let id = self.next;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).await;
        loop {
            let message = self.next_message().await;
            if message["id"] == json!(id) {
                return message;
            }
            if message.get("method").is_some() {
                self.notifications.push(message);
            }
        }
    }

    async fn result(&mut self, method: &str, params: Value) -> Value {
        let reply = self.request(method, params).await;
        reply.get("result").cloned().unwrap_or_else(|| panic!("`{method}` gave no result: {reply}"))
    }

    async fn call(&mut self, tool: &str) -> Value {
        self.result("tools/call", json!({ "name": tool, "arguments": {} })).await
    }

    async fn listed(&mut self, tool: &str) -> Value {
        let listing = self.result("tools/list", json!({})).await;
        let tools = listing["tools"].as_array().expect("tools").clone();
        tools.into_iter().find(|t| t["name"] == tool).unwrap_or_else(|| panic!("`{tool}` is not listed: {listing}"))
    }

    /// Whether `notifications/tools/list_changed` arrives: a ping is answered after it.
    async fn saw_list_changed(&mut self) -> bool {
        self.result("ping", json!({})).await;
        self.notifications.iter().any(|n| n["method"] == "notifications/tools/list_changed")
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}

const CLEAN: fn() -> Value = || json!({ "city": "Lisbon", "celsius": 21.5, "raw": { "station": 7, "any": [true] } });
const BROKEN: fn() -> Value = || json!({ "city": "Lisbon", "celsius": "warm" });

#[test]
fn a_tool_registered_after_initialize_is_listed_with_its_contract_and_enforced_once_bound_and_announced() {
    runtime().block_on(async {
        let registry = Registry::default();
        let server = ContractedServer::new(registry.clone(), ContractSet::new()).expect("an empty set binds");
        let mut wire = Wire::connect(server.clone(), false).await;
        let peer = wire.peer.clone().expect("a 2025-11-25 session has a peer");

        // Registered, not yet bound: served, visibly unvalidated.
        registry.register("weather", BROKEN());
        let unbound = wire.listed("weather").await;
        assert!(unbound.get("outputSchema").is_none(), "{unbound}");
        assert_eq!(unbound["_meta"][META_KEY]["qualified"], false, "{unbound}");

        // Bound and announced: the client is told to list again.
        let contract = weather();
        assert!(server.bind("weather", contract).expect("the tool is registered").is_none());
        server.notify_tool_list_changed(&peer).await.expect("every binding holds");
        assert!(wire.saw_list_changed().await, "no list_changed: {:?}", wire.notifications);

        let listed = wire.listed("weather").await;
        assert_eq!(listed["outputSchema"], *contract.schema(), "{listed}");
        assert_eq!(listed["_meta"][META_KEY], contract_meta(contract), "{listed}");

        // Enforced like a derived contract: the broken answer is refused …
        let broken = wire.call("weather").await;
        assert_eq!(error_body(&broken)["code"], "output_contract_violation", "{broken}");
        assert!(broken.get("structuredContent").is_none(), "{broken}");
        assert!(!broken.to_string().contains("warm"), "the value leaked: {broken}");

        // … and the clean control passes, opaque pass-through included.
        registry.register("weather", CLEAN());
        let ok = wire.call("weather").await;
        assert_eq!(ok["isError"], false, "{ok}");
        assert_eq!(ok["structuredContent"], CLEAN(), "{ok}");
        assert_eq!(ok["_meta"][META_KEY], result_meta(contract), "{ok}");
    });
}

#[test]
fn a_2026_07_28_client_lists_and_calls_a_tool_bound_at_run_time() {
    runtime().block_on(async {
        let registry = Registry::default();
        let server = ContractedServer::new(registry.clone(), ContractSet::new()).expect("an empty set binds");
        let mut wire = Wire::connect(server.clone(), true).await;
        registry.register("weather", CLEAN());
        server.bind("weather", weather()).expect("the tool is registered");

        let listed = wire.listed("weather").await;
        assert_eq!(listed["outputSchema"], *weather().schema(), "{listed}");
        assert_eq!(wire.call("weather").await["isError"], false);
        registry.register("weather", BROKEN());
        assert_eq!(error_body(&wire.call("weather").await)["code"], "output_contract_violation");
    });
}

#[test]
fn a_binding_whose_tool_is_gone_is_refused_and_nothing_is_announced_until_it_is_unbound() {
    runtime().block_on(async {
        let registry = Registry::default();
        let server = ContractedServer::new(registry.clone(), ContractSet::new()).expect("an empty set binds");
        let mut wire = Wire::connect(server.clone(), false).await;
        let peer = wire.peer.clone().expect("a peer");

        // A tool the handler does not have cannot be bound.
        let err = server.bind("weather", weather()).unwrap_err();
        assert!(err.to_string().contains("register the tool first"), "{err}");

        registry.register("weather", CLEAN());
        server.bind("weather", weather()).expect("registered now");
        registry.unregister("weather");
        let err = server.notify_tool_list_changed(&peer).await.unwrap_err();
        assert!(err.to_string().contains("which the handler no longer has"), "{err}");
        assert!(!wire.saw_list_changed().await, "announced over a broken binding: {:?}", wire.notifications);

        // The fix the message names: unbind it; the announcement then goes out.
        assert!(server.unbind("weather").is_some());
        server.notify_tool_list_changed(&peer).await.expect("no binding left to break");
        assert!(wire.saw_list_changed().await, "{:?}", wire.notifications);
    });
}

#[test]
fn a_contract_name_has_one_schema_at_a_time_across_tools() {
    let registry = Registry::default();
    registry.register("weather", CLEAN());
    registry.register("weather_eu", CLEAN());
    let server = ContractedServer::new(registry, ContractSet::new()).expect("an empty set binds");
    // Clean control: the same contract on two tools.
    server.bind("weather", weather()).expect("bound");
    server.bind("weather_eu", weather()).expect("the same contract binds twice");
    // Another `weather` contract (another version) on a second tool is refused.
    let text = String::from_utf8_lossy(weather().canonical_bytes()).into_owned();
    let declared =
        contract_runtime::Declared::new("weather", "1.1.0", contract_runtime::Compatibility::Exact).opaque(["/raw"]);
    let newer = OutputContract::from_json(&declared, &text).expect("the same schema at 1.1.0");
    let err = server.bind("weather_eu", newer).unwrap_err();
    assert!(err.to_string().contains("tool `weather` is bound to another contract of that name"), "{err}");
    // The fix the message names: unbind `weather` first. Rebinding `weather_eu` itself
    // then replaces its contract (a re-registered tool).
    assert!(std::ptr::eq(server.unbind("weather").expect("bound"), weather()));
    assert!(std::ptr::eq(server.bind("weather_eu", newer).expect("replaced").expect("had one"), weather()));
    assert_eq!(server.contract("weather_eu").map(|c| c.version().to_string()), Some("1.1.0".to_owned()));
}
