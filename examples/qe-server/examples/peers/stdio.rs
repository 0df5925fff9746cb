//! The stdio driver: one child per server and era, raw JSON-RPC lines, paired rounds.

#[allow(clippy::wildcard_imports)] // One program split by concern: the parent holds what they share.
use super::*;

/// How long a check call may take before the server counts as not answering.
const CHECK_DEADLINE: Duration = Duration::from_secs(20);

/// How a server carried the result it was checked to carry.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Carried {
    /// `structuredContent` and the text block are the result itself.
    Natural,
    /// Both are `{"result": …}` around it: a non-object root for a peer before 2026-07-28.
    Wrapped,
    /// No `structuredContent`: the text block alone carries it.
    TextOnly,
}

impl Carried {
    /// What the result's `structuredContent` was, in a few words.
    pub(super) fn label(self) -> &'static str {
        match self {
            Self::Natural => "the result",
            Self::Wrapped => "{\"result\":…}",
            Self::TextOnly => "none",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Self::Natural => "structuredContent and the text block are the result",
            Self::Wrapped => {
                "structuredContent and the text block are the array wrapped as {\"result\": […]} (the schema it \
                 lists for this era is wrapped the same way)"
            }
            Self::TextOnly => {
                "no structuredContent: the tickets reach the client in the text block only (rmcp's `Json` drops a \
                 non-object root for peers before 2026-07-28, and lists no outputSchema for it)"
            }
        }
    }
}

/// What a checked call came back with.
pub(super) enum Verdict {
    /// A success carrying the expected result, this way.
    Carried(Carried),
    /// An answer that is not a success (an `isError` result or a JSON-RPC error): the
    /// server does not serve this configuration. What it said.
    Refused(String),
}

/// One server child and its pipes, speaking one protocol era.
pub(super) struct Peer {
    pub(super) name: String,
    child: Child,
    /// The server's process id, for its CPU time in `/proc`.
    pid: Option<u32>,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
    next_id: u64,
    era: Era,
}

