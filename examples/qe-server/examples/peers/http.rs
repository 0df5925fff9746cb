//! The streamable HTTP driver: keep-alive connections, both protocol eras, paired rounds.

#[allow(clippy::wildcard_imports)] // One program split by concern: the parent holds what they share.
use super::*;

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

/// One keep-alive connection (and, in the 2025 era, its session).
struct Conn {
    sender: Sender,
    addr: SocketAddr,
    era: Era,
    session: Option<String>,
    next_id: u64,
}

/// What one POST brought back: the status and the body.
struct Answer {
    status: hyper::StatusCode,
    session: Option<String>,
    body: Bytes,
}

impl Answer {
    /// The JSON-RPC messages of the body: one JSON object, or the `data:` lines of an SSE
    /// stream.
    fn messages(&self) -> Vec<Value> {
        if self.body.first() == Some(&b'{') {
            return serde_json::from_slice::<Value>(&self.body).map(|v| vec![v]).unwrap_or_default();
        }
        self.body
            .split(|&b| b == b'\n')
            .filter_map(|line| line.strip_prefix(b"data:"))
            .filter_map(|data| serde_json::from_slice(data.trim_ascii()).ok())
            .collect()
    }

    fn text(&self) -> String {
        truncated(&String::from_utf8_lossy(&self.body)).to_owned()
    }
}

impl Conn {
    async fn connect(addr: SocketAddr) -> Result<Sender, String> {
        let stream = tokio::net::TcpStream::connect(addr).await.map_err(|e| format!("connect: {e}"))?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        let (sender, connection) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(|e| format!("handshake: {e}"))?;
        tokio::spawn(connection);
        Ok(sender)
    }

    async fn open(addr: SocketAddr, era: Era) -> Result<Self, String> {
        let sender = Self::connect(addr).await?;
        let mut conn = Self { sender, addr, era, session: None, next_id: 0 };
        if era == Era::Sessions {
            let init = format!(
                r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{PROTOCOL}","capabilities":{{}},"clientInfo":{{"name":"peers","version":"1"}}}}}}"#
            );
            let answer = conn.post("initialize", init).await?;
            conn.session = Some(answer.session.clone().ok_or_else(|| {
                format!("no Mcp-Session-Id on the initialize response (HTTP {}: {})", answer.status, answer.text())
            })?);
            conn.post(
                "notifications/initialized",
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
            )
            .await?;
        }
        Ok(conn)
    }

    async fn post(&mut self, method: &str, body: String) -> Result<Answer, String> {
        let mut request = hyper::Request::post("/mcp")
            .header(HOST, self.addr.to_string())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream");
        match (self.era, &self.session) {
            (Era::Sessions, Some(session)) => {
                request = request.header("mcp-session-id", session).header("mcp-protocol-version", PROTOCOL);
            }
            (Era::Sessions, None) => {}
            (Era::Stateless, _) => {
                request = request.header("mcp-protocol-version", STATELESS).header("mcp-method", method);
                if method == "tools/call" {
                    request = request.header("mcp-name", TOOL);
                }
            }
        }
        let request = request.body(Full::new(Bytes::from(body))).map_err(|e| e.to_string())?;
        if self.sender.ready().await.is_err() {
            // A server may close a keep-alive connection left idle while the other rows'
            // rounds ran (uvicorn after 5 s, a header deadline); a client connects again,
            // and a 2025-11-25 session outlives its connection.
            self.sender = Self::connect(self.addr).await?;
            self.sender.ready().await.map_err(|e| format!("connection: {e}"))?;
        }
        let response = self.sender.send_request(request).await.map_err(|e| format!("send: {e}"))?;
        let status = response.status();
        let session = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
        let body = response.into_body().collect().await.map_err(|e| format!("body: {e}"))?.to_bytes();
        Ok(Answer { status, session, body })
    }

