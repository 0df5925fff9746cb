//! The load table: one row per transport, with what the run cost the processes.

#[allow(clippy::wildcard_imports)] // One program split by concern: the parent holds what they share.
use super::*;
use std::fmt::Write as _;

/// What the run cost the processes: CPU time of the server and of this client, and the
/// server's resident set at the end.
pub(super) struct Measured {
    server_cpu: Option<Duration>,
    client_cpu: Option<Duration>,
    server_rss_kib: Option<u64>,
}

impl Measured {
    pub(super) fn of(pid: Option<u32>, (server_before, client_before): (Option<Duration>, Option<Duration>)) -> Self {
        let server_after = pid.and_then(|pid| cpu_time(&pid.to_string()));
        let since = |after: Option<Duration>, before: Option<Duration>| Some(after?.saturating_sub(before?));
        Self {
            server_cpu: since(server_after, server_before),
            client_cpu: since(cpu_time("self"), client_before),
            server_rss_kib: pid.and_then(rss_kib),
        }
    }
}

pub(super) fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
    let rank = ((sorted.len() as f64) * p).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

pub(super) fn row(
    transport: &str,
    concurrency: &str,
    mut tally: Tally,
    wall: Duration,
    measured: &Measured,
) -> (String, bool) {
    tally.latencies.sort_unstable();
    #[allow(clippy::cast_precision_loss)]
    let throughput = tally.latencies.len() as f64 / wall.as_secs_f64();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let calls = tally.latencies.len() + usize::try_from(tally.lost).unwrap_or(0);
    // CPU per 1,000 calls: on a shared machine this says more than the wall clock.
    let per_thousand = |cpu: Option<Duration>| {
        cpu.map_or_else(
            || "-".to_owned(),
            |cpu| {
                format!(
                    "{:.0} ms",
                    cpu.as_secs_f64() * 1e3 * 1000.0 / f64::from(u32::try_from(calls.max(1)).unwrap_or(u32::MAX))
                )
            },
        )
    };
    let (server_cpu, client_cpu) = (per_thousand(measured.server_cpu), per_thousand(measured.client_cpu));
    let rss = measured.server_rss_kib.map_or_else(
        || "-".to_owned(),
        |kib| format!("{:.1} MiB", f64::from(u32::try_from(kib).unwrap_or(u32::MAX)) / 1024.0),
    );
    let mut line = format!(
        "| {transport} | {concurrency} | {calls} | {:.2} s | {throughput:.0}/s | {:.3} ms | {:.3} ms | {} | {} | {server_cpu} | {client_cpu} | {rss} |",
        wall.as_secs_f64(),
        ms(percentile(&tally.latencies, 0.50)),
        ms(percentile(&tally.latencies, 0.99)),
        tally.lost,
        tally.mismatched,
    );
    for example in &tally.examples {
        let _ = write!(line, "\n    {example}");
    }
    (line, tally.lost == 0 && tally.mismatched == 0)
}
