//! The TypeScript servers of the peers benchmark (`tests/interop/peers/`, driven by
//! `examples/qe-server/examples/peers`): the SDK v2 server (`ts2_server.mjs`) sends, over
//! stdio and over streamable HTTP in both protocol eras, the very page the SDK v1 server
//! (`ts_server.mjs`) sends, and its output schema refuses the broken page of the query
//! `invalid`.
//!
//! Oracles: the v1 server's page (a second implementation of the recipe, on the other SDK),
//! the checked-in contract `schemas/search_tickets_page.json` judged by `jsonschema`, and
//! the count of tickets asked for. The pinned SDKs are installed by
//! `tests/interop/install.sh`, which these tests run themselves.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;

use serde_json::{json, Value};

use crate::support::bins;
use crate::support::interop;

use interop::{
    checked_in_schema, clients_installed, post_json, HttpServer, HttpSession, StdioServer, IO_DEADLINE, MODERN,
};

const TOOL: &str = "search_tickets_page";

fn script(file: &str) -> std::path::PathBuf {
    bins::root().join("tests/interop/peers").join(file)
}

/// A peer server over stdio, initialized in the 2025 era (as the benchmark drives it).
fn stdio_peer(file: &str) -> StdioServer {
    clients_installed();
    let mut server = StdioServer::spawn(Command::new("node").arg(script(file)));
    server.initialize();
    server
}

/// A peer server over streamable HTTP on a free loopback port: it prints
/// `listening on http://ADDR/mcp` on stdout once bound.
fn http_peer(file: &str) -> HttpServer {
    clients_installed();
    let mut child = Command::new("node")
        .arg(script(file))
        .args(["--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn node");
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    // Keep draining stdout for the server's life so it never blocks on a full pipe.
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("listening on http://") {
                let _ = tx.send(url.trim_end_matches("/mcp").to_owned());
            }
        }
    });
    let Ok(addr) = rx.recv_timeout(IO_DEADLINE) else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("{file} did not announce its address within {IO_DEADLINE:?}");
    };
    let addr: SocketAddr = addr.parse().expect("a socket address");
    HttpServer { child, addr }
}

fn call_params(query: &str, limit: u32) -> Value {
    json!({ "name": TOOL, "arguments": { "query": query, "limit": limit } })
}

/// A 2026-07-28 `tools/call`: no session, the `_meta` envelope and the `Mcp-*` headers.
fn modern_call(addr: SocketAddr, id: u64, query: &str, limit: u32) -> Value {
    let mut params = call_params(query, limit);
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "tool-contracts-raw", "version": "1.0.0" }
    });
    let reply = post_json(
        addr,
        &[("MCP-Protocol-Version", MODERN), ("Mcp-Method", "tools/call"), ("Mcp-Name", TOOL)],
        &json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params }),
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    reply.response(id)
}

fn contract() -> jsonschema::Validator {
    jsonschema::validator_for(&checked_in_schema(TOOL)).expect("the checked-in contract compiles")
}

/// The page of a successful call, checked against `expected` (the v1 server's page), the
/// contract and the count asked for; the text block carries the same page.
fn assert_same_page(who: &str, reply: &Value, expected: &Value, limit: u32) {
    let result = &reply["result"];
    assert_ne!(result["isError"], true, "{who}: not a success: {reply}");
    let page = &result["structuredContent"];
    assert_eq!(page, expected, "{who}: structuredContent differs from the v1 server's page");
    assert_eq!(page["tickets"].as_array().map(Vec::len), Some(limit as usize), "{who}: {page}");
    assert!(contract().is_valid(page), "{who}: the contract refuses the page: {page}");
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().expect("a text block"))
        .expect("the text block is JSON");
    assert_eq!(&text, page, "{who}: the text block is not the structured page");
}