    /// One `tools/call` with `arguments` (a JSON object's text); the answer and the id
    /// it must carry.
    async fn call(&mut self, arguments: &str) -> Result<(Answer, u64), String> {
        self.next_id += 1;
        let id = self.next_id;
        let meta = self.era.meta_member();
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{TOOL}","arguments":{arguments}{meta}}}}}"#
        );
        Ok((self.post("tools/call", body).await?, id))
    }

    /// One call for a page of `size` items, checked in full: a success whose
    /// `structuredContent` and text block are both `expected`.
    async fn checked_call(&mut self, size: u32, expected: &Value) -> Result<(), String> {
        let (answer, id) = self.call(&arguments(QUERY, size)).await?;
        let reply = Self::response(&answer, id)?;
        let result = &reply["result"];
        if result.is_null() || result["isError"] == Value::Bool(true) {
            return Err(format!("not a success: {}", truncated(&reply.to_string())));
        }
        if result["structuredContent"] != *expected {
            return Err("structuredContent differs from the expected page".to_owned());
        }
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        if serde_json::from_str::<Value>(text).ok().as_ref() != Some(expected) {
            return Err("the text block is not the expected page".to_owned());
        }
        Ok(())
    }

    /// The response to call `id` in `answer`, parsed.
    fn response(answer: &Answer, id: u64) -> Result<Value, String> {
        answer
            .messages()
            .into_iter()
            .find(|m| m["id"] == id)
            .ok_or_else(|| format!("no response to call {id} (HTTP {}: {})", answer.status, answer.text()))
    }
}

/// One table row over HTTP: a server in one era, with its connections open.
struct HttpRow {
    name: String,
    pid: Option<u32>,
    conns: Vec<Conn>,
}

/// One server process listening on a loopback port. It runs until its stdin closes
/// ([`close`](Self::close)) or it is dropped (killed).
struct HttpServer {
    name: &'static str,
    child: Child,
    stdin: Option<ChildStdin>,
    addr: SocketAddr,
}

impl HttpServer {
    async fn spawn(spec: &Spec) -> Result<Self, String> {
        Self::start(spec.name, &spec.program, &spec.args, Duration::from_secs(30)).await
    }

