//! Several clients of one contract-proxy served over streamable HTTP share its one
//! upstream connection (a TypeScript SDK server over stdio, `tests/interop/proxy/server.mjs`).
//! What the server sends while it works on a call (its own `sampling/createMessage`
//! request, progress) must reach the client that made the call, not merely the client
//! that connected last; a list change reaches every client.

// Sampling is deprecated in 2026-07-28, and still what a 2025-11-25 server asks for.
#![allow(deprecated)]

use crate::support::bins;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, CreateMessageRequestParams,
    CreateMessageResult, Implementation, ProgressNotificationParam, SamplingMessage,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ErrorData, ServiceExt};
use serde_json::{json, Value};

const DEADLINE: Duration = Duration::from_secs(60);

/// A client that answers sampling with its own name and keeps the progress it hears.
#[derive(Clone)]
struct Named {
    name: &'static str,
    progress: Arc<Mutex<Vec<String>>>,
    list_changes: Arc<Mutex<u32>>,
}

impl Named {
    fn new(name: &'static str) -> Self {
        Self { name, progress: Arc::default(), list_changes: Arc::default() }
    }
}

impl ClientHandler for Named {
    async fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let message = SamplingMessage::assistant_text(format!("hello from {}", self.name));
        Ok(CreateMessageResult::new(message, format!("model-{}", self.name)))
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.progress.lock().unwrap().push(params.message.unwrap_or_default());
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        *self.list_changes.lock().unwrap() += 1;
    }

    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities = serde_json::from_value(json!({ "sampling": {} })).unwrap();
        ClientConfig::new(capabilities, Implementation::new(self.name, "1.0.0"))
    }
}

fn tools_file(dir: &std::path::Path) -> std::path::PathBuf {
    let object = json!({ "type": "object" });
    let tools = json!([
        { "tool": { "name": "ask_sample", "inputSchema": object }, "answer": "sample" },
        { "tool": { "name": "with_progress", "inputSchema": object }, "answer": "progress" },
        { "tool": { "name": "swap", "inputSchema": object }, "answer": "swap" }
    ]);
    let after = json!([
        { "tool": { "name": "ask_sample", "inputSchema": object }, "answer": "sample" },
        { "tool": { "name": "with_progress", "inputSchema": object }, "answer": "progress" }
    ]);
    std::fs::write(dir.join("tools.json"), tools.to_string()).unwrap();
    std::fs::write(dir.join("after.json"), after.to_string()).unwrap();
    dir.join("tools.json")
}

/// Starts the proxy over HTTP in front of the fixture and says where it serves.
fn serve() -> (std::process::Child, String) {
    bins::server_everything(); // installs the pinned SDKs
    let dir = std::env::temp_dir().join(format!("contract-proxy-{}-clients", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let tools = tools_file(&dir);
    let mut child = Command::new(bins::contract_proxy())
        .args(["--http", "127.0.0.1:0", "--", "node"])
        .arg(bins::root().join("tests/interop/proxy/server.mjs"))
        .arg(&tools)
        .arg(dir.join("after.json"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("contract-proxy: serving MCP on ") {
                let _ = tx.send(url.to_owned());
            }
        }
    });
    let url = rx.recv_timeout(DEADLINE).expect("the proxy says where it serves");
    (child, url)
}

async fn connect(url: &str, client: Named) -> RunningService<RoleClient, Named> {
    let transport = StreamableHttpClientTransport::from_uri(url);
    tokio::time::timeout(DEADLINE, client.serve(transport)).await.expect("in time").expect("initialized")
}

fn structured(result: &CallToolResult) -> Value {
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let text = result.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone()).unwrap_or_default();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("a JSON text block ({e}): {result:?}"))
}

#[test]
fn what_the_server_sends_during_a_call_reaches_the_client_that_made_it() {
    let (mut proxy, url) = serve();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let (a, b) = (Named::new("a"), Named::new("b"));
        let first = connect(&url, a.clone()).await;
        // The second client connects last: the server's requests and progress must not
        // all go to it.
        let second = connect(&url, b.clone()).await;

        let sampled = structured(&first.peer().call_tool(CallToolRequestParams::new("ask_sample")).await.unwrap());
        assert_eq!(sampled["content"]["text"], "hello from a", "{sampled:#}");
        // Control: the other client's call is answered by that client.
        let sampled = structured(&second.peer().call_tool(CallToolRequestParams::new("ask_sample")).await.unwrap());
        assert_eq!(sampled["content"]["text"], "hello from b", "{sampled:#}");

        // Progress goes to the client whose call it reports on.
        let mut params = CallToolRequestParams::new("with_progress");
        params.meta = Some(serde_json::from_value(json!({ "progressToken": "a-1" })).unwrap());
        let answered = structured(&first.peer().call_tool(params).await.unwrap());
        assert_eq!(answered["hadProgressToken"], true, "{answered:#}");
        let heard = |client: &Named| client.progress.lock().unwrap().clone();
        for _ in 0..100 {
            if heard(&a).len() == 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(heard(&a), ["step 1", "step 2"]);
        assert!(heard(&b).is_empty(), "the other client hears none of it: {:?}", heard(&b));

        // Each client session has an upstream process of its own: a list change of the
        // second client's server reaches the second client, and the first client's server,
        // whose tools did not change, says nothing.
        let swapped = second.peer().call_tool(CallToolRequestParams::new("swap")).await.unwrap();
        assert_ne!(swapped.is_error, Some(true), "{swapped:?}");
        let changes = |client: &Named| *client.list_changes.lock().unwrap();
        for _ in 0..100 {
            if changes(&b) >= 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert_eq!((changes(&a), changes(&b)), (0, 1), "tools/list_changed reaches the second client only");
        let first_tools = first.peer().list_all_tools().await.unwrap();
        assert!(first_tools.iter().any(|t| t.name == "swap"), "the first client's server still lists swap");

        first.cancel().await.unwrap();
        second.cancel().await.unwrap();
    });
    let _ = proxy.kill();
    let _ = proxy.wait();
}
