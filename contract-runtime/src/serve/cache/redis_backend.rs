//! The Redis result cache (feature `redis`): one store shared by every replica of a server.
//!
//! Entries are framed so that whatever else is found under a key — a truncated write,
//! flipped bytes, a value some other program stored, an entry copied from another key —
//! is recognised, deleted and never served. Redis being down, slow or refusing never
//! fails a call: every operation has a deadline, and during an outage the cache is
//! skipped (the call runs uncached) until a retry with back-off finds Redis again.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::contract::ContractId;
use crate::serve::cache::{CacheKey, CachedResult, ResultCache};

/// The first bytes of every entry: the format's name and version.
const MAGIC: &[u8; 8] = b"tcache\x00\x01";
/// The length of the SHA-256 checksum that ends every entry.
const CHECKSUM_LEN: usize = 32;

/// A [`ResultCache`] on Redis, shared by the replicas of a server.
///
/// - **Keys**: `<prefix>:<tool>/<name>@<version>+sha256:<contract hash>/<arguments sha256>`
///   ([`CacheKey::storage_key`] under the prefix), so replicas on two versions of a
///   contract — a rolling deploy — never share an entry.
/// - **Values**: a frame of magic bytes, the storage key, the contract identity, the
///   result text and a SHA-256 checksum of all of it ([`encode_entry`]). A value that is
///   truncated, corrupted, in another format or stored under another key is rejected,
///   deleted and counted in [`RedisCacheStats::rejected`]; it is never served. Reads are
///   bounded: a value larger than any entry the cache writes is rejected after reading
///   one byte past that size.
/// - **Revalidation**: hits are validated again by the pipeline before they are served
///   (on by default; [`RedisCacheBuilder::revalidation`] turns it off).
/// - **Time to live**: [`RedisCacheBuilder::ttl`] for every tool,
///   [`RedisCacheBuilder::tool_ttl`] for one; Redis drops the entry itself (`SET … PX`).
/// - **Deadlines**: connecting, each read and each write are bounded by
///   [`RedisCacheBuilder::timeout`] (200 ms by default). The trait is synchronous: the
///   calling thread waits at most that long.
/// - **Outages**: a failed operation marks Redis unavailable; until the next retry
///   (back-off from 100 ms, doubling up to [`RedisCacheBuilder::max_backoff`]) every
///   lookup is a miss and every admission is dropped at once, without touching the
///   network. The outage is reported once on standard error when it starts and once when
///   it ends, and counted in [`RedisCacheStats`]. A failure never turns a result into an
///   error: the call is served uncached.
/// - **Connections**: up to [`RedisCacheBuilder::pool_size`] idle connections are kept
///   for reuse; a call that finds none opens one.
///
/// # Examples
///
/// ```no_run
/// use std::sync::Arc;
/// use std::time::Duration;
/// use contract_runtime::cache::RedisCache;
/// use contract_runtime::Pipeline;
///
/// let cache = RedisCache::builder("redis://127.0.0.1:6379/")
///     .prefix("qe")
///     .ttl(Duration::from_secs(60))
///     .tool_ttl("fleet_status", Duration::from_secs(5))
///     .build()?;
/// let pipeline = Pipeline::builder().cache(Arc::new(cache)).build();
/// # Ok::<(), contract_runtime::cache::RedisCacheError>(())
/// ```
pub struct RedisCache {
    client: redis::Client,
    prefix: String,
    ttl: Duration,
    tool_ttls: HashMap<String, Duration>,
    timeout: Duration,
    max_backoff: Duration,
    max_entry_bytes: usize,
    pool_size: usize,
    revalidate: bool,
    idle: Mutex<Vec<redis::Connection>>,
    health: Mutex<Health>,
    counters: Counters,
}

/// Whether Redis answered last time, and when to try again if not.
#[derive(Debug)]
struct Health {
    /// When the current outage started; `None` while Redis answers.
    down_since: Option<Instant>,
    /// No operation is tried before this instant.
    retry_at: Instant,
    /// The wait before the next retry after another failure.
    backoff: Duration,
}

#[derive(Debug, Default)]
struct Counters {
    hits: AtomicU64,
    misses: AtomicU64,
    admissions: AtomicU64,
    evictions: AtomicU64,
    rejected: AtomicU64,
    oversized: AtomicU64,
    failures: AtomicU64,
    skipped: AtomicU64,
    outages: AtomicU64,
}

fn bump(counter: &AtomicU64) {
    // Saturating, like `CacheStats`: a counter never wraps.
    let _ = counter.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| Some(n.saturating_add(1)));
}

