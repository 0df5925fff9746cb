//! The rmcp adapter (`contract_runtime::rmcp::ContractedServer`) in process, over an
//! in-memory duplex transport: the edge cases a demo server does not exercise — a
//! panicking handler, a contracted tool that returns only text, a handler's protocol
//! error carrying secrets, a middleware that corrupts the result, cache admission, and
//! binding mistakes caught at start-up. Each rejection has its clean control.

use std::sync::Arc;
use std::time::Duration;

use contract_runtime::cache::{CacheKey, InMemoryCache, ResultCache};
use contract_runtime::pipeline::{middleware_fn, Pipeline};
use contract_runtime::rmcp::{ContractedServer, Json};
use contract_runtime::wire::META_KEY;
use contract_runtime::{contracts, ToolError, ToolOutput};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const WAIT: Duration = Duration::from_secs(10);

/// Health of a service.
#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Health {
    healthy: u32,
}

/// Bound to no tool of [`Probe`]: binding it must fail at start-up.
#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Orphan {
    x: u32,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Count {
    /// How many are healthy.
    #[schemars(range(max = 100))]
    n: u32,
}

#[derive(Clone)]
struct Probe {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Probe {
    #[tool(description = "A healthy result.")]
    async fn health(&self, Parameters(c): Parameters<Count>) -> Result<Json<Health>, ToolError> {
        Ok(Json(Health { healthy: c.n }))
    }

    #[tool(description = "Panics.")]
    async fn panics(&self) -> Result<Json<Health>, ToolError> {
        panic!("secret state at /home/ci/.config/token=ghp_0123456789abcdefghijklmnopqrstuvwxyz")
    }

    #[tool(description = "Contracted, but forgets to return Json.")]
    async fn text_only(&self) -> String {
        "{\"healthy\":3}".to_owned()
    }

    #[tool(description = "Fails with a protocol error that names secrets.")]
    async fn rpc_error(&self) -> Result<Json<Health>, ErrorData> {
        Err(ErrorData::internal_error("db login failed: password=hunter2 at /srv/app/config.toml", None))
    }

    #[tool(description = "Fails with a typed, retryable error.")]
    async fn typed_error(&self) -> Result<Json<Health>, ToolError> {
        Err(ToolError::unavailable("the metrics store is down"))
    }

    #[tool(description = "No contract.")]
    async fn plain(&self) -> String {
        "plain text".to_owned()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Probe {}

fn probe() -> Probe {
    Probe { tool_router: Probe::tool_router() }
}

/// Every contracted tool of [`Probe`] is bound to the `health` contract.
fn bound(pipeline: Option<Pipeline>) -> ContractedServer<Probe> {
    let tools = ["health", "panics", "text_only", "rpc_error", "typed_error"];
    let server =
        ContractedServer::with_tools(probe(), tools.map(|t| Health::try_contract().map(|c| (t.to_owned(), c))))
            .expect("every binding names a tool");
    match pipeline {
        Some(pipeline) => server.with_pipeline(pipeline),
        None => server,
    }
}

/// A client speaking raw JSON-RPC lines to `server` over an in-memory duplex.
struct Wire {
    to_server: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    from_server: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
}

impl Wire {
    async fn connect(server: ContractedServer<Probe>) -> Self {
        let (client, server_side) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_side);
        tokio::spawn(async move {
            if let Ok(running) = server.serve((server_read, server_write)).await {
                let _ = running.waiting().await;
            }
        });
        let (read, write) = tokio::io::split(client);
        let mut wire = Self { to_server: write, from_server: BufReader::new(read).lines() };
        let init = wire
            .request(
                0,
                "initialize",
                json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }),
            )
            .await;
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
        wire.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await;
        wire
    }

    async fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.to_server.write_all(line.as_bytes()).await.expect("write");
    }

    async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).await;
        loop {
            let line = tokio::time::timeout(WAIT, self.from_server.next_line())
                .await
                .unwrap_or_else(|_| panic!("no answer to `{method}` within {WAIT:?}"))
                .expect("read")
                .expect("the server closed the stream");
            let message: Value = serde_json::from_str(&line).expect("JSON line");
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    async fn call(&mut self, id: u64, tool: &str, arguments: Value) -> Value {
        let reply = self.request(id, "tools/call", json!({ "name": tool, "arguments": arguments })).await;
        reply.get("result").cloned().unwrap_or_else(|| panic!("`{tool}` gave no result: {reply}"))
    }
}