    /// Starts `program` with `args` and `--http 127.0.0.1:0`, and waits up to `wait` for
    /// the address it listens on.
    async fn start(name: &'static str, program: &Path, args: &[String], wait: Duration) -> Result<Self, String> {
        let mut child = Command::new(program)
            .args(args)
            .args(["--http", "127.0.0.1:0"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|err| format!("{name}: cannot start `{}`: {err}", program.display()))?;
        let stdin = child.stdin.take();
        let mut lines = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
        let addr = loop {
            let line = tokio::time::timeout(wait, lines.next_line())
                .await
                .map_err(|_| format!("{name}: no `listening on` line within {} s", wait.as_secs()))?
                .map_err(|err| format!("{name}: {err}"))?
                .ok_or_else(|| format!("{name}: exited before listening"))?;
            if let Some(url) = line.trim().strip_prefix("listening on http://") {
                let addr = url.trim_end_matches("/mcp");
                break addr.parse::<SocketAddr>().map_err(|err| format!("{name}: address `{addr}`: {err}"))?;
            }
        };
        // Keep reading stdout so that the server never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(Self { name, child, stdin, addr })
    }

    /// Closes the server's stdin (the Rust servers here stop then) and waits up to
    /// `wait` for it to exit.
    async fn close(mut self, wait: Duration) -> Result<std::process::ExitStatus, String> {
        drop(self.stdin.take());
        tokio::time::timeout(wait, self.child.wait())
            .await
            .map_err(|_| format!("{}: still running {} s after its stdin closed", self.name, wait.as_secs()))?
            .map_err(|err| format!("{}: {err}", self.name))
    }

    /// A row in `era` with `connections` connections, each call checked in full at
    /// every size.
    async fn row(&self, era: Era, connections: usize, sizes: &[u32]) -> Result<HttpRow, String> {
        let mut conns = Vec::with_capacity(connections);
        for _ in 0..connections {
            conns.push(Conn::open(self.addr, era).await?);
        }
        for &size in sizes {
            let expected = serde_json::to_value(page(QUERY, size)).map_err(|err| err.to_string())?;
            for conn in &mut conns {
                conn.checked_call(size, &expected).await?;
            }
        }
        Ok(HttpRow { name: format!("{} {}", self.name, era.label()), pid: self.child.id(), conns })
    }
}

/// One server under callgrind over HTTP (`valgrind` with `args`, the server's program
/// and arguments among them): a connection opened in `era` (the handshake in
/// 2025-11-25), then `calls` sequential calls for pages of `size` items over that
/// keep-alive connection, each checked in full; then its stdin is closed and its exit
/// status returned.
pub(super) async fn counted_calls(
    name: &'static str,
    args: &[String],
    era: Era,
    work: Option<(u32, u32)>,
    wait: Duration,
) -> Result<std::process::ExitStatus, String> {
    let server = HttpServer::start(name, Path::new("valgrind"), args, wait).await?;
    let mut conn = Conn::open(server.addr, era).await?;
    if let Some((size, calls)) = work {
        let expected = serde_json::to_value(page(QUERY, size)).map_err(|err| err.to_string())?;
        for call in 0..calls {
            conn.checked_call(size, &expected).await.map_err(|err| format!("call {} of {calls}: {err}", call + 1))?;
        }
    }
    drop(conn);
    server.close(wait).await
}

fn arguments(query: &str, limit: u32) -> String {
    format!(r#"{{"query":"{query}","limit":{limit}}}"#)
}

/// One connection's sequential calls for `span`, each checked cheaply (the full check ran
/// before): its latencies, or the first failure.
async fn http_calls(mut conn: Conn, arguments: Arc<str>, span: Duration) -> (Conn, Result<Vec<Duration>, String>) {
    let mut latencies = Vec::new();
    let start = Instant::now();
    while latencies.len() < 3 || start.elapsed() < span {
        let sent = Instant::now();
        let (answer, id) = match conn.call(&arguments).await {
            Ok(answer) => answer,
            Err(err) => return (conn, Err(err)),
        };
        latencies.push(sent.elapsed());
        let body = &answer.body[..];
        let has = |needle: &[u8]| memfind(body, needle);
        let id_text = format!("\"id\":{id}");
        if !answer.status.is_success()
            || !has(id_text.as_bytes())
            || !has(b"\"structuredContent\"")
            || has(b"\"isError\":true")
        {
            return (conn, Err(format!("a call failed (HTTP {}): {}", answer.status, answer.text())));
        }
    }
    (conn, Ok(latencies))
}

fn memfind(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

impl HttpRow {
    /// `connections` of this row's connections calling at once for `span`: calls/s over
    /// all of them, and the server's CPU time over the round.
    async fn round(
        &mut self,
        arguments: &Arc<str>,
        connections: usize,
        span: Duration,
        latencies: &mut Vec<Duration>,
    ) -> Result<(f64, Option<(Duration, u32)>), String> {
        let cpu_start = self.pid.and_then(process_cpu);
        let start = Instant::now();
        let tasks: Vec<_> = self
            .conns
            .drain(..connections)
            .map(|conn| tokio::spawn(http_calls(conn, arguments.clone(), span)))
            .collect();
        let mut calls = 0u32;
        let mut failure = None;
        let mut back = Vec::with_capacity(connections);
        for task in tasks {
            let (conn, outcome) = task.await.map_err(|err| format!("{}: {err}", self.name))?;
            back.push(conn);
            match outcome {
                Ok(done) => {
                    calls += u32::try_from(done.len()).unwrap_or(u32::MAX);
                    latencies.extend(done);
                }
                Err(err) => failure = failure.or(Some(err)),
            }
        }
        let elapsed = start.elapsed();
        back.append(&mut self.conns);
        self.conns = back;
        if let Some(err) = failure {
            return Err(format!("{}: {err}", self.name));
        }
        let cpu = match (cpu_start, self.pid.and_then(process_cpu)) {
            (Some(a), Some(b)) => Some((b.saturating_sub(a), calls)),
            _ => None,
        };
        Ok((f64::from(calls) / elapsed.as_secs_f64(), cpu))
    }
}

pub(super) async fn run_http(options: &Options) -> Result<(), String> {
    let mut notes = Vec::new();
    let specs = specs(options, &mut notes)?;
    if options.instructions != Instructions::Only {
        timed(options, &specs, notes.clone()).await?;
        println!();
    }
    if options.instructions == Instructions::Off || options.invalid {
        if !options.invalid {
            println!("instructions per call: not counted (`--no-instructions`)");
        }
    } else {
        super::callgrind::run_instructions(options, &specs, &notes).await?;
    }
    Ok(())
}

/// The rounds (or the `--invalid` probe) over HTTP.
async fn timed(options: &Options, specs: &[Spec], mut notes: Vec<String>) -> Result<(), String> {
    let mut servers = Vec::new();
    for spec in specs {
        servers.push(HttpServer::spawn(spec).await?);
    }
    let most = options.connections.iter().copied().max().unwrap_or(1);
    if options.invalid {
        println!("invalid result probe over streamable HTTP: `{TOOL}` with query `{INVALID_QUERY}` (the first ticket has no title)");
        print_notes(&notes);
        for server in &servers {
            for era in [Era::Sessions, Era::Stateless] {
                let probe = async {
                    let mut conn = Conn::open(server.addr, era).await?;
                    let (answer, id) = conn.call(&arguments(INVALID_QUERY, 2)).await?;
                    Conn::response(&answer, id).map(|reply| (answer.status, reply))
                };
                let label = format!("{} {}", server.name, era.label());
                match probe.await {
                    Ok((status, reply)) => println!("  {label:<36} HTTP {status}: {}", judge_invalid(&reply)),
                    Err(err) => println!("  {label:<36} no answer in this era: {err}"),
                }
            }
        }
        return Ok(());
    }
    let mut rows = Vec::new();
    for server in &servers {
        for era in [Era::Sessions, Era::Stateless] {
            match server.row(era, most, &options.sizes).await {
                Ok(row) => rows.push(row),
                Err(err) if rows.is_empty() => return Err(format!("{} {}: {err}", server.name, era.label())),
                Err(err) => notes.push(format!("{} {}: no row: {err}", server.name, era.label())),
            }
        }
    }
    let count = rows.len();
    let arguments: Vec<Arc<str>> = options.sizes.iter().map(|&n| Arc::from(arguments(QUERY, n))).collect();
    // [size][connections][row]
    let mut stats = vec![vec![vec![Stats::default(); count]; options.connections.len()]; options.sizes.len()];
    let mut discard = Vec::new();
    for round in 0..=options.rounds {
        for (s, arguments) in arguments.iter().enumerate() {
            for (c, &connections) in options.connections.iter().enumerate() {
                for k in 0..count {
                    let p = (k + round) % count;
                    if round == 0 {
                        let _ = rows[p].round(arguments, connections, options.round, &mut discard).await?;
                        discard.clear();
                    } else {
                        let cell = &mut stats[s][c][p];
                        let (rate, spent) =
                            rows[p].round(arguments, connections, options.round, &mut cell.latencies).await?;
                        cell.add(rate, spent);
                    }
                }
            }
        }
    }
    println!(
        "peers end to end: `{TOOL}` over streamable HTTP (loopback, keep-alive, TCP_NODELAY), one client process; each \
         connection makes sequential calls; {} interleaved rounds of {} ms per server, size and connection count \
         (after one warm-up round); calls/s = median over rounds (all connections), p50/p99 over every call, \
         wall-clock; CPU = the server process's, per call",
        options.rounds,
        options.round.as_millis()
    );
    println!("ours validates `{TOOL}` on the {}", validation_path()?);
    println!(
        "servers: ours: contract_runtime::http's front + rmcp StreamableHttpService (JSON answers); plain rmcp: \
         StreamableHttpService, default configuration (SSE answers) in axum; tower-mcp: HttpTransport in axum; \
         TypeScript v1: StreamableHTTPServerTransport (JSON responses) on node:http; TypeScript v2 on node:http: \
         NodeStreamableHTTPServerTransport (sessions, JSON responses) for 2025-11-25 and createMcpHandler (an \
         McpServer per request) for 2026-07-28, routed by isLegacyRequest; Python: streamable_http_app \
         (JSON responses) on uvicorn; every Rust server on a current-thread runtime"
    );
    print_notes(&notes);
    print_header(&format!("{:>6} {:>5}", "items", "conns"));
    let names: Vec<String> = rows.iter().map(|r| r.name.clone()).collect();
    for (s, size) in options.sizes.iter().enumerate() {
        for (c, connections) in options.connections.iter().enumerate() {
            print_group(&format!("{size:>6} {connections:>5}"), &names, &mut stats[s][c]);
        }
    }
    drop(rows);
    for mut server in servers {
        let _ = server.child.kill().await;
    }
    Ok(())
}
