//! contract-proxy's transparent relay over HTTP: stateless 2026-07-28 requests behind
//! `--http`, and the order of a client's messages in front of an HTTP upstream
//! (`--upstream-url`).

use crate::proxy_transparent::{http, interop, messages_of, raw_server, scratch, serve_http, teed, Driver, Group, Tap};
use crate::support::bins;

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::thread;

use serde_json::Value;

/// A 2026-07-28 request's `_meta` envelope, as JSON text: the client's info and its own
/// capabilities.
fn envelope(client: &str, capabilities: &str) -> String {
    format!(
        r#"{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{{"name":"{client}","version":"1.0.0"}},"io.modelcontextprotocol/clientCapabilities":{capabilities}}}"#
    )
}

fn whoami(id: u64, client: &str, capabilities: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"whoami","arguments":{{}},"_meta":{}}}}}"#,
        envelope(client, capabilities)
    )
}

/// What the server saw of a `whoami` answer (its text, parsed).
fn seen(body: &str) -> Value {
    let answer: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("JSON ({e}): {body}"));
    let text = answer["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("a text block: {answer:#}"));
    serde_json::from_str(text).unwrap()
}

#[test]
fn behind_http_a_stateless_request_reaches_the_server_with_the_clients_own_capabilities() {
    let dir = scratch("stateless");
    let tap = Tap::new(&dir, "stateless");
    let server = vec!["node".to_owned(), interop("proxy/listen_server.mjs").display().to_string()];
    let (front, url) = serve_http(&teed(&tap.server_in, &tap.server_out, &server), &[]);
    let front = Group(front);
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();

    // Two clients, each with capabilities of its own, and no session.
    let a_capabilities = r#"{"sampling":{},"elicitation":{"url":{}},"roots":{"listChanged":true},"x-weight":0.7}"#;
    let sent = [
        whoami(1, "client-a", a_capabilities),
        whoami(1, "client-b", "{}"),
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{{"_meta":{}}}}}"#,
            envelope("client-b", "{}")
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{{"_meta":{}}}}}"#,
            envelope("client-a", "{}")
        ),
    ];
    let mut read = Vec::new();
    for body in &sent {
        let (status, headers, text) = http(&addr, "POST", None, body);
        assert_eq!(status, 200, "{body}: {text}");
        assert!(!headers.iter().any(|(k, _)| k == "mcp-session-id"), "no session: {headers:?}");
        read.push(text);
    }
    let a = seen(&read[0]);
    assert_eq!(a["clientInfo"]["name"], "client-a", "{a}");
    assert_eq!(a["protocolVersion"], "2026-07-28", "{a}");
    assert_eq!(a["clientCapabilities"], serde_json::from_str::<Value>(a_capabilities).unwrap(), "{a}");
    let b = seen(&read[1]);
    assert_eq!(b["clientInfo"]["name"], "client-b", "{b}");
    assert_eq!(b["clientCapabilities"], serde_json::json!({}), "{b}");
    assert!(read[2].contains("2026-07-28"), "server/discover: {}", read[2]);
    assert!(read[3].contains(r#""name":"whoami""#), "tools/list: {}", read[3]);

    // Requests of two clients under the same id at once: each gets its own answer.
    let racers: Vec<_> = ["racer-a", "racer-b"]
        .into_iter()
        .map(|client| {
            let addr = addr.clone();
            thread::spawn(move || {
                for _ in 0..20 {
                    let (status, _, text) = http(&addr, "POST", None, &whoami(9, client, "{}"));
                    assert_eq!(status, 200, "{text}");
                    assert_eq!(seen(&text)["clientInfo"]["name"], client, "{text}");
                }
            })
        })
        .collect();
    for racer in racers {
        racer.join().expect("every answer is the asker's own");
    }

    // Controls: without a session, a request that names no 2026-07-28 envelope is refused,
    // and so is one whose envelope names an older revision; the refusal says how to start.
    let plain = r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}"#;
    let (status, _, text) = http(&addr, "POST", None, plain);
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("2026-07-28"), "{text}");
    let old =
        format!(r#"{{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{{"_meta":{}}}}}"#, envelope("c", "{}"))
            .replace("2026-07-28", "2025-11-25");
    assert_eq!(http(&addr, "POST", None, &old).0, 400);
    drop(front);

    // The server read each client's bytes as sent, in order; the proxy's own listing
    // (before the first call, to judge it) carried the envelope of the client that called.
    let server_in = Tap::lines(&tap.server_in);
    let (own, clients): (Vec<&String>, Vec<&String>) =
        server_in.iter().partition(|l| l.contains(r#""id":"contract-proxy/"#));
    assert_eq!(clients[..sent.len()], sent.iter().collect::<Vec<_>>()[..], "{server_in:#?}");
    let listed: Value = serde_json::from_str(own.first().unwrap_or_else(|| panic!("{server_in:#?}"))).unwrap();
    let carried = &listed["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
    assert_eq!(*carried, serde_json::from_str::<Value>(a_capabilities).unwrap(), "{listed:#}");
    // And the client read the server's answers as written.
    let server_out = Tap::lines(&tap.server_out);
    for answer in &read {
        assert!(server_out.contains(answer), "the server wrote {answer}");
    }
}

#[test]
fn in_front_of_an_http_upstream_a_slow_request_is_never_overtaken() {
    const ROUNDS: u64 = 300;
    let dir = scratch("upstream-order");
    let log = dir.join("taken.log");
    let mut upstream = Command::new("node")
        .arg(interop("proxy/slow_http_server.mjs"))
        .arg(&log)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let mut banner = String::new();
    let banner_pipe = upstream.stdout.take().unwrap();
    let upstream = Group(upstream);
    BufReader::new(banner_pipe).read_line(&mut banner).unwrap();
    let url = banner.trim().strip_prefix("listening ").unwrap_or_else(|| panic!("{banner}")).to_owned();
    let argv = [bins::contract_proxy().display().to_string(), "--upstream-url".to_owned(), url];
    let mut d = Driver::start(&argv, &[], "/");
    d.initialize("{}");
    d.request(2, "tools/list", "{}");
    let mut sent = Vec::new();
    for round in 0..ROUNDS {
        // A request the server takes only after a while, then one it takes at once, written
        // back to back: the server takes them in the order written.
        let (slow, quick) = (10 + 2 * round, 11 + 2 * round);
        let lines = [
            format!(
                r#"{{"jsonrpc":"2.0","id":{slow},"method":"tools/call","params":{{"name":"slow","arguments":{{"ms":25}}}}}}"#
            ),
            format!(r#"{{"jsonrpc":"2.0","id":{quick},"method":"ping","params":{{}}}}"#),
        ];
        for line in &lines {
            d.send(line);
        }
        for _ in 0..2 {
            d.until(&format!("the answers of round {round}"), |m| m["id"] == slow || m["id"] == quick);
        }
        sent.extend(lines);
    }
    d.finish();
    drop(upstream);
    let taken: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|l| l.contains(r#""method":"tools/call""#) || l.contains(r#""method":"ping""#))
        .map(str::to_owned)
        .collect();
    let first_wrong = taken.iter().zip(&sent).position(|(a, b)| a != b);
    assert_eq!(
        first_wrong,
        None,
        "taken out of order at {first_wrong:?}: {:#?}",
        &taken[first_wrong.unwrap_or(0)..][..2]
    );
    assert_eq!(taken.len(), sent.len());
}

#[test]
fn behind_http_one_stateless_client_never_reads_what_the_server_sent_for_another() {
    let (front, url) = serve_http(&raw_server(), &[]);
    let front = Group(front);
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();
    let meta = |client: &str, token: Option<&str>| {
        let mut meta: Value = serde_json::from_str(&envelope(client, "{}")).unwrap();
        if let Some(token) = token {
            meta["progressToken"] = Value::from(token);
        }
        meta
    };
    for round in 0..20 {
        let token = format!("a-{round}");
        let burst = serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": { "name": "burst", "arguments": { "n": 9 }, "_meta": meta("client-a", Some(&token)) } })
        .to_string();
        let ping = serde_json::json!({ "jsonrpc": "2.0", "id": 2, "method": "ping",
            "params": { "_meta": meta("client-b", None) } })
        .to_string();
        let (a, b) = {
            let addr_a = addr.clone();
            let a = thread::spawn(move || http(&addr_a, "POST", None, &burst));
            let b = http(&addr, "POST", None, &ping);
            (a.join().unwrap(), b)
        };
        let (read_a, read_b) = (messages_of(&a.1, &a.2), messages_of(&b.1, &b.2));
        // The other client's POST reads its own answer only.
        assert_eq!(read_b, [r#"{"jsonrpc":"2.0","id":2,"result":{"pong":true}}"#], "round {round}");
        // The caller reads every progress notification of its call, and its answer last.
        let progress: Vec<&String> = read_a.iter().filter(|l| l.contains("notifications/progress")).collect();
        assert_eq!(progress.len(), 3, "round {round}: {read_a:#?}");
        assert!(progress.iter().all(|l| l.contains(&format!(r#""progressToken":"{token}""#))), "{read_a:#?}");
        assert!(read_a.last().is_some_and(|l| l.contains(r#""id":1,"result""#)), "round {round}: {read_a:#?}");
    }
    drop(front);
}
