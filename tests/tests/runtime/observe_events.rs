//! What an operator can watch: the runtime's `tracing` events (target
//! `contract_runtime`), their levels and stable fields — tool, contract identity, code,
//! pointer, keyword, never a value — and the counters of `Pipeline::stats` and
//! `ContractedServer::stats`, checked against a tally the test keeps itself. A sensitive
//! result field and an argument carry a marker string that no event or span may hold;
//! the control is that the events exist and carry the fields.

use std::sync::Arc;
use std::time::Duration;

use contract_runtime::cache::{CacheKey, InMemoryCache, RedisCache, ResultCache};
use contract_runtime::limits::Limits;
use contract_runtime::pipeline::{CallContext, Pipeline};
use contract_runtime::wire::{ErrorCode, ToolError};
use contract_runtime::ToolOutput;
use serde_json::json;
use tracing::Level;

use crate::support::capture;
use crate::support::rmcp_paths;
use crate::support::rollout_probe;

use capture::{Capture, Captured};
use rollout_probe::{contracted, probe, runtime, Ratio, Wire};

/// In a sensitive result field and in arguments: never in any event.
const MARKER: &str = "MARKER-7f3a9c-SECRET";

fn ratio(value: f64) -> Ratio {
    Ratio { ratio: value, token: format!("{MARKER}-token") }
}

fn ctx() -> CallContext {
    CallContext::new("ratio", json!({ "note": MARKER }))
}

/// Runs `f` with `capture` as the thread's subscriber.
fn captured<R>(f: impl FnOnce() -> R) -> (R, Capture) {
    let capture = Capture::default();
    let result = tracing::subscriber::with_default(capture.clone(), f);
    (result, capture)
}

fn assert_no_marker(seen: &[Captured]) {
    for item in seen {
        let text = item.all_text();
        assert!(!text.contains(MARKER) && !text.contains("7f3a9c"), "a value leaked into an event: {text}");
    }
}

fn violation_events(seen: &[Captured]) -> Vec<&Captured> {
    seen.iter().filter(|e| e.message() == "output contract violation").collect()
}

#[test]
fn a_violation_is_a_warn_event_with_tool_contract_code_pointer_and_keyword_and_no_value() {
    let contract = Ratio::contract();
    for report in [false, true] {
        let builder = Pipeline::builder();
        let pipeline = if report { builder.report_only().build() } else { builder.build() };
        // Both fields break the contract; the token, sensitive, holds the marker.
        let broken = Ratio { ratio: 1.5, token: format!("{MARKER}-{}", "x".repeat(80)) };
        let (result, capture) = captured(|| pipeline.call_sync(&ctx(), || Ok::<_, ToolError>(broken)));
        assert_eq!(result.is_error(), !report, "{}", result.text());
        let ours = capture.ours();
        let events = violation_events(&ours);
        // Control: the events exist, one per violation, with every field.
        let mut found: Vec<(&str, &str)> =
            events.iter().map(|e| (e.field("pointer").unwrap(), e.field("keyword").unwrap())).collect();
        found.sort_unstable();
        assert_eq!(found, [("/ratio", "maximum"), ("/token", "maxLength")], "report={report}: {ours:?}");
        for event in &events {
            assert_eq!(event.level, Level::WARN);
            assert_eq!(event.field("tool"), Some("ratio"));
            assert_eq!(event.field("contract"), Some(contract.id().to_string().as_str()));
            assert_eq!(event.field("code"), Some("output_contract_violation"));
            assert_eq!(event.field("enforced"), Some(if report { "false" } else { "true" }));
        }
        assert_no_marker(&capture.all());

        // Clean control: a valid result emits nothing at all.
        let (clean, capture) = captured(|| pipeline.call_sync(&ctx(), || Ok::<_, ToolError>(ratio(0.5))));
        assert!(!clean.is_error(), "{}", clean.text());
        assert!(capture.ours().is_empty(), "{:?}", capture.ours());
    }
}

type Handler = Box<dyn Fn() -> Result<Ratio, ToolError>>;

#[test]
fn every_refusal_has_its_event_at_its_level() {
    let pipeline = Pipeline::builder().limits(Limits::default().with_max_bytes(200)).build();
    let cases: Vec<(&str, Handler, Level, &str)> = vec![
        ("serialization_error", Box::new(|| Ok(ratio(f64::NAN))), Level::WARN, "result could not be served"),
        (
            "output_limit_exceeded",
            Box::new(|| Ok(Ratio { ratio: 0.5, token: MARKER.repeat(20) })),
            Level::WARN,
            "output limit exceeded; result refused",
        ),
        ("unavailable", Box::new(|| Err(ToolError::unavailable(MARKER))), Level::INFO, "tool failed"),
        ("tool_execution_error", Box::new(|| Err(ToolError::execution(MARKER))), Level::INFO, "tool failed"),
    ];
    for (code, handler, level, message) in cases {
        let (result, capture) = captured(|| pipeline.call_sync(&ctx(), handler));
        assert_eq!(result.error_code().map(ErrorCode::as_str), Some(code), "{}", result.text());
        let ours = capture.ours();
        assert_eq!(ours.len(), 1, "{code}: {ours:?}");
        let event = &ours[0];
        assert_eq!((event.level, event.message()), (level, message), "{code}");
        assert_eq!(event.field("code"), Some(code));
        assert_eq!(event.field("tool"), Some("ratio"));
        assert_eq!(event.field("contract"), Some(Ratio::contract().id().to_string().as_str()));
        assert_no_marker(&capture.all());
    }
}

