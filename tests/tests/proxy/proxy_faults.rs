//! contract-proxy over stdio in front of an upstream that fails: one that dies in the
//! middle of a call while a request of its own waits on the client, and one that writes
//! what is no answer (a line that is not JSON, JSON that is no JSON-RPC message, an answer
//! to an id nobody sent, a `null` result, an answer with neither result nor error, a line
//! cut off by its end). The upstream is the proxy fixture (`proxy/server.mjs`), whose
//! `write` answers put those bytes on its stdout; the client is the raw JSON-RPC client of
//! `proxy_lane.rs`. Every case has its clean control against the same process: the call the
//! fixture answers properly, judged as usual.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::proxy_lane::{answer, error_of, proxied, report_schema, scratch, tools_file, Session};

/// A tool of the fixture with the report contract, answered as `answer` says.
fn contracted(name: &str, answer: &Value) -> Value {
    json!({ "tool": { "name": name, "inputSchema": { "type": "object" }, "outputSchema": report_schema() },
            "answer": answer })
}

/// The fixture's scripted answer: `text` on its stdout, then `then` after `after_ms`.
fn write(text: &str, after_ms: u64, then: &Value) -> Value {
    json!({ "write": text, "after_ms": after_ms, "then": then })
}

fn good() -> Value {
    answer(&json!({ "count": 1, "status": "ok" }))
}

/// The message of a JSON-RPC error response.
fn error_message(response: &Value) -> String {
    assert_eq!(response["error"]["code"], -32603, "a -32603 error: {response:#}");
    response["error"]["message"].as_str().unwrap_or_else(|| panic!("a message: {response:#}")).to_owned()
}

// ------------------------------------------------------------------ the upstream dies

#[test]
fn an_upstream_that_dies_mid_call_fails_the_call_cancels_its_own_request_and_ends_the_proxy() {
    let dir = scratch("faults-death");
    let roots = |id: &str| format!("{{\"jsonrpc\":\"2.0\",\"id\":\"{id}\",\"method\":\"roots/list\"}}\n");
    let tools = tools_file(
        &dir,
        &json!([
            contracted("ask", &write(&roots("answered-roots"), 200, &good())),
            contracted("ask_then_die", &write(&roots("unanswered-roots"), 300, &json!("exit"))),
        ]),
    );
    let mut s = Session::initialized(&proxied(&[], "proxy/server.mjs", &tools), &json!({ "roots": {} }));

    // Control: a request of the server's the client answers, then the call's result.
    s.send_call(&json!(1), "ask", &json!({}));
    let asked = s.notification("roots/list");
    assert_eq!(asked["id"], "answered-roots", "{asked:#}");
    s.send(&json!({ "jsonrpc": "2.0", "id": "answered-roots", "result": { "roots": [] } }));
    assert_eq!(s.response(&json!(1))["result"]["structuredContent"], json!({ "count": 1, "status": "ok" }));

    // The server asks for roots, which the client leaves unanswered, and dies.
    let started = Instant::now();
    s.send_call(&json!(2), "ask_then_die", &json!({}));
    assert_eq!(s.notification("roots/list")["id"], "unanswered-roots");
    let failed = s.response(&json!(2));
    let message = error_message(&failed);
    assert!(message.contains("the upstream server closed the connection; tools/call was not answered"), "{message}");
    // The server's request nobody will answer is withdrawn; the answered one is not.
    let rest = s.until_closed();
    let cancelled: Vec<&Value> = rest.iter().filter(|m| m["method"] == "notifications/cancelled").collect();
    assert_eq!(cancelled.len(), 1, "{rest:#?}");
    assert_eq!(cancelled[0]["params"]["requestId"], "unanswered-roots", "{rest:#?}");
    assert_eq!(cancelled[0]["params"]["reason"], "the upstream server closed the connection");
    assert!(rest.iter().all(|m| m.get("id").is_none()), "nothing else answered: {rest:#?}");
    let (status, stderr) = s.exited();
    assert_eq!(status, Some(1), "{stderr}");
    assert!(stderr.contains("the upstream server closed the connection"), "{stderr}");
    // Generous: the proxy waits for nothing (the call's --timeout is 60 s).
    assert!(started.elapsed() < Duration::from_secs(30), "exited after {:?}", started.elapsed());
}

