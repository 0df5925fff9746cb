//! The streamable HTTP driver: `qe-server --http` as a child, and connections that each
//! send their share of the calls one after another, in either protocol era.

#[allow(clippy::wildcard_imports)] // One program split by concern: the parent holds what they share.
use super::*;

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

async fn connect(addr: SocketAddr) -> Result<Sender, String> {
    let stream = tokio::net::TcpStream::connect(addr).await.map_err(|e| format!("connect: {e}"))?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (sender, connection) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    tokio::spawn(connection);
    Ok(sender)
}

/// What a request says in its headers besides the body: the session (2025-11-25) or the
/// revision, method and tool name (2026-07-28).
enum Headers<'a> {
    /// Before the session exists: `initialize` itself.
    None,
    Session(&'a str),
    Stateless {
        method: &'a str,
        name: Option<&'a str>,
    },
}

/// One POST; returns the session id header (if any) and the JSON-RPC messages in the body
/// (plain JSON or SSE `data:` lines).
async fn post(
    sender: &mut Sender,
    addr: SocketAddr,
    headers: &Headers<'_>,
    body: String,
) -> Result<(Option<String>, Vec<Value>), String> {
    let mut request = Request::post("/mcp")
        .header(HOST, addr.to_string())
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream");
    match *headers {
        Headers::None => {}
        Headers::Session(session) => {
            request = request.header("mcp-session-id", session).header("mcp-protocol-version", PROTOCOL);
        }
        Headers::Stateless { method, name } => {
            request = request.header("mcp-protocol-version", STATELESS).header("mcp-method", method);
            if let Some(name) = name {
                request = request.header("mcp-name", name);
            }
        }
    }
    let request = request.body(Full::new(Bytes::from(body))).map_err(|e| e.to_string())?;
    sender.ready().await.map_err(|e| format!("connection: {e}"))?;
    let response = sender.send_request(request).await.map_err(|e| format!("send: {e}"))?;
    let session = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let status = response.status();
    let sse = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    let body = response.into_body().collect().await.map_err(|e| format!("body: {e}"))?.to_bytes();
    // The server chooses per answer: one JSON object, or an SSE stream whose `data:`
    // lines carry the messages (each on one line, as compact JSON is).
    let messages: Vec<Value> = if sse {
        body.split(|&b| b == b'\n')
            .filter_map(|line| line.strip_prefix(b"data:"))
            .filter_map(|data| serde_json::from_slice(data.trim_ascii()).ok())
            .collect()
    } else {
        serde_json::from_slice::<Value>(&body).map(|value| vec![value]).unwrap_or_default()
    };
    if messages.is_empty() && !status.is_success() {
        return Err(format!("HTTP {status}: {}", String::from_utf8_lossy(&body)));
    }
    Ok((session, messages))
}

/// A connection ready for calls: in the 2025 era with its session open.
async fn open(addr: SocketAddr, era: Era) -> Result<(Sender, Option<String>), String> {
    let mut sender = connect(addr).await?;
    if era == Era::Stateless {
        return Ok((sender, None));
    }
    let (session, _) = post(&mut sender, addr, &Headers::None, initialize_message()).await?;
    let session = session.ok_or("no Mcp-Session-Id on the initialize response")?;
    post(&mut sender, addr, &Headers::Session(&session), INITIALIZED.to_owned()).await?;
    Ok((sender, Some(session)))
}

/// One client: its own connection (and session), its calls one after another.
async fn http_client(addr: SocketAddr, era: Era, ids: Vec<u64>, run: Run) -> Tally {
    let mut tally = Tally::default();
    let (mut sender, session) = match open(addr, era).await {
        Ok(opened) => opened,
        Err(err) => {
            for id in ids {
                tally.lose(id, &err);
            }
            return tally;
        }
    };
    for id in ids {
        let call = run.call(id);
        let headers = match &session {
            Some(session) => Headers::Session(session),
            None => Headers::Stateless { method: "tools/call", name: Some(call.0) },
        };
        let start = Instant::now();
        let sent =
            tokio::time::timeout(ANSWER_DEADLINE, post(&mut sender, addr, &headers, call_message(id, call, era)));
        match sent.await {
            Ok(Ok((_, messages))) => match messages.iter().find(|m| m.get("id").is_some()) {
                Some(response) => {
                    run.ledger.answer(response["id"].as_u64());
                    tally.answer(id, call.2, response, start.elapsed());
                }
                None => tally.lose(id, "no JSON-RPC response in the body"),
            },
            Ok(Err(err)) => {
                tally.lose(id, &err);
                // The connection may be gone; the session is not.
                if let Ok(fresh) = connect(addr).await {
                    sender = fresh;
                }
            }
            Err(_) => tally.lose(id, "no answer within the deadline"),
        }
    }
    tally
}

/// `qe-server --http 127.0.0.1:0 --broken` driven by `run.concurrency` connections in
/// `era`; the server is watched as `qe-server`.
pub(super) async fn run_http(binary: &Path, era: Era, run: &Run) -> Result<(Tally, Duration, Measured), String> {
    let mut child = tokio::process::Command::new(binary)
        .args(["--http", "127.0.0.1:0", "--broken"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("spawn {}: {e}", binary.display()))?;
    let mut stderr = BufReader::new(child.stderr.take().ok_or("no stderr")?).lines();
    let addr = loop {
        let line = tokio::time::timeout(ANSWER_DEADLINE, stderr.next_line())
            .await
            .map_err(|_| "the server did not announce its address")?
            .map_err(|e| e.to_string())?
            .ok_or("the server exited before listening")?;
        if let Some(url) = line.strip_prefix("qe-server: listening on http://") {
            break url.trim_end_matches("/mcp").parse::<SocketAddr>().map_err(|e| e.to_string())?;
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    tokio::spawn(async move {
        while let Ok(Some(line)) = stderr.next_line().await {
            eprintln!("server: {line}");
        }
    });
    if let Some(pid) = child.id() {
        run.ledger.watch("qe-server", pid);
    }
    run.ledger.start();
    let cpu_before = (child.id().and_then(|pid| cpu_time(&pid.to_string())), cpu_time("self"));
    let start = Instant::now();
    let (calls, concurrency) = (run.calls, run.concurrency);
    let clients: Vec<_> = (0..concurrency)
        .map(|c| {
            let ids: Vec<u64> = (1..=calls).filter(|id| id % concurrency == c).collect();
            tokio::spawn(http_client(addr, era, ids, run.clone()))
        })
        .collect();
    let mut tally = Tally::default();
    for client in clients {
        tally.merge(client.await.map_err(|e| e.to_string())?);
    }
    let wall = start.elapsed();
    let measured = Measured::of(child.id(), cpu_before);
    let _ = child.kill().await;
    Ok((tally, wall, measured))
}
