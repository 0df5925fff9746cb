//! Instructions per call of the Rust processes, counted by callgrind. Over stdio: ours
//! (each `--ours-stdio`), plain rmcp, tower-mcp, and the middle process of
//! `contract-proxy → plain rmcp` and of `relay → plain rmcp`. Over streamable HTTP
//! (`--transport http`): ours and plain rmcp, each served with `--http` and driven over
//! one keep-alive connection, in both eras (a session in 2025-11-25, opened by the
//! handshake; none in 2026-07-28), the object root only; the server stops when its stdin
//! closes. tower-mcp's HTTP server does not stop that way and is not counted over HTTP.
//!
//! Each process runs under `valgrind --tool=callgrind`, which counts the top process only
//! (valgrind does not follow the server the proxy and the relay start), twice per
//! configuration: driven by this client with the era's handshake (`initialize` in
//! 2025-11-25, none in 2026-07-28) and over stdio one `tools/list`, then N sequential
//! `tools/call`s (each sent once the previous one is answered), and once with 0 calls; (N − 0) / N is
//! the figure. The 0-call run is made once per server and era and serves every size and
//! root. Every call of a counted run is checked in full (a `result` for its id carrying
//! the expected page or tickets), the process must exit cleanly when its stdin closes and
//! its profile must hold a total; anything else stops the command with the reason.
//!
//! Instructions are repeatable whatever else the machine is doing, where CPU time is not.
//! The Node and Python servers are not counted: callgrind on a JIT counts the compiler as
//! much as the server, and under valgrind the JIT's choices differ from a normal run.

use super::profile::{callgrind_args, grouped, total};
use super::stdio::{display_name, Carried, Peer, Verdict};
#[allow(clippy::wildcard_imports)] // One program split by concern: the parent holds what they share.
use super::*;

/// How long one counted run may take under callgrind.
const RUN_DEADLINE: Duration = Duration::from_secs(600);

/// One counted configuration.
struct Count {
    size: usize,
    era: usize,
    root: usize,
    spec: usize,
    calls: u32,
    per_call: u64,
    carried: Carried,
}

/// What one callgrind run came to.
enum Outcome {
    /// The instructions the process executed in all, and how its calls carried the
    /// result (none for a 0-call run).
    Counted(u64, Option<Carried>),
    /// The first call was answered with a refusal: this configuration is not served.
    Refused(String),
}

/// What one callgrind run does after the handshake and `tools/list`: `calls` calls of
/// `root`'s tool at `size` items, or nothing.
#[derive(Clone, Copy)]
struct Work {
    root: Root,
    size: u32,
    calls: u32,
}

