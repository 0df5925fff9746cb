//! Where a `tools/call` spends its instructions, stage by stage, for our contracted rmcp
//! server and for plain rmcp, on the page the peers command serves
//! (`search_tickets_page`, `peers/page.rs`) at 1, 100 and 1,000 items.
//!
//! ```text
//! cargo run --release -p qe-server --features server --example stages
//! cargo run --release -p qe-server --features server --example stages -- --sizes 1,100 --iters 200
//! ```
//!
//! The command runs itself once under `valgrind --tool=callgrind`, which counts the
//! instructions executed (repeatable whatever else the machine is doing). Each stage runs
//! `--iters` times (fewer for larger pages) inside one call of `measured`; callgrind
//! collects only inside that function (`--toggle-collect`) and writes a profile when it
//! returns (`--dump-after`), so each profile holds one stage at one size, its inputs made
//! outside. Before it is counted, each stage runs once, so one-time work (compiled
//! schemas and plans, lazily built tables) is left out. The table gives instructions per
//! call.
//!
//! The stages, as the two servers run them:
//!
//! - **decode**: rmcp reads the `tools/call` request line into its message type (both
//!   servers pay it; its untagged enums buffer the message and try variant after
//!   variant). Beside it, ours over `serve_stdio`: the same request read by its keys
//!   (`contract_runtime::rmcp::read_tools_call`, the lane's own reader; the command checks
//!   that both read the same id and parameters).
//! - **page**: the tool body builds the page (the same for both).
//! - **`Json` → result**: the tool's return value becomes rmcp's `CallToolResult`.
//!   Plain rmcp's `Json<T>` converts with `serde_json::to_value` and writes the text block
//!   from that tree; ours writes the text block from the typed value and builds the tree
//!   for `structuredContent` in the same pass, checking NaN and the limits as it goes.
//!   The rows under it are parts measured alone; for ours, parsing the text back into a
//!   tree, the step that pass replaces.
//! - **validation**: `OutputContract::validate`, the `jsonschema` pass (ours only).
//! - **pipeline**: `Pipeline::process_serialized`, what the adapter does with the
//!   result: the validation, the completeness invariants, the identity in `_meta`, the
//!   counters (ours only).
//! - **response**: rmcp's transport writing the JSON-RPC response with the result each
//!   server actually sends (`serde_json::to_writer`, as rmcp's codec does).
//! - **write**: one `write` of that line to `/dev/null` (the user-space part; the
//!   kernel's is not counted by callgrind).
//! - **whole call**: a `tools/call` end to end in process: a client writes the request
//!   into an in-memory duplex, rmcp's service reads, dispatches, runs the handler (and
//!   for ours the adapter), writes the response, and the client reads and parses it. Both
//!   protocol eras: a 2025-11-25 session, and 2026-07-28 requests carrying their `_meta`
//!   (whose results carry the server's identity). The client's share is the same code on
//!   both sides.
//!
//! Last, the adapter's own functions in our whole call at the smallest size, inclusive
//! (what each costs with everything it calls), read from that stage's profile with
//! `callgrind_annotate`: where the fixed per-call work goes.
//!
//! The same counts for the whole server under the peers driver (its stdio transport and
//! runtime included) come from running the server child under callgrind; see
//! BENCHMARKS.md, "Where a contracted call spends its instructions".

// The baseline is plain rmcp on purpose: its own `Json`, which the crate's clippy.toml refuses.
#![allow(clippy::disallowed_types)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use contract_runtime::pipeline::{CallContext, Pipeline};
use contract_runtime::rmcp::ContractedServer;
use contract_runtime::wire::ProtocolVersion;
use contract_runtime::{ToolError, ToolOutput};
use qe_server::contracts::TicketPage;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ClientJsonRpcMessage, ClientRequest, NumberOrString, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::RoleServer;
use rmcp::{tool, tool_handler, tool_router, ServerHandler, Service, ServiceExt};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf};