#[test]
fn a_panicking_handler_is_an_error_event_without_its_message() {
    let pipeline = Pipeline::builder().build();
    let (result, capture) =
        captured(|| pipeline.call_sync(&ctx(), || -> Result<Ratio, ToolError> { panic!("boom {MARKER}") }));
    assert_eq!(result.error_code(), Some(ErrorCode::ToolExecutionError), "{}", result.text());
    let ours = capture.ours();
    let kinds: Vec<(Level, &str)> = ours.iter().map(|e| (e.level, e.message())).collect();
    assert_eq!(kinds, [(Level::ERROR, "tool panicked"), (Level::INFO, "tool failed")], "{ours:?}");
    assert_eq!(ours[0].field("tool"), Some("ratio"));
    assert_eq!(ours[0].field("contract"), Some(Ratio::contract().id().to_string().as_str()));
    assert_no_marker(&capture.all());
    // Control: the same handler returning normally emits nothing.
    let (clean, capture) = captured(|| pipeline.call_sync(&ctx(), || Ok::<_, ToolError>(ratio(0.5))));
    assert!(!clean.is_error());
    assert!(capture.ours().is_empty(), "{:?}", capture.ours());
}

#[test]
fn over_rmcp_arguments_refused_are_info_and_no_argument_or_result_value_reaches_any_event() {
    let ((), capture) = captured(|| {
        runtime().block_on(async {
            let server = contracted(probe(), None);
            let mut wire = Wire::legacy(server, false).await;
            // The marker as an argument of the wrong type: refused by the inputSchema.
            let refused = wire.call("ratio", json!({ "ratio": MARKER, "token": MARKER })).await;
            assert_eq!(rmcp_paths::error_body(&refused)["code"], "invalid_arguments", "{refused}");
            // The marker in a sensitive field of a result that breaks its contract.
            let broken = wire.call("ratio", json!({ "ratio": 2.0, "token": MARKER })).await;
            assert_eq!(rmcp_paths::error_body(&broken)["code"], "output_contract_violation", "{broken}");
            // A typed handler failure.
            let down = wire.call("ratio_down", json!({})).await;
            assert_eq!(rmcp_paths::error_body(&down)["code"], "unavailable", "{down}");
        });
    });
    let ours = capture.ours();
    let kinds: Vec<(Level, &str, Option<&str>)> =
        ours.iter().map(|e| (e.level, e.message(), e.field("code"))).collect();
    assert_eq!(
        kinds,
        [
            (Level::INFO, "arguments refused", Some("invalid_arguments")),
            (Level::WARN, "output contract violation", Some("output_contract_violation")),
            (Level::INFO, "tool failed", Some("unavailable")),
        ],
        "{ours:?}"
    );
    assert_eq!(ours[1].field("pointer"), Some("/ratio"));
    assert_eq!(ours[2].field("tool"), Some("ratio_down"));
    assert_no_marker(&ours);
    // Nor anything else emitted during the session at `info` or above, rmcp's events and
    // spans included. (rmcp's `debug` and `trace` levels write whole requests and results,
    // arguments and sensitive fields and all: levels an operator must not ship for it.)
    let all = capture.all();
    let shippable: Vec<Captured> = all.iter().filter(|e| e.level <= Level::INFO).cloned().collect();
    assert!(shippable.len() >= ours.len(), "{all:?}");
    assert_no_marker(&shippable);
    // Control: the check does see values where they are: rmcp's debug trace of the request.
    assert!(all.iter().any(|e| e.level == Level::DEBUG && e.all_text().contains(MARKER)), "{all:?}");
}