pub(super) async fn run_instructions(options: &Options, specs: &[Spec], notes: &[String]) -> Result<(), String> {
    let version = match profile::valgrind() {
        Ok(version) => version,
        Err(why) => {
            println!("instructions per call: skipped, {why}");
            return Ok(());
        }
    };
    let http = options.transport == Transport::Http;
    let counted: Vec<&Spec> = specs.iter().filter(|spec| spec.counted && !(http && spec.name == "tower-mcp")).collect();
    // Over HTTP every server is counted in both eras with the object root.
    let (eras, roots) = if http {
        (vec![Era::Sessions, Era::Stateless], vec![Root::Object])
    } else {
        (options.eras.clone(), options.roots.clone())
    };
    let dir = std::env::temp_dir().join(format!("peers-callgrind-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|err| format!("cannot make {}: {err}", dir.display()))?;
    let calls = options.calls_per_size();
    let mut counts = Vec::new();
    let mut refused = Vec::new();
    let mut run = 0;
    for (e, &era) in eras.iter().enumerate() {
        for (k, spec) in counted.iter().enumerate() {
            let Outcome::Counted(base, _) = counted_run(options, spec, era, None, &dir, &mut run).await? else {
                return Err(format!("{} {}: a run of 0 calls made a call", spec.name, era.label()));
            };
            for (r, &root) in roots.iter().enumerate() {
                if root == Root::Array && !spec.array {
                    continue;
                }
                for (s, (&size, &n)) in options.sizes.iter().zip(&calls).enumerate() {
                    let work = Work { root, size, calls: n };
                    let (full, carried) = match counted_run(options, spec, era, Some(work), &dir, &mut run).await? {
                        Outcome::Counted(full, carried) => (full, carried),
                        Outcome::Refused(why) => {
                            refused.push(format!(
                                "{} {} {}: refused at {size} items, not counted: {why}",
                                display_name(spec),
                                era.label(),
                                root.label()
                            ));
                            break;
                        }
                    };
                    let Some(spent) = full.checked_sub(base) else {
                        return Err(format!(
                            "{} {}: {n} calls counted fewer instructions ({full}) than none ({base})",
                            spec.name,
                            era.label()
                        ));
                    };
                    let per_call = spent / u64::from(n);
                    let carried = carried.ok_or("no call was checked")?;
                    counts.push(Count { size: s, era: e, root: r, spec: k, calls: n, per_call, carried });
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    counts.sort_by_key(|c| (c.size, c.era, c.root, c.spec));
    if http {
        println!(
            "instructions per call over streamable HTTP ({version}, --tool=callgrind): the server process alone; \
             (N calls − 0 calls) / N, sequential calls over one keep-alive connection after the era's handshake (a \
             session in 2025-11-25); every call checked"
        );
    } else {
        println!(
            "instructions per call over stdio ({version}, --tool=callgrind): the process alone, for the proxy and \
             the relay the middle process (plain rmcp behind it is not counted); (N calls − 0 calls) / N after the \
             era's handshake and one tools/list; every call checked"
        );
    }
    if options.instructions == Instructions::Only {
        print_notes(notes);
    }
    let plain = counted.iter().position(|spec| spec.name == "plain rmcp");
    println!(
        "{:>6}  {:<10}  {:<6}  {:<36} {:>6} {:>14} {:>9} {:>10}  structuredContent",
        "items", "era", "root", "server", "calls", "instr/call", "vs ours", "vs plain"
    );
    for count in &counts {
        let same = |spec: usize| {
            counts.iter().find(|c| (c.size, c.era, c.root, c.spec) == (count.size, count.era, count.root, spec))
        };
        #[allow(clippy::cast_precision_loss)]
        let ratio = |against: Option<&Count>| {
            against
                .filter(|c| c.per_call > 0)
                .map_or_else(|| "-".to_owned(), |c| format!("{:.2}x", count.per_call as f64 / c.per_call as f64))
        };
        println!(
            "{:>6}  {:<10}  {:<6}  {:<36} {:>6} {:>14} {:>9} {:>10}  {}",
            options.sizes[count.size],
            eras[count.era].label(),
            roots[count.root].label(),
            display_name(counted[count.spec]),
            count.calls,
            grouped(count.per_call),
            ratio(same(0)),
            ratio(plain.and_then(same)),
            count.carried.label(),
        );
    }
    for line in refused {
        println!("note: {line}");
    }
    Ok(())
}

/// One run of `spec` under callgrind in `era` doing `work`, over the transport of
/// `options`: the instructions it executed in all, and how its calls carried the result;
/// or the refusal of its first call.
async fn counted_run(
    options: &Options,
    spec: &Spec,
    era: Era,
    work: Option<Work>,
    dir: &Path,
    run: &mut u32,
) -> Result<Outcome, String> {
    *run += 1;
    let out = dir.join(format!("{run}.callgrind"));
    let log = dir.join(format!("{run}.log"));
    let mut args = callgrind_args(&out);
    args.push(format!("--log-file={}", log.display()));
    args.push(spec.program.to_string_lossy().into_owned());
    args.extend(spec.args.iter().cloned());
    let what = match work {
        Some(Work { root, size, calls }) => {
            format!("{} {} {}, {size} items, {calls} calls", spec.name, era.label(), root.label())
        }
        None => format!("{} {}, 0 calls", spec.name, era.label()),
    };
    eprintln!("peers: counting {what}");
    if options.transport == Transport::Http {
        let work = work.map(|w| (w.size, w.calls));
        let status = tokio::time::timeout(
            RUN_DEADLINE,
            super::http::counted_calls(spec.name, &args, era, work, Duration::from_secs(120)),
        )
        .await
        .map_err(|_| format!("{what}: not done within {} s under callgrind", RUN_DEADLINE.as_secs()))?
        .map_err(|err| format!("{what}: {err} (valgrind's log: {})", log.display()))?;
        return finish(&what, status, &out, &log, work.map(|_| Carried::Natural));
    }
    let counted = async {
        let mut peer = Peer::spawn(spec.name, Path::new("valgrind"), &args, era).await?;
        peer.list_tools().await?;
        let mut carried = None;
        if let Some(Work { root, size, calls }) = work {
            let expected = root.expected(QUERY, size)?;
            let params = call_params(root, era, QUERY, size);
            for call in 0..calls {
                let this = match peer.verify(&params, &expected).await? {
                    Verdict::Carried(this) => this,
                    Verdict::Refused(why) if call == 0 => {
                        let _ = peer.close(Duration::from_secs(120)).await;
                        return Ok(Err(why));
                    }
                    Verdict::Refused(why) => return Err(format!("call {} of {calls} refused: {why}", call + 1)),
                };
                if carried.is_some_and(|seen| seen != this) {
                    return Err("the calls carried the result in different ways".to_owned());
                }
                carried = Some(this);
            }
        }
        Ok::<_, String>(Ok((peer.close(Duration::from_secs(120)).await?, carried)))
    };
    let done = tokio::time::timeout(RUN_DEADLINE, counted)
        .await
        .map_err(|_| format!("{what}: not done within {} s under callgrind", RUN_DEADLINE.as_secs()))?
        .map_err(|err| format!("{what}: {err} (valgrind's log: {})", log.display()))?;
    let (status, carried) = match done {
        Ok(done) => done,
        Err(why) => return Ok(Outcome::Refused(why)),
    };
    finish(&what, status, &out, &log, carried)
}

/// A finished run: its profile's total if the process exited cleanly.
fn finish(
    what: &str,
    status: std::process::ExitStatus,
    out: &Path,
    log: &Path,
    carried: Option<Carried>,
) -> Result<Outcome, String> {
    if !status.success() {
        return Err(format!("{what}: exited with {status} under callgrind (valgrind's log: {})", log.display()));
    }
    let total = total(out).ok_or_else(|| format!("{what}: no instruction total in {}", out.display()))?;
    Ok(Outcome::Counted(total, carried))
}