/// Counters of a [`RedisCache`]'s traffic; each only ever grows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RedisCacheStats {
    /// Lookups that found a well-formed entry for the key.
    pub hits: u64,
    /// Lookups that found nothing, a rejected entry, or could not ask Redis.
    pub misses: u64,
    /// Entries written.
    pub admissions: u64,
    /// Entries deleted on the pipeline's request (another identity, failed revalidation).
    pub evictions: u64,
    /// Entries found malformed (truncated, corrupted, foreign, under another key),
    /// deleted and not served.
    pub rejected: u64,
    /// Results larger than [`RedisCacheBuilder::max_entry_bytes`], served but not stored.
    pub oversized: u64,
    /// Operations that failed: Redis down, slow past the deadline, or refusing.
    pub failures: u64,
    /// Operations not tried because Redis was known to be down (waiting for the retry).
    pub skipped: u64,
    /// Outages begun: Redis answered, then failed.
    pub outages: u64,
}

/// A Redis URL that cannot be used (the only error [`RedisCacheBuilder::build`] returns;
/// an unreachable server is not an error, the cache then starts in an outage).
#[derive(Debug)]
pub struct RedisCacheError(String);

impl fmt::Display for RedisCacheError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RedisCacheError {}

/// Configures a [`RedisCache`]; made by [`RedisCache::builder`].
#[derive(Clone, Debug)]
pub struct RedisCacheBuilder {
    url: String,
    prefix: String,
    ttl: Duration,
    tool_ttls: HashMap<String, Duration>,
    timeout: Duration,
    max_backoff: Duration,
    max_entry_bytes: usize,
    pool_size: usize,
    revalidate: bool,
}

impl RedisCacheBuilder {
    /// The namespace in front of every key (default `tool-contracts`); give each
    /// application sharing one Redis its own.
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// How long an entry lives, for tools without their own (default 5 minutes, at
    /// least 1 ms).
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl.max(Duration::from_millis(1));
        self
    }

    /// How long an entry of `tool` lives (at least 1 ms).
    #[must_use]
    pub fn tool_ttl(mut self, tool: impl Into<String>, ttl: Duration) -> Self {
        self.tool_ttls.insert(tool.into(), ttl.max(Duration::from_millis(1)));
        self
    }

    /// The deadline of connecting and of each read and write (default 200 ms, at least
    /// 1 ms).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// The longest wait between retries during an outage (default 2 s).
    #[must_use]
    pub fn max_backoff(mut self, max_backoff: Duration) -> Self {
        self.max_backoff = max_backoff;
        self
    }

    /// The largest result text stored, in bytes (default 1 MiB); larger results are
    /// served but not cached.
    #[must_use]
    pub fn max_entry_bytes(mut self, max_entry_bytes: usize) -> Self {
        self.max_entry_bytes = max_entry_bytes;
        self
    }

    /// How many idle connections are kept for reuse (default 4, at least 1).
    #[must_use]
    pub fn pool_size(mut self, pool_size: usize) -> Self {
        self.pool_size = pool_size.max(1);
        self
    }

    /// Sets whether hits are validated again before they are served (default: yes,
    /// since other processes write to the store).
    #[must_use]
    pub fn revalidation(mut self, revalidate: bool) -> Self {
        self.revalidate = revalidate;
        self
    }

    /// The cache. Nothing is connected yet: the first operation connects, and a Redis
    /// that cannot be reached starts an outage, not an error.
    ///
    /// # Errors
    ///
    /// The URL is not a Redis URL (`redis://host:port/db`, `unix:///path`).
    pub fn build(self) -> Result<RedisCache, RedisCacheError> {
        let client = redis::Client::open(self.url.as_str())
            .map_err(|err| RedisCacheError(format!("`{}` is not a usable Redis URL: {err}", self.url)))?;
        Ok(RedisCache {
            client,
            prefix: self.prefix,
            ttl: self.ttl,
            tool_ttls: self.tool_ttls,
            timeout: self.timeout,
            max_backoff: self.max_backoff,
            max_entry_bytes: self.max_entry_bytes,
            pool_size: self.pool_size,
            revalidate: self.revalidate,
            idle: Mutex::new(Vec::new()),
            health: Mutex::new(Health { down_since: None, retry_at: Instant::now(), backoff: FIRST_BACKOFF }),
            counters: Counters::default(),
        })
    }
}

/// Why an operation did not happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Failed {
    /// Redis is down, slow or refusing (or known to be, until the retry).
    Down,
    /// The key holds another Redis type than a string.
    WrongType,
}

