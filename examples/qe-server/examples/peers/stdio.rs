//! The stdio driver: one child per server, raw JSON-RPC lines, paired rounds.

#[allow(clippy::wildcard_imports)] // One program split by concern: the parent holds what they share.
use super::*;

/// One server child and its pipes.
struct Peer {
    name: String,
    child: Child,
    /// The server's process id, for its CPU time in `/proc`.
    pid: Option<u32>,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
    next_id: u64,
}

impl Peer {
    async fn spawn(name: &str, program: &Path, args: &[&str]) -> Result<Self, String> {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|err| format!("{name}: cannot start `{}`: {err}", program.display()))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::with_capacity(1 << 20, child.stdout.take().ok_or("no stdout")?);
        let pid = child.id();
        let mut peer = Self { name: name.to_owned(), child, pid, stdin, stdout, line: String::new(), next_id: 0 };
        let init = format!(
            r#"{{"protocolVersion":"{PROTOCOL}","capabilities":{{}},"clientInfo":{{"name":"peers","version":"1"}}}}"#
        );
        peer.request("initialize", &init).await?;
        peer.stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .await
            .map_err(|err| format!("{name}: {err}"))?;
        Ok(peer)
    }

    /// Sends one request and reads lines until its response; the response stays in
    /// `self.line`. The id is found by its text (`"id":N,` or `"id":N}`): ticket ids are
    /// strings, so no payload can imitate it, and the client spends no time parsing
    /// large responses during timing.
    async fn request(&mut self, method: &str, params: &str) -> Result<(), String> {
        self.next_id += 1;
        let id = self.next_id;
        let message = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{method}\",\"params\":{params}}}\n");
        self.stdin.write_all(message.as_bytes()).await.map_err(|err| format!("{}: write: {err}", self.name))?;
        let (a, b) = (format!("\"id\":{id},"), format!("\"id\":{id}}}"));
        loop {
            self.line.clear();
            let read =
                self.stdout.read_line(&mut self.line).await.map_err(|err| format!("{}: read: {err}", self.name))?;
            if read == 0 {
                return Err(format!("{}: the server closed its stdout", self.name));
            }
            if self.line.contains(&a) || self.line.contains(&b) {
                return Ok(());
            }
        }
    }

    /// One call, checked in full: a success whose `structuredContent` and text block
    /// both equal `expected`.
    async fn verify(&mut self, params: &str, expected: &Value) -> Result<(), String> {
        self.request("tools/call", params).await?;
        let reply: Value = serde_json::from_str(&self.line).map_err(|err| format!("{}: not JSON: {err}", self.name))?;
        let result = &reply["result"];
        if result.is_null() || result["isError"] == Value::Bool(true) {
            return Err(format!("{}: not a success: {}", self.name, truncated(&self.line)));
        }
        if &result["structuredContent"] != expected {
            return Err(format!("{}: structuredContent differs from the expected page", self.name));
        }
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        if serde_json::from_str::<Value>(text).ok().as_ref() != Some(expected) {
            return Err(format!("{}: the text block is not the expected page", self.name));
        }
        Ok(())
    }

    /// Sequential calls for `span`: the latency of each, the calls per second, and the
    /// server's CPU time over the round (with the number of calls it covers).
    async fn round(
        &mut self,
        params: &str,
        span: Duration,
        latencies: &mut Vec<Duration>,
    ) -> Result<(f64, Option<(Duration, u32)>), String> {
        let cpu_start = self.pid.and_then(process_cpu);
        let start = Instant::now();
        let mut calls = 0u32;
        while calls < 3 || start.elapsed() < span {
            let sent = Instant::now();
            self.request("tools/call", params).await?;
            latencies.push(sent.elapsed());
            // A cheap guard that every counted call succeeded (the full check ran before).
            if self.line.contains("\"isError\":true") || !self.line.contains("\"structuredContent\"") {
                return Err(format!("{}: a call failed: {}", self.name, truncated(&self.line)));
            }
            calls += 1;
        }
        let rate = f64::from(calls) / start.elapsed().as_secs_f64();
        let cpu = match (cpu_start, self.pid.and_then(process_cpu)) {
            (Some(a), Some(b)) => Some((b.saturating_sub(a), calls)),
            _ => None,
        };
        Ok((rate, cpu))
    }
}

