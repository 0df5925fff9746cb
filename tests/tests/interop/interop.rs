//! The demo server driven by clients nobody on this project wrote, and transport parity.
//!
//! - The official TypeScript SDK clients, v1 (draft-07 Ajv, validates after `listTools`)
//!   and v2 (`@modelcontextprotocol/client`), the official Python SDK client
//!   (`jsonschema` 2020-12), and the MCP Inspector's CLI (its own v2 client, which
//!   declares the tasks extension in both eras) connect over stdio and streamable HTTP, in both
//!   protocol eras where the client has two (`auto`/`modern` adopts 2026-07-28,
//!   `legacy` keeps the 2025 handshake), list the tools and make every call in
//!   `tests/interop/calls.json`, with no warning or error printed but the error of
//!   each call that must fail.
//! - The same calls over stdio, HTTP and the in-process pipeline give identical results.
//!
//! The clients are installed by `tests/interop/install.sh` (idempotent), which these
//! tests run themselves; the server binary is built with `cargo build -p qe-server
//! --features server`. Every wait on a process or socket has a deadline. Bad input on
//! both transports is `interop_bad_input.rs`.

use std::sync::Mutex;

use serde_json::{json, Value};

use crate::support::bins;
use crate::support::interop;

use interop::*;

// ------------------------------------------------------------------ the tests

/// Clients share one machine's two cores; running them one at a time keeps each
/// client's own timeouts meaningful.
static CLIENTS: Mutex<()> = Mutex::new(());

#[test]
fn typescript_sdk_client_validates_every_contracted_result_over_stdio_and_http() {
    let _one_at_a_time = CLIENTS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let bin = bins::qe_server().to_str().expect("utf-8 path").to_owned();
    let (stdio, stdio_err) = ts_client("stdio", &bin);
    assert_eq!(stdio["sdk"], "1.32.2");
    let stdio = check_summary(&stdio, &stdio_err, LEGACY);

    let mut server = HttpServer::start();
    let (http, http_err) = ts_client("http", &server.url());
    let http = check_summary(&http, &http_err, LEGACY);
    server.assert_alive();

    assert_parity(LEGACY, &[("typescript/stdio", stdio), ("typescript/http", http)]);
}

#[test]
fn typescript_sdk_v2_client_validates_every_contracted_result_in_both_protocol_eras() {
    let _one_at_a_time = CLIENTS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let bin = bins::qe_server().to_str().expect("utf-8 path").to_owned();
    let mut server = HttpServer::start();
    // `legacy` (the SDK default) keeps the handshake; `auto` adopts 2026-07-28.
    for (mode, protocol) in [("legacy", LEGACY), ("auto", MODERN)] {
        let (stdio, stdio_err) = ts2_client("stdio", &bin, mode);
        assert_eq!(stdio["sdk"], "2.4.0");
        let stdio = check_summary(&stdio, &stdio_err, protocol);
        let (http, http_err) = ts2_client("http", &server.url(), mode);
        let http = check_summary(&http, &http_err, protocol);
        server.assert_alive();
        assert_parity(protocol, &[("typescript-v2/stdio", stdio), ("typescript-v2/http", http)]);
    }
}

#[test]
fn mcp_inspector_cli_lists_and_calls_every_tool_in_both_protocol_eras() {
    let _one_at_a_time = CLIENTS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let bin = bins::qe_server().to_str().expect("utf-8 path").to_owned();
    let mut server = HttpServer::start();
    // The Inspector declares the tasks extension in both eras. Its modern era gets the
    // long-running tools as tasks and settles them; its legacy era (2025-11-25, which
    // reads a task handle as the result unless the tool is marked
    // `execution.taskSupport: "required"`, a field rmcp 3.11's `Tool` lacks) gets every
    // result complete, as the server answers every client before 2026-07-28. Every call
    // passes in both: a success exits 0 with nothing on stderr, a call that must fail
    // fails as the tool error it is.
    for (era, protocol) in [("legacy", LEGACY), ("modern", MODERN)] {
        let (stdio, _) = inspector_client("stdio", &bin, era);
        let stdio = check_inspector(&stdio, protocol);
        let (http, _) = inspector_client("http", &server.url(), era);
        let http = check_inspector(&http, protocol);
        server.assert_alive();
        assert_eq!(stdio, http, "inspector ({era}): stdio and HTTP differ");
    }
}

#[test]
fn python_sdk_client_validates_every_contracted_result_in_both_protocol_eras() {
    let _one_at_a_time = CLIENTS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let bin = bins::qe_server().to_str().expect("utf-8 path").to_owned();
    let mut server = HttpServer::start();
    // `auto` probes server/discover and adopts 2026-07-28; `legacy` keeps the handshake.
    for (mode, protocol) in [("auto", MODERN), ("legacy", LEGACY)] {
        let (stdio, stdio_err) = py_client("stdio", &bin, mode);
        assert_eq!(stdio["sdk"], "2.3.0");
        let stdio = check_summary(&stdio, &stdio_err, protocol);
        let (http, http_err) = py_client("http", &server.url(), mode);
        let http = check_summary(&http, &http_err, protocol);
        server.assert_alive();
        assert_parity(protocol, &[("python/stdio", stdio), ("python/http", http)]);
    }
}

#[test]
fn stdio_http_and_in_process_give_identical_results() {
    let server = HttpServer::start();
    let session = HttpSession::open(server.addr);
    let mut stdio = StdioServer::start();
    stdio.initialize();

    let stdio_list = stdio.request(1, "tools/list", &json!({}));
    let http_list = session.request(1, "tools/list", &json!({}));
    assert_eq!(stdio_list["result"], http_list["result"], "tools/list differs between stdio and HTTP");

    for (i, call) in calls().iter().enumerate() {
        let id = 10 + u64::try_from(i).expect("few calls");
        let params = json!({ "name": call.name, "arguments": call.arguments });
        let over_stdio = stdio.request(id, "tools/call", &params);
        let over_http = session.request(id, "tools/call", &params);
        let at = format!("{} {}", call.name, call.arguments);
        // The whole result, byte for byte in JSON terms, not only its essence.
        assert_eq!(over_stdio["result"], over_http["result"], "{at}: stdio and HTTP differ");
        if replayable(call) {
            let local = in_process(call, LEGACY);
            let wire = &over_stdio["result"];
            for key in ["structuredContent", "isError", "_meta"] {
                assert_eq!(wire.get(key), local.get(key), "{at}: `{key}` differs from the in-process pipeline");
            }
            // One text block holding the same JSON. Its key order may differ: in process
            // the pipeline writes the typed result in field order, while rmcp's `Json<T>`
            // hands the adapter a `serde_json::Value` (sorted keys).
            let text = |r: &Value| -> Value {
                assert_eq!(r["content"].as_array().map(Vec::len), Some(1), "{at}: one text block: {r}");
                serde_json::from_str(r["content"][0]["text"].as_str().expect("a text block")).expect("JSON text")
            };
            assert_eq!(text(wire), text(&local), "{at}: the text block differs from the in-process pipeline");
        } else {
            assert_eq!(
                error_code(&over_stdio["result"]).as_deref().unwrap_or("none"),
                if call.expect == "uncontracted" { "none" } else { call.expect.as_str() },
                "{at}"
            );
        }
    }
    assert!(stdio.hang_up(IO_DEADLINE).success(), "the stdio server must exit cleanly when its client leaves");
}