#[test]
fn a_line_cut_off_by_the_upstreams_end_is_never_served() {
    let dir = scratch("faults-truncated");
    let cut = r#"{"jsonrpc":"2.0","id":{id},"result":{"content":[],"structuredContent":{"count":1,"sta"#;
    let tools =
        tools_file(&dir, &json!([contracted("cut", &write(cut, 0, &json!("exit"))), contracted("fine", &good())]));
    let mut s = Session::initialized(&proxied(&[], "proxy/server.mjs", &tools), &json!({}));
    // Control: the same upstream answers a call whole.
    assert_eq!(s.call(&json!(1), "fine", &json!({}))["result"], good());
    s.send_call(&json!(2), "cut", &json!({}));
    let message = error_message(&s.response(&json!(2)));
    assert!(message.contains("the upstream server closed the connection; tools/call was not answered"), "{message}");
    assert!(s.until_closed().is_empty(), "nothing but the error");
    let (status, stderr) = s.exited();
    assert_eq!(status, Some(1), "{stderr}");
}

// ------------------------------------------------------------------ what is no answer

#[test]
fn lines_that_are_no_answer_are_dropped_and_a_call_they_replaced_times_out_saying_so() {
    let dir = scratch("faults-garbage");
    let hang = json!("hang");
    let unknown =
        r#"{"jsonrpc":"2.0","id":"never-asked","result":{"content":[],"structuredContent":{"count":"many"}}}"#;
    let refused_id = r#"{"jsonrpc":"2.0","id":9,"result":{"content":[],"structuredContent":{"count":"many"}}}"#;
    let tools = tools_file(
        &dir,
        &json!([
            contracted("noise_then_answer", &write("starting up...\n", 0, &good())),
            contracted("noise_only", &write("this is not JSON\n", 0, &hang)),
            contracted("not_rpc", &write("{\"hello\":\"world\"}\n[1,2]\n", 0, &hang)),
            contracted("unknown_id", &write(&format!("{unknown}\n"), 0, &good())),
            contracted("answers_refused_id", &write(&format!("{refused_id}\n"), 0, &good())),
            contracted("null_result", &write("{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":null}\n", 0, &hang)),
            contracted("empty_answer", &write("{\"jsonrpc\":\"2.0\",\"id\":{id}}\n", 0, &hang)),
            contracted("silent", &hang),
            { "tool": { "name": "plain_null", "inputSchema": { "type": "object" } },
              "answer": write("{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":null}\n", 0, &hang) },
            { "tool": { "name": "strict", "inputSchema": { "type": "object", "required": ["n"] } }, "answer": good() },
        ]),
    );
    let mut s = Session::initialized(&proxied(&["--timeout", "3"], "proxy/server.mjs", &tools), &json!({}));
    s.send(&json!({ "jsonrpc": "2.0", "id": "list", "method": "tools/list" }));
    s.response(&json!("list"));

    // A line that is not JSON before the answer: dropped; the answer is judged as usual.
    assert_eq!(s.call(&json!(1), "noise_then_answer", &json!({}))["result"], good());

    // Instead of the answer: the call ends in the timeout error, which says what came.
    let message = error_message(&s.call(&json!(2), "noise_only", &json!({})));
    assert!(
        message.contains("did not answer tools/call within 3s; meanwhile it wrote 1 line the proxy dropped"),
        "{message}"
    );
    let message = error_message(&s.call(&json!(3), "not_rpc", &json!({})));
    assert!(
        message.contains("did not answer tools/call within 3s; meanwhile it wrote 2 lines the proxy dropped"),
        "{message}"
    );
    // Control: a call the server never answers, with nothing written, says only that.
    let message = error_message(&s.call(&json!(4), "silent", &json!({})));
    assert!(message.ends_with("did not answer tools/call within 3s"), "{message}");

    // An answer to an id nobody sent never reaches the client; the real answer does.
    assert_eq!(s.call(&json!(5), "unknown_id", &json!({}))["result"], good());
    // An answer to a call the proxy refused (the server never saw it) is dropped too: the
    // client reads one answer to id 9, the refusal.
    let refused = s.call(&json!(9), "strict", &json!({}));
    assert_eq!(error_of(&refused["result"])["code"], "invalid_arguments", "{refused:#}");
    assert_eq!(s.call(&json!(6), "answers_refused_id", &json!({}))["result"], good());

    // A `null` result is judged, not passed on: refused as no result object, for a tool
    // with a contract and one without.
    for (id, tool) in [(7, "null_result"), (8, "plain_null")] {
        let null = s.call(&json!(id), tool, &json!({}));
        let error = error_of(&null["result"]);
        assert_eq!(error["code"], "output_contract_violation", "{null:#}");
        assert!(error["message"].as_str().unwrap().contains("a tools/call result must be a JSON object"), "{null:#}");
    }
    // An answer with neither a result nor an error gets an error at once.
    let message = error_message(&s.call(&json!(10), "empty_answer", &json!({})));
    assert!(
        message.contains("the upstream server's answer to tools/call holds neither a result nor an error"),
        "{message}"
    );

    // Nothing else reached the client: no unread line, no answer to an id it never sent.
    s.send(&json!({ "jsonrpc": "2.0", "id": "end", "method": "ping" }));
    s.response(&json!("end"));
    let ids: Vec<&Value> = s.seen.iter().filter_map(|m| m.get("id")).collect();
    assert!(ids.is_empty(), "answers to no request of the client's: {:#?}", s.seen);
    let unread: Vec<&Value> = s.seen.iter().filter(|m| m.get("jsonrpc").is_none()).collect();
    assert!(unread.is_empty(), "lines that are no JSON-RPC message: {unread:#?}");
}

// ------------------------------------------------------------------ an HTTP upstream

/// A streamable HTTP upstream on a loopback port, written by hand so its faults are exact:
/// it answers `initialize` and `tools/list` (tools `cut` and `fine`, with the report
/// contract), `fine` with a clean result, and `cut` with an SSE stream that breaks off in
/// the middle of its answer. One request per connection. Returns its URL.
fn cutting_upstream() -> String {
    use std::io::{BufRead, BufReader, Read, Write};

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let (mut head, mut line) = (String::new(), String::new());
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                    head.push_str(&line);
                    line.clear();
                }
                let length = head
                    .lines()
                    .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_owned()))
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let id = message["id"].to_string();
                let json = |result: &str| {
                    let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s-1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    )
                };
                let reply = match (head.split(' ').next(), message["method"].as_str(), message["params"]["name"].as_str()) {
                    (Some("POST"), Some("initialize"), _) => json(
                        r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"cutting","version":"1"}}"#,
                    ),
                    (Some("POST"), Some("tools/list"), _) => {
                        let tool = |name: &str| json!({ "name": name, "inputSchema": { "type": "object" }, "outputSchema": report_schema() });
                        json(&json!({ "tools": [tool("cut"), tool("fine")] }).to_string())
                    }
                    (Some("POST"), Some("tools/call"), Some("fine")) => json(&good().to_string()),
                    (Some("POST"), Some("tools/call"), Some("cut")) => format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\ndata: {{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[],\"structuredContent\":{{\"count\":1,\"sta"
                    ),
                    (Some("POST"), _, _) => "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_owned(),
                    _ => "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_owned(),
                };
                let _ = stream.write_all(reply.as_bytes());
                let _ = stream.flush();
            });
        }
    });
    url
}

#[test]
fn an_http_upstreams_stream_cut_off_before_the_answer_fails_the_call_at_once() {
    let url = cutting_upstream();
    let argv = vec![crate::support::bins::contract_proxy().display().to_string(), "--upstream-url".to_owned(), url];
    let mut s = Session::initialized(&argv, &json!({}));
    // Control: a call the upstream answers whole.
    assert_eq!(s.call(&json!(1), "fine", &json!({}))["result"], good());
    // The stream breaks off mid-answer: the error comes at once, not at the 60 s timeout.
    let started = Instant::now();
    let message = error_message(&s.call(&json!(2), "cut", &json!({})));
    assert!(message.contains("the upstream server's response stream ended without an answer"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(30), "answered after {:?}", started.elapsed());
    // The client goes on: the next call is served.
    assert_eq!(s.call(&json!(3), "fine", &json!({}))["result"], good());
}
