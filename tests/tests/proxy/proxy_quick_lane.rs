//! contract-proxy's quick lane: the answer to a `tools/call` whose `structuredContent` its
//! advertised `outputSchema` passes is read once, checked against the schema's compiled
//! plan from the raw text, and forwarded as the bytes it came as. Its oracle is the full
//! path (the result decoded into a `Value`, judged by jsonschema), which the proxy takes
//! for the same result when its answer writes `result` before `id` (the lane reads an
//! answer only once its `id` is known). Every result is answered both ways by a raw
//! fixture (`proxy/verdict_server.mjs`); the two answers must get the same verdict: both
//! forwarded as they came, or both replaced by the same report. The lane's own trace
//! events say which answers it passed: every clean result's, and no answer the full path
//! changes.

use crate::proxy_transparent::{interop, scratch, DEADLINE};
use crate::support::bins;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::thread;

use serde_json::{json, Value};

/// Closed objects, a recursive `$ref`, bounds, an enum, a nullable string, a length limit.
fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "title": { "type": "string", "maxLength": 40 },
            "count": { "type": "integer", "minimum": 0 },
            "ratio": { "type": "number", "exclusiveMaximum": 1 },
            "tags": { "type": "array", "items": { "type": "string", "enum": ["a", "b", "c"] } },
            "nested": { "$ref": "#/$defs/node" },
            "state": { "anyOf": [{ "type": "string" }, { "type": "null" }] }
        },
        "required": ["title", "count"],
        "additionalProperties": false,
        "$defs": {
            "node": {
                "type": "object",
                "properties": { "child": { "$ref": "#/$defs/node" }, "v": { "type": "integer" } },
                "additionalProperties": false
            }
        }
    })
}

