//! Result caches. An entry records the contract identity it was validated under; the
//! pipeline serves it only while that identity is current: a
//! result validated under another contract version is never served.
//!
//! The key of an entry names the tool, the contract identity and a SHA-256 of the
//! canonical arguments ([`CacheKey::storage_key`]), so a store shared between processes
//! (Redis) can use it as it is: entries of two contract versions never share a key, and
//! arguments of any size make a key of fixed size.
//!
//! The in-memory default is bounded: see [`InMemoryCache`].
//!
#![doc = include_str!("../../../docs/caching.md")]

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::contract::ContractId;
pub use crate::serve::wire::PreparedResult;

#[cfg(feature = "redis")]
mod redis_backend;

#[cfg(feature = "redis")]
pub use redis_backend::{
    decode_entry, encode_entry, FrameError, RedisCache, RedisCacheBuilder, RedisCacheError, RedisCacheStats,
};

/// What a cache entry is found by: the tool, the contract identity the result must
/// satisfy, and a SHA-256 of the canonical arguments (key order in the arguments does
/// not matter).
///
/// The entry also records the identity it was validated under, and the pipeline checks
/// it on every hit: a store shared with other code could hold anything under any key.
///
/// # Examples
///
/// ```
/// use contract_runtime::cache::CacheKey;
/// use contract_runtime::ContractId;
/// use serde_json::json;
///
/// let id = ContractId::new("search", "1.0.0".parse().unwrap(), "ab".repeat(32));
/// let a = CacheKey::new("search", &id, &json!({ "q": "login", "page": 2 }));
/// let b = CacheKey::new("search", &id, &json!({ "page": 2, "q": "login" }));
/// assert_eq!(a, b);
/// assert!(a.storage_key().starts_with("search/search@1.0.0+sha256:abab"));
/// assert_eq!(a.arguments_sha256().len(), 64);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheKey {
    tool: String,
    contract: ContractId,
    arguments_sha256: String,
}

impl std::hash::Hash for CacheKey {
    /// The tool and the digest of the arguments: the contract identity is left to the
    /// equality check, which every lookup makes anyway. Hashing it too was most of the
    /// cost of finding a small entry.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.tool.hash(state);
        self.arguments_sha256.hash(state);
    }
}

impl CacheKey {
    /// A key for `tool` called with `arguments`, whose result must satisfy `contract`.
    #[must_use]
    pub fn new(tool: &str, contract: &ContractId, arguments: &Value) -> Self {
        // `sha256_hex` writes hex by table rather than with `format!`: a cache hit computes
        // its key, and the formatter cost more than the hash of small arguments.
        let arguments_sha256 =
            crate::contract::schema::sha256_hex(crate::contract::schema::canonical_string(arguments).as_bytes());
        Self { tool: tool.to_owned(), contract: contract.clone(), arguments_sha256 }
    }

    /// The tool name.
    #[must_use]
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The contract identity the cached result must satisfy.
    #[must_use]
    pub fn contract(&self) -> &ContractId {
        &self.contract
    }

    /// The SHA-256 of the canonical arguments, as 64 lowercase hex digits.
    #[must_use]
    pub fn arguments_sha256(&self) -> &str {
        &self.arguments_sha256
    }

    /// The key as one string for a shared store:
    /// `<tool>/<contract identity>/<arguments sha256>`, such as
    /// `fleet_status/fleet_status@1.2.0+sha256:…/3f…`. Prefix it with the store's own
    /// namespace.
    #[must_use]
    pub fn storage_key(&self) -> String {
        format!("{}/{}/{}", self.tool, self.contract, self.arguments_sha256)
    }

    /// About how many bytes the key holds, for the cache's memory bound.
    fn weight(&self) -> usize {
        self.tool.len() + self.contract.to_string().len() + self.arguments_sha256.len()
    }
}

/// A validated result as stored: the identity it was validated under and its JSON text.
/// A hit is checked to be JSON (and revalidated, if the cache asks) before it is served,
/// so what is served is what was validated. A cache that keeps the finished wire bytes
/// beside it ([`ResultCache::keep_prepared`]) has them written once from this text, at
/// the first such check, and bound to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CachedResult {
    /// The contract identity the result satisfied when it was admitted.
    pub contract: ContractId,
    /// The result's compact JSON text (the natural root, never the wrapped form).
    pub text: Arc<str>,
}

