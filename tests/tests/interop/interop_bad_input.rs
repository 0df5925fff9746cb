//! The demo server under bad input, over stdio and streamable HTTP: malformed, oversized
//! and unknown requests, foreign `Host`/`Origin` headers and clients that vanish mid-call
//! get errors or a clean close, and the server goes on serving.

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::interop;

use interop::*;

/// `_meta` of a 2026-07-28 request, which carries its own lifecycle (no `initialize`).
fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "tool-contracts-raw", "version": "1.0.0" }
    })
}

#[test]
fn unknown_method_before_initialize_is_a_json_rpc_error_and_the_session_goes_on() {
    // stdio, 2025 style: a method nobody knows before `initialize` is a JSON-RPC error
    // (rmcp asks for the 2026 request metadata), and the handshake still works after it.
    let mut stdio = StdioServer::start();
    let reply = stdio.request(1, "vendor/probe", &json!({}));
    assert!(reply["error"]["code"].is_i64(), "expected a JSON-RPC error, got {reply}");
    assert!(reply.get("result").is_none(), "{reply}");
    stdio.initialize();
    let listed = stdio.request(2, "tools/list", &json!({}));
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    assert!(stdio.hang_up(IO_DEADLINE).success());

    // stdio, 2026 style: the same probe with full request metadata is "method not found";
    // the Python client's own probe, `server/discover`, is answered (rmcp 3.11 implements
    // it), so the client adopts 2026-07-28 instead of falling back.
    let mut probe = StdioServer::start();
    let unknown = probe.request(3, "vendor/probe", &json!({ "_meta": modern_meta() }));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let discover = probe.request(4, "server/discover", &json!({ "_meta": modern_meta() }));
    let versions = discover["result"]["supportedVersions"].as_array().expect("a discover result");
    assert!(versions.contains(&json!(MODERN)) && versions.contains(&json!(LEGACY)), "{discover}");

    // HTTP, 2025 style: no session yet, so a 4xx and no JSON-RPC result.
    let server = HttpServer::start();
    let unknown =
        post_json(server.addr, &[], &json!({ "jsonrpc": "2.0", "id": 7, "method": "vendor/probe", "params": {} }));
    assert_eq!(unknown.status, 400, "{unknown:?}");
    assert!(unknown.messages().iter().all(|m| m.get("result").is_none()), "{unknown:?}");
    // HTTP, 2026 style: a JSON-RPC "method not found".
    let modern = post_json(
        server.addr,
        &[("MCP-Protocol-Version", MODERN), ("Mcp-Method", "vendor/probe")],
        &json!({ "jsonrpc": "2.0", "id": 8, "method": "vendor/probe", "params": { "_meta": modern_meta() } }),
    );
    assert!((400..500).contains(&modern.status), "{modern:?}");
    assert_eq!(modern.response(8)["error"]["code"], -32601, "{modern:?}");
    // The control: a normal session on the same server, where the same method is an error too.
    let session = HttpSession::open(server.addr);
    let after_init = session.request(9, "vendor/probe", &json!({}));
    assert_eq!(after_init["error"]["code"], -32601, "{after_init}");
    assert!(session.request(10, "tools/list", &json!({}))["result"]["tools"].is_array());
}

#[test]
fn stdio_survives_malformed_invalid_and_oversized_input_and_a_client_that_leaves_mid_call() {
    let mut stdio = StdioServer::start();
    stdio.initialize();
    // Not JSON at all: there is no id to answer, and rmcp (like the other official SDKs)
    // ignores such a line rather than risk an error storm with a peer that echoes
    // (rust-sdk#938). What matters is that the server goes on serving.
    stdio.send_raw("{this is not json");
    // JSON, but not a valid request: answered with a JSON-RPC error.
    stdio.send_raw(r#"{"jsonrpc":"2.0","id":41,"method":"tools/call","params":"oops"}"#);
    let invalid = stdio.recv(IO_DEADLINE).expect("an answer to the invalid request");
    assert!(invalid["error"]["code"].is_i64(), "{invalid}");
    // An oversized line (20 MiB): dropped, never buffered without bound, never a crash.
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{{"name":"search_tickets","arguments":{{"query":"{}"}}}}}}"#,
        "a".repeat(20 << 20)
    );
    stdio.send_raw(&huge);
    // The control: a normal call right after is served normally.
    let ok = stdio.request(43, "tools/call", &json!({ "name": "fleet_status", "arguments": {} }));
    assert_eq!(ok["result"]["isError"], false, "{ok}");
    // Nothing was ever answered for the unparseable line or for id 42 with a success.
    while let Some(extra) = stdio.recv(Duration::from_millis(200)) {
        assert!(extra["id"] != json!(42) || extra.get("error").is_some(), "the oversized request succeeded: {extra}");
    }

    // A client that sends a call and leaves before reading the answer.
    stdio.send(&json!({ "jsonrpc": "2.0", "id": 44, "method": "tools/call", "params": { "name": "security_scan", "arguments": {} } }));
    assert!(stdio.hang_up(IO_DEADLINE).success(), "the stdio server must exit cleanly when its client leaves");

    // The next client gets a fresh, working server.
    let mut next = StdioServer::start();
    next.initialize();
    let listed = next.request(1, "tools/list", &json!({}));
    assert!(listed["result"]["tools"].is_array(), "{listed}");
}