/// `structuredContent` texts the schema passes.
fn clean() -> Vec<String> {
    vec![
        r#"{"title":"t","count":1}"#.to_owned(),
        r#"{ "count" : 0 , "title" : "t" , "ratio" : 0.7 , "tags" : ["a","c"] , "state" : null }"#.to_owned(),
        r#"{"\u0074itle":"escaped key","count":-0,"nested":{"child":{"child":{"v":-1}}}}"#.to_owned(),
        format!(r#"{{"title":"{}","count":1e2,"state":"{}"}}"#, "x".repeat(40), "s".repeat(20_000)),
        r#"{"title":"\"quoted\" \u00e9 \ud834\udd1e","count":18446744073709551615}"#.to_owned(),
    ]
}

/// `structuredContent` texts the schema refuses, one kind of break each, and texts the
/// plan and the `Value` path read differently (repeated keys).
fn broken() -> Vec<String> {
    let deep = format!(r#"{{"title":"t","count":1,"nested":{}{{}}{}}}"#, r#"{"child":"#.repeat(140), "}".repeat(140));
    vec![
        r#"{"count":1}"#.to_owned(),
        r#"{"title":1,"count":1}"#.to_owned(),
        r#"{"title":"t","count":1,"extra":1}"#.to_owned(),
        r#"{"title":"t","count":1,"\u0065xtra":1}"#.to_owned(),
        r#"{"title":"t","count":0.7}"#.to_owned(),
        r#"{"title":"t","count":1e400}"#.to_owned(),
        r#"{"title":"t","count":-1}"#.to_owned(),
        r#"{"title":"t","count":1,"ratio":1}"#.to_owned(),
        r#"{"title":"t","count":1,"tags":["d"]}"#.to_owned(),
        r#"{"title":"t","count":1,"nested":{"child":{"w":1}}}"#.to_owned(),
        format!(r#"{{"title":"{}","count":1}}"#, "x".repeat(10_000)),
        deep,
        // Repeated keys: the `Value` path keeps the last value.
        r#"{"title":"t","count":1,"count":"one"}"#.to_owned(),
        r#"{"title":"t","count":"one","count":1}"#.to_owned(),
        r#"{"title":1,"count":1,"\u0074itle":"t"}"#.to_owned(),
        "[]".to_owned(),
        "null".to_owned(),
    ]
}

/// A result around `structured`, in one of the shapes a server writes.
fn results() -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let text = |s: &str| serde_json::to_string(&json!([{ "type": "text", "text": s }])).unwrap();
    for (structured, clean) in clean().into_iter().map(|s| (s, true)).chain(broken().into_iter().map(|s| (s, false))) {
        let content = text(&structured);
        out.push((format!(r#"{{"content":{content},"structuredContent":{structured}}}"#), clean));
        out.push((format!(r#"{{"structuredContent":{structured},"isError":false,"content":{content}}}"#), clean));
        out.push((format!(r#"{{"content":[],"structuredContent":{structured},"_meta":{{"k":0.7}}}}"#), clean));
        // An error is not judged; a malformed `isError` is refused.
        out.push((format!(r#"{{"content":{content},"structuredContent":{structured},"isError":true}}"#), false));
        out.push((format!(r#"{{"content":{content},"structuredContent":{structured},"isError":"no"}}"#), false));
    }
    out.push((r#"{"content":[{"type":"text","text":"no structured content"}]}"#.to_owned(), false));
    out.push((r#"{"content":{},"structuredContent":{"title":"t","count":1}}"#.to_owned(), false));
    out.push((r#"{"content":[],"structuredContent":{"title":"t","count":1},"_meta":{"n":1e400}}"#.to_owned(), false));
    out
}

struct Proxy {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
}

impl Proxy {
    fn start(dir: &std::path::Path, cases: &[String]) -> (Self, std::path::PathBuf) {
        bins::server_everything(); // installs the pinned node packages the fixtures run on
        std::fs::write(dir.join("cases.json"), serde_json::to_string(cases).unwrap()).unwrap();
        std::fs::write(dir.join("schema.json"), schema().to_string()).unwrap();
        let log = dir.join("stderr.log");
        let mut child = Command::new(bins::contract_proxy())
            .args(["--log-level", "trace", "--", "node"])
            .arg(interop("proxy/verdict_server.mjs"))
            .arg(dir.join("cases.json"))
            .arg(dir.join("schema.json"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("spawn the proxy");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let stdin = child.stdin.take().unwrap();
        (Self { child, stdin, lines }, log)
    }

    /// Sends `line` and returns the next line that answers `id`, as written.
    fn ask(&mut self, id: &str, line: &str) -> String {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
        let id: Value = serde_json::from_str(id).unwrap();
        loop {
            let got = self.lines.recv_timeout(DEADLINE).unwrap_or_else(|_| panic!("no answer to {id}"));
            let message: Value = serde_json::from_str(&got).unwrap();
            if message["id"] == id && message.get("method").is_none() {
                return got;
            }
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_quick_lane_gives_the_verdicts_and_reports_of_the_value_path() {
    let dir = scratch("quick-lane");
    let results = results();
    let cases: Vec<String> = results.iter().map(|(r, _)| r.clone()).collect();
    let (mut proxy, log) = Proxy::start(&dir, &cases);
    let init = r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}"#;
    proxy.ask("0", &format!(r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{init}}}"#));
    writeln!(proxy.stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).unwrap();
    proxy.ask(r#""l""#, r#"{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{}}"#);

    let mut next = 0;
    let mut call = |proxy: &mut Proxy, tool: &str, case: usize, first: &str| {
        next += 1;
        let id = format!(r#""{tool}-{first}-{next}""#);
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{"case":{case},"first":"{first}"}}}}}}"#
        );
        let sent = if first == "id" {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{}}}"#, cases[case])
        } else {
            format!(r#"{{"jsonrpc":"2.0","result":{},"id":{id}}}"#, cases[case])
        };
        let got = proxy.ask(&id, &line);
        // `None`: forwarded as the server wrote it; else what stands in its place.
        let verdict = (got != sent).then(|| serde_json::from_str::<Value>(&got).unwrap()["result"].to_string());
        (id, verdict)
    };

    let (mut lane_ids, mut unchanged_lane_ids, mut clean_lane_ids, mut other_ids) =
        (BTreeSet::new(), BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    let (mut passed, mut replaced) = (0, 0);
    for tool in ["judged", "unplanned"] {
        for (case, (result, clean)) in results.iter().enumerate() {
            let (lane_id, lane) = call(&mut proxy, tool, case, "id");
            let (full_id, full) = call(&mut proxy, tool, case, "result");
            assert_eq!(lane, full, "{tool}: the two orders of one answer got different verdicts: {result:.300}");
            if *clean {
                assert_eq!(full, None, "{tool}: a clean result was changed: {result:.300}");
            }
            match &full {
                None => passed += 1,
                Some(_) => replaced += 1,
            }
            if tool == "judged" {
                lane_ids.insert(lane_id.clone());
                if full.is_none() {
                    unchanged_lane_ids.insert(lane_id.clone());
                }
                if *clean {
                    clean_lane_ids.insert(lane_id);
                }
            } else {
                other_ids.insert(lane_id);
            }
            other_ids.insert(full_id);
        }
    }
    assert!(passed >= 30 && replaced >= 30, "{passed} passed, {replaced} replaced");

    drop(proxy);
    let stderr = std::fs::read_to_string(&log).unwrap();
    let hits: BTreeSet<String> = stderr
        .lines()
        .filter(|l| l.contains("passed its outputSchema's compiled check"))
        .filter_map(|l| l.split("id=").nth(1))
        .map(|rest| rest.split_whitespace().next().unwrap_or_default().to_owned())
        .collect();
    assert!(!hits.is_empty(), "the lane passed nothing: {stderr:.2000}");
    assert!(clean_lane_ids.is_subset(&hits), "clean results the lane left: {:?}", clean_lane_ids.difference(&hits));
    assert!(
        hits.is_subset(&unchanged_lane_ids),
        "the lane passed answers the full path changes: {:?}",
        hits.difference(&unchanged_lane_ids)
    );
    assert!(hits.is_disjoint(&other_ids), "the lane read `result` before `id`, or an unplanned schema");
    assert!(lane_ids.is_superset(&hits));
}

/// Reads the proxy's lines until every id of `ids` has its answer; returns them by id.
fn answers(proxy: &Proxy, ids: &[&str]) -> std::collections::BTreeMap<String, Value> {
    let mut found = std::collections::BTreeMap::new();
    while found.len() < ids.len() {
        let got = proxy.lines.recv_timeout(DEADLINE).unwrap_or_else(|_| panic!("answers so far: {found:?}"));
        let message: Value = serde_json::from_str(&got).unwrap();
        if let Some(id) = message["id"].as_str().filter(|id| ids.contains(id) && message.get("method").is_none()) {
            found.insert(id.to_owned(), message);
        }
    }
    found
}

#[test]
fn calls_sent_before_any_answer_or_without_initialize_are_judged() {
    let dir = scratch("early-calls");
    let cases = vec![
        r#"{"content":[],"structuredContent":{"title":"t","count":1}}"#.to_owned(),
        r#"{"content":[],"structuredContent":{"count":1}}"#.to_owned(),
    ];
    let call = |id: &str, case: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","id":"{id}","method":"tools/call","params":{{"name":"judged","arguments":{{"case":{case},"first":"id"}}}}}}"#
        )
    };
    let verdict = |answer: &Value| {
        let result = &answer["result"];
        (result["isError"] == true).then(|| result["content"][0]["text"].as_str().unwrap_or_default().to_owned())
    };

    // Written all at once: the calls reach the proxy before the server's initialize answer.
    let (mut proxy, _) = Proxy::start(&dir, &cases);
    let init = r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}"#;
    let burst = [
        format!(r#"{{"jsonrpc":"2.0","id":"i","method":"initialize","params":{init}}}"#),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        call("clean", 0),
        call("broken", 1),
    ];
    writeln!(proxy.stdin, "{}", burst.join("\n")).unwrap();
    proxy.stdin.flush().unwrap();
    let got = answers(&proxy, &["i", "clean", "broken"]);
    // Clean control: the valid result passes untouched.
    assert_eq!(verdict(&got["clean"]), None, "{}", got["clean"]);
    assert_eq!(got["clean"]["result"]["structuredContent"], json!({ "title": "t", "count": 1 }));
    let refused = verdict(&got["broken"]).unwrap_or_else(|| panic!("an early broken result passed: {}", got["broken"]));
    assert!(refused.contains("output_contract_violation"), "{refused}");
    drop(proxy);

    // No initialize at all (a 2026-07-28 client): the same verdicts.
    let (mut proxy, _) = Proxy::start(&dir, &cases);
    writeln!(proxy.stdin, "{}\n{}", call("clean", 0), call("broken", 1)).unwrap();
    proxy.stdin.flush().unwrap();
    let got = answers(&proxy, &["clean", "broken"]);
    assert_eq!(verdict(&got["clean"]), None, "{}", got["clean"]);
    let refused =
        verdict(&got["broken"]).unwrap_or_else(|| panic!("an unannounced broken result passed: {}", got["broken"]));
    assert!(refused.contains("output_contract_violation"), "{refused}");
}