/// A store of validated results. Implementations must be safe to share between tasks.
///
/// A shared backend (Redis) stores each entry under [`CacheKey::storage_key`] and the
/// entry as its identity ([`ContractId`] displays and parses back) and its text.
pub trait ResultCache: Send + Sync + fmt::Debug {
    /// The entry for `key`, whatever identity it was written under.
    fn get(&self, key: &CacheKey) -> Option<CachedResult>;
    /// Stores `entry` under `key`, replacing any previous one. A bounded cache may drop
    /// other entries to make room, or not keep this one.
    fn put(&self, key: CacheKey, entry: CachedResult);
    /// Removes the entry for `key`.
    fn evict(&self, key: &CacheKey);
    /// Whether a hit is validated again before it is served. Turn it on for caches
    /// shared between processes, whose entries other code may have written.
    fn revalidate_hits(&self) -> bool;

    /// The entry for `key` with the wire forms kept beside it
    /// ([`ResultCache::keep_prepared`]), if any. The default keeps none: the pipeline
    /// then checks the text and writes the wire bytes on every hit.
    fn get_prepared(&self, key: &CacheKey) -> Option<(CachedResult, Option<PreparedResult>)> {
        self.get(key).map(|entry| (entry, None))
    }

    /// Keeps `prepared` beside the entry for `key` if that entry still holds the text it
    /// was made from ([`PreparedResult::is_for`]), so that later hits serve its bytes
    /// as they are. The default keeps nothing.
    ///
    /// A cache that keeps it trusts its own entries: only caches whose entries no other
    /// code writes (in process, [`ResultCache::revalidate_hits`] off) should.
    fn keep_prepared(&self, key: &CacheKey, prepared: PreparedResult) {
        let _ = (key, prepared);
    }

    /// Whether [`ResultCache::keep_prepared`] keeps anything; when not, the pipeline
    /// does not write wire bytes for it. The default: no.
    fn keeps_prepared(&self) -> bool {
        false
    }
}

/// Counters of a cache's traffic. Each only ever grows (saturating at `u64::MAX`), so a
/// counter never wraps, whatever order the calls come in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups that found a live entry. The pipeline may still refuse it (another
    /// identity, failed revalidation) and then evicts it: see `evictions`.
    pub hits: u64,
    /// Lookups that found nothing, or only an expired entry.
    pub misses: u64,
    /// Entries removed by [`ResultCache::evict`] (stale identity, failed revalidation).
    pub evictions: u64,
    /// Entries dropped because they outlived the time to live.
    pub expirations: u64,
    /// Validated results stored.
    pub admissions: u64,
}

/// The embedded default: an in-process cache bounded by entries, bytes and time.
///
/// - **Entries**: at most [`InMemoryCache::DEFAULT_MAX_ENTRIES`] (10,000) by default.
/// - **Bytes**: the keys, texts and finished wire bytes held weigh at most
///   [`InMemoryCache::DEFAULT_MAX_BYTES`] (64 MiB) by default; a single result larger than
///   [`InMemoryCache::max_entry_bytes`] is not kept.
/// - **Time**: an entry older than [`InMemoryCache::DEFAULT_TTL`] (5 minutes) by default
///   is a miss and is dropped when it is looked up; until then it counts against the
///   bounds, so memory stays bounded either way.
///
/// Eviction is [`quick_cache`]'s (S3-FIFO, sharded locks): the lightest well-kept crate
/// with a weighted capacity, built here without its optional hasher and lock crates
/// (two small dependencies: `hashbrown`, `equivalent`). `moka` has TTL built in but pulls
/// a scheduler and many more crates into every server; `lru` needs a lock around it and
/// bounds entries only. The TTL is a time stamp on each entry, checked on lookup.
///
/// Both bounds are one weight: an entry weighs its bytes but at least
/// `max_bytes / max_entries`, so the total weight stays under `max_bytes` only if the
/// count stays under `max_entries` and the bytes under `max_bytes`.
///
/// Hits are not revalidated unless asked. Without revalidation the cache keeps the
/// finished wire bytes of each entry ([`PreparedResult`], written at the first hit of
/// each protocol era and counted in the entry's weight), so a hit is served without
/// parsing, copying or escaping its text again.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use contract_runtime::cache::InMemoryCache;
///
/// let cache = InMemoryCache::builder().max_entries(1_000).max_bytes(8 << 20).ttl(Duration::from_secs(30)).build();
/// assert_eq!(cache.max_entries(), 1_000);
/// assert_eq!(cache.ttl(), Duration::from_secs(30));
/// assert!(cache.is_empty());
/// ```
pub struct InMemoryCache {
    entries: quick_cache::sync::Cache<CacheKey, Stamped, ByBytes>,
    /// The least an entry weighs: the total capacity over `max_entries`.
    floor: u64,
    max_entries: usize,
    max_bytes: u64,
    ttl: Duration,
    revalidate: bool,
    hits: AtomicU64,
    misses: AtomicU64,
    evictions: AtomicU64,
    expirations: AtomicU64,
    admissions: AtomicU64,
}

