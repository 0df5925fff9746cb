//! The soak: `--calls` per run with the resident sets sampled as the answers arrive,
//! judged after the warm-up, printed as a Markdown table and plotted.

#[allow(clippy::wildcard_imports)] // One program split by concern: the parent holds what they share.
use super::*;

/// The most the judged process's RSS may grow after the warm-up, in percent of its RSS
/// at the warm-up's end.
const DRIFT_LIMIT: f64 = 5.0;

/// What one run measured.
struct Soaked {
    label: String,
    /// The run in the plot's legend, before each process's name.
    short: String,
    calls: u64,
    wall: Duration,
    tally: Tally,
    ledger: Arc<Ledger>,
    /// Per watched process, its name and `(calls, KiB)` samples.
    series: Vec<(String, Vec<(u64, u64)>)>,
    /// The process the verdict is about (a proxy's, not its upstream's).
    judged: &'static str,
}

/// One process's samples from the warm-up's end on.
struct Drift {
    baseline: u64,
    min: u64,
    max: u64,
    percent: f64,
}

#[allow(clippy::cast_precision_loss)] // KiB far below 2^52.
fn drift(points: &[(u64, u64)], warmup: u64) -> Option<Drift> {
    let after: Vec<u64> = points.iter().filter(|(calls, _)| *calls >= warmup).map(|&(_, kib)| kib).collect();
    let (&baseline, min, max) = (after.first()?, *after.iter().min()?, *after.iter().max()?);
    let percent = (max as f64 - baseline as f64) / baseline.max(1) as f64 * 100.0;
    Some(Drift { baseline, min, max, percent })
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(|_| "-".to_owned(), |l| l.trim().to_owned())
}

#[allow(clippy::cast_precision_loss)]
fn mib(kib: u64) -> String {
    format!("{:.2} MiB", kib as f64 / 1024.0)
}

/// `tool-contracts proxy -- peers serve plain` over stdio, every call one 1-item page.
fn proxy_run(options: &Options, runtime: &tokio::runtime::Runtime) -> Result<Soaked, String> {
    let proxy = built(options.proxy.clone(), "tool-contracts", &[], &Artifact::Bin("tool-contracts"))?;
    let upstream = built(options.upstream.clone(), "qe-server", &["server"], &Artifact::Example("peers"))?;
    let launch = Launch {
        program: proxy,
        args: vec![
            "proxy".to_owned(),
            "--".to_owned(),
            upstream.display().to_string(),
            "serve".to_owned(),
            "plain".to_owned(),
        ],
        name: "tool-contracts proxy".to_owned(),
        upstream: Some("peers serve plain (upstream)".to_owned()),
    };
    let page = vec![("search_tickets_page", json!({ "query": "t-", "limit": 1 }), Expect::Success)];
    let run = Run::new(options.calls, options.concurrency, page, options.rss_every);
    println!("stdio, proxy in front of plain rmcp: load average before {}", load_average());
    let (tally, wall, _) = runtime.block_on(run_stdio(&launch, &run))?;
    println!("  after {}", load_average());
    Ok(Soaked {
        label: format!("stdio via proxy, {} in flight", options.concurrency),
        short: "stdio via proxy".to_owned(),
        calls: options.calls,
        wall,
        tally,
        series: run.ledger.series(),
        ledger: run.ledger,
        judged: "tool-contracts proxy",
    })
}

/// `qe-server --http` in `era`, every call one of the mix's valid ones.
fn http_run(binary: &Path, era: Era, options: &Options, runtime: &tokio::runtime::Runtime) -> Result<Soaked, String> {
    let valid: Vec<Call> = mix().into_iter().filter(|call| call.2 == Expect::Success).collect();
    let run = Run::new(options.calls, options.concurrency, valid, options.rss_every);
    println!("qe-server over streamable HTTP {}: load average before {}", era.label(), load_average());
    let (tally, wall, _) = runtime.block_on(run_http(binary, era, &run))?;
    println!("  after {}", load_average());
    Ok(Soaked {
        label: format!("HTTP {}, {} connections", era.label(), options.concurrency),
        short: format!("HTTP {}", era.label()),
        calls: options.calls,
        wall,
        tally,
        series: run.ledger.series(),
        ledger: run.ledger,
        judged: "qe-server",
    })
}