#[path = "peers/page.rs"]
mod page;
#[path = "peers/profile.rs"]
mod profile;

use profile::{grouped, total};

const TOOL: &str = "search_tickets_page";
const QUERY: &str = "t-";
const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";

/// Arguments of `search_tickets_page`, as the peers servers take them.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PageArgs {
    /// Echoed as the page's `query`.
    #[schemars(length(min = 1))]
    query: String,
    /// How many tickets the page holds.
    #[schemars(range(min = 1))]
    limit: u32,
}

/// The tool as our contracted server writes it (as in the peers command).
#[derive(Clone)]
struct Contracted {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Contracted {
    #[tool(description = "A page of `limit` generated tickets.")]
    async fn search_tickets_page(
        &self,
        Parameters(args): Parameters<PageArgs>,
    ) -> Result<contract_runtime::rmcp::Json<TicketPage>, ToolError> {
        Ok(contract_runtime::rmcp::Json(page::page(&args.query, args.limit)))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Contracted {}

/// The tool as plain rmcp writes it: rmcp's own `Json<T>`, nothing validated.
#[derive(Clone)]
struct Plain {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Plain {
    #[tool(description = "A page of `limit` generated tickets.")]
    async fn search_tickets_page(
        &self,
        Parameters(args): Parameters<PageArgs>,
    ) -> rmcp::handler::server::wrapper::Json<TicketPage> {
        rmcp::handler::server::wrapper::Json(page::page(&args.query, args.limit))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Plain {}

/// The stages, in table order: name, side, what it is.
const STAGES: &[(&str, &str, &str)] = &[
    ("both.decode", "both", "rmcp decodes the `tools/call` request line"),
    ("keyed.decode", "ours", "  the same request read by its keys (`serve_stdio`'s lane)"),
    ("page", "both", "build the page (the tool body)"),
    ("plain.json", "plain", "`Json` → result: `to_value`, then the text from the tree"),
    ("plain.to_value", "plain", "  of which `serde_json::to_value`"),
    ("plain.text", "plain", "  of which the text block from the tree"),
    ("ours.json", "ours", "`Json` → result: the checked text and its tree in one pass"),
    ("ours.parse", "ours", "  (parsing the text back into a tree instead)"),
    ("ours.validate", "ours", "validation (`jsonschema`, `OutputContract::validate`)"),
    ("ours.pipeline", "ours", "pipeline: validation, completeness, identity, counters"),
    ("plain.response", "plain", "rmcp serializes the JSON-RPC response"),
    ("ours.response", "ours", "rmcp serializes the JSON-RPC response"),
    ("plain.write", "plain", "the write of the line (user space)"),
    ("ours.write", "ours", "the write of the line (user space)"),
    ("plain.call", "plain", "whole call, 2025-11-25 session (client included)"),
    ("ours.call", "ours", "whole call, 2025-11-25 session (client included)"),
    ("plain.call2026", "plain", "whole call, 2026-07-28 (client included)"),
    ("ours.call2026", "ours", "whole call, 2026-07-28 (client included)"),
];

struct Options {
    sizes: Vec<u32>,
    iters: u32,
    child: bool,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options { sizes: vec![1, 100, 1_000], iters: 400, child: false };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--sizes" => {
                let list = args.next().ok_or("`--sizes` needs a list such as 1,100,1000")?;
                options.sizes = list
                    .split(',')
                    .map(|s| s.trim().parse::<u32>().ok().filter(|&n| n > 0))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| format!("`--sizes {list}`: expected positive whole numbers, comma-separated"))?;
            }
            "--iters" => {
                options.iters = args
                    .next()
                    .and_then(|v| v.parse::<u32>().ok())
                    .filter(|&n| n > 0)
                    .ok_or("`--iters` needs a positive whole number")?;
            }
            "--child" => options.child = true,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(options)
}

/// How many times a stage runs at `size` items: `iters` at one item, fewer for larger
/// pages (at least 10), so every size costs about the same to count.
fn iterations(iters: u32, size: u32) -> u32 {
    (iters * 10 / (size + 9)).max(10)
}

/// The one function callgrind counts in: everything `run` does, and nothing else.
#[inline(never)]
fn measured(run: &mut dyn FnMut()) {
    run();
}

/// `stage` on each input, counted; the outputs are dropped after counting.
fn count<I, O>(inputs: impl FnMut() -> I, iters: u32, mut stage: impl FnMut(I) -> O) {
    let mut make = inputs;
    // Once uncounted, for one-time work.
    drop(stage(make()));
    let mut inputs: Vec<I> = (0..iters).map(|_| make()).collect();
    let mut outputs: Vec<O> = Vec::with_capacity(inputs.len());
    measured(&mut || {
        for input in inputs.drain(..) {
            outputs.push(stage(input));
        }
    });
    drop(outputs);
}

struct Client {
    to_server: WriteHalf<DuplexStream>,
    from_server: Lines<BufReader<ReadHalf<DuplexStream>>>,
    next_id: u64,
    meta: Option<Value>,
}

impl Client {
    async fn connect<S: Service<RoleServer>>(server: S, protocol: &str) -> Self {
        let (client, server_side) = tokio::io::duplex(1 << 22);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(tokio::io::split(server_side)).await {
                let _ = running.waiting().await;
            }
        });
        let (read, write) = tokio::io::split(client);
        let mut client = Self { to_server: write, from_server: BufReader::new(read).lines(), next_id: 0, meta: None };
        if protocol == LEGACY {
            let params = json!({ "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": { "name": "stages", "version": "1" } });
            client.request("initialize", params).await;
            client.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await;
        } else {
            client.meta = Some(json!({
                "io.modelcontextprotocol/protocolVersion": protocol,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": { "name": "stages", "version": "1" }
            }));
        }
        client
    }

    async fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.to_server.write_all(line.as_bytes()).await.expect("write to the in-memory duplex");
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).await;
        loop {
            let line = self.from_server.next_line().await.expect("read").expect("the server closed the duplex");
            let message: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    fn call_params(&self, size: u32) -> Value {
        let mut params = json!({ "name": TOOL, "arguments": { "query": QUERY, "limit": size } });
        if let Some(meta) = &self.meta {
            params["_meta"] = meta.clone();
        }
        params
    }
}

fn contracted() -> ContractedServer<Contracted> {
    ContractedServer::new(
        Contracted { tool_router: Contracted::tool_router() },
        contract_runtime::contracts![TicketPage],
    )
    .expect("the page's contract binds to the tool")
}

fn plain() -> Plain {
    Plain { tool_router: Plain::tool_router() }
}

/// The result a server sends for a call of `size` items, read from a real call.
fn sent_result<S: Service<RoleServer>>(runtime: &tokio::runtime::Runtime, server: S, size: u32) -> CallToolResult {
    runtime.block_on(async {
        let mut client = Client::connect(server, LEGACY).await;
        let params = client.call_params(size);
        let reply = client.request("tools/call", params).await;
        assert_eq!(reply["result"]["isError"], false, "the call failed: {reply}");
        serde_json::from_value(reply["result"].clone()).expect("a tools/call result")
    })
}

/// The JSON-RPC line rmcp's codec writes for `result`.
fn response_line(result: CallToolResult) -> Vec<u8> {
    let message = ServerJsonRpcMessage::response(ServerResult::CallToolResult(result), NumberOrString::Number(7));
    let mut line = Vec::with_capacity(256);
    serde_json::to_writer(&mut line, &message).expect("a response serializes");
    line.push(b'\n');
    line
}

fn whole_call<S: Service<RoleServer>>(
    runtime: &tokio::runtime::Runtime,
    server: S,
    protocol: &str,
    size: u32,
    iters: u32,
) {
    let mut client = runtime.block_on(Client::connect(server, protocol));
    let params = client.call_params(size);
    let reply = runtime.block_on(client.request("tools/call", params.clone()));
    assert_eq!(reply["result"]["isError"], false, "the call failed: {reply}");
    measured(&mut || {
        runtime.block_on(async {
            for _ in 0..iters {
                client.request("tools/call", params.clone()).await;
            }
        });
    });
}

/// Runs every stage at every size, each in one call of [`measured`]; prints the order.
fn run_child(options: &Options) -> ExitCode {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
    let contract = TicketPage::contract();
    let pipeline = Pipeline::builder().build();
    let ctx = CallContext::new(TOOL, json!({ "query": QUERY, "limit": 1 })).with_protocol(ProtocolVersion::new(LEGACY));
    let mut sink = std::fs::OpenOptions::new().write(true).open("/dev/null").expect("/dev/null");
    for &size in &options.sizes {
        let n = iterations(options.iters, size);
        let ours_text = serde_json::to_string(&page::page(QUERY, size)).expect("the page serializes");
        let ours_value: Value = serde_json::from_str(&ours_text).expect("the page parses");
        let ours_sent = sent_result(&runtime, contracted(), size);
        let plain_sent = sent_result(&runtime, plain(), size);
        let request = request_line(size);
        let ours_line = response_line(ours_sent.clone());
        let plain_line = response_line(plain_sent.clone());
        for (stage, _, _) in STAGES {
            println!("{stage} {size} {n}");
            match *stage {
                "both.decode" => count(|| (), n, |()| serde_json::from_slice::<ClientJsonRpcMessage>(&request)),
                "keyed.decode" => count(|| (), n, |()| contract_runtime::rmcp::read_tools_call(&request)),
                "page" => count(|| (), n, |()| page::page(QUERY, size)),
                "plain.json" => count(
                    || rmcp::handler::server::wrapper::Json(page::page(QUERY, size)),
                    n,
                    IntoCallToolResult::into_call_tool_result,
                ),
                "plain.to_value" => count(|| page::page(QUERY, size), n, serde_json::to_value),
                "plain.text" => count(|| ours_value.clone(), n, |value| value.to_string()),
                "ours.json" => count(
                    || contract_runtime::rmcp::Json(page::page(QUERY, size)),
                    n,
                    IntoCallToolResult::into_call_tool_result,
                ),
                "ours.parse" => count(|| (), n, |()| serde_json::from_str::<Value>(&ours_text)),
                "ours.validate" => count(|| (), n, |()| contract.validate(&ours_value).is_ok()),
                "ours.pipeline" => count(
                    || (ours_value.clone(), ours_text.clone()),
                    n,
                    |(value, text)| pipeline.process_serialized(&ctx, contract, value, text),
                ),
                "plain.response" => count(|| plain_sent.clone(), n, response_line),
                "ours.response" => count(|| ours_sent.clone(), n, response_line),
                "plain.write" => count(|| (), n, |()| sink.write_all(&plain_line).is_ok()),
                "ours.write" => count(|| (), n, |()| sink.write_all(&ours_line).is_ok()),
                "plain.call" => whole_call(&runtime, plain(), LEGACY, size, n),
                "ours.call" => whole_call(&runtime, contracted(), LEGACY, size, n),
                "plain.call2026" => whole_call(&runtime, plain(), MODERN, size, n),
                "ours.call2026" => whole_call(&runtime, contracted(), MODERN, size, n),
                other => unreachable!("stage {other}"),
            }
        }
    }
    // Both decoders read the same call, or their counts compare different work.
    let request = request_line(7);
    let Ok(ClientJsonRpcMessage::Request(decoded)) = serde_json::from_slice::<ClientJsonRpcMessage>(&request) else {
        panic!("rmcp did not decode the request")
    };
    let ClientRequest::CallToolRequest(call) = decoded.request else { panic!("rmcp decoded another request") };
    let Some(ClientJsonRpcMessage::Request(keyed)) = contract_runtime::rmcp::read_tools_call(&request) else {
        panic!("serve_stdio's lane did not read the request")
    };
    let ClientRequest::CallToolRequest(keyed_call) = keyed.request else { panic!("the lane read another request") };
    assert_eq!((keyed.id, keyed_call.params), (decoded.id, call.params));
    // The results must be the page on both sides, or the counts compare different work.
    let ours = sent_result(&runtime, contracted(), 3);
    let plain = sent_result(&runtime, plain(), 3);
    let expected = serde_json::to_value(page::page(QUERY, 3)).expect("the page serializes");
    assert_eq!(ours.structured_content.as_ref(), Some(&expected), "ours sent another page");
    assert_eq!(plain.structured_content.as_ref(), Some(&expected), "plain rmcp sent another page");
    ExitCode::SUCCESS
}

/// The `tools/call` request line the peers driver sends for a page of `size` items.
fn request_line(size: u32) -> Vec<u8> {
    let request = json!({
        "jsonrpc": "2.0",
        "id": 17,
        "method": "tools/call",
        "params": { "name": TOOL, "arguments": { "query": QUERY, "limit": size } },
    });
    serde_json::to_vec(&request).expect("the request serializes")
}

/// The adapter's functions in a whole-call profile, inclusive, per call.
fn breakdown(profile: &Path, calls: u32) -> Result<Vec<(u64, String)>, String> {
    let out = Command::new("callgrind_annotate")
        .args(["--inclusive=yes", "--threshold=100"])
        .arg(profile)
        .output()
        .map_err(|err| format!("callgrind_annotate: {err}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut rows = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        let Some((count, rest)) = line.split_once(' ') else { continue };
        let Ok(count) = count.replace(',', "").parse::<u64>() else { continue };
        // `( 1.23%)  file:function [object]`
        let name = rest.trim_start().split_once(')').map_or(rest, |(_, name)| name).trim();
        let name = name.split_once(':').map_or(name, |(_, f)| f).trim();
        let name = name.rsplit_once(" [").map_or(name, |(f, _)| f);
        let interesting = name.contains("contract_runtime")
            || name.contains("jsonschema::validator::Validator::is_valid")
            || name.contains("get_tool");
        if interesting && count / u64::from(calls) >= 100 {
            rows.push((count / u64::from(calls), name.to_owned()));
        }
    }
    rows.sort_by_key(|row| std::cmp::Reverse(row.0));
    rows.dedup_by(|a, b| a.1 == b.1);
    Ok(rows)
}

fn run_parent(options: &Options) -> ExitCode {
    if let Err(why) = profile::valgrind() {
        eprintln!("stages: {why}");
        return ExitCode::FAILURE;
    }
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(err) => {
            eprintln!("stages: cannot find this program: {err}");
            return ExitCode::FAILURE;
        }
    };
    let dir = std::env::temp_dir().join(format!("stages-{}", std::process::id()));
    if let Err(err) = std::fs::create_dir_all(&dir) {
        eprintln!("stages: cannot make {}: {err}", dir.display());
        return ExitCode::FAILURE;
    }
    let base = dir.join("callgrind.out");
    let sizes: Vec<String> = options.sizes.iter().map(u32::to_string).collect();
    let run = Command::new("valgrind")
        .args(profile::callgrind_args(&base))
        .arg("--collect-atstart=no")
        .arg("--toggle-collect=stages::measured")
        .arg("--dump-after=stages::measured")
        .arg(&exe)
        .args(["--child", "--sizes", &sizes.join(","), "--iters", &options.iters.to_string()])
        .stderr(std::process::Stdio::null())
        .output();
    let output = match run {
        Ok(output) if output.status.success() => output,
        Ok(output) => {
            eprintln!("stages: the counted run failed ({}); run it without valgrind to see why:", output.status);
            eprintln!("  {} --child --sizes {}", exe.display(), sizes.join(","));
            return ExitCode::FAILURE;
        }
        Err(err) => {
            eprintln!("stages: cannot run valgrind ({err}); install it (apt-get install valgrind)");
            return ExitCode::FAILURE;
        }
    };
    let order = String::from_utf8_lossy(&output.stdout);
    let mut counts = std::collections::HashMap::new();
    let mut profiles = std::collections::HashMap::new();
    for (i, line) in order.lines().enumerate() {
        let mut parts = line.split_whitespace();
        let (Some(stage), Some(size), Some(n)) = (parts.next(), parts.next(), parts.next()) else { continue };
        let (Ok(size), Ok(n)) = (size.parse::<u32>(), n.parse::<u32>()) else { continue };
        let profile = PathBuf::from(format!("{}.{}", base.display(), i + 1));
        let Some(ir) = total(&profile) else {
            eprintln!("stages: no profile {} for {stage} at {size}", profile.display());
            return ExitCode::FAILURE;
        };
        counts.insert((stage.to_owned(), size), ir / u64::from(n));
        profiles.insert((stage.to_owned(), size), (profile, n));
    }
    let cell = |stage: &str, size: u32| counts.get(&(stage.to_owned(), size)).map_or_else(String::new, |&n| grouped(n));
    println!("instructions per call (callgrind), by stage and page size\n");
    let head: Vec<String> = options.sizes.iter().map(|s| format!("{} items", grouped(u64::from(*s)))).collect();
    println!("| stage | side | {} |", head.join(" | "));
    println!("|---|---|{}", "---:|".repeat(options.sizes.len()));
    for (stage, side, what) in STAGES {
        let cells: Vec<String> = options.sizes.iter().map(|&size| cell(stage, size)).collect();
        println!("| {what} | {side} | {} |", cells.join(" | "));
    }
    let get = |stage: &str, size: u32| counts.get(&(stage.to_owned(), size)).copied().unwrap_or(0);
    let signed = |a: u64, b: u64| if a >= b { format!("+{}", grouped(a - b)) } else { format!("-{}", grouped(b - a)) };
    for (suffix, era) in [("call", LEGACY), ("call2026", MODERN)] {
        let cells: Vec<String> = options
            .sizes
            .iter()
            .map(|&size| {
                let (ours, plain) = (get(&format!("ours.{suffix}"), size), get(&format!("plain.{suffix}"), size));
                #[allow(clippy::cast_precision_loss)]
                let ratio = ours as f64 / plain.max(1) as f64;
                format!("{} ({ratio:.2}x)", signed(ours, plain))
            })
            .collect();
        println!("| whole call, ours − plain, {era} | | {} |", cells.join(" | "));
    }
    // What the whole call adds beyond the stages measured alone: routing, the argument
    // check, the `_meta` work, the transport glue.
    let cells: Vec<String> = options
        .sizes
        .iter()
        .map(|&size| {
            let ours = get("ours.call", size);
            let plain = get("plain.call", size);
            let staged_ours = get("ours.json", size) + get("ours.pipeline", size) + get("ours.response", size);
            let staged_plain = get("plain.json", size) + get("plain.response", size);
            signed(ours + staged_plain, plain + staged_ours)
        })
        .collect();
    println!("| the rest of the adapter (whole-call difference less the staged ones) | ours | {} |", cells.join(" | "));
    if let Some(&size) = options.sizes.first() {
        if let Some((profile, n)) = profiles.get(&("ours.call".to_owned(), size)) {
            match breakdown(profile, *n) {
                Ok(rows) => {
                    println!("\nour whole call at {size} item(s), 2025-11-25: the adapter's functions, inclusive, per call\n");
                    println!("| instructions | function |");
                    println!("|---:|---|");
                    for (count, name) in rows.iter().take(30) {
                        println!("| {} | `{name}` |", grouped(*count));
                    }
                }
                Err(err) => eprintln!("stages: no breakdown: {err}"),
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match parse(&args) {
        Ok(options) => options,
        Err(err) => {
            eprintln!("stages: {err}");
            return ExitCode::FAILURE;
        }
    };
    if options.child {
        run_child(&options)
    } else {
        run_parent(&options)
    }
}
