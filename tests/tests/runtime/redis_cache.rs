//! The Redis result cache against a real `redis-server` (Debian package `redis-server`;
//! `.ci/run` installs it when it is missing). Each test starts its own server on a free
//! loopback port, without persistence, and kills it on drop: no system service is used.
//!
//! - The framing, straight against Redis: a truncated, corrupted, foreign or copied entry
//!   is rejected, deleted and never served; TTLs per tool; an outage is skipped quickly,
//!   counted once, and ends when Redis answers again.
//! - A rolling deploy: two qe-server replicas (real child processes over stdio), one
//!   serving `task_status` at its current version and one at the next, share one Redis. Interleaved calls
//!   never serve one version's entry from the other; Redis stopped mid-run leaves every
//!   call succeeding uncached; restarted, hits resume; planted entries are never served.
//!
//! The expectations come from the server's own uncached answers (the control) and from
//! the identities each replica states in `_meta`, not from the cache under test.

use crate::support::bins;

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use contract_runtime::cache::{
    decode_entry, encode_entry, CacheKey, CachedResult, FrameError, RedisCache, ResultCache,
};
use contract_runtime::wire::{CACHE_META_KEY, META_KEY};
use contract_runtime::ContractId;
use serde_json::{json, Value};

// ------------------------------------------------------------------ the Redis server

/// A `redis-server` child on a loopback port, killed on drop.
pub(crate) struct RedisServer {
    port: u16,
    child: Option<Child>,
}