#[test]
fn pipeline_stats_count_what_the_test_counted() {
    let pipeline = Pipeline::builder().cache(Arc::new(InMemoryCache::new())).report_only_for("ratio_beta").build();
    let call = |tool: &str, n: u32| CallContext::new(tool, json!({ "n": n }));
    // The test's own tally, kept beside the calls.
    let (mut calls, mut hits, mut misses, mut violations, mut serialization, mut unavailable, mut reported) =
        (0, 0, 0, 0, 0, 0, 0);
    for n in 0..3 {
        // Clean, twice with the same arguments: a miss, then a hit.
        assert!(!pipeline.call_sync(&call("ratio", n), || Ok::<_, ToolError>(ratio(0.5))).is_error());
        assert!(!pipeline.call_sync(&call("ratio", n), || Ok::<_, ToolError>(ratio(0.5))).is_error());
        calls += 2;
        misses += 1;
        hits += 1;
        // Broken, enforced: a miss, refused.
        assert!(pipeline.call_sync(&call("ratio", 100 + n), || Ok::<_, ToolError>(ratio(9.0))).is_error());
        calls += 1;
        misses += 1;
        violations += 1;
        // Broken, report-only: a miss, sent.
        assert!(!pipeline.call_sync(&call("ratio_beta", n), || Ok::<_, ToolError>(ratio(9.0))).is_error());
        calls += 1;
        misses += 1;
        reported += 1;
    }
    assert!(pipeline.call_sync(&call("ratio", 50), || Ok::<_, ToolError>(ratio(f64::NAN))).is_error());
    assert!(pipeline.call_sync(&call("ratio", 51), || Err::<Ratio, _>(ToolError::unavailable("x"))).is_error());
    calls += 2;
    misses += 2;
    serialization += 1;
    unavailable += 1;

    let stats = pipeline.stats();
    assert_eq!(stats.calls, calls, "{stats:?}");
    assert_eq!((stats.cache_hits, stats.cache_misses), (hits, misses), "{stats:?}");
    assert_eq!(stats.report_only, reported, "{stats:?}");
    assert_eq!(stats.errors(ErrorCode::OutputContractViolation), violations);
    assert_eq!(stats.errors(ErrorCode::SerializationError), serialization);
    assert_eq!(stats.errors(ErrorCode::Unavailable), unavailable);
    assert_eq!(stats.total_errors(), violations + serialization + unavailable);
    let by_code: Vec<(ErrorCode, u64)> = stats.errors_by_code().collect();
    assert_eq!(
        by_code,
        [
            (ErrorCode::OutputContractViolation, violations),
            (ErrorCode::SerializationError, serialization),
            (ErrorCode::Unavailable, unavailable),
        ]
    );
    // Clones share the counters; a new pipeline starts at zero (the control).
    assert_eq!(pipeline.clone().stats(), stats);
    assert_eq!(Pipeline::builder().build().stats().calls, 0);
}

#[test]
fn server_stats_count_complete_task_and_refused_calls_once_each() {
    runtime().block_on(async {
        let server = contracted(probe(), None).report_only_for("ratio").expect("contracted");
        let handle = server.clone();
        let mut wire = Wire::modern(server, true);
        // A complete report-only finding, a clean call, refused arguments, a handler failure.
        wire.call("ratio", json!({ "ratio": 3.0, "token": "t" })).await;
        wire.call("ratio", json!({ "ratio": 0.5, "token": "t" })).await;
        wire.call("ratio", json!({ "ratio": "high", "token": "t" })).await;
        wire.call("ratio_down", json!({})).await;
        // A task whose result is refused, polled three times: counted once.
        let created = wire.call(rollout_probe::TASK_TOOL, json!({ "ratio": 3.0, "token": "t" })).await;
        wire.task_result(&created).await;
        for _ in 0..2 {
            wire.request("tasks/get", json!({ "taskId": created["taskId"] })).await;
        }
        let stats = handle.stats();
        assert_eq!(stats.calls, 5, "{stats:?}");
        assert_eq!(stats.report_only, 1, "{stats:?}");
        assert_eq!(stats.errors(ErrorCode::InvalidArguments), 1, "{stats:?}");
        assert_eq!(stats.errors(ErrorCode::Unavailable), 1, "{stats:?}");
        assert_eq!(stats.errors(ErrorCode::OutputContractViolation), 1, "{stats:?}");
        assert_eq!((stats.cache_hits, stats.cache_misses), (0, 0), "no cache, nothing asked: {stats:?}");
    });
}

#[test]
fn a_redis_outage_is_one_warn_event_naming_the_backend_and_address_not_a_line_on_stderr() {
    // Nothing listens on port 1: every operation fails to connect.
    let cache = RedisCache::builder("redis://127.0.0.1:1/").timeout(Duration::from_millis(200)).build().expect("a URL");
    let key = CacheKey::new("ratio", Ratio::contract().id(), &json!({ "token": MARKER }));
    let (found, capture) = captured(|| (0..3).filter_map(|_| cache.get(&key)).count());
    assert_eq!(found, 0);
    let ours = capture.ours();
    // Control: the outage is reported, once, while retries back off.
    assert_eq!(ours.len(), 1, "{ours:?}");
    let event = &ours[0];
    assert_eq!((event.level, event.message()), (Level::WARN, "result cache unavailable; calls are served uncached"));
    assert_eq!(event.field("backend"), Some("redis"));
    assert!(event.field("addr").is_some_and(|addr| addr.contains("127.0.0.1:1")), "{event:?}");
    assert!(event.field("error").is_some_and(|e| !e.is_empty()), "{event:?}");
    assert!(cache.is_down());
    assert_no_marker(&capture.all());
}
