//! The stdio driver: one child over pipes (a server, or a proxy in front of one) with
//! `run.concurrency` requests in flight, matched by id.

#[allow(clippy::wildcard_imports)] // One program split by concern: the parent holds what they share.
use super::*;

/// The child the stdio driver starts, and the names its processes are watched under:
/// the child's, and with `upstream`, the child's own child's (the server a proxy starts).
pub(super) struct Launch {
    pub(super) program: PathBuf,
    pub(super) args: Vec<String>,
    pub(super) name: String,
    pub(super) upstream: Option<String>,
}

async fn write_line(stdin: &mut tokio::process::ChildStdin, text: String) -> Result<(), String> {
    let mut line = text.into_bytes();
    line.push(b'\n');
    stdin.write_all(&line).await.map_err(|e| e.to_string())
}

pub(super) async fn run_stdio(launch: &Launch, run: &Run) -> Result<(Tally, Duration, Measured), String> {
    let mut child = tokio::process::Command::new(&launch.program)
        .args(&launch.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("spawn {}: {e}", launch.program.display()))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut lines = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
    write_line(&mut stdin, initialize_message()).await?;
    loop {
        let line = tokio::time::timeout(ANSWER_DEADLINE, lines.next_line())
            .await
            .map_err(|_| "no answer to initialize")?
            .map_err(|e| e.to_string())?
            .ok_or("the server exited during initialize")?;
        if serde_json::from_str::<Value>(&line).is_ok_and(|m| m["id"] == json!(0)) {
            break;
        }
    }
    write_line(&mut stdin, INITIALIZED.to_owned()).await?;
    if let Some(pid) = child.id() {
        run.ledger.watch(&launch.name, pid);
        // The upstream answered `initialize` through the proxy, so it runs by now.
        if let (Some(upstream), [server]) = (&launch.upstream, procfs::children(pid).as_slice()) {
            run.ledger.watch(upstream, *server);
        }
    }
    run.ledger.start();

    let window = Arc::new(Semaphore::new(usize::try_from(run.concurrency).unwrap_or(8)));
    let pending: Arc<Mutex<HashMap<u64, Instant>>> = Arc::default();
    let cpu_before = (child.id().and_then(|pid| cpu_time(&pid.to_string())), cpu_time("self"));
    let start = Instant::now();
    let calls = run.calls;
    let writer = {
        let (run, window, pending) = (run.clone(), window.clone(), pending.clone());
        tokio::spawn(async move {
            for id in 1..=calls {
                let Ok(permit) = window.acquire().await else { break };
                permit.forget();
                pending.lock().expect("not poisoned").insert(id, Instant::now());
                let mut line = call_message(id, run.call(id), Era::Sessions).into_bytes();
                line.push(b'\n');
                if stdin.write_all(&line).await.is_err() {
                    break;
                }
            }
            stdin
        })
    };
    let mut tally = Tally::default();
    let mut answered = 0;
    while answered < calls {
        let Ok(Ok(Some(line))) = tokio::time::timeout(ANSWER_DEADLINE, lines.next_line()).await else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            tally.mismatched += 1;
            continue;
        };
        let Some(id) = message.get("id") else { continue };
        run.ledger.answer(id.as_u64());
        let sent = id.as_u64().and_then(|id| pending.lock().expect("not poisoned").remove(&id));
        if let (Some(sent), Some(id)) = (sent, id.as_u64()) {
            tally.answer(id, run.call(id).2, &message, sent.elapsed());
            answered += 1;
            window.add_permits(1);
        } else {
            tally.mismatched += 1;
            if tally.examples.len() < 3 {
                tally.examples.push(format!("an answer to no pending call: {line}"));
            }
        }
    }
    let wall = start.elapsed();
    window.close();
    let stdin = writer.await.map_err(|e| e.to_string())?;
    let still_pending: Vec<u64> = pending.lock().expect("not poisoned").keys().copied().collect();
    for id in still_pending {
        tally.lose(id, "no answer on stdout");
    }
    // Calls the writer never sent (the server stopped reading) are lost too.
    let sent = u64::try_from(tally.latencies.len()).unwrap_or(u64::MAX) + tally.lost;
    tally.lost += calls.saturating_sub(sent);
    let measured = Measured::of(child.id(), cpu_before);
    // End of input: a proxy ends its upstream and exits; whatever is left is killed.
    drop(stdin);
    if tokio::time::timeout(Duration::from_secs(5), child.wait()).await.is_err() {
        let _ = child.kill().await;
    }
    Ok((tally, wall, measured))
}