impl RedisServer {
    pub(crate) fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().unwrap().port();
        let mut server = Self { port, child: None };
        server.restart();
        server
    }

    pub(crate) fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Starts the server (again) on the same port; its data starts empty.
    pub(crate) fn restart(&mut self) {
        assert!(self.child.is_none(), "the server is running");
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|err| {
                panic!(
                    "cannot start redis-server ({err}): install the Debian package `redis-server` \
                     (apt-get install -y redis-server); .ci/run does"
                )
            });
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(mut conn) = self.client().get_connection_with_timeout(Duration::from_millis(200)) {
                if redis::cmd("PING").query::<String>(&mut conn).is_ok() {
                    return;
                }
            }
            assert!(Instant::now() < deadline, "redis-server did not answer on port {} within 20 s", self.port);
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills the server and waits until its port refuses connections.
    pub(crate) fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
            assert!(Instant::now() < deadline, "port {} still answers after the kill", self.port);
            thread::sleep(Duration::from_millis(20));
        }
    }

    pub(crate) fn client(&self) -> redis::Client {
        redis::Client::open(self.url()).expect("a Redis URL")
    }

    pub(crate) fn conn(&self) -> redis::Connection {
        self.client().get_connection_with_timeout(Duration::from_secs(5)).expect("connect to the test Redis")
    }

    pub(crate) fn raw_get(&self, key: &str) -> Option<Vec<u8>> {
        redis::cmd("GET").arg(key).query(&mut self.conn()).expect("GET")
    }

    pub(crate) fn raw_set(&self, key: &str, value: &[u8]) {
        redis::cmd("SET").arg(key).arg(value).query::<()>(&mut self.conn()).expect("SET");
    }

    pub(crate) fn exists(&self, key: &str) -> bool {
        redis::cmd("EXISTS").arg(key).query::<u64>(&mut self.conn()).expect("EXISTS") == 1
    }

    pub(crate) fn keys(&self, pattern: &str) -> Vec<String> {
        let mut keys: Vec<String> = redis::cmd("KEYS").arg(pattern).query(&mut self.conn()).expect("KEYS");
        keys.sort();
        keys
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The deadline of the caches whose tests expect Redis to answer: generous, so that a
/// loaded machine does not look like an outage.
pub(crate) const PATIENT: Duration = Duration::from_secs(2);

/// A key prefix no other test shares.
pub(crate) fn prefix(test: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!("t{}-{test}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

fn id(name: &str, version: &str) -> ContractId {
    ContractId::new(name, version.parse().unwrap(), "cd".repeat(32))
}

pub(crate) fn entry(contract: &ContractId, text: &str) -> CachedResult {
    CachedResult { contract: contract.clone(), text: Arc::from(text) }
}

// ------------------------------------------------------------------ framing against Redis

#[test]
fn entries_round_trip_and_malformed_ones_are_rejected_and_deleted() {
    let redis = RedisServer::start();
    let cache = RedisCache::builder(redis.url()).prefix(prefix("frames")).timeout(PATIENT).build().unwrap();
    let contract = id("search", "1.0.0");
    let key = CacheKey::new("search", &contract, &json!({ "q": "login" }));
    let stored = entry(&contract, r#"{"hits":["T-1"]}"#);

    // Control: what was put comes back, under the documented key.
    cache.put(key.clone(), stored.clone());
    let redis_key = cache.redis_key(&key);
    assert!(redis_key.ends_with(&key.storage_key()), "{redis_key}");
    assert!(redis.exists(&redis_key));
    assert_eq!(cache.get(&key), Some(stored.clone()));
    let good = redis.raw_get(&redis_key).expect("the entry is stored");

    // Each damaged form of the stored bytes, and values another program might leave.
    let mut flipped_text = good.clone();
    let at = good.windows(4).position(|w| w == b"T-1\"").expect("the text is in the frame");
    flipped_text[at + 2] = b'2';
    let mut flipped_checksum = good.clone();
    *flipped_checksum.last_mut().unwrap() ^= 1;
    let copied = encode_entry(&cache.redis_key(&CacheKey::new("search", &contract, &json!({ "q": "other" }))), &stored);
    let damaged: Vec<(&str, Vec<u8>)> = vec![
        ("truncated by one byte", good[..good.len() - 1].to_vec()),
        ("truncated to half", good[..good.len() / 2].to_vec()),
        ("only the magic bytes", good[..8].to_vec()),
        ("one byte of the text changed", flipped_text),
        ("one bit of the checksum changed", flipped_checksum),
        ("a trailing byte", [good.as_slice(), b"x"].concat()),
        ("plain JSON from another program", br#"{"hits":["T-1"]}"#.to_vec()),
        ("a good frame written for another key", copied),
    ];
    for (what, bytes) in damaged {
        let before = cache.stats();
        redis.raw_set(&redis_key, &bytes);
        assert_eq!(cache.get(&key), None, "{what}: served");
        assert!(!redis.exists(&redis_key), "{what}: not deleted");
        let after = cache.stats();
        assert_eq!(after.rejected, before.rejected + 1, "{what}");
        assert_eq!(after.hits, before.hits, "{what}");
        // Control: a good entry under the same key is served again.
        cache.put(key.clone(), stored.clone());
        assert_eq!(cache.get(&key), Some(stored.clone()), "{what}: the control after it");
    }
    // An empty value reads like an absent key: a miss, never served.
    redis.raw_set(&redis_key, b"");
    assert_eq!(cache.get(&key), None, "an empty value: served");

    // A value of another Redis type under the key is foreign too, not an outage.
    redis::cmd("DEL").arg(&redis_key).query::<u64>(&mut redis.conn()).unwrap();
    redis::cmd("RPUSH").arg(&redis_key).arg("x").query::<u64>(&mut redis.conn()).unwrap();
    let before = cache.stats();
    assert_eq!(cache.get(&key), None, "a list: served");
    assert!(!redis.exists(&redis_key), "a list: not deleted");
    assert_eq!(cache.stats().rejected, before.rejected + 1);
    assert!(!cache.is_down());
    cache.put(key.clone(), stored.clone());
    assert_eq!(cache.get(&key), Some(stored), "the control after the list");
    let stats = cache.stats();
    assert_eq!((stats.failures, stats.outages, stats.skipped), (0, 0, 0), "{stats:?}");
}

#[test]
fn a_huge_foreign_value_is_rejected_and_deleted() {
    let redis = RedisServer::start();
    let cache = RedisCache::builder(redis.url())
        .prefix(prefix("huge"))
        .timeout(PATIENT)
        .max_entry_bytes(1_000)
        .build()
        .unwrap();
    let contract = id("search", "1.0.0");
    let key = CacheKey::new("search", &contract, &json!({}));
    let redis_key = cache.redis_key(&key);

    // Control: a text of exactly the largest size is stored and served.
    let largest = entry(&contract, &format!("\"{}\"", "a".repeat(998)));
    cache.put(key.clone(), largest.clone());
    assert_eq!(cache.get(&key), Some(largest));

    // A text one byte larger is served by the pipeline but not stored.
    let larger = entry(&contract, &format!("\"{}\"", "a".repeat(999)));
    cache.put(key.clone(), larger);
    assert!(!redis.exists(&redis_key), "an oversized result was stored, or the old one kept");
    assert_eq!(cache.stats().oversized, 1);

    // 8 MiB planted under the key: rejected and deleted.
    redis.raw_set(&redis_key, &vec![b'x'; 8 << 20]);
    assert_eq!(cache.get(&key), None);
    assert!(!redis.exists(&redis_key));
    assert_eq!(cache.stats().rejected, 1);
}

#[test]
fn decoding_names_what_is_wrong() {
    let contract = id("search", "1.0.0");
    let frame = encode_entry("p:k", &entry(&contract, "[1,2]"));
    assert_eq!(decode_entry(&frame, "p:k"), Ok(entry(&contract, "[1,2]")));
    assert_eq!(decode_entry(&frame[..frame.len() - 3], "p:k"), Err(FrameError::Truncated));
    assert_eq!(decode_entry(b"GIF89a", "p:k"), Err(FrameError::Foreign));
    assert_eq!(decode_entry(&frame, "p:j"), Err(FrameError::WrongKey));
    let mut changed = frame.clone();
    let at = frame.windows(5).position(|w| w == b"[1,2]").unwrap();
    changed[at + 1] = b'7';
    assert_eq!(decode_entry(&changed, "p:k"), Err(FrameError::Corrupted));
    // Every prefix of a good frame is rejected, none misread.
    for len in 0..frame.len() {
        assert!(decode_entry(&frame[..len], "p:k").is_err(), "prefix of {len} bytes accepted");
    }
}

#[test]
fn ttl_per_tool_is_set_on_the_redis_key() {
    let redis = RedisServer::start();
    let cache = RedisCache::builder(redis.url())
        .prefix(prefix("ttl"))
        .timeout(PATIENT)
        .ttl(Duration::from_secs(600))
        .tool_ttl("fleet_status", Duration::from_secs(5))
        .build()
        .unwrap();
    let contract = id("fleet_status", "1.0.0");
    let short = CacheKey::new("fleet_status", &contract, &json!({}));
    let long = CacheKey::new("search", &contract, &json!({}));
    cache.put(short.clone(), entry(&contract, "{}"));
    cache.put(long.clone(), entry(&contract, "{}"));
    let pttl = |key: &CacheKey| redis::cmd("PTTL").arg(cache.redis_key(key)).query::<i64>(&mut redis.conn()).unwrap();
    let (short_ttl, long_ttl) = (pttl(&short), pttl(&long));
    assert!(short_ttl > 0 && short_ttl <= 5_000, "{short_ttl}");
    assert!(long_ttl > 5_000 && long_ttl <= 600_000, "{long_ttl}");
}

#[test]
fn an_outage_is_skipped_counted_once_and_ends_when_redis_answers() {
    let mut redis = RedisServer::start();
    redis.stop();
    let cache = RedisCache::builder(redis.url())
        .prefix(prefix("outage"))
        .timeout(Duration::from_millis(200))
        .max_backoff(Duration::from_millis(200))
        .build()
        .unwrap();
    let contract = id("search", "1.0.0");
    let key = CacheKey::new("search", &contract, &json!({ "q": 1 }));
    for _ in 0..50 {
        assert_eq!(cache.get(&key), None);
        cache.put(key.clone(), entry(&contract, "{}"));
    }
    let down = cache.stats();
    assert!(cache.is_down());
    assert_eq!(down.outages, 1, "{down:?}");
    assert_eq!(down.hits + down.admissions, 0, "{down:?}");
    assert!(down.failures >= 1, "{down:?}");
    // Every operation either failed or was skipped without touching the network.
    assert_eq!(down.failures + down.skipped, 100, "{down:?}");

    redis.restart();
    let deadline = Instant::now() + Duration::from_secs(20);
    while cache.get(&key).is_none() {
        cache.put(key.clone(), entry(&contract, "{}"));
        assert!(Instant::now() < deadline, "no hit within 20 s of the restart: {:?}", cache.stats());
        thread::sleep(Duration::from_millis(50));
    }
    assert!(!cache.is_down());
    assert_eq!(cache.stats().outages, 1, "one outage, one count");
}

#[test]
fn a_redis_that_never_answers_costs_at_most_the_timeout() {
    // A listener that accepts connections but never replies: a slow Redis.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("redis://127.0.0.1:{}/", silent.local_addr().unwrap().port());
    let held = thread::spawn(move || {
        // The connection is held open, unanswered, until the test has its miss.
        let accepted = silent.accept();
        thread::sleep(Duration::from_secs(2));
        drop(accepted);
    });
    let cache = RedisCache::builder(url).timeout(Duration::from_millis(100)).build().unwrap();
    let contract = id("search", "1.0.0");
    let key = CacheKey::new("search", &contract, &json!({}));
    // The call returns (a miss) instead of hanging; the time is not asserted.
    assert_eq!(cache.get(&key), None);
    let stats = cache.stats();
    assert_eq!(stats.failures, 1, "{stats:?}");
    assert_eq!(stats.outages, 1, "{stats:?}");
    held.join().unwrap();
}

#[test]
fn a_refused_write_never_fails_the_call() {
    use contract_runtime::pipeline::{CallContext, Pipeline};
    use contract_runtime::wire::{CacheStatus, ToolError};
    use qe_server::contracts::TaskStatus;

    let redis = RedisServer::start();
    let cache = Arc::new(RedisCache::builder(redis.url()).prefix(prefix("refused")).timeout(PATIENT).build().unwrap());
    let pipeline = Pipeline::builder().cache(Arc::clone(&cache) as Arc<dyn ResultCache>).build();
    let task = || Ok::<TaskStatus, ToolError>(qe_server::samples::task_statuses().remove(0));
    let ctx = CallContext::new("task_status", json!({ "task_id": "T-1040" }));
    let expected = serde_json::to_value(task().unwrap()).unwrap();

    // Redis refuses every write (out of memory, nothing it may evict).
    let mut conn = redis.conn();
    redis::cmd("CONFIG").arg("SET").arg("maxmemory-policy").arg("noeviction").query::<()>(&mut conn).unwrap();
    redis::cmd("CONFIG").arg("SET").arg("maxmemory").arg("1").query::<()>(&mut conn).unwrap();
    let refused = pipeline.call_sync(&ctx, task);
    assert!(!refused.is_error(), "{}", refused.to_json());
    assert_eq!(refused.to_json()["structuredContent"], expected);
    assert_eq!(refused.cache_status(), CacheStatus::Miss);
    let stats = cache.stats();
    assert_eq!((stats.admissions, stats.failures, stats.outages), (0, 1, 1), "{stats:?}");

    // Control: with room again, the same call is admitted and then served from Redis.
    redis::cmd("CONFIG").arg("SET").arg("maxmemory").arg("0").query::<()>(&mut conn).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while pipeline.call_sync(&ctx, task).cache_status() != CacheStatus::Hit {
        assert!(Instant::now() < deadline, "no hit within 20 s: {:?}", cache.stats());
        thread::sleep(Duration::from_millis(50));
    }
    assert!(cache.stats().admissions >= 1);
}

// ------------------------------------------------------------------ replicas over stdio

/// A qe-server child speaking MCP over stdio (newline-delimited JSON-RPC); killed on drop.
struct Replica {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
    stderr: PathBuf,
}

impl Replica {
    fn start(bin: &Path, env: &[(&str, &str)], stderr: PathBuf) -> Self {
        let mut child = Command::new(bin)
            .envs(env.iter().copied())
            .env_remove("QE_SERVER_BROKEN")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).expect("a stderr file"))
            .spawn()
            .expect("spawn qe-server");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut replica = Self { child, stdin, lines, next_id: 1, stderr };
        let init = replica.request(
            "initialize",
            &json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "redis-cache-test", "version": "0" }
            }),
        );
        assert!(init.get("serverInfo").is_some(), "{init}");
        replica.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        replica
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").expect("write to the replica");
        self.stdin.flush().expect("flush");
    }

    fn request(&mut self, method: &str, params: &Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|_| panic!("no answer to `{method}` within 30 s"));
            let message: Value = serde_json::from_str(&line).unwrap_or_else(|err| panic!("{err}: {line}"));
            if message["id"] == json!(id) {
                assert!(message.get("error").is_none(), "{message}");
                return message["result"].clone();
            }
        }
    }

    /// Calls `tool`; returns the result, which must be a success.
    fn call(&mut self, tool: &str, arguments: &Value) -> Call {
        let result = self.request("tools/call", &json!({ "name": tool, "arguments": arguments }));
        assert_ne!(result["isError"], json!(true), "{tool} failed: {result}");
        Call {
            identity: result["_meta"][META_KEY]["id"].as_str().expect("the contract identity in _meta").to_owned(),
            cache: result["_meta"][CACHE_META_KEY].as_str().map(str::to_owned),
            structured: result["structuredContent"].clone(),
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug)]
struct Call {
    identity: String,
    cache: Option<String>,
    structured: Value,
}