#[test]
fn http_rejects_a_foreign_host_or_origin_and_accepts_loopback_ones() {
    let server = HttpServer::start();
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params() });
    let port = server.addr.port().to_string();
    // Controls first: loopback Host and a loopback browser Origin are served.
    for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}")] {
        let reply = post_json(server.addr, &[("Host", &host)], &init);
        assert_eq!(reply.status, 200, "Host {host}: {reply:?}");
    }
    let ok_origin = format!("http://localhost:{port}");
    assert_eq!(post_json(server.addr, &[("Origin", &ok_origin)], &init).status, 200);
    // DNS rebinding: a foreign Host or Origin is refused with a 4xx and no JSON-RPC body.
    for host in ["evil.example.com", "10.0.0.7:8000", "attacker.localhost.example:80"] {
        let reply = post_json(server.addr, &[("Host", host)], &init);
        assert!((400..500).contains(&reply.status), "Host {host} was served: {reply:?}");
        assert!(reply.messages().is_empty(), "Host {host}: {reply:?}");
    }
    for origin in ["http://evil.example.com", "https://localhost.evil.example.com", "null"] {
        let reply = post_json(server.addr, &[("Origin", origin)], &init);
        assert!((400..500).contains(&reply.status), "Origin {origin} was served: {reply:?}");
    }
}

#[test]
fn http_survives_bad_input_and_clients_that_vanish_and_keeps_serving() {
    let mut server = HttpServer::start();
    let addr = server.addr;
    // Malformed JSON, an array, and an oversized body: 4xx, no crash.
    let malformed = http(addr, "POST", "/mcp", &[], b"{not json");
    assert!((400..500).contains(&malformed.status), "{malformed:?}");
    let oversized = vec![b'x'; qe_server::server::MAX_REQUEST_BODY_BYTES + 1];
    let too_big = http(addr, "POST", "/mcp", &[], &oversized);
    assert_eq!(too_big.status, 413, "{too_big:?}");
    // Another path is not the MCP endpoint.
    assert_eq!(http(addr, "POST", "/other", &[], b"{}").status, 404);
    // A client that sends half a request and leaves; one that connects and says nothing.
    {
        let mut half = TcpStream::connect_timeout(&addr, IO_DEADLINE).expect("connect");
        half.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 500\r\n\r\n{\"jsonrpc\":")
            .expect("write");
        let _silent = TcpStream::connect_timeout(&addr, IO_DEADLINE).expect("connect");
    }
    // A client that leaves in the middle of a call.
    let session = HttpSession::open(addr);
    {
        let body = json!({ "jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": { "name": "scrape_page", "arguments": { "url": "https://docs.example.com/guide" } } }).to_string();
        let mut gone = TcpStream::connect_timeout(&addr, IO_DEADLINE).expect("connect");
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: {}\r\nMCP-Protocol-Version: {LEGACY}\r\nContent-Length: {}\r\n\r\n{body}",
            session.id,
            body.len()
        );
        gone.write_all(head.as_bytes()).expect("write");
    }
    // The server is still up, the old session still works, and a new client is served.
    server.assert_alive();
    let again = session.request(6, "tools/call", &json!({ "name": "fleet_status", "arguments": {} }));
    assert_eq!(again["result"]["isError"], false, "{again}");
    let fresh = HttpSession::open(addr);
    let listed = fresh.request(1, "tools/list", &json!({}));
    // Every contract, the uncontracted tool and the two broken ones.
    let expected = qe_server::all_contracts().len() + 3;
    assert_eq!(listed["result"]["tools"].as_array().map(Vec::len), Some(expected), "{listed}");
    // Input schemas are advertised as portably as output schemas: rmcp's own schemars
    // settings write `uint32`/`double` formats, the adapter turns them into bounds.
    let formats = contract_tests::formats(&listed["result"]["tools"]);
    assert!(formats.iter().all(|f| f == "date-time"), "non-standard formats advertised: {formats:?}");
    assert!(!formats.is_empty(), "the demo advertises date-time fields");
    // Closing a session (HTTP DELETE) is a body-less 204, which every SDK client takes
    // as done; the closed session is then unknown, and the other one still works.
    let closed = http(addr, "DELETE", "/mcp", &[("Mcp-Session-Id", &fresh.id), ("MCP-Protocol-Version", LEGACY)], b"");
    assert_eq!(closed.status, 204, "{closed:?}");
    assert!(closed.body.is_empty(), "{closed:?}");
    let after = fresh.post(&json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {} }));
    assert!((400..500).contains(&after.status), "a closed session was served: {after:?}");
    let still = session.request(7, "tools/call", &json!({ "name": "fleet_status", "arguments": {} }));
    assert_eq!(still["result"]["isError"], false, "{still}");
    server.assert_alive();
}