impl Peer {
    /// Starts `program`; in the 2025-11-25 era it is initialized, in 2026-07-28 it gets
    /// no handshake (every request carries its `_meta`).
    pub(super) async fn spawn(name: &str, program: &Path, args: &[String], era: Era) -> Result<Self, String> {
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
        let mut peer = Self { name: name.to_owned(), child, pid, stdin, stdout, line: String::new(), next_id: 0, era };
        if era == Era::Sessions {
            let init = format!(
                r#"{{"protocolVersion":"{PROTOCOL}","capabilities":{{}},"clientInfo":{{"name":"peers","version":"1"}}}}"#
            );
            peer.request("initialize", &init).await?;
            peer.answered("initialize")?;
            peer.stdin
                .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
                .await
                .map_err(|err| format!("{name}: {err}"))?;
        }
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

    /// The response in `self.line`, parsed; an error unless it is a `result` for the
    /// request's id.
    fn answered(&self, what: &str) -> Result<Value, String> {
        let reply: Value =
            serde_json::from_str(&self.line).map_err(|err| format!("{}: {what}: not JSON: {err}", self.name))?;
        if reply["id"] != self.next_id || reply.get("result").is_none() {
            return Err(format!("{}: {what} was not answered with a result: {}", self.name, truncated(&self.line)));
        }
        Ok(reply)
    }

    /// `tools/list`, answered with a result.
    pub(super) async fn list_tools(&mut self) -> Result<(), String> {
        let params = format!("{{{}}}", self.era.meta_member().trim_start_matches(','));
        self.request("tools/list", &params).await?;
        self.answered("tools/list").map(drop)
    }

    /// The probe of [`INVALID_QUERY`], and what the server did with the broken result.
    async fn probe_invalid(&mut self) -> Result<String, String> {
        let params = call_params(Root::Object, self.era, INVALID_QUERY, 2);
        self.request("tools/call", &params).await?;
        let reply: Value = serde_json::from_str(&self.line).map_err(|err| format!("{}: not JSON: {err}", self.name))?;
        Ok(judge_invalid(&reply))
    }

    /// One call, checked in full: a success for its id whose `structuredContent` and
    /// text block both carry `expected`, and how; or the server's refusal.
    pub(super) async fn verify(&mut self, params: &str, expected: &Value) -> Result<Verdict, String> {
        self.request("tools/call", params).await?;
        let reply: Value =
            serde_json::from_str(&self.line).map_err(|err| format!("{}: tools/call: not JSON: {err}", self.name))?;
        if reply["id"] == self.next_id && (reply.get("error").is_some() || reply["result"]["isError"] == true) {
            return Ok(Verdict::Refused(judge_invalid(&reply)));
        }
        let reply = self.answered("tools/call")?;
        let result = &reply["result"];
        let wrapped = serde_json::json!({ "result": expected });
        let carried = match result.get("structuredContent") {
            Some(structured) if structured == expected => Carried::Natural,
            Some(structured) if *structured == wrapped => Carried::Wrapped,
            None if !expected.is_object() => Carried::TextOnly,
            None => return Err(format!("{}: no structuredContent", self.name)),
            Some(_) => return Err(format!("{}: structuredContent differs from the expected result", self.name)),
        };
        let text = result["content"][0]["text"].as_str().and_then(|text| serde_json::from_str::<Value>(text).ok());
        let text_carries = if carried == Carried::Wrapped { wrapped } else { expected.clone() };
        if text.as_ref() != Some(&text_carries) {
            return Err(format!("{}: the text block is not the expected result", self.name));
        }
        Ok(Verdict::Carried(carried))
    }

    /// [`Peer::verify`] at every size, within [`CHECK_DEADLINE`] each: how the result was
    /// carried, the same way at every size, or the refusal at the first size.
    async fn check(&mut self, root: Root, sizes: &[u32]) -> Result<Verdict, String> {
        let mut seen = None;
        for &size in sizes {
            let expected = root.expected(QUERY, size)?;
            let params = call_params(root, self.era, QUERY, size);
            let verdict = tokio::time::timeout(CHECK_DEADLINE, self.verify(&params, &expected))
                .await
                .map_err(|_| format!("no answer within {} s", CHECK_DEADLINE.as_secs()))??;
            let carried = match (verdict, seen) {
                (Verdict::Carried(carried), _) => carried,
                (refused @ Verdict::Refused(_), None) => return Ok(refused),
                (Verdict::Refused(why), Some(_)) => {
                    return Err(format!("{}: refused at {size} items after serving smaller pages: {why}", self.name))
                }
            };
            if seen.is_some_and(|seen| seen != carried) {
                return Err(format!("{}: carries the result differently at {size} items", self.name));
            }
            seen = Some(carried);
        }
        seen.map(Verdict::Carried).ok_or_else(|| "no sizes".to_owned())
    }

    /// Sequential calls for `span`: the latency of each, the calls per second, and the
    /// server's CPU time over the round (with the number of calls it covers).
    async fn round(
        &mut self,
        params: &str,
        carried: Carried,
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
            let structured = self.line.contains("\"structuredContent\"");
            if self.line.contains("\"isError\":true")
                || !self.line.contains("\"content\"")
                || structured != (carried != Carried::TextOnly)
            {
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

    /// Closes stdin (the stdio shutdown) and waits up to `wait` for the process to end;
    /// one that lingers is killed and is an error.
    pub(super) async fn close(mut self, wait: Duration) -> Result<std::process::ExitStatus, String> {
        let _ = self.stdin.shutdown().await;
        drop(self.stdin);
        if let Ok(status) = tokio::time::timeout(wait, self.child.wait()).await {
            return status.map_err(|err| format!("{}: {err}", self.name));
        }
        let _ = self.child.kill().await;
        Err(format!("{}: still running {} s after its stdin closed", self.name, wait.as_secs()))
    }
}

/// The name a server's rows carry over stdio.
pub(super) fn display_name(spec: &Spec) -> &'static str {
    if spec.name == "tower-mcp" {
        "tower-mcp (its stdio)"
    } else {
        spec.name
    }
}

/// One timed row: a server (its process in one era) calling one root's tool.
struct Row {
    peer: usize,
    era: Era,
    root: Root,
    carried: Carried,
}

pub(super) async fn run_stdio(options: &Options) -> Result<(), String> {
    let mut notes = Vec::new();
    let specs = specs(options, &mut notes)?;
    if options.invalid {
        return probe_invalid(options, &specs, &notes).await;
    }
    if options.instructions != Instructions::Only {
        timed(options, &specs, &mut notes).await?;
        println!();
    }
    if options.instructions == Instructions::Off {
        println!("instructions per call: not counted (`--no-instructions`)");
    } else {
        super::callgrind::run_instructions(options, &specs, &notes).await?;
    }
    Ok(())
}

async fn probe_invalid(options: &Options, specs: &[Spec], notes: &[String]) -> Result<(), String> {
    println!("invalid result probe over stdio: `{TOOL}` with query `{INVALID_QUERY}` (the first ticket has no title)");
    print_notes(notes);
    for &era in &options.eras {
        for spec in specs {
            let mut peer = Peer::spawn(display_name(spec), &spec.program, &spec.args, era).await?;
            let label = format!("{} {}", peer.name, era.label());
            match tokio::time::timeout(CHECK_DEADLINE, peer.probe_invalid()).await {
                Ok(Ok(judged)) => println!("  {label:<40} {judged}"),
                Ok(Err(err)) => println!("  {label:<40} no answer in this era: {err}"),
                Err(_) => println!("  {label:<40} no answer within {} s", CHECK_DEADLINE.as_secs()),
            }
            let _ = peer.close(Duration::from_secs(2)).await;
        }
    }
    Ok(())
}

/// The timed rounds and their table: every server in every `--era`, calling every
/// `--root`'s tool it has.
async fn timed(options: &Options, specs: &[Spec], notes: &mut Vec<String>) -> Result<(), String> {
    // [era][spec]: one process per server and era.
    let mut peers = Vec::new();
    for &era in &options.eras {
        for spec in specs {
            peers.push(Peer::spawn(display_name(spec), &spec.program, &spec.args, era).await?);
        }
    }
    let mut dead = vec![false; peers.len()];
    let mut rows = Vec::new();
    let mut no_array = Vec::new();
    for (e, &era) in options.eras.iter().enumerate() {
        for &root in &options.roots {
            for (k, spec) in specs.iter().enumerate() {
                let p = e * specs.len() + k;
                if root == Root::Array && !spec.array {
                    if !no_array.contains(&display_name(spec)) {
                        no_array.push(display_name(spec));
                    }
                    continue;
                }
                if dead[p] {
                    continue;
                }
                let label = format!("{} {} {}", peers[p].name, era.label(), root.label());
                match peers[p].check(root, &options.sizes).await {
                    Ok(Verdict::Refused(why)) => notes.push(format!("{label}: refused, no row: {why}")),
                    Ok(Verdict::Carried(carried)) => {
                        if carried != Carried::Natural {
                            notes.push(format!("{label}: {}", carried.describe()));
                        }
                        rows.push(Row { peer: p, era, root, carried });
                    }
                    // A Rust process that answers wrongly, or not at all, stops the command.
                    Err(err) if spec.counted => return Err(format!("{label}: {err}")),
                    Err(err) => {
                        notes.push(format!("{label}: no row: {err}"));
                        dead[p] = true;
                    }
                }
            }
        }
    }
    if !no_array.is_empty() {
        notes.push(format!(
            "array root: {} have no array-root tool (only the Rust servers here have `{ARRAY_TOOL}`), no \
             row",
            no_array.join(", ")
        ));
    }
    let count = rows.len();
    // [size][row]
    let params: Vec<Vec<String>> = options
        .sizes
        .iter()
        .map(|&size| rows.iter().map(|row| call_params(row.root, row.era, QUERY, size)).collect())
        .collect();
    let mut stats = vec![vec![Stats::default(); count]; options.sizes.len()];
    let mut discard = Vec::new();
    for round in 0..=options.rounds {
        for (s, params) in params.iter().enumerate() {
            for k in 0..count {
                let r = (k + round) % count;
                let (row, peer) = (&rows[r], &mut peers[rows[r].peer]);
                if round == 0 {
                    let _ = peer.round(&params[r], row.carried, options.round, &mut discard).await?;
                    discard.clear();
                } else {
                    let (rate, spent) =
                        peer.round(&params[r], row.carried, options.round, &mut stats[s][r].latencies).await?;
                    stats[s][r].add(rate, spent);
                }
            }
        }
    }
    println!(
        "peers end to end: `{TOOL}` (object root) / `{ARRAY_TOOL}` (array root) over stdio, one client, sequential \
         calls; {} interleaved rounds of {} ms per server, era, root and size (after one warm-up round); calls/s = \
         median over rounds, p50/p99 over every call, wall-clock; ratios against the first row of each group (ours)",
        options.rounds,
        options.round.as_millis()
    );
    println!("ours validates `{TOOL}` on the {}", validation_path()?);
    println!(
        "stdio transports: ours: `serve_stdio` (the library's, on rmcp's stdio_pipes()) or, `--ours-stdio pipes`, \
         rmcp's serve(stdio_pipes()); plain rmcp: rmcp's stdio_pipes(){}; tower-mcp: its StdioTransport (reactor \
         pipes on Linux); TypeScript v1: StdioServerTransport; TypeScript v2: serveStdio; Python: the SDK's stdio",
        if options.blocking_stdio { " (the `stdio()` rows: rmcp's stdio())" } else { "" }
    );
    print_notes(notes);
    print_header(&format!("{:>6}  {:<10}  {:<6}", "items", "era", "root"));
    let names: Vec<String> = rows.iter().map(|row| peers[row.peer].name.clone()).collect();
    for (s, size) in options.sizes.iter().enumerate() {
        let mut start = 0;
        while start < count {
            let (era, root) = (rows[start].era, rows[start].root);
            let end =
                rows[start..].iter().position(|row| (row.era, row.root) != (era, root)).map_or(count, |n| start + n);
            let key = format!("{size:>6}  {:<10}  {:<6}", era.label(), root.label());
            print_group(&key, &names[start..end], &mut stats[s][start..end]);
            start = end;
        }
    }
    for peer in peers {
        // A server that lingers is killed.
        let _ = peer.close(Duration::from_secs(2)).await;
    }
    Ok(())
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