/// The `{"error": …}` body of an `isError` result.
fn error_body(result: &Value) -> Value {
    assert_eq!(result["isError"], true, "{result}");
    assert!(result.get("structuredContent").is_none(), "an error carries structuredContent: {result}");
    let text = result["content"][0]["text"].as_str().expect("a text block");
    serde_json::from_str::<Value>(text).expect("JSON error text")["error"].clone()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}

#[test]
fn contracted_results_pass_and_every_failure_is_a_sanitized_error_result() {
    runtime().block_on(async {
        let mut wire = Wire::connect(bound(None)).await;

        // Clean control: a valid result is a success with the contract identity.
        let ok = wire.call(1, "health", json!({ "n": 3 })).await;
        assert_eq!(ok["isError"], false, "{ok}");
        assert_eq!(ok["structuredContent"], json!({ "healthy": 3 }));
        assert_eq!(ok["_meta"][META_KEY]["qualified"], true);
        assert!(ok["_meta"][META_KEY]["id"].as_str().unwrap().starts_with("health@1.0.0+sha256:"), "{ok}");

        // Arguments that break the inputSchema: invalid_arguments, the handler never runs.
        let bad_args = wire.call(2, "health", json!({ "n": 1000 })).await;
        assert_eq!(error_body(&bad_args)["code"], "invalid_arguments", "{bad_args}");
        assert!(!bad_args.to_string().contains("1000"), "the value must not be echoed: {bad_args}");
        // An error result carries the same identity as the success: who refused it, under which contract.
        assert_eq!(bad_args["_meta"][META_KEY], ok["_meta"][META_KEY], "{bad_args}");

        // A panic is an error result, and the server survives it.
        let panicked = wire.call(3, "panics", json!({})).await;
        let body = error_body(&panicked);
        assert_eq!(body["code"], "tool_execution_error", "{panicked}");
        assert_eq!(panicked["_meta"][META_KEY]["qualified"], true, "{panicked}");
        assert!(!panicked.to_string().contains("ghp_"), "a token leaked: {panicked}");
        assert_eq!(wire.call(4, "health", json!({ "n": 1 })).await["isError"], false, "the server died with the panic");

        // A contracted tool that returns only text broke its contract.
        let text_only = wire.call(5, "text_only", json!({})).await;
        assert_eq!(error_body(&text_only)["code"], "output_contract_violation", "{text_only}");

        // A handler's protocol error becomes a sanitized tool error, not a JSON-RPC error.
        let rpc = wire.call(6, "rpc_error", json!({})).await;
        assert_eq!(error_body(&rpc)["code"], "tool_execution_error", "{rpc}");
        for secret in ["hunter2", "/srv/app"] {
            assert!(!rpc.to_string().contains(secret), "`{secret}` leaked: {rpc}");
        }

        // A typed error keeps its code and retryable flag through rmcp.
        let typed = wire.call(7, "typed_error", json!({})).await;
        let body = error_body(&typed);
        assert_eq!((body["code"].as_str(), body["retryable"].as_bool()), (Some("unavailable"), Some(true)), "{typed}");

        // Uncontracted: served as is, visibly unqualified, and listed without a schema.
        let plain = wire.call(8, "plain", json!({})).await;
        assert_eq!(plain["isError"], false, "{plain}");
        assert_eq!(plain["_meta"][META_KEY], json!({ "qualified": false }));
        let listed = wire.request(9, "tools/list", json!({})).await;
        let tools = listed["result"]["tools"].as_array().expect("tools");
        let plain_tool = tools.iter().find(|t| t["name"] == "plain").expect("plain is listed");
        assert!(plain_tool.get("outputSchema").is_none(), "{plain_tool}");
        let health_tool = tools.iter().find(|t| t["name"] == "health").expect("health is listed");
        assert_eq!(health_tool["outputSchema"], *Health::contract().schema());

        // An unknown tool is a JSON-RPC error.
        let unknown = wire.request(10, "tools/call", json!({ "name": "nope", "arguments": {} })).await;
        assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    });
}

