//! 1,000,000 distinct argument sets through the default in-memory cache: the entry count
//! stays under its bound and, on Linux, the resident memory grows by far less than the
//! unbounded cache did (576 MiB and growing). Its own test binary, with one test, so
//! that nothing else running in the process moves the RSS reading.

use std::sync::Arc;

use contract_runtime::cache::{CacheKey, CachedResult, InMemoryCache, ResultCache};
use contract_runtime::ToolOutput;
use qe_server::contracts::TaskStatus;
use serde_json::json;

/// The resident set size from `/proc/self/status`, in bytes; `None` off Linux.
fn rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

const MIB: u64 = 1 << 20;

#[test]
fn a_million_distinct_entries_keep_memory_bounded() {
    let cache = InMemoryCache::new();
    let contract = TaskStatus::contract().id().clone();
    // A realistic small result, the same text for every entry: the test measures what the
    // cache keeps, not what building a million values costs.
    let text: Arc<str> = Arc::from(serde_json::to_string(&qe_server::samples::task_status()).unwrap());
    let start = rss();
    let mut after_warmup = None;
    for n in 0..1_000_000_u32 {
        let key = CacheKey::new("task_status", &contract, &json!({ "task_id": format!("T-{n}"), "page": n % 7 }));
        // A text of its own per entry, as a real result would be.
        cache.put(key, CachedResult { contract: contract.clone(), text: Arc::from(&*text) });
        if n == 99_999 {
            after_warmup = rss();
        }
        if n % 50_000 == 0 {
            assert!(cache.len() <= cache.max_entries(), "{} entries after {n} puts", cache.len());
        }
    }
    let end = rss();
    assert!(cache.len() <= cache.max_entries(), "{} entries", cache.len());
    assert!(cache.len() >= cache.max_entries() / 2, "the cache is used: {} entries", cache.len());
    assert!(cache.weight() <= cache.max_bytes());
    assert_eq!(cache.stats().admissions, 1_000_000);
    println!(
        "entries held: {} of {} admitted (bound {}), weight {} bytes (bound {})",
        cache.len(),
        cache.stats().admissions,
        cache.max_entries(),
        cache.weight(),
        cache.max_bytes()
    );
    if let (Some(start), Some(warm), Some(end)) = (start, after_warmup, end) {
        // RSS is far below 2^52 bytes, so the conversion is exact enough for a report.
        #[allow(clippy::cast_precision_loss)]
        let mib = |b: u64| b as f64 / MIB as f64;
        println!(
            "RSS: {:.1} MiB at start, {:.1} MiB after 100,000 puts, {:.1} MiB after 1,000,000",
            mib(start),
            mib(warm),
            mib(end)
        );
        // Generous bounds: the byte budget is 64 MiB; the unbounded cache grew past 576 MiB.
        assert!(end.saturating_sub(start) < 128 * MIB, "RSS grew {:.1} MiB", mib(end.saturating_sub(start)));
        // From 100,000 to 1,000,000 puts the cache is full and only churns.
        assert!(end.saturating_sub(warm) < 32 * MIB, "RSS grew {:.1} MiB after warm-up", mib(end.saturating_sub(warm)));
    }
}