pub(super) async fn run_stdio(options: &Options) -> Result<(), String> {
    let mut notes = Vec::new();
    let mut peers = Vec::new();
    for spec in specs(options, &mut notes)? {
        let args: Vec<&str> = spec.args.iter().map(String::as_str).collect();
        let name = if spec.name == "tower-mcp" { "tower-mcp (its stdio)" } else { spec.name };
        peers.push(Peer::spawn(name, &spec.program, &args).await?);
    }
    if options.invalid {
        println!(
            "invalid result probe over stdio: `{TOOL}` with query `{INVALID_QUERY}` (the first ticket has no title)"
        );
        print_notes(&notes);
        let params = call_params(INVALID_QUERY, 2);
        for peer in &mut peers {
            peer.request("tools/call", &params).await?;
            let reply: Value =
                serde_json::from_str(&peer.line).map_err(|err| format!("{}: not JSON: {err}", peer.name))?;
            println!("  {:<24} {}", peer.name, judge_invalid(&reply));
        }
        shut_down(&mut peers).await;
        return Ok(());
    }
    let path = validation_path()?;
    let params: Vec<String> = options.sizes.iter().map(|n| call_params(QUERY, *n)).collect();
    for (size, params) in options.sizes.iter().zip(&params) {
        let expected = serde_json::to_value(page(QUERY, *size)).map_err(|err| err.to_string())?;
        for peer in &mut peers {
            peer.verify(params, &expected).await?;
        }
    }
    let count = peers.len();
    // [size][peer]
    let mut stats = vec![vec![Stats::default(); count]; options.sizes.len()];
    let mut discard = Vec::new();
    for round in 0..=options.rounds {
        for (s, params) in params.iter().enumerate() {
            for k in 0..count {
                let p = (k + round) % count;
                if round == 0 {
                    let _ = peers[p].round(params, options.round, &mut discard).await?;
                    discard.clear();
                } else {
                    let (rate, spent) = peers[p].round(params, options.round, &mut stats[s][p].latencies).await?;
                    stats[s][p].add(rate, spent);
                }
            }
        }
    }
    println!(
        "peers end to end: `{TOOL}` over stdio, one client, sequential calls; {} interleaved rounds of {} ms per server \
         and size (after one warm-up round); calls/s = median over rounds, p50/p99 over every call, wall-clock",
        options.rounds,
        options.round.as_millis()
    );
    println!("ours validates `{TOOL}` on the {path}");
    println!(
        "stdio transports: ours and plain rmcp: rmcp's stdio_pipes(){}; tower-mcp: its StdioTransport (reactor pipes \
         on Linux); TypeScript v1: StdioServerTransport; TypeScript v2: serveStdio; Python: the SDK's stdio",
        if options.blocking_stdio { " (the `stdio()` rows: rmcp's stdio())" } else { "" }
    );
    print_notes(&notes);
    print_header(&format!("{:>6}", "items"));
    let names: Vec<String> = peers.iter().map(|p| p.name.clone()).collect();
    for (s, size) in options.sizes.iter().enumerate() {
        print_group(&format!("{size:>6}"), &names, &mut stats[s]);
    }
    shut_down(&mut peers).await;
    Ok(())
}

async fn shut_down(peers: &mut [Peer]) {
    for peer in peers {
        // Closing stdin is the stdio shutdown; a server that lingers is killed.
        let _ = peer.stdin.shutdown().await;
        if tokio::time::timeout(Duration::from_secs(2), peer.child.wait()).await.is_err() {
            let _ = peer.child.kill().await;
        }
    }
}

/// Which path of the rmcp adapter validates the result, and whether the contract would be
/// covered in-process.
pub(super) fn validation_path() -> Result<String, String> {
    // Under `ContractedServer` the result is validated on the `Value` path (the wrapper
    // judges the `structuredContent` it will send); the text block and the NaN check are
    // one pass in our `Json`.
    Ok(match TicketPage::try_contract().map(contract_runtime::OutputContract::fast_path) {
        Ok(contract_runtime::fused::Coverage::Covered) => {
            "Value + jsonschema path of the rmcp adapter (in-process, the Pipeline would take the fast path)".to_owned()
        }
        Ok(contract_runtime::fused::Coverage::Fallback(why)) => format!("Value + jsonschema path ({why})"),
        Ok(other) => format!("{other:?}"),
        Err(err) => return Err(err.to_string()),
    })
}
