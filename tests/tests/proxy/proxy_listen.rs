//! contract-proxy in front of a server that speaks protocol 2026-07-28 (the TypeScript
//! SDK v2's `serveStdio`, `tests/interop/proxy/listen_server.mjs`), driven by rmcp's client
//! over stdio: the proxy starts a 2026-07-28 session upstream, offers that revision to
//! its clients, and forwards `subscriptions/listen` — the only way a 2026-07-28 server's
//! notifications reach a client. Controls: a 2025-11-25 client of the same proxy, and the
//! same server behind a proxy told to start a 2025-11-25 session. And the multi-round-trip
//! results of 2026-07-28: an input-required answer passes, the retried call is judged.

use crate::support::bins;
use crate::support::reencoding_relay::reencoding_relay;

use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ProtocolVersion, ReadResourceRequestParams, ServerNotification,
    SubscriptionFilter,
};
use rmcp::service::{ClientInitializeError, ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};

const DEADLINE: Duration = Duration::from_secs(60);
/// How long a notification the test caused may take to arrive.
const NOTICE: Duration = Duration::from_secs(20);

/// The proxy's command line with `options` in front of the 2026-07-28 server.
fn proxied(options: &[&str]) -> Vec<String> {
    bins::server_everything(); // installs the pinned SDKs
    let server = bins::root().join("tests/interop/proxy/listen_server.mjs");
    let mut argv = vec![bins::contract_proxy().display().to_string()];
    argv.extend(options.iter().map(|s| (*s).to_owned()));
    argv.extend(["--".to_owned(), "node".to_owned(), server.display().to_string()]);
    argv
}

fn proxy(options: &[&str]) -> tokio::process::Child {
    spawn(&proxied(options))
}

fn spawn(argv: &[String]) -> tokio::process::Child {
    tokio::process::Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the command starts")
}

async fn client(child: &mut tokio::process::Child, mode: ClientLifecycleMode) -> RunningService<RoleClient, ()> {
    let transport = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    tokio::time::timeout(DEADLINE, ().serve_with_lifecycle(transport, mode)).await.expect("in time").expect("started")
}

fn modern() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] }
}

fn call(name: &str) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned())
}

/// The text of a result's one text block; a result marked as an error has none.
fn text_of(result: &CallToolResult) -> String {
    assert_ne!(result.is_error, Some(true), "{result:?}");
    result.content.first().and_then(|block| block.as_text()).map(|t| t.text.clone()).unwrap_or_default()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

#[test]
fn a_2026_07_28_client_subscribes_through_the_proxy_and_gets_the_servers_notifications() {
    runtime().block_on(async {
        let mut child = proxy(&[]);
        let client = client(&mut child, modern()).await;
        let info = client.peer().peer_info().expect("the proxy answered server/discover");
        assert_eq!(info.protocol_version, ProtocolVersion::V_2026_07_28, "the upstream's revision is offered");

        let filter = SubscriptionFilter::builder()
            .tools_list_changed()
            .resource_subscriptions(vec!["memo://note".to_owned()])
            .build();
        let mut subscription = client.peer().listen(filter).await.expect("the proxy accepts subscriptions/listen");
        assert_eq!(subscription.acknowledged().tools_list_changed, Some(true), "{:?}", subscription.acknowledged());
        assert_eq!(
            subscription.acknowledged().resource_subscriptions.as_deref(),
            Some(&["memo://note".to_owned()][..]),
            "{:?}",
            subscription.acknowledged()
        );

        // A tool the server adds: its list_changed arrives on the client's stream, and the
        // proxy's listing (judged before the client hears of it) has the new tool.
        let before: Vec<String> =
            client.peer().list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
        assert_eq!(before, ["grow", "whoami", "touch", "weather", "weather_ok"]);
        client.peer().call_tool(call("grow")).await.expect("grow answers");
        let notice = tokio::time::timeout(NOTICE, subscription.next()).await.expect("a notification in time");
        assert!(
            matches!(notice, Ok(Some(ServerNotification::ToolListChangedNotification(_)))),
            "tools/list_changed on the subscription: {notice:?}"
        );
        let after: Vec<String> =
            client.peer().list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
        assert_eq!(after, ["grow", "whoami", "touch", "weather", "weather_ok", "extra"]);
        let extra = client.peer().call_tool(call("extra")).await.expect("the new tool is callable");
        assert_eq!(text_of(&extra), "extra", "{extra:?}");

        // A resource update for the URI subscribed to.
        client.peer().call_tool(call("touch")).await.expect("touch answers");
        let notice = tokio::time::timeout(NOTICE, subscription.next()).await.expect("a notification in time");
        match notice {
            Ok(Some(ServerNotification::ResourceUpdatedNotification(updated))) => {
                assert_eq!(updated.params.uri, "memo://note");
            }
            other => panic!("resources/updated on the subscription: {other:?}"),
        }
        let read = client.peer().read_resource(ReadResourceRequestParams::new("memo://note")).await.unwrap();
        let text = serde_json::to_value(&read).unwrap()["contents"][0]["text"].clone();
        assert_eq!(text, "touches: 1", "{read:?}");

        // The client ends its subscription; the proxy keeps serving.
        drop(subscription);
        let again = client.peer().call_tool(call("touch")).await.expect("the proxy still serves");
        assert_eq!(text_of(&again), "touched 2", "{again:?}");
        client.cancel().await.unwrap();
    });
}

#[test]
fn a_2025_11_25_client_of_the_same_proxy_is_served_without_subscriptions() {
    runtime().block_on(async {
        let mut child = proxy(&[]);
        let client = client(&mut child, ClientLifecycleMode::Initialize).await;
        let info = client.peer().peer_info().expect("initialized");
        assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);
        // Control: the same calls work for this client.
        let tools: Vec<String> =
            client.peer().list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
        assert_eq!(tools, ["grow", "whoami", "touch", "weather", "weather_ok"]);
        let touched = client.peer().call_tool(call("touch")).await.unwrap();
        assert_eq!(text_of(&touched), "touched 1", "{touched:?}");
        // subscriptions/listen belongs to 2026-07-28: refused for this session.
        let refused = client.peer().listen(SubscriptionFilter::builder().tools_list_changed().build()).await;
        assert!(refused.is_err(), "a 2025-11-25 session has no subscriptions/listen: {refused:?}");
        client.cancel().await.unwrap();
    });
}