/// What a server must do with the broken page: an `isError` result naming the field, and
/// no structured content sent on.
fn assert_refused(who: &str, reply: &Value) {
    let result = &reply["result"];
    assert_eq!(result["isError"], true, "{who}: the broken page was not refused: {reply}");
    assert!(result.get("structuredContent").is_none(), "{who}: the broken page was sent on: {reply}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("title"), "{who}: the error does not name the missing field: {text}");
}

#[test]
fn the_v2_server_lists_the_tool_with_an_output_schema_that_accepts_the_v1_page() {
    let mut v1 = stdio_peer("ts_server.mjs");
    let mut v2 = stdio_peer("ts2_server.mjs");
    let list = v2.request(1, "tools/list", &json!({}));
    let tools = list["result"]["tools"].as_array().expect("a tool list");
    assert_eq!(tools.len(), 1, "{list}");
    assert_eq!(tools[0]["name"], TOOL);
    let advertised = jsonschema::validator_for(&tools[0]["outputSchema"]).expect("the advertised schema compiles");
    let page = v1.request(2, "tools/call", &call_params("t-", 4))["result"]["structuredContent"].clone();
    assert!(advertised.is_valid(&page), "the advertised output schema refuses the v1 page: {page}");
    // The same schema refuses what the contract refuses.
    let mut broken = page.clone();
    broken["tickets"][0].as_object_mut().expect("a ticket").remove("title");
    assert!(!contract().is_valid(&broken));
    assert!(!advertised.is_valid(&broken), "the advertised output schema accepts a ticket without a title");
}

#[test]
fn the_v2_server_sends_the_page_of_the_v1_server_over_stdio() {
    let mut v1 = stdio_peer("ts_server.mjs");
    let mut v2 = stdio_peer("ts2_server.mjs");
    for (id, limit) in [(10, 1), (11, 7), (12, 1000)] {
        let expected = v1.request(id, "tools/call", &call_params("t-", limit));
        assert_same_page("v1 (the oracle)", &expected, &expected["result"]["structuredContent"], limit);
        let reply = v2.request(id, "tools/call", &call_params("t-", limit));
        assert_same_page("v2 stdio", &reply, &expected["result"]["structuredContent"], limit);
    }
}

#[test]
fn the_v2_server_sends_the_page_of_the_v1_server_over_http_in_both_eras() {
    let mut v1 = stdio_peer("ts_server.mjs");
    let mut server = http_peer("ts2_server.mjs");
    let session = HttpSession::open(server.addr);
    for (id, limit) in [(20, 1), (21, 7), (22, 1000)] {
        let expected = v1.request(id, "tools/call", &call_params("t-", limit))["result"]["structuredContent"].clone();
        let legacy = session.request(id, "tools/call", &call_params("t-", limit));
        assert_same_page("v2 HTTP 2025-11-25", &legacy, &expected, limit);
        let modern = modern_call(server.addr, id, "t-", limit);
        assert_same_page("v2 HTTP 2026-07-28", &modern, &expected, limit);
    }
    server.assert_alive();
}

#[test]
fn the_v2_server_refuses_the_broken_page_on_every_transport_and_serves_the_next_call() {
    let mut v2 = stdio_peer("ts2_server.mjs");
    let mut v1 = stdio_peer("ts_server.mjs");
    let mut server = http_peer("ts2_server.mjs");
    let session = HttpSession::open(server.addr);
    let expected = v1.request(30, "tools/call", &call_params("t-", 2))["result"]["structuredContent"].clone();

    assert_refused("v2 stdio", &v2.request(31, "tools/call", &call_params("invalid", 2)));
    assert_refused("v2 HTTP 2025-11-25", &session.request(31, "tools/call", &call_params("invalid", 2)));
    assert_refused("v2 HTTP 2026-07-28", &modern_call(server.addr, 31, "invalid", 2));

    // The control: the same servers, the same size, a query whose page is whole.
    assert_same_page("v2 stdio", &v2.request(32, "tools/call", &call_params("t-", 2)), &expected, 2);
    assert_same_page("v2 HTTP 2025-11-25", &session.request(32, "tools/call", &call_params("t-", 2)), &expected, 2);
    assert_same_page("v2 HTTP 2026-07-28", &modern_call(server.addr, 32, "t-", 2), &expected, 2);
    server.assert_alive();
}