/// An entry with the time it was admitted, its finished wire bytes once written, and
/// its weight (computed when either changes).
#[derive(Clone)]
struct Stamped {
    entry: CachedResult,
    prepared: Option<PreparedResult>,
    admitted: Instant,
    weight: u64,
}

/// Weighs an entry by the weight stamped on it when it was put (see [`InMemoryCache`]).
#[derive(Clone)]
struct ByBytes;

impl quick_cache::Weighter<CacheKey, Stamped> for ByBytes {
    fn weight(&self, _key: &CacheKey, value: &Stamped) -> u64 {
        value.weight
    }
}

impl fmt::Debug for InMemoryCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InMemoryCache")
            .field("len", &self.entries.len())
            .field("max_entries", &self.max_entries)
            .field("max_bytes", &self.max_bytes)
            .field("ttl", &self.ttl)
            .field("revalidate", &self.revalidate)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl Default for InMemoryCache {
    fn default() -> Self {
        Self::builder().build()
    }
}

/// Sets the bounds of an [`InMemoryCache`]; made by [`InMemoryCache::builder`].
#[derive(Clone, Debug)]
pub struct InMemoryCacheBuilder {
    max_entries: usize,
    max_bytes: u64,
    ttl: Duration,
    revalidate: bool,
}

impl InMemoryCacheBuilder {
    /// The most entries the cache holds (at least 1).
    #[must_use]
    pub fn max_entries(mut self, max_entries: usize) -> Self {
        self.max_entries = max_entries.max(1);
        self
    }

    /// The most bytes of keys, result texts and their wire bytes the cache holds (at least 1).
    #[must_use]
    pub fn max_bytes(mut self, max_bytes: u64) -> Self {
        self.max_bytes = max_bytes.max(1);
        self
    }

    /// How long an entry may be served after it was admitted.
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Sets whether hits are validated again before being served.
    #[must_use]
    pub fn revalidation(mut self, revalidate: bool) -> Self {
        self.revalidate = revalidate;
        self
    }

    /// The cache, empty.
    #[must_use]
    pub fn build(self) -> InMemoryCache {
        // Each entry weighs at least `max_bytes / max_entries` (see `InMemoryCache`);
        // when the byte budget is smaller than the entry count, it is raised so that
        // every entry can weigh at least 1.
        let max_entries = self.max_entries;
        let max_bytes = self.max_bytes.max(max_entries as u64);
        let entries = quick_cache::sync::Cache::with_weighter(max_entries, max_bytes, ByBytes);
        // The shards round their shares up, so the floor is taken from the total they
        // really hold: `count × floor ≤ capacity` then gives `count ≤ max_entries`.
        let floor = entries.capacity().div_ceil(max_entries as u64).max(1);
        InMemoryCache {
            entries,
            floor,
            max_entries,
            max_bytes,
            ttl: self.ttl,
            revalidate: self.revalidate,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
            expirations: AtomicU64::new(0),
            admissions: AtomicU64::new(0),
        }
    }
}

impl InMemoryCache {
    /// The default bound on entries.
    pub const DEFAULT_MAX_ENTRIES: usize = 10_000;
    /// The default bound on the bytes of keys, result texts and their wire bytes: 64 MiB.
    pub const DEFAULT_MAX_BYTES: u64 = 64 << 20;
    /// The default time to live: 5 minutes.
    pub const DEFAULT_TTL: Duration = Duration::from_secs(300);

    /// An empty cache with the default bounds.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A builder starting from the default bounds.
    #[must_use]
    pub fn builder() -> InMemoryCacheBuilder {
        InMemoryCacheBuilder {
            max_entries: Self::DEFAULT_MAX_ENTRIES,
            max_bytes: Self::DEFAULT_MAX_BYTES,
            ttl: Self::DEFAULT_TTL,
            revalidate: false,
        }
    }

