//! The in-memory result cache: bounded by entries, bytes and time; counters that never
//! wrap; keys that name the tool, the contract identity and the hashed arguments. The
//! memory bound over 1,000,000 entries is in `cache_memory.rs` (its own binary, so that
//! other tests do not disturb its RSS reading).

use std::sync::Arc;
use std::time::Duration;

use contract_runtime::cache::{CacheKey, CachedResult, InMemoryCache, ResultCache};
use contract_runtime::pipeline::{CallContext, Pipeline};
use contract_runtime::wire::{CacheStatus, ToolError};
use contract_runtime::{ContractId, ToolOutput};
use qe_server::contracts::TaskStatus;
use qe_server::samples;
use serde_json::json;

fn id(version: &str) -> ContractId {
    ContractId::new("task_status", version.parse().unwrap(), "c".repeat(64))
}

fn entry(text: &str) -> CachedResult {
    CachedResult { contract: id("1.0.0"), text: Arc::from(text) }
}

fn key(n: usize) -> CacheKey {
    CacheKey::new("task_status", &id("1.0.0"), &json!({ "task_id": format!("T-{n}") }))
}

#[test]
fn put_then_evict_does_not_wrap_a_counter() {
    let cache = InMemoryCache::new();
    cache.put(key(1), entry("{}"));
    cache.evict(&key(1));
    let stats = cache.stats();
    assert_eq!((stats.hits, stats.misses, stats.evictions, stats.admissions), (0, 0, 1, 1), "{stats:?}");
    // Evicting what is not there counts nothing.
    cache.evict(&key(1));
    assert_eq!(cache.stats().evictions, 1);
    // Clean control: a lookup of a live entry is a hit, of a missing one a miss.
    cache.put(key(2), entry("{}"));
    assert!(cache.get(&key(2)).is_some());
    assert!(cache.get(&key(1)).is_none());
    let stats = cache.stats();
    assert_eq!((stats.hits, stats.misses, stats.evictions, stats.admissions), (1, 1, 1, 2), "{stats:?}");
}

#[test]
fn an_entry_past_its_time_to_live_is_a_miss_and_is_dropped() {
    let expiring = InMemoryCache::builder().ttl(Duration::from_nanos(1)).build();
    expiring.put(key(1), entry("{}"));
    std::thread::sleep(Duration::from_millis(2));
    assert!(expiring.get(&key(1)).is_none(), "expired");
    assert!(expiring.is_empty(), "and dropped");
    let stats = expiring.stats();
    assert_eq!((stats.hits, stats.misses, stats.expirations), (0, 1, 1), "{stats:?}");

    // Clean control: the same steps with a long time to live serve the entry.
    let lasting = InMemoryCache::builder().ttl(Duration::from_secs(3600)).build();
    lasting.put(key(1), entry("{}"));
    std::thread::sleep(Duration::from_millis(2));
    assert_eq!(lasting.get(&key(1)), Some(entry("{}")));
    assert_eq!(lasting.stats().expirations, 0);
    // The default is bounded too.
    assert_eq!(InMemoryCache::new().ttl(), InMemoryCache::DEFAULT_TTL);
    assert!(InMemoryCache::DEFAULT_TTL > Duration::ZERO && InMemoryCache::DEFAULT_TTL < Duration::MAX);
}

