//! Prints the latency of one validated call with no cache, with the in-memory cache and
//! with the Redis cache over loopback, on a miss and on a hit, side by side in one run:
//!
//! ```text
//! cargo run --release -p contract-runtime --features redis --example cache_latency
//! ```
//!
//! It starts its own `redis-server` (Debian package `redis-server`) on a free loopback
//! port, without persistence, and stops it at the end; set `REDIS_URL` to use another.
//! A miss runs the handler, validates and admits the result (for Redis: a `GETRANGE` and
//! a `SET`); a hit is a lookup, the identity check and parsing the text (for Redis also a
//! `GETRANGE` and revalidation, its default). Each figure is the median of several rounds of a
//! batch of calls; the numbers are for reading, not for asserting.

use std::hint::black_box;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use contract_runtime::cache::{InMemoryCache, RedisCache, ResultCache};
use contract_runtime::pipeline::{CallContext, Pipeline};
use contract_runtime::wire::{CacheStatus, ToolError};
use serde_json::json;

#[path = "../benches/support/workload.rs"]
mod workload;

fn median_per_call(mut f: impl FnMut(), batch: u32, rounds: usize) -> Duration {
    f(); // warm up
    let mut samples: Vec<Duration> = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..batch {
                f();
            }
            start.elapsed() / batch
        })
        .collect();
    samples.sort();
    samples[rounds / 2]
}

/// A `redis-server` child, stopped on drop.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn redis() -> (String, Option<Server>) {
    if let Ok(url) = std::env::var("REDIS_URL") {
        return (url, None);
    }
    let port = TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("an address").port();
    let child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .stdout(Stdio::null())
        .spawn()
        .expect("redis-server starts (apt-get install -y redis-server)");
    let url = format!("redis://127.0.0.1:{port}/");
    let client = redis::Client::open(url.as_str()).expect("a Redis URL");
    let deadline = Instant::now() + Duration::from_secs(20);
    while client.get_connection_with_timeout(Duration::from_millis(200)).is_err() {
        assert!(Instant::now() < deadline, "redis-server did not answer within 20 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    (url, Some(Server(child)))
}

fn micros(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

fn main() {
    let (url, _server) = redis();
    let none = Pipeline::builder().build();
    let memory: Arc<dyn ResultCache> = Arc::new(InMemoryCache::new());
    let redis: Arc<dyn ResultCache> = Arc::new(
        RedisCache::builder(url.as_str())
            .prefix(format!("cache-latency-{}", std::process::id()))
            .ttl(Duration::from_secs(30))
            .build()
            .expect("a Redis URL"),
    );
    // The same store without revalidation of hits, for what revalidation costs.
    let trusting: Arc<dyn ResultCache> = Arc::new(
        RedisCache::builder(url.as_str())
            .prefix(format!("cache-latency-{}-trusting", std::process::id()))
            .ttl(Duration::from_secs(30))
            .revalidation(false)
            .build()
            .expect("a Redis URL"),
    );
    let in_memory = Pipeline::builder().cache(Arc::clone(&memory)).build();
    let in_redis = Pipeline::builder().cache(Arc::clone(&redis)).build();
    let in_redis_trusting = Pipeline::builder().cache(trusting).build();

    println!(
        "{:>6} {:>10} {:>12} {:>12} {:>12} {:>12} {:>12} {:>16}",
        "items", "bytes", "no cache", "memory miss", "memory hit", "redis miss", "redis hit", "hit, no reval."
    );
    for n in [1usize, 100, 1_000] {
        let page = workload::page(n);
        let bytes = serde_json::to_vec(&page).expect("serializes").len();
        let batch = u32::try_from((4_000 / n.max(1)).clamp(20, 1_000)).unwrap_or(20);
        let rounds = 11;
        let handler = || Ok::<_, ToolError>(page.clone());
        let hit_ctx = CallContext::new("ticket_page", json!({ "n": n }));
        // A miss needs arguments not seen before: a counter makes each call's key new.
        let mut seq = 0u64;
        let mut fresh = || {
            seq += 1;
            CallContext::new("ticket_page", json!({ "n": n, "seq": seq }))
        };
        let check = |result: &contract_runtime::ToolCallResult, want: CacheStatus| {
            assert!(!result.is_error(), "{}", result.to_json());
            assert_eq!(result.cache_status(), want);
        };
        // Prime the hit keys, and prove each path does what its column says.
        check(&in_memory.call_sync(&hit_ctx, handler), CacheStatus::Miss);
        check(&in_memory.call_sync(&hit_ctx, handler), CacheStatus::Hit);
        check(&in_redis.call_sync(&hit_ctx, handler), CacheStatus::Miss);
        check(&in_redis.call_sync(&hit_ctx, handler), CacheStatus::Hit);
        check(&in_redis_trusting.call_sync(&hit_ctx, handler), CacheStatus::Miss);
        check(&in_redis_trusting.call_sync(&hit_ctx, handler), CacheStatus::Hit);

        let plain = median_per_call(|| drop(black_box(none.call_sync(&hit_ctx, handler))), batch, rounds);
        let memory_miss = median_per_call(|| drop(black_box(in_memory.call_sync(&fresh(), handler))), batch, rounds);
        let memory_hit = median_per_call(|| drop(black_box(in_memory.call_sync(&hit_ctx, handler))), batch, rounds);
        let redis_miss = median_per_call(|| drop(black_box(in_redis.call_sync(&fresh(), handler))), batch, rounds);
        let redis_hit = median_per_call(|| drop(black_box(in_redis.call_sync(&hit_ctx, handler))), batch, rounds);
        let trusting_hit =
            median_per_call(|| drop(black_box(in_redis_trusting.call_sync(&hit_ctx, handler))), batch, rounds);
        println!(
            "{n:>6} {bytes:>10} {:>12} {:>12} {:>12} {:>12} {:>12} {:>16}",
            micros(plain),
            micros(memory_miss),
            micros(memory_hit),
            micros(redis_miss),
            micros(redis_hit),
            micros(trusting_hit)
        );
    }
    println!("redis: {redis:?}");
}