/// The first wait before retrying after a failure.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);

impl fmt::Debug for RedisCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The URL may hold a password: only the connection's address is shown.
        f.debug_struct("RedisCache")
            .field("addr", &self.client.get_connection_info().addr().to_string())
            .field("prefix", &self.prefix)
            .field("ttl", &self.ttl)
            .field("timeout", &self.timeout)
            .field("revalidate", &self.revalidate)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl RedisCache {
    /// The default key namespace.
    pub const DEFAULT_PREFIX: &'static str = "tool-contracts";
    /// The default time to live: 5 minutes.
    pub const DEFAULT_TTL: Duration = Duration::from_secs(300);
    /// The default deadline of each operation: 200 ms.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(200);

    /// A builder for the Redis at `url` (such as `redis://127.0.0.1:6379/`), with the
    /// defaults.
    #[must_use]
    pub fn builder(url: impl Into<String>) -> RedisCacheBuilder {
        RedisCacheBuilder {
            url: url.into(),
            prefix: Self::DEFAULT_PREFIX.to_owned(),
            ttl: Self::DEFAULT_TTL,
            tool_ttls: HashMap::new(),
            timeout: Self::DEFAULT_TIMEOUT,
            max_backoff: Duration::from_secs(2),
            max_entry_bytes: 1 << 20,
            pool_size: 4,
            revalidate: true,
        }
    }

    /// The Redis key of `key`: the prefix, a colon, [`CacheKey::storage_key`].
    #[must_use]
    pub fn redis_key(&self, key: &CacheKey) -> String {
        format!("{}:{}", self.prefix, key.storage_key())
    }

    /// How long entries of `tool` live.
    #[must_use]
    pub fn ttl_of(&self, tool: &str) -> Duration {
        self.tool_ttls.get(tool).copied().unwrap_or(self.ttl)
    }

    /// Whether Redis is taken to be down now (an outage began and has not ended).
    #[must_use]
    pub fn is_down(&self) -> bool {
        self.health.lock().unwrap_or_else(PoisonError::into_inner).down_since.is_some()
    }

    /// The traffic counters so far.
    #[must_use]
    pub fn stats(&self) -> RedisCacheStats {
        let c = &self.counters;
        let load = |n: &AtomicU64| n.load(Ordering::Relaxed);
        RedisCacheStats {
            hits: load(&c.hits),
            misses: load(&c.misses),
            admissions: load(&c.admissions),
            evictions: load(&c.evictions),
            rejected: load(&c.rejected),
            oversized: load(&c.oversized),
            failures: load(&c.failures),
            skipped: load(&c.skipped),
            outages: load(&c.outages),
        }
    }

    /// Runs `op` on a pooled connection within the deadline. Fails with
    /// [`Failed::Down`] when Redis is known to be down (waiting for the retry) or the
    /// operation fails, and with [`Failed::WrongType`] when the key holds a value of
    /// another Redis type (a list, a hash): a foreign entry, not an outage.
    fn with_connection<T>(
        &self,
        op: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, Failed> {
        {
            let health = self.health.lock().unwrap_or_else(PoisonError::into_inner);
            if health.down_since.is_some() && Instant::now() < health.retry_at {
                bump(&self.counters.skipped);
                return Err(Failed::Down);
            }
        }
        let pooled = self.idle.lock().unwrap_or_else(PoisonError::into_inner).pop();
        let mut connection = match pooled.map_or_else(|| self.connect(), Ok) {
            Ok(connection) => connection,
            Err(err) => {
                self.failed(&err);
                return Err(Failed::Down);
            }
        };
        match op(&mut connection) {
            Ok(value) => {
                self.recovered();
                self.release(connection);
                Ok(value)
            }
            Err(err) if err.code() == Some("WRONGTYPE") => {
                // Redis answered; only the value under the key is not ours.
                self.recovered();
                self.release(connection);
                Err(Failed::WrongType)
            }
            Err(err) => {
                // The connection may be mid-reply after a timeout: it is dropped, and so
                // are the idle ones, which are as likely to be dead.
                self.idle.lock().unwrap_or_else(PoisonError::into_inner).clear();
                self.failed(&err);
                Err(Failed::Down)
            }
        }
    }

    /// Keeps `connection` for reuse, up to the pool size.
    fn release(&self, connection: redis::Connection) {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < self.pool_size {
            idle.push(connection);
        }
    }

    fn connect(&self) -> redis::RedisResult<redis::Connection> {
        let connection = self.client.get_connection_with_timeout(self.timeout)?;
        connection.set_read_timeout(Some(self.timeout))?;
        connection.set_write_timeout(Some(self.timeout))?;
        Ok(connection)
    }

    fn failed(&self, err: &redis::RedisError) {
        bump(&self.counters.failures);
        let mut health = self.health.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        if health.down_since.is_none() {
            health.down_since = Some(now);
            health.backoff = FIRST_BACKOFF;
            bump(&self.counters.outages);
            // Once per outage, not per call: the next event is the recovery. The error
            // names the failure (refused, timed out), never an entry.
            tracing::warn!(
                target: crate::serve::observe::TARGET,
                backend = "redis",
                addr = %self.client.get_connection_info().addr(),
                error = %err,
                "result cache unavailable; calls are served uncached"
            );
        } else {
            health.backoff = (health.backoff * 2).min(self.max_backoff.max(FIRST_BACKOFF));
        }
        health.retry_at = now + health.backoff;
    }

    fn recovered(&self) {
        let mut health = self.health.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(since) = health.down_since.take() {
            health.backoff = FIRST_BACKOFF;
            let down_ms = u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX);
            tracing::info!(
                target: crate::serve::observe::TARGET,
                backend = "redis",
                addr = %self.client.get_connection_info().addr(),
                down_ms,
                "result cache answers again"
            );
        }
    }

    /// The largest frame this cache writes under `redis_key`: the largest text, the key,
    /// and room for the identity and the framing.
    fn max_frame_bytes(&self, redis_key: &str) -> usize {
        self.max_entry_bytes.saturating_add(redis_key.len()).saturating_add(1024)
    }

    fn delete(&self, redis_key: &str) -> bool {
        self.with_connection(|c| redis::cmd("DEL").arg(redis_key).query::<u64>(c)).is_ok_and(|n| n > 0)
    }
}

