//! The rug-pull servers (`tests/interop/rugpull/`, one on the official TypeScript SDK, one
//! on the official Python SDK) behave as documented, over stdio and streamable HTTP, in
//! every mode: list, call N times, see `notifications/tools/list_changed` (in mode `none`,
//! nothing within a short wait), list again, call again. Both listings are compared whole
//! with the listings written out in support/rugpull.rs; neither SDK adds a field to these
//! tools (no `execution`, no `$schema`), so the comparison is exact. In mode `reordered`
//! the wire's key order is checked too: reversed everywhere the SDK keeps the handler's
//! order.
//!
//! The SDKs are installed by `tests/interop/install.sh` (idempotent), which these tests
//! run themselves. One server process per (SDK, transport, mode).

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::bins;
use crate::support::interop;
use crate::support::rugpull;

use interop::{HttpServer, HttpSession, StdioServer, IO_DEADLINE};
use rugpull::{EventStream, Mode, Sdk};

/// How long a server that must stay quiet is watched.
const QUIET: Duration = Duration::from_millis(300);

fn list_changed() -> Value {
    json!({ "jsonrpc": "2.0", "method": "notifications/tools/list_changed" })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transport {
    Stdio,
    Http,
}

/// One request's answer: the response, its JSON text, and the notifications that came
/// before it on the same channel (stdio only; over HTTP they ride the GET stream).
struct Reply {
    message: Value,
    raw: String,
    before: Vec<Value>,
}

enum Link {
    Stdio(StdioServer),
    Http { server: HttpServer, session: HttpSession, events: EventStream },
}

impl Link {
    /// Starts the server and completes the 2025 handshake; returns the initialize result.
    fn open(sdk: Sdk, transport: Transport, mode: Mode, after: u32) -> (Self, Value) {
        match transport {
            Transport::Stdio => {
                let mut server = sdk.stdio(mode, after);
                let init = server.request(0, "initialize", &interop::initialize_params());
                server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
                (Link::Stdio(server), init["result"].clone())
            }
            Transport::Http => {
                let server = sdk.http(mode, after);
                let (session, init) = rugpull::open_session(server.addr);
                // Open before the first request: the change is announced on this stream.
                let events = EventStream::open(&session);
                (Link::Http { server, session, events }, init)
            }
        }
    }

    fn request(&mut self, id: u64, method: &str, params: &Value) -> Reply {
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        match self {
            Link::Stdio(server) => {
                server.send(&message);
                let mut before = Vec::new();
                loop {
                    let raw = server
                        .lines
                        .recv_timeout(IO_DEADLINE)
                        .unwrap_or_else(|_| panic!("no answer to `{method}` (id {id}) within {IO_DEADLINE:?}"));
                    let parsed: Value =
                        serde_json::from_str(&raw).unwrap_or_else(|e| panic!("a line that is not JSON ({e}): {raw}"));
                    if parsed["id"] == json!(id) {
                        return Reply { message: parsed, raw, before };
                    }
                    assert!(parsed.get("id").is_none(), "an answer to another request: {parsed}");
                    before.push(parsed);
                }
            }
            Link::Http { session, .. } => {
                let reply = session.post(&message);
                assert_eq!(reply.status, 200, "`{method}`: {reply:?}");
                let others: Vec<Value> = reply.messages().into_iter().filter(|m| m["id"] != json!(id)).collect();
                assert!(others.is_empty(), "`{method}`: the POST stream carried {others:?}");
                Reply { message: reply.response(id), raw: rugpull::raw_response(&reply.body, id), before: Vec::new() }
            }
        }
    }

    /// The notifications on the channel the server announces changes on (stdio: the pipe;
    /// HTTP: the GET stream): the first within `first`, then each within `QUIET` of the
    /// one before.
    fn notifications(&mut self, first: Duration) -> Vec<Value> {
        let mut wait = first;
        let mut out = Vec::new();
        loop {
            let next = match self {
                Link::Stdio(server) => server.recv(wait),
                Link::Http { events, .. } => events.messages.recv_timeout(wait).ok(),
            };
            let Some(message) = next else { return out };
            out.push(message);
            wait = QUIET;
        }
    }
}

/// Calls `name` and returns its result.
fn call(link: &mut Link, id: &mut u64, name: &str, arguments: &Value) -> Reply {
    *id += 1;
    let reply = link.request(*id, "tools/call", &json!({ "name": name, "arguments": arguments }));
    assert!(reply.message.get("error").is_none(), "{name}: {}", reply.message);
    reply
}

fn check(sdk: Sdk, transport: Transport, mode: Mode, after: u32) {
    let at = format!("{sdk:?} over {transport:?}, --mode {} --after {after}", mode.arg());
    let (mut link, init) = Link::open(sdk, transport, mode, after);
    assert_eq!(init["protocolVersion"], interop::LEGACY, "{at}: {init}");
    assert_eq!(init["capabilities"]["tools"], json!({ "listChanged": true }), "{at}: {init}");

    let mut id = 1;
    let first = link.request(id, "tools/list", &json!({}));
    assert_eq!(first.message["result"]["tools"], rugpull::baseline(), "{at}: the listing before the change");
    let mut seen = first.before;
    for n in 1..=after {
        assert!(seen.is_empty(), "{at}: {seen:?} before call {n}");
        if let Link::Http { events, .. } = &link {
            assert!(events.messages.try_recv().is_err(), "{at}: a message on the GET stream before call {n}");
        }
        // Odd calls look up, even ones delete: both count, both answer as before the change.
        let record = format!("r{n}");
        let reply = if n % 2 == 1 {
            let reply = call(&mut link, &mut id, "lookup", &json!({ "id": record }));
            assert_eq!(reply.message["result"], rugpull::lookup_result(&record, &json!(0.5)), "{at}: call {n}");
            reply
        } else {
            let reply = call(&mut link, &mut id, "delete_record", &json!({ "id": record }));
            assert_eq!(reply.message["result"], rugpull::delete_result(&record), "{at}: call {n}");
            reply
        };
        seen.extend(reply.before);
    }
    // Over stdio the notification precedes the answer of the request that switched.
    if transport == Transport::Stdio {
        let expected = if mode.changes() { vec![list_changed()] } else { Vec::new() };
        assert_eq!(seen, expected, "{at}: notifications ahead of the switching answer");
    }
    // Then nothing more (a change is announced once); over HTTP the one announcement is
    // on the GET stream.
    seen.extend(link.notifications(if mode.changes() && transport == Transport::Http { IO_DEADLINE } else { QUIET }));
    let expected = if mode.changes() { vec![list_changed()] } else { Vec::new() };
    assert_eq!(seen, expected, "{at}: notifications after the N-th request");

    id += 1;
    let second = link.request(id, "tools/list", &json!({}));
    assert_eq!(second.message["result"]["tools"], rugpull::changed(mode), "{at}: the listing after the change");

    // Calls keep answering after the switch, under the listed name.
    let mut arguments = json!({ "id": "later" });
    if mode == Mode::RequiredArg {
        arguments["token"] = json!("t");
    }
    let reply = call(&mut link, &mut id, mode.lookup_name(), &arguments);
    assert_eq!(reply.message["result"], rugpull::lookup_result("later", &mode.score_after()), "{at}: after");
    if mode == Mode::Renamed {
        let reply = call(&mut link, &mut id, "lookup", &json!({ "id": "later" }));
        assert_eq!(reply.message["result"], rugpull::unknown_tool_result("lookup"), "{at}: the old name");
    }
    let reply = call(&mut link, &mut id, "delete_record", &json!({ "id": "later" }));
    assert_eq!(reply.message["result"], rugpull::delete_result("later"), "{at}: after");
    let mut again = reply.before;
    again.extend(link.notifications(QUIET));
    assert!(again.is_empty(), "{at}: notified again: {again:?}");

    if mode == Mode::Reordered {
        assert_reversed(sdk, &first.raw, &second.raw, &at);
    }

    // The state belongs to the process: a session opened after the switch lists the same.
    if let Link::Http { server, .. } = &mut link {
        let (fresh, _) = rugpull::open_session(server.addr);
        let listed = fresh.request(1, "tools/list", &json!({}));
        assert_eq!(listed["result"]["tools"], rugpull::changed(mode), "{at}: a new session's listing");
        server.assert_alive();
    }
}

/// The objects of the listed tools in `after` have the keys of `before` reversed, except
/// where the SDK writes its own order (the same as before, sorted).
fn assert_reversed(sdk: Sdk, before: &str, after: &str, at: &str) {
    let tools = |raw: &str| -> Vec<(String, Vec<String>)> {
        rugpull::key_orders(raw).into_iter().filter(|(pointer, _)| pointer.starts_with("/result/tools/")).collect()
    };
    let (before, after) = (tools(before), tools(after));
    let pointers = |orders: &[(String, Vec<String>)]| orders.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    let mut expected_pointers = pointers(&before);
    let mut found_pointers = pointers(&after);
    expected_pointers.sort();
    found_pointers.sort();
    assert_eq!(found_pointers, expected_pointers, "{at}: the same objects");
    let mut reversed = 0;
    for (pointer, keys) in &before {
        let found = &after.iter().find(|(p, _)| p == pointer).expect("the same pointers").1;
        // "/result/tools/<i>" and what follows below the tool.
        let below_tool = pointer.splitn(5, '/').nth(4).map_or(String::new(), |rest| format!("/{rest}"));
        if rugpull::sdk_ordered(sdk).contains(&below_tool.as_str()) {
            let mut sorted = keys.clone();
            sorted.sort();
            assert_eq!(keys, &sorted, "{at}: {pointer} is written in the SDK's (sorted) order");
            assert_eq!(found, keys, "{at}: {pointer} keeps the SDK's order");
        } else {
            let mut expected = keys.clone();
            expected.reverse();
            assert_eq!(found, &expected, "{at}: {pointer} reversed");
            reversed += 1;
        }
    }
    assert!(reversed > 0, "{at}: no object reached the wire reversed");
}

/// Every mode, each with its own process; N runs through 0, 1 and 2.
fn every_mode(sdk: Sdk, transport: Transport) {
    for (i, mode) in Mode::ALL.into_iter().enumerate() {
        let after = u32::try_from(i % 3).expect("small");
        check(sdk, transport, mode, after);
    }
}

#[test]
fn typescript_sdk_fixture_over_stdio() {
    every_mode(Sdk::TypeScript, Transport::Stdio);
}

#[test]
fn typescript_sdk_fixture_over_http() {
    every_mode(Sdk::TypeScript, Transport::Http);
}

#[test]
fn python_sdk_fixture_over_stdio() {
    every_mode(Sdk::Python, Transport::Stdio);
}

#[test]
fn python_sdk_fixture_over_http() {
    every_mode(Sdk::Python, Transport::Http);
}

/// Both SDKs' scripts refuse an unknown mode or start, so a typo cannot pass for the control.
#[test]
fn an_unknown_mode_is_refused_and_a_known_one_starts() {
    interop::clients_installed();
    for sdk in Sdk::ALL {
        let mut cmd = sdk.command(Mode::None, 0);
        let args: Vec<String> = cmd.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        let mut bad = std::process::Command::new(cmd.get_program());
        bad.args(args.iter().map(|a| if a == "none" { "nonsense" } else { a.as_str() }));
        let out = bins::run_to_end(&mut bad, IO_DEADLINE);
        assert_eq!(out.status.code(), Some(2), "{sdk:?}: {}", out.stderr);
        assert!(out.stderr.contains("--mode"), "{sdk:?}: {}", out.stderr);
        // So does an unknown start: a typo cannot pass for the baseline.
        let mut bad_start = sdk.command(Mode::None, 0);
        let out = bins::run_to_end(bad_start.env("RUGPULL_START", "chnaged"), IO_DEADLINE);
        assert_eq!(out.status.code(), Some(2), "{sdk:?}: {}", out.stderr);
        assert!(out.stderr.contains("RUGPULL_START"), "{sdk:?}: {}", out.stderr);
        // The control: the same command with a known mode serves, and ends when stdin closes.
        let out = bins::run_to_end(&mut cmd, IO_DEADLINE);
        assert!(out.status.success(), "{sdk:?}: {}", out.stderr);
        let out = bins::run_to_end(sdk.command(Mode::None, 0).env("RUGPULL_START", "changed"), IO_DEADLINE);
        assert!(out.status.success(), "{sdk:?}: {}", out.stderr);
    }
}

/// Counts the `notifications/tools/list_changed` an rmcp client receives.
#[derive(Clone, Debug, Default)]
struct Changes {
    seen: std::sync::Arc<tokio::sync::Notify>,
}

impl rmcp::ClientHandler for Changes {
    fn on_tool_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) -> impl std::future::Future<Output = ()> + Send + '_ {
        self.seen.notify_one();
        std::future::ready(())
    }
}

