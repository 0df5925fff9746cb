//! The Redis result cache under load while its `redis-server` is killed and started again
//! on the same port: threads keep calling `task_status` through one pipeline the whole
//! time. Every result is checked against the handler's own value (the control, computed
//! without any cache) and the contract identity the type states: no call fails, none is
//! served a hit while Redis is down, the cache's counters count the misses and the failed
//! or skipped operations of the outage (one outage), and hits resume once Redis is back.
//! Entries planted in the restarted Redis, one under another version's identity and one
//! that breaks the contract, are never served while the load runs.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use contract_runtime::cache::{encode_entry, CacheKey, RedisCache, ResultCache};
use contract_runtime::pipeline::{CallContext, Pipeline};
use contract_runtime::wire::{CacheStatus, ToolError, META_KEY};
use contract_runtime::ToolOutput;
use qe_server::contracts::TaskStatus;
use serde_json::{json, Value};

use crate::redis_cache::{entry, prefix, RedisServer, PATIENT};

/// Where the test is, as the load threads read it before and after each call.
const UP: u8 = 0;
const DOWN: u8 = 1;
const RESTARTING: u8 = 2;
const BACK: u8 = 3;

/// The tasks the load calls; the last two are kept for the planted entries.
const LOADED: usize = 3;

#[derive(Default)]
struct Tally {
    /// Calls that began and ended while Redis was down, and the hits among them.
    down_calls: AtomicU64,
    down_hits: AtomicU64,
    /// Hits of calls that began and ended once Redis was back.
    back_hits: AtomicU64,
    /// Every result that was not the handler's value under the type's identity.
    wrong: Mutex<Vec<String>>,
}

fn call(pipeline: &Pipeline, task: &TaskStatus) -> (Value, CacheStatus) {
    let ctx = CallContext::new("task_status", json!({ "task_id": task.task_id }));
    let result = pipeline.call_sync(&ctx, || Ok::<TaskStatus, ToolError>(task.clone()));
    (result.to_json(), result.cache_status())
}

/// Whether `result` is `task`'s value, served under the contract's own identity.
fn faithful(result: &Value, task: &TaskStatus) -> bool {
    result.get("isError") != Some(&json!(true))
        && result["structuredContent"] == serde_json::to_value(task).unwrap()
        && result["_meta"][META_KEY]["id"] == TaskStatus::contract().id().to_string()
}

#[test]
fn redis_killed_and_restarted_under_load_never_serves_a_bad_hit_and_resumes() {
    let mut redis = RedisServer::start();
    let prefix = prefix("under-load");
    let cache = Arc::new(
        RedisCache::builder(redis.url())
            .prefix(prefix.clone())
            .timeout(PATIENT)
            .max_backoff(Duration::from_millis(300))
            .build()
            .unwrap(),
    );
    let pipeline = Arc::new(Pipeline::builder().cache(Arc::clone(&cache) as Arc<dyn ResultCache>).build());
    let tasks = Arc::new(qe_server::samples::task_statuses());
    let (phase, stop, tally) =
        (Arc::new(AtomicU8::new(UP)), Arc::new(AtomicBool::new(false)), Arc::new(Tally::default()));

    let load: Vec<_> = (0..4)
        .map(|worker| {
            let (pipeline, tasks, phase, stop, tally) =
                (Arc::clone(&pipeline), Arc::clone(&tasks), Arc::clone(&phase), Arc::clone(&stop), Arc::clone(&tally));
            thread::spawn(move || {
                let mut n = worker;
                while !stop.load(Ordering::Acquire) {
                    let task = &tasks[n % LOADED];
                    n += 1;
                    let began = phase.load(Ordering::Acquire);
                    let (result, status) = call(&pipeline, task);
                    let ended = phase.load(Ordering::Acquire);
                    if !faithful(&result, task) {
                        tally.wrong.lock().unwrap().push(result.to_string());
                    }
                    let hit = status == CacheStatus::Hit;
                    match (began, ended) {
                        (DOWN, DOWN) => {
                            tally.down_calls.fetch_add(1, Ordering::AcqRel);
                            tally.down_hits.fetch_add(u64::from(hit), Ordering::AcqRel);
                        }
                        (BACK, BACK) => {
                            tally.back_hits.fetch_add(u64::from(hit), Ordering::AcqRel);
                        }
                        _ => {}
                    }
                    thread::sleep(Duration::from_millis(2));
                }
            })
        })
        .collect();
    let wait_for = |why: &str, what: &dyn Fn() -> bool| {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !what() {
            assert!(Instant::now() < deadline, "{why}: {:?}", cache.stats());
            thread::sleep(Duration::from_millis(20));
        }
    };

    // Warm: the load is served from Redis.
    wait_for("hits before the outage", &|| cache.stats().hits >= 20);

    // Killed mid-load (its port refuses connections when `stop` returns).
    redis.stop();
    let before = cache.stats();
    phase.store(DOWN, Ordering::Release);
    wait_for("calls while Redis is down", &|| tally.down_calls.load(Ordering::Acquire) >= 50);
    phase.store(RESTARTING, Ordering::Release);
    let down = cache.stats();
    let down_calls = tally.down_calls.load(Ordering::Acquire);
    assert_eq!(tally.down_hits.load(Ordering::Acquire), 0, "a hit while Redis was down");
    assert_eq!(down.hits, before.hits, "no hit after the kill: {before:?} {down:?}");
    assert!(down.misses - before.misses >= down_calls, "every call while down is a miss: {before:?} {down:?}");
    assert!(
        (down.failures + down.skipped) - (before.failures + before.skipped) >= down_calls,
        "every lookup while down failed or was skipped: {before:?} {down:?}"
    );
    assert!(cache.is_down());

    // Started again on the same port (empty): hits resume under the same load.
    redis.restart();
    phase.store(BACK, Ordering::Release);
    wait_for("hits after the restart", &|| tally.back_hits.load(Ordering::Acquire) >= 10);
    assert!(!cache.is_down());

    // Planted while the load runs: another version's entry and one that breaks the
    // contract, each under the key of a task only this thread calls.
    let current = TaskStatus::contract().id().clone();
    let other = <qe_server::replica::TaskStatusNext as ToolOutput>::contract().id().clone();
    for (task, contract, text) in [
        (&tasks[LOADED], &other, {
            let mut value = serde_json::to_value(&tasks[LOADED]).unwrap();
            value["attempts"] = json!(99);
            value.to_string()
        }),
        (&tasks[LOADED + 1], &current, r#"{"task_id":7}"#.to_owned()),
    ] {
        let key = format!(
            "{prefix}:{}",
            CacheKey::new("task_status", &current, &json!({ "task_id": task.task_id })).storage_key()
        );
        redis.raw_set(&key, &encode_entry(&key, &entry(contract, &text)));
        let (served, status) = call(&pipeline, task);
        assert!(faithful(&served, task), "a planted entry was served: {served}");
        assert_ne!(status, CacheStatus::Hit);
        // Control: the entry computed in its place is served.
        let (again, status) = call(&pipeline, task);
        assert!(faithful(&again, task) && status == CacheStatus::Hit, "{again} {status:?}");
    }

    stop.store(true, Ordering::Release);
    for worker in load {
        worker.join().unwrap();
    }
    let wrong = tally.wrong.lock().unwrap();
    assert!(wrong.is_empty(), "{} results not the handler's value under its identity: {wrong:#?}", wrong.len());
    let end = cache.stats();
    assert_eq!(end.outages, 1, "one outage, counted once: {end:?}");
    assert!(end.evictions + end.rejected >= 2, "both planted entries put away: {end:?}");
}