#[test]
fn the_entry_count_stays_under_its_bound() {
    let cache = InMemoryCache::builder().max_entries(100).build();
    for n in 0..10_000 {
        cache.put(key(n), entry(r#"{"id":"T","state":"done"}"#));
        assert!(cache.len() <= 100, "{} entries after {n} puts", cache.len());
    }
    assert!(cache.len() >= 50, "the cache is still used: {} entries", cache.len());
    assert!(cache.weight() <= cache.max_bytes());
    // Clean control: the entry just put is served.
    assert!(cache.get(&key(9_999)).is_some());
}

#[test]
fn the_bytes_stay_under_their_bound() {
    let cache = InMemoryCache::builder().max_entries(10_000).max_bytes(1 << 20).build();
    let big = format!(r#"{{"blob":"{}"}}"#, "x".repeat(10_000));
    for n in 0..1_000 {
        cache.put(key(n), entry(&big));
    }
    // 1,000 entries of about 10 KB each would be 10 MB: the budget is 1 MiB.
    let held: usize = cache.len() * big.len();
    assert!(held <= 1 << 20, "{} entries of {} bytes", cache.len(), big.len());
    assert!(cache.weight() <= 1 << 20, "{}", cache.weight());
    assert!(cache.len() >= 10, "the cache is still used: {} entries", cache.len());
}

#[test]
fn a_result_too_large_to_keep_is_not_cached_and_replaces_nothing_stale() {
    let cache = InMemoryCache::builder().max_bytes(1 << 20).build();
    let limit = usize::try_from(cache.max_entry_bytes()).unwrap();
    cache.put(key(1), entry("{}"));
    let huge = "x".repeat(limit + 1);
    cache.put(key(1), entry(&huge));
    assert!(cache.get(&key(1)).is_none(), "neither the huge result nor the older one under its key is served");
    assert_eq!(cache.stats().admissions, 1);
    // Clean control: a result under the limit is kept.
    let fits = "x".repeat(limit / 2);
    cache.put(key(2), entry(&fits));
    assert_eq!(cache.get(&key(2)).map(|e| e.text.len()), Some(fits.len()));
}

#[test]
fn keys_name_the_tool_the_identity_and_the_hashed_arguments() {
    let args = json!({ "task_id": "T-1", "verbose": true });
    let reordered = json!({ "verbose": true, "task_id": "T-1" });
    let a = CacheKey::new("task_status", &id("1.0.0"), &args);
    assert_eq!(a, CacheKey::new("task_status", &id("1.0.0"), &reordered), "key order does not matter");
    assert_ne!(a, CacheKey::new("task_status", &id("2.0.0"), &args), "another identity is another key");
    assert_ne!(a, CacheKey::new("task_status_v2", &id("1.0.0"), &args), "another tool is another key");
    assert_ne!(a, CacheKey::new("task_status", &id("1.0.0"), &json!({ "task_id": "T-2" })));
    // The storage key for a shared store: tool, identity, 64 hex digits, whatever the
    // size of the arguments.
    let huge = CacheKey::new("task_status", &id("1.0.0"), &json!({ "q": "y".repeat(100_000) }));
    for k in [&a, &huge] {
        let storage = k.storage_key();
        let parts: Vec<&str> = storage.rsplitn(2, '/').collect();
        assert_eq!(parts[0].len(), 64, "{storage}");
        assert!(parts[0].chars().all(|c| c.is_ascii_hexdigit()), "{storage}");
        assert_eq!(parts[1], format!("task_status/{}", id("1.0.0")));
    }
    // The identity in a storage key parses back (a shared backend can check it).
    assert_eq!(a.contract().to_string().parse::<ContractId>().unwrap(), id("1.0.0"));
}

#[test]
fn a_pipeline_with_a_small_cache_stays_bounded_and_still_hits() {
    let cache = Arc::new(InMemoryCache::builder().max_entries(20).build());
    let pipeline = Pipeline::builder().cache(cache.clone()).build();
    let sample = samples::task_status();
    for n in 0..200 {
        let ctx = CallContext::new("task_status", json!({ "task_id": format!("T-{n}") }));
        let r = pipeline.call_sync(&ctx, || Ok::<_, ToolError>(sample.clone()));
        assert_eq!(r.cache_status(), CacheStatus::Miss);
        assert!(cache.len() <= 20, "{} entries", cache.len());
    }
    // Clean control: the last call, repeated, is served from the cache.
    let ctx = CallContext::new("task_status", json!({ "task_id": "T-199" }));
    let hit = pipeline.call_sync(&ctx, || -> Result<TaskStatus, ToolError> { panic!("handler must not run on a hit") });
    assert_eq!(hit.cache_status(), CacheStatus::Hit);
    assert_eq!(cache.stats().admissions, 200);
    let _ = TaskStatus::contract();
}

#[test]
fn results_say_in_meta_whether_they_came_from_the_cache() {
    use contract_runtime::wire::{CACHE_META_KEY, META_KEY};
    let sample = samples::task_status();
    let ctx = CallContext::new("task_status", json!({ "task_id": "T-1" }));
    let cached = Pipeline::builder().cache(Arc::new(InMemoryCache::new())).build();
    let miss = cached.call_sync(&ctx, || Ok::<_, ToolError>(sample.clone())).to_json();
    let hit = cached.call_sync(&ctx, || Ok::<_, ToolError>(sample.clone())).to_json();
    assert_eq!(miss["_meta"][CACHE_META_KEY], "miss", "{miss}");
    assert_eq!(hit["_meta"][CACHE_META_KEY], "hit", "{hit}");
    // The identity beside it is the contract's, as without a cache.
    let plain = Pipeline::builder().build().call_sync(&ctx, || Ok::<_, ToolError>(sample.clone())).to_json();
    assert_eq!(hit["_meta"][META_KEY], plain["_meta"][META_KEY]);
    assert_eq!(hit["_meta"][META_KEY]["id"], TaskStatus::contract().id().to_string());
    // Clean control: without a cache the key is absent, and the payloads agree.
    assert!(plain["_meta"].get(CACHE_META_KEY).is_none(), "{plain}");
    assert_eq!(hit["structuredContent"], plain["structuredContent"]);
}
