//! Result caches. An entry records the contract identity it was validated under; the
//! pipeline serves it only while that identity is current (seed 000, experiment 5).

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::contract::ContractId;

/// What a cache entry is found by: the tool and its canonical arguments. The contract
/// identity is part of the entry and is checked on every hit, so an entry written
/// under another identity is a miss and is evicted, never served.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CacheKey {
    tool: String,
    arguments: String,
}

impl CacheKey {
    /// A key for `tool` called with `arguments`; key order in `arguments` does not matter.
    #[must_use]
    pub fn new(tool: &str, arguments: &Value) -> Self {
        Self { tool: tool.to_owned(), arguments: crate::schema::canonical_string(arguments) }
    }

    /// The tool name.
    #[must_use]
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The canonical text of the arguments.
    #[must_use]
    pub fn arguments(&self) -> &str {
        &self.arguments
    }
}

/// A validated result as stored: the identity it was validated under and its JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct CachedResult {
    /// The contract identity the result satisfied when it was admitted.
    pub contract: ContractId,
    /// The result's compact JSON text (the natural root, never the wrapped form).
    pub text: Arc<str>,
    /// The parsed value, when the cache keeps it (in-process caches do).
    pub value: Option<Arc<Value>>,
}

/// A store of validated results. Implementations must be safe to share between tasks.
pub trait ResultCache: Send + Sync + fmt::Debug {
    /// The entry for `key`, whatever identity it was written under.
    fn get(&self, key: &CacheKey) -> Option<CachedResult>;
    /// Stores `entry` under `key`, replacing any previous one.
    fn put(&self, key: CacheKey, entry: CachedResult);
    /// Removes the entry for `key`.
    fn evict(&self, key: &CacheKey);
    /// Whether a hit is validated again before it is served. Turn it on for caches
    /// shared between processes, whose entries other code may have written.
    fn revalidate_hits(&self) -> bool;
}

/// Counters of a cache's traffic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Entries served.
    pub hits: u64,
    /// Lookups that found nothing usable.
    pub misses: u64,
    /// Entries removed because their identity was stale or they failed revalidation.
    pub evictions: u64,
    /// Validated results stored.
    pub admissions: u64,
}

/// The embedded default: an in-process map. Hits are not revalidated unless asked.
#[derive(Debug, Default)]
pub struct InMemoryCache {
    entries: Mutex<HashMap<CacheKey, CachedResult>>,
    revalidate: bool,
    hits: AtomicU64,
    misses: AtomicU64,
    evictions: AtomicU64,
    admissions: AtomicU64,
}

impl InMemoryCache {
    /// An empty cache.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets whether hits are validated again before being served.
    #[must_use]
    pub fn with_revalidation(mut self, revalidate: bool) -> Self {
        self.revalidate = revalidate;
        self
    }

    /// The traffic counters so far.
    #[must_use]
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
            admissions: self.admissions.load(Ordering::Relaxed),
        }
    }

    /// How many entries the cache holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether the cache is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<CacheKey, CachedResult>> {
        self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn count(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

impl ResultCache for InMemoryCache {
    fn get(&self, key: &CacheKey) -> Option<CachedResult> {
        let found = self.lock().get(key).cloned();
        Self::count(if found.is_some() { &self.hits } else { &self.misses });
        found
    }

    fn put(&self, key: CacheKey, entry: CachedResult) {
        self.lock().insert(key, entry);
        Self::count(&self.admissions);
    }

    fn evict(&self, key: &CacheKey) {
        if self.lock().remove(key).is_some() {
            // A stale entry was found as a hit by `get`; it is really a miss.
            self.hits.fetch_sub(1, Ordering::Relaxed);
            Self::count(&self.misses);
            Self::count(&self.evictions);
        }
    }

    fn revalidate_hits(&self) -> bool {
        self.revalidate
    }
}