#[test]
fn told_to_start_a_2025_11_25_session_the_proxy_offers_no_newer_revision() {
    runtime().block_on(async {
        // A client that asks for 2026-07-28 only is told which revisions are offered.
        let mut child = proxy(&["--upstream-protocol", "2025-11-25"]);
        let transport = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
        let refused =
            tokio::time::timeout(DEADLINE, ().serve_with_lifecycle(transport, modern())).await.expect("in time");
        match refused {
            Err(ClientInitializeError::NoCompatibleProtocolVersion { server_supported, .. }) => {
                assert!(server_supported.contains(&ProtocolVersion::V_2025_11_25), "{server_supported:?}");
                assert!(!server_supported.contains(&ProtocolVersion::V_2026_07_28), "{server_supported:?}");
            }
            other => panic!("refused with the revisions offered: {:?}", other.map(|_| "started")),
        }
        // Control: the same proxy serves a 2025-11-25 client.
        let mut child = proxy(&["--upstream-protocol", "2025-11-25"]);
        let client = client(&mut child, ClientLifecycleMode::Initialize).await;
        let info = client.peer().peer_info().expect("initialized");
        assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25, "{info:?}");
        let touched = client.peer().call_tool(call("touch")).await.unwrap();
        assert_eq!(text_of(&touched), "touched 1", "{touched:?}");
        client.cancel().await.unwrap();
    });
}

/// One raw JSON-RPC exchange per line with a proxy over stdio, as a 2026-07-28 client:
/// every request carries its `_meta` envelope.
struct Wire {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    next: u64,
}

impl Wire {
    fn new(mut child: tokio::process::Child) -> Self {
        use tokio::io::AsyncBufReadExt;
        let stdin = child.stdin.take().unwrap();
        let lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        Self { child, stdin, lines, next: 0 }
    }