#[test]
fn a_middleware_that_drops_a_field_is_caught_and_only_valid_results_reach_the_cache() {
    runtime().block_on(async {
        let cache = Arc::new(InMemoryCache::new());
        let drop_healthy = middleware_fn("drop-healthy", |_tool, result: &mut Value| {
            if result["healthy"] == json!(13) {
                if let Some(obj) = result.as_object_mut() {
                    obj.remove("healthy");
                }
            }
            Ok(())
        });
        let pipeline = Pipeline::builder().middleware(drop_healthy).cache(cache.clone()).build();
        let mut wire = Wire::connect(bound(Some(pipeline))).await;

        // Control: the middleware leaves this one alone; the result is served and cached.
        let ok = wire.call(1, "health", json!({ "n": 3 })).await;
        assert_eq!(ok["isError"], false, "{ok}");
        assert!(
            cache.get(&CacheKey::new("health", Health::contract().id(), &json!({ "n": 3 }))).is_some(),
            "a valid result is admitted"
        );

        // The middleware removes a required field: caught after it ran, never cached.
        let broken = wire.call(2, "health", json!({ "n": 13 })).await;
        let body = error_body(&broken);
        assert_eq!(body["code"], "output_contract_violation", "{broken}");
        assert_eq!(body["violations"][0]["keyword"], "required", "{broken}");
        assert!(
            cache.get(&CacheKey::new("health", Health::contract().id(), &json!({ "n": 13 }))).is_none(),
            "a violation was cached"
        );
    });
}

#[test]
fn binding_mistakes_are_all_reported_at_start_up() {
    // Control: a binding that names real tools is accepted.
    assert!(ContractedServer::with_tools(probe(), [Health::try_contract().map(|c| ("health".to_owned(), c))]).is_ok());

    // A contract whose name is no tool, and a tool bound twice: both reported at once.
    let err = ContractedServer::with_tools(
        probe(),
        [
            Orphan::try_contract().map(|c| (c.name().to_owned(), c)),
            Health::try_contract().map(|c| ("health".to_owned(), c)),
            Health::try_contract().map(|c| ("health".to_owned(), c)),
        ],
    )
    .expect_err("an orphan contract and a double binding");
    assert_eq!(err.problems().len(), 2, "{err}");
    assert!(err.to_string().contains("`orphan`"), "{err}");
    assert!(err.to_string().contains("tool `health` is bound to two contracts"), "{err}");
    assert!(ContractedServer::new(probe(), contracts![Orphan]).is_err());
}

#[test]
fn cache_hits_are_served_only_under_the_current_contract_identity() {
    runtime().block_on(async {
        let cache = Arc::new(InMemoryCache::new());
        let pipeline = Pipeline::builder().cache(cache.clone()).build();
        let mut wire = Wire::connect(bound(Some(pipeline))).await;

        // Miss, then hit: the second call is answered from the cache, the same result.
        let first = wire.call(1, "health", json!({ "n": 7 })).await;
        assert_eq!(first["isError"], false, "{first}");
        let second = wire.call(2, "health", json!({ "n": 7 })).await;
        assert_eq!(second["structuredContent"], first["structuredContent"]);
        assert_eq!(cache.stats().hits, 1, "{:?}", cache.stats());

        // An entry written under another contract identity (same name and version,
        // another hash) is evicted and the handler's fresh result is served instead.
        let key = CacheKey::new("health", Health::contract().id(), &json!({ "n": 8 }));
        let stale = contract_runtime::ContractId::new("health", "1.0.0".parse().unwrap(), "0".repeat(64));
        cache.put(
            key.clone(),
            contract_runtime::cache::CachedResult { contract: stale, text: Arc::from(r#"{"healthy":"stale"}"#) },
        );
        let fresh = wire.call(3, "health", json!({ "n": 8 })).await;
        assert_eq!(fresh["structuredContent"], json!({ "healthy": 8 }), "{fresh}");
        assert_eq!(cache.stats().evictions, 1, "{:?}", cache.stats());
        assert_eq!(
            cache.get(&key).map(|e| e.contract),
            Some(Health::contract().id().clone()),
            "the fresh, validated result replaced the stale entry"
        );
    });
}