impl Call {
    fn hit(&self) -> bool {
        self.cache.as_deref() == Some("hit")
    }
}

#[test]
fn rolling_deploy_two_contract_versions_share_one_redis() {
    let bin = bins::qe_server_redis();
    let mut redis = RedisServer::start();
    let url = redis.url();
    let prefix = prefix("rolling");
    let dir = std::env::temp_dir().join(format!("redis-cache-{prefix}"));
    std::fs::create_dir_all(&dir).unwrap();
    let tasks = ["T-1040", "T-1041", "T-1042", "T-1043"];

    // The control: what each task's status is, from a replica without any cache.
    let mut plain = Replica::start(bin, &[("QE_SERVER_CACHE", "none")], dir.join("plain.log"));
    let truth: Vec<Value> =
        tasks.iter().map(|t| plain.call("task_status", &json!({ "task_id": t })).structured).collect();
    let none = plain.call("task_status", &json!({ "task_id": tasks[0] }));
    assert_eq!(none.cache, None, "no cache, no status");
    drop(plain);

    let env = |next: &'static str| {
        vec![
            ("QE_SERVER_CACHE", url.clone()),
            ("QE_SERVER_CACHE_PREFIX", prefix.clone()),
            ("QE_SERVER_CONTRACT_NEXT", next.to_owned()),
            // Generous, so that a loaded machine does not look like an outage; a stopped
            // Redis refuses at once anyway.
            ("QE_SERVER_CACHE_TIMEOUT_MS", "2000".to_owned()),
            // The cache's outage and recovery events on stderr, which the test reads.
            ("QE_SERVER_LOG", "info".to_owned()),
        ]
    };
    let start = |env: Vec<(&str, String)>, log: &str| {
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        Replica::start(bin, &env, dir.join(log))
    };
    let mut old = start(env("0"), "old.log");
    let mut new = start(env("1"), "new.log");

    // Each replica's identity for `task_status`, as it states it.
    let old_id = old.call("task_status", &json!({ "task_id": tasks[0] }));
    let new_id = new.call("task_status", &json!({ "task_id": tasks[0] }));
    // The identities the two types state, read from the types themselves.
    let (current, next) = (
        <qe_server::contracts::TaskStatus as contract_runtime::ToolOutput>::contract(),
        <qe_server::replica::TaskStatusNext as contract_runtime::ToolOutput>::contract(),
    );
    assert_ne!(current.version(), next.version(), "a rolling deploy of two versions");
    assert_eq!(old_id.identity, current.id().to_string());
    assert_eq!(new_id.identity, next.id().to_string());
    // The old replica's entry existed when the new one asked: a hit here would have been
    // a cross-version serve.
    assert_eq!(old_id.cache.as_deref(), Some("miss"));
    assert_eq!(new_id.cache.as_deref(), Some("miss"));

    // Interleaved calls: every hit carries the serving replica's own identity and the
    // control's payload; after the first round everything is a hit.
    let (mut hits, mut cross) = (0, 0);
    for round in 0..4 {
        for (i, task) in tasks.iter().enumerate() {
            for (replica, own) in [(&mut old, &old_id.identity), (&mut new, &new_id.identity)] {
                let call = replica.call("task_status", &json!({ "task_id": task }));
                assert_eq!(call.structured, truth[i], "{task}");
                if call.identity != *own {
                    cross += 1;
                }
                if call.hit() {
                    hits += 1;
                } else {
                    assert!(round == 0 && i > 0, "round {round}, {task}: expected a hit, got {call:?}");
                }
            }
        }
    }
    assert_eq!(cross, 0, "cross-version serves");
    assert_eq!(hits, 2 * tasks.len() * 4 - 2 * (tasks.len() - 1));
    // Both versions' entries sit side by side, one per task each.
    let keys = redis.keys(&format!("{prefix}:task_status/*"));
    assert_eq!(keys.len(), 2 * tasks.len(), "{keys:?}");
    let current_key = format!("/task_status@{}+", current.version());
    assert_eq!(keys.iter().filter(|k| k.contains(&current_key)).count(), tasks.len());
    // A contract both versions share (fleet_status) is shared: the new replica hits what
    // the old one computed.
    assert_eq!(old.call("fleet_status", &json!({})).cache.as_deref(), Some("miss"));
    assert!(new.call("fleet_status", &json!({})).hit(), "a shared contract is shared across replicas");

    // Planted entries under the old replica's key for T-1042.
    let old_contract: ContractId = old_id.identity.parse().unwrap();
    let new_contract: ContractId = new_id.identity.parse().unwrap();
    let args = json!({ "task_id": tasks[2] });
    let key = format!("{prefix}:{}", CacheKey::new("task_status", &old_contract, &args).storage_key());
    let good = redis.raw_get(&key).expect("the old replica's entry is where the key says");
    let mut tampered_truth = truth[2].clone();
    tampered_truth["attempts"] = json!(99);
    let planted: Vec<(&str, Vec<u8>)> = vec![
        ("corrupted bytes", {
            let mut bytes = good.clone();
            let at = bytes.windows(8).position(|w| w == b"attempts").unwrap();
            bytes[at + 11] ^= 0x01;
            bytes
        }),
        ("truncated", good[..good.len() - 10].to_vec()),
        ("a well-formed entry of the other version", {
            let mut next = truth[2].clone();
            next["eta_seconds"] = json!(30);
            encode_entry(&key, &entry(&new_contract, &next.to_string()))
        }),
        ("a well-formed entry that fails the contract", encode_entry(&key, &entry(&old_contract, r#"{"task_id":7}"#))),
    ];
    for (what, bytes) in planted {
        redis.raw_set(&key, &bytes);
        let served = old.call("task_status", &args);
        assert!(!served.hit(), "{what}: served from the cache");
        assert_eq!(served.structured, truth[2], "{what}");
        assert_eq!(served.identity, old_id.identity);
        // The bad entry is gone and a good one took its place: the next call hits.
        let again = old.call("task_status", &args);
        assert!(again.hit(), "{what}: the re-admitted entry is not served");
        assert_eq!(again.structured, truth[2]);
    }
    // Control for the plant itself: a good entry planted the same way is served.
    redis.raw_set(&key, &encode_entry(&key, &entry(&old_contract, &tampered_truth.to_string())));
    let planted_good = old.call("task_status", &args);
    assert!(planted_good.hit() && planted_good.structured == tampered_truth, "{planted_good:?}");
    redis.raw_set(&key, &good);

    // Redis stops mid-run: every call still succeeds, uncached, with the right payload.
    redis.stop();
    for round in 0..3 {
        for (i, task) in tasks.iter().enumerate() {
            for replica in [&mut old, &mut new] {
                let call = replica.call("task_status", &json!({ "task_id": task }));
                assert_eq!(call.structured, truth[i], "round {round}, {task}, Redis down");
                assert!(!call.hit());
            }
        }
    }
    // Redis is back (empty): within a few back-offs, both replicas hit again.
    redis.restart();
    for (replica, own) in [(&mut old, &old_id.identity), (&mut new, &new_id.identity)] {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let call = replica.call("task_status", &json!({ "task_id": tasks[1] }));
            assert_eq!(call.structured, truth[1]);
            assert_eq!(call.identity, *own);
            if call.hit() {
                break;
            }
            assert!(Instant::now() < deadline, "no hit within 20 s of the restart");
            thread::sleep(Duration::from_millis(50));
        }
    }
    // One outage, reported once by each replica however many calls it served.
    for replica in [&old, &new] {
        let log = replica.log();
        assert_eq!(log.matches("result cache unavailable").count(), 1, "{log}");
        assert_eq!(log.matches("result cache answers again").count(), 1, "{log}");
    }
    drop((old, new));
    let _ = std::fs::remove_dir_all(&dir);
}