    async fn request(&mut self, method: &str, mut params: serde_json::Value) -> serde_json::Value {
        use tokio::io::AsyncWriteExt;
        self.next += 1;
        params["_meta"] = serde_json::json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": { "name": "wire", "version": "1.0.0" },
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        let line = serde_json::json!({ "jsonrpc": "2.0", "id": self.next, "method": method, "params": params });
        self.stdin.write_all(format!("{line}\n").as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
        loop {
            let line = tokio::time::timeout(DEADLINE, self.lines.next_line()).await.expect("in time").unwrap();
            let message: serde_json::Value = serde_json::from_str(&line.expect("the proxy answers")).unwrap();
            if message["id"] == self.next {
                return message;
            }
        }
    }
}

#[test]
fn an_input_required_result_passes_as_it_is_and_the_retried_call_is_judged() {
    use serde_json::json;
    runtime().block_on(async {
        let contracts = bins::root().join("tests/fixtures/dynamic");
        let contracts = contracts.to_str().unwrap();
        let mut wire = Wire::new(proxy(&["--contracts", contracts, "--bind", "weather_ok=weather"]));
        let discover = wire.request("server/discover", json!({})).await;
        assert!(discover["result"]["supportedVersions"].to_string().contains("2026-07-28"), "{discover}");
        for (tool, refused) in [("weather", true), ("weather_ok", false)] {
            // The first answer asks for input: it holds no output of the tool, and passes.
            let asked = wire.request("tools/call", json!({ "name": tool, "arguments": {} })).await;
            assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
            assert_eq!(asked["result"]["requestState"], "asked", "{asked}");
            assert!(asked["result"].get("isError").is_none(), "{asked}");
            // The retry that carries the state back gets the tool's result, judged.
            let retried = json!({ "name": tool, "arguments": {}, "requestState": "asked" });
            let answer = wire.request("tools/call", retried).await;
            let result = &answer["result"];
            if refused {
                assert_eq!(result["isError"], true, "{answer}");
                let text = result["content"][0]["text"].as_str().unwrap();
                let error: serde_json::Value = serde_json::from_str(text).unwrap();
                assert_eq!(error["error"]["code"], "output_contract_violation", "{answer}");
            } else {
                assert_ne!(result["isError"], true, "{answer}");
                assert_eq!(result["structuredContent"], json!({ "city": "Oslo", "celsius": 4.5 }), "{answer}");
            }
        }
        let _ = wire.child.kill().await;
    });
}

/// What the server saw of a `whoami` call made through `argv` by a 2025-11-25 client
/// speaking raw JSON-RPC.
async fn whoami(argv: &[String]) -> serde_json::Value {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut child = spawn(argv);
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let initialize = serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "wire", "version": "1.0.0" } } });
    let initialized = serde_json::json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let call = serde_json::json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "whoami", "arguments": {} } });
    stdin.write_all(format!("{initialize}\n").as_bytes()).await.unwrap();
    let mut sent_call = false;
    loop {
        let line = tokio::time::timeout(DEADLINE, lines.next_line()).await.expect("in time").unwrap().expect("a line");
        let message: serde_json::Value = serde_json::from_str(&line).unwrap();
        if message["id"] == 1 && !sent_call {
            assert_eq!(message["result"]["protocolVersion"], "2025-11-25", "{message}");
            stdin.write_all(format!("{initialized}\n{call}\n").as_bytes()).await.unwrap();
            sent_call = true;
        } else if message["id"] == 2 {
            let _ = child.kill().await;
            let text = message["result"]["content"][0]["text"].as_str().expect("a text block").to_owned();
            return serde_json::from_str(&text).expect("JSON");
        }
    }
}

#[test]
fn a_2025_11_25_clients_call_reaches_a_2026_07_28_server_as_the_client_sent_it() {
    runtime().block_on(async {
        // The transparent relay: the server sees the client's own call, under the client's
        // own id, with no envelope added (the client's session is an `initialize` one).
        let relayed = whoami(&proxied(&[])).await;
        assert_eq!(relayed["id"], 2, "{relayed}");
        assert!(relayed["protocolVersion"].is_null(), "nothing is added to the call: {relayed}");
        assert!(relayed["clientInfo"].is_null(), "nothing is added to the call: {relayed}");
        // Control: a relay in front of the proxy that numbers the call itself and adds an
        // envelope of its own is seen doing both.
        let renumbered = whoami(&reencoding_relay(&proxied(&[]))).await;
        assert_eq!(renumbered["id"], 2, "{renumbered}");
        assert_eq!(renumbered["protocolVersion"], "2026-07-28", "{renumbered}");
        assert_eq!(renumbered["clientInfo"]["name"], "reencoding-relay", "{renumbered}");
    });
}