impl ResultCache for RedisCache {
    fn get(&self, key: &CacheKey) -> Option<CachedResult> {
        let redis_key = self.redis_key(key);
        // At most one byte more than the largest frame this cache writes is read: a huge
        // value someone else left under the key costs no more than that to reject.
        let limit = self.max_frame_bytes(&redis_key);
        let read =
            self.with_connection(|c| redis::cmd("GETRANGE").arg(&redis_key).arg(0).arg(limit).query::<Vec<u8>>(c));
        let bytes = match read {
            // An absent key reads as empty; so does an empty value, which is never served.
            Ok(bytes) if bytes.is_empty() => None,
            Ok(bytes) => Some(bytes),
            // Another type under our key is foreign: rejected and deleted like one.
            Err(Failed::WrongType) => Some(Vec::new()),
            Err(Failed::Down) => None,
        };
        let Some(bytes) = bytes else {
            bump(&self.counters.misses);
            return None;
        };
        let decoded = if bytes.len() > limit {
            Err(FrameError::Malformed("larger than any entry this cache writes".to_owned()))
        } else {
            decode_entry(&bytes, &redis_key)
        };
        if let Ok(entry) = decoded {
            bump(&self.counters.hits);
            Some(entry)
        } else {
            // Never served; deleted so that the next call computes a good one.
            bump(&self.counters.rejected);
            bump(&self.counters.misses);
            self.delete(&redis_key);
            None
        }
    }

    fn put(&self, key: CacheKey, entry: CachedResult) {
        let redis_key = self.redis_key(&key);
        let frame = encode_entry(&redis_key, &entry);
        if entry.text.len() > self.max_entry_bytes || frame.len() > self.max_frame_bytes(&redis_key) {
            // Whatever the key held is stale now, so it goes too.
            bump(&self.counters.oversized);
            self.delete(&redis_key);
            return;
        }
        let ttl_ms = u64::try_from(self.ttl_of(key.tool()).as_millis()).unwrap_or(u64::MAX).max(1);
        let stored = self.with_connection(|c| {
            redis::cmd("SET").arg(&redis_key).arg(frame.as_slice()).arg("PX").arg(ttl_ms).query::<()>(c)
        });
        if stored.is_ok() {
            bump(&self.counters.admissions);
        }
    }

    fn evict(&self, key: &CacheKey) {
        if self.delete(&self.redis_key(key)) {
            bump(&self.counters.evictions);
        }
    }

    fn revalidate_hits(&self) -> bool {
        self.revalidate
    }
}