    /// Sets whether hits are validated again before being served.
    #[must_use]
    pub fn with_revalidation(mut self, revalidate: bool) -> Self {
        self.revalidate = revalidate;
        self
    }

    /// The bound on entries.
    #[must_use]
    pub fn max_entries(&self) -> usize {
        self.max_entries
    }

    /// The bound on the bytes of keys, result texts and their wire bytes.
    #[must_use]
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// How long an entry may be served after it was admitted.
    #[must_use]
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The largest result (key, text and wire bytes) the cache keeps: half of one shard's
    /// share of [`InMemoryCache::max_bytes`] (the budget is split over shards, a few per
    /// core, so that tasks rarely wait for each other). Larger results are served but
    /// not cached.
    #[must_use]
    pub fn max_entry_bytes(&self) -> u64 {
        self.entries.shard_capacity() / 2
    }

    /// The traffic counters so far.
    #[must_use]
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
            expirations: self.expirations.load(Ordering::Relaxed),
            admissions: self.admissions.load(Ordering::Relaxed),
        }
    }

    /// How many entries the cache holds (expired ones included until looked up or
    /// pushed out).
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the cache is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The weight the entries hold now: their bytes, each at least
    /// `max_bytes / max_entries`; never above [`InMemoryCache::max_bytes`].
    #[must_use]
    pub fn weight(&self) -> u64 {
        self.entries.weight()
    }

    /// The bytes an entry holds without its wire bytes.
    fn entry_bytes(key: &CacheKey, entry: &CachedResult) -> u64 {
        (key.weight() + entry.text.len() + entry.contract.to_string().len()) as u64
    }

    fn count(counter: &AtomicU64) {
        // Saturating: a counter stops at `u64::MAX` rather than wrap to 0.
        let _ = counter.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| Some(n.saturating_add(1)));
    }
}

impl ResultCache for InMemoryCache {
    fn get(&self, key: &CacheKey) -> Option<CachedResult> {
        self.get_prepared(key).map(|(entry, _)| entry)
    }

    fn get_prepared(&self, key: &CacheKey) -> Option<(CachedResult, Option<PreparedResult>)> {
        let Some(found) = self.entries.get(key) else {
            Self::count(&self.misses);
            return None;
        };
        if found.admitted.elapsed() > self.ttl {
            // Removed only if it is still the same (expired) entry, not a fresh one put
            // in the meantime by another task.
            if self.entries.remove_if(key, |current| current.admitted == found.admitted).is_some() {
                Self::count(&self.expirations);
            }
            Self::count(&self.misses);
            return None;
        }
        Self::count(&self.hits);
        Some((found.entry, found.prepared))
    }

    fn put(&self, key: CacheKey, entry: CachedResult) {
        let bytes = Self::entry_bytes(&key, &entry);
        let weight = bytes.max(self.floor);
        if bytes > self.max_entry_bytes() {
            // Too large for its shard: keeping it would push out everything else there.
            // Whatever the key held before is stale now, so it goes too.
            self.entries.remove(&key);
            return;
        }
        self.entries.insert(key, Stamped { entry, prepared: None, admitted: Instant::now(), weight });
        Self::count(&self.admissions);
    }

    fn keeps_prepared(&self) -> bool {
        !self.revalidate
    }

    fn keep_prepared(&self, key: &CacheKey, prepared: PreparedResult) {
        if self.revalidate {
            // Hits are checked again, from the text: bytes kept beside it would go unused.
            return;
        }
        let max_entry_bytes = self.max_entry_bytes();
        let floor = self.floor;
        // Under the shard's lock, so that an entry put in the meantime is never paired
        // with bytes made from another text. The weight is taken again when this returns.
        let outcome = self.entries.entry(key, Some(Duration::ZERO), |key, stamped| {
            if prepared.is_for(&stamped.entry.text) {
                let bytes = Self::entry_bytes(key, &stamped.entry) + prepared.written_bytes() as u64;
                // Too large with its wire bytes: the entry stays as it was.
                if bytes <= max_entry_bytes {
                    stamped.weight = bytes.max(floor);
                    stamped.prepared = Some(prepared);
                }
            }
            quick_cache::sync::EntryAction::Retain(())
        });
        // Gone or being replaced: nothing to keep the bytes with.
        drop(outcome);
    }

    fn evict(&self, key: &CacheKey) {
        if self.entries.remove(key).is_some() {
            Self::count(&self.evictions);
        }
    }

    fn revalidate_hits(&self) -> bool {
        self.revalidate
    }
}