/// The table rows of one run, one per process; whether the judged one passed.
#[allow(clippy::cast_precision_loss)] // Counts far below 2^52.
fn rows(soaked: &mut Soaked, warmup: u64) -> (Vec<String>, bool) {
    let (lost, duplicated, stray) = (soaked.ledger.lost(), soaked.ledger.duplicated(), soaked.ledger.stray());
    let failed = soaked.tally.mismatched;
    let rate = soaked.calls as f64 / soaked.wall.as_secs_f64();
    let mut passed = false;
    let mut lines = Vec::new();
    for (name, points) in &soaked.series {
        let judged = name == soaked.judged;
        let drift = drift(points, warmup);
        let complete = points.last().is_some_and(|&(calls, _)| calls == soaked.calls);
        let mut faults = Vec::new();
        match &drift {
            Some(d) if d.percent > DRIFT_LIMIT => faults.push(format!("RSS grew {:.1} % > {DRIFT_LIMIT} %", d.percent)),
            Some(_) => {}
            None => faults.push("no sample after the warm-up".to_owned()),
        }
        if !complete {
            faults.push("no sample at the last call".to_owned());
        }
        for (count, what) in [(lost, "lost"), (duplicated, "answered twice"), (stray, "stray ids"), (failed, "failed")]
        {
            if count > 0 {
                faults.push(format!("{count} {what}"));
            }
        }
        let verdict = match (judged, faults.is_empty()) {
            (false, _) => "not judged".to_owned(),
            (true, true) => "**pass**".to_owned(),
            (true, false) => format!("**fail**: {}", faults.join("; ")),
        };
        if judged {
            passed = faults.is_empty();
        }
        let (baseline, range, percent) = drift.map_or_else(
            || ("-".to_owned(), "-".to_owned(), "-".to_owned()),
            |d| (mib(d.baseline), format!("{} / {}", mib(d.min), mib(d.max)), format!("{:+.1} %", d.percent)),
        );
        lines.push(format!(
            "| {} | {name} | {} | {:.1} s | {rate:.0} | {baseline} | {range} | {percent} | {lost} | {duplicated} | {failed} \
             | {verdict} |",
            soaked.label,
            soaked.calls,
            soaked.wall.as_secs_f64(),
        ));
    }
    if !soaked.series.iter().any(|(name, _)| name == soaked.judged) {
        lines.push(format!(
            "| {} | {} | no samples: `/proc` did not show the process | | | | | | | | | **fail** |",
            soaked.label, soaked.judged
        ));
    }
    (lines, passed)
}

pub(super) fn run(options: &Options, runtime: &tokio::runtime::Runtime) -> ExitCode {
    let mut runs = Vec::new();
    let mut clean = true;
    let mut record = |label: &str, soaked: Result<Soaked, String>| match soaked {
        Ok(soaked) => runs.push(soaked),
        Err(err) => {
            println!("{label}: failed: {err}");
            clean = false;
        }
    };
    if options.stdio {
        record("stdio via proxy", proxy_run(options, runtime));
    }
    if options.http {
        match built(options.server.clone(), "qe-server", &["server"], &Artifact::Bin("qe-server")) {
            Ok(binary) => {
                for &era in &options.eras {
                    record(&format!("HTTP {}", era.label()), http_run(&binary, era, options, runtime));
                }
            }
            Err(err) => record("HTTP", Err(err)),
        }
    }
    println!(
        "\nsoak: {} calls per run, RSS (VmRSS) sampled before the first call and every {} answers; judged from the \
         sample at {} answers (the warm-up's end) on: at most +{DRIFT_LIMIT} %",
        options.calls, options.rss_every, options.warmup
    );
    println!(
        "| run | process | calls | duration | calls/s | RSS at warm-up end | min / max after warm-up | drift | lost \
         | duplicated | failed | verdict |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    for soaked in &mut runs {
        let (lines, passed) = rows(soaked, options.warmup);
        for line in lines {
            println!("{line}");
        }
        clean &= passed;
    }
    let mut lines = Vec::new();
    for soaked in &mut runs {
        soaked.tally.latencies.sort_unstable();
        let ms = |p| percentile(&soaked.tally.latencies, p).as_secs_f64() * 1e3;
        println!("\n{}: p50 {:.3} ms, p99 {:.3} ms", soaked.label, ms(0.5), ms(0.99));
        for example in &soaked.tally.examples {
            println!("    {example}");
        }
        for (name, points) in &soaked.series {
            let kib: Vec<String> = points.iter().map(|(_, kib)| kib.to_string()).collect();
            println!("  {name}, KiB every {} calls from 0: {}", options.rss_every, kib.join(" "));
            lines.push((format!("{}: {name}", soaked.short), points.clone()));
        }
    }
    let path = match options.svg.clone().map_or_else(
        || options::profile_dir().map(|dir| dir.parent().unwrap_or(dir.as_path()).join("soak-rss.svg")),
        Ok,
    ) {
        Ok(path) => path,
        Err(err) => {
            eprintln!("load: {err}");
            return ExitCode::FAILURE;
        }
    };
    let title =
        format!("RSS against calls answered ({} calls per run, a sample every {})", options.calls, options.rss_every);
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&path, svg::plot(&title, &lines, options.warmup)));
    match written {
        Ok(()) => println!("\nplot: {}", path.display()),
        Err(err) => {
            eprintln!("load: cannot write {}: {err}", path.display());
            clean = false;
        }
    }
    if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