/// Why a stored value was not accepted as an entry.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrameError {
    /// It does not start with the magic bytes: another format, or another program's.
    Foreign,
    /// It ends before its lengths say it should.
    Truncated,
    /// The checksum does not match: bytes were changed.
    Corrupted,
    /// It was written for another key (copied or renamed).
    WrongKey,
    /// The identity or the text is not what an entry holds.
    Malformed(String),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Foreign => f.write_str("not a tool-contracts cache entry (no magic bytes)"),
            Self::Truncated => f.write_str("the entry is truncated"),
            Self::Corrupted => f.write_str("the entry's checksum does not match"),
            Self::WrongKey => f.write_str("the entry was written under another key"),
            Self::Malformed(why) => write!(f, "the entry is malformed: {why}"),
        }
    }
}

impl std::error::Error for FrameError {}

/// The stored form of `entry` under `redis_key`: the magic bytes, then the key, the
/// identity and the text, each as a big-endian `u32` length and its UTF-8 bytes, then the
/// SHA-256 of everything before it.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use contract_runtime::cache::{decode_entry, encode_entry, CachedResult, FrameError};
/// use contract_runtime::ContractId;
///
/// let id = ContractId::new("search", "1.0.0".parse().unwrap(), "ab".repeat(32));
/// let entry = CachedResult { contract: id, text: Arc::from("{\"hits\":[]}") };
/// let frame = encode_entry("app:k", &entry);
/// assert_eq!(decode_entry(&frame, "app:k").unwrap(), entry);
/// assert_eq!(decode_entry(&frame[..frame.len() - 1], "app:k"), Err(FrameError::Truncated));
/// assert_eq!(decode_entry(&frame, "app:other"), Err(FrameError::WrongKey));
/// ```
#[must_use]
pub fn encode_entry(redis_key: &str, entry: &CachedResult) -> Vec<u8> {
    let identity = entry.contract.to_string();
    let mut frame =
        Vec::with_capacity(MAGIC.len() + 12 + redis_key.len() + identity.len() + entry.text.len() + CHECKSUM_LEN);
    frame.extend_from_slice(MAGIC);
    for part in [redis_key, identity.as_str(), &entry.text] {
        // A part longer than 4 GiB cannot be framed; its length saturates and the frame
        // is then rejected as truncated on read, never misread.
        frame.extend_from_slice(&u32::try_from(part.len()).unwrap_or(u32::MAX).to_be_bytes());
        frame.extend_from_slice(part.as_bytes());
    }
    let checksum = Sha256::digest(&frame);
    frame.extend_from_slice(&checksum);
    frame
}

/// Reads back a value stored by [`encode_entry`] under `redis_key`, or says why it is
/// not one: every byte is covered by the checksum, and the key it was written for must be
/// `redis_key`.
///
/// # Errors
///
/// The value is foreign, truncated, corrupted, written for another key, or malformed
/// (see [`FrameError`]).
pub fn decode_entry(bytes: &[u8], redis_key: &str) -> Result<CachedResult, FrameError> {
    let Some(rest) = bytes.strip_prefix(MAGIC.as_slice()) else {
        return Err(if MAGIC.starts_with(bytes) { FrameError::Truncated } else { FrameError::Foreign });
    };
    let mut cursor = rest;
    let mut parts = [&[][..]; 3];
    for part in &mut parts {
        let (len, after) = cursor.split_first_chunk::<4>().ok_or(FrameError::Truncated)?;
        let len = usize::try_from(u32::from_be_bytes(*len)).map_err(|_| FrameError::Truncated)?;
        if after.len() < len {
            return Err(FrameError::Truncated);
        }
        let (body, after) = after.split_at(len);
        *part = body;
        cursor = after;
    }
    match cursor.len() {
        n if n < CHECKSUM_LEN => return Err(FrameError::Truncated),
        CHECKSUM_LEN => {}
        _ => return Err(FrameError::Corrupted),
    }
    let signed = &bytes[..bytes.len() - CHECKSUM_LEN];
    if Sha256::digest(signed).as_slice() != cursor {
        return Err(FrameError::Corrupted);
    }
    let [key, identity, text] = parts;
    if key != redis_key.as_bytes() {
        return Err(FrameError::WrongKey);
    }
    let identity = std::str::from_utf8(identity).map_err(|_| FrameError::Malformed("identity is not UTF-8".into()))?;
    let contract: ContractId = identity.parse().map_err(FrameError::Malformed)?;
    let text = std::str::from_utf8(text).map_err(|_| FrameError::Malformed("text is not UTF-8".into()))?;
    Ok(CachedResult { contract, text: Arc::from(text) })
}