/// The official Rust SDK's client, on the stdio command `Sdk::command` builds: it lists,
/// calls, is told of the change, and lists the changed tools (its cached listing dropped).
#[test]
fn rmcp_client_sees_each_sdk_change_its_tools() {
    use rmcp::ServiceExt as _;

    interop::clients_installed();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    for sdk in Sdk::ALL {
        runtime.block_on(async {
            let mut cmd = tokio::process::Command::from(sdk.command(Mode::Description, 1));
            let mut child = cmd
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null())
                .kill_on_drop(true)
                .spawn()
                .expect("spawn the server");
            let transport = (child.stdout.take().expect("stdout"), child.stdin.take().expect("stdin"));
            let changes = Changes::default();
            let client = tokio::time::timeout(IO_DEADLINE, changes.clone().serve(transport))
                .await
                .expect("initialize in time")
                .expect("initialize");
            let listed = |tools: Vec<rmcp::model::Tool>| serde_json::to_value(tools).expect("tools as JSON");
            let before = client.list_tools(None).await.expect("tools/list");
            assert_eq!(listed(before.tools), rugpull::baseline(), "{sdk:?}: before");
            let arguments = json!({ "id": "r1" }).as_object().cloned().expect("an object");
            let result = client
                .call_tool(rmcp::model::CallToolRequestParams::new("lookup").with_arguments(arguments))
                .await
                .expect("tools/call");
            let result = serde_json::to_value(result).expect("result as JSON");
            assert_eq!(result["structuredContent"], json!({ "id": "r1", "score": 0.5 }), "{sdk:?}: {result}");
            tokio::time::timeout(IO_DEADLINE, changes.seen.notified()).await.expect("list_changed in time");
            let after = client.list_tools(None).await.expect("tools/list");
            assert_eq!(listed(after.tools), rugpull::changed(Mode::Description), "{sdk:?}: after");
            client.cancel().await.expect("close the client");
        });
    }
}
