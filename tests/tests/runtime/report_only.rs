//! Report-only rollout in the pipeline: the same broken result refused when enforced and
//! sent unchanged, marked `"enforced": false` and counted, when report-only — server-wide
//! or for one tool — on the fast path, the `Value` path and after middleware; never
//! cached; and nothing else waived (serialization failures, limits, middleware errors).
//! Every report-only case has an enforced twin and a clean control. The rmcp adapter's
//! paths (complete, task, cache hit) are `report_only_rmcp.rs`.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use contract_runtime::cache::InMemoryCache;
use contract_runtime::limits::Limits;
use contract_runtime::observe::Enforcement;
use contract_runtime::pipeline::{middleware_fn, CallContext, Pipeline, PipelineBuilder};
use contract_runtime::wire::{
    CacheStatus, ErrorCode, ProtocolVersion, ToolCallResult, ToolError, ENFORCED_FIELD, META_KEY,
};
use contract_runtime::{Completeness, ToolOutput, Truncation};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};

/// A ratio that must not pass 1.
#[derive(Clone, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Ratio {
    #[schemars(range(max = 1.0))]
    ratio: f64,
    #[tool_output(sensitive)]
    token: String,
}

/// Rows counted by their completeness block.
#[derive(Clone, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Rows {
    rows: Vec<u32>,
    #[tool_output(counts = "rows")]
    completeness: Completeness,
}

/// A non-object root: wrapped as `{"result": …}` for peers before 2026-07-28.
#[derive(Clone, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Level(#[schemars(range(max = 10))] u32);

fn ratio(value: f64) -> Ratio {
    Ratio { ratio: value, token: "tok-1".to_owned() }
}

fn ctx(tool: &str) -> CallContext {
    CallContext::new(tool, json!({ "n": 1 }))
}

/// The `_meta` member under our key that says a result was not enforced.
fn enforced_field(result: &ToolCallResult) -> Option<&Value> {
    result.meta().and_then(|meta| meta[META_KEY].get(ENFORCED_FIELD))
}

/// An enforced refusal: an error, and no `enforced` member in its `_meta`.
fn assert_refused(result: &ToolCallResult, code: ErrorCode) {
    assert_eq!(result.error_code(), Some(code), "{}", result.text());
    assert_eq!(enforced_field(result), None, "an enforced result says nothing: {:?}", result.meta());
}

/// Sent unchanged: a success carrying `expected`, marked not enforced.
fn assert_sent_unenforced(result: &ToolCallResult, expected: &Value) {
    assert!(!result.is_error(), "report-only refused it: {}", result.text());
    assert_eq!(result.structured_content(), Some(expected));
    assert_eq!(serde_json::from_str::<Value>(result.text()).unwrap(), *expected, "the text block is the same JSON");
    assert_eq!(enforced_field(result), Some(&json!(false)), "{:?}", result.meta());
    // The identity is still there, as on every contracted result.
    assert!(result.meta().unwrap()[META_KEY]["id"].as_str().unwrap().starts_with("ratio@1.0.0+sha256:"));
}

/// A clean result: a success with no `enforced` member.
fn assert_clean(result: &ToolCallResult) {
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(enforced_field(result), None, "a clean result was enforced: {:?}", result.meta());
}

/// Every path a result takes: the fast path, the `Value` path, after a middleware that
/// changes nothing.
const PATHS: [&str; 3] = ["fast path", "value path", "middleware"];

fn builder(path: &str) -> PipelineBuilder {
    match path {
        "fast path" => Pipeline::builder(),
        "value path" => Pipeline::builder().fast_path(false),
        _ => Pipeline::builder().middleware(middleware_fn("noop", |_, _| Ok(()))),
    }
}

#[test]
fn a_broken_result_is_refused_when_enforced_and_sent_unchanged_when_report_only_on_every_path() {
    for path in PATHS {
        let enforced = builder(path).build();
        let report = builder(path).report_only().build();
        assert_eq!(enforced.enforcement("ratio"), Enforcement::Enforce, "{path}");
        assert_eq!(report.enforcement("ratio"), Enforcement::Report, "{path}");

        let broken = || Ok::<_, ToolError>(ratio(1.5));
        assert_refused(&enforced.call_sync(&ctx("ratio"), broken), ErrorCode::OutputContractViolation);
        let sent = report.call_sync(&ctx("ratio"), broken);
        assert_sent_unenforced(&sent, &json!({ "ratio": 1.5, "token": "tok-1" }));

        // Clean control, on both pipelines: valid results carry no `enforced` member.
        for pipeline in [&enforced, &report] {
            assert_clean(&pipeline.call_sync(&ctx("ratio"), || Ok::<_, ToolError>(ratio(0.5))));
        }
        assert_eq!(report.stats().report_only, 1, "{path}: one finding");
        assert_eq!(enforced.stats().report_only, 0, "{path}");
        assert_eq!(enforced.stats().errors(ErrorCode::OutputContractViolation), 1, "{path}");
        assert_eq!(report.stats().errors(ErrorCode::OutputContractViolation), 0, "{path}: reported, not refused");
    }
}

#[test]
fn report_only_for_one_tool_leaves_the_others_enforced() {
    let pipeline = Pipeline::builder().report_only_for("ratio_beta").build();
    assert_eq!(pipeline.enforcement("ratio_beta"), Enforcement::Report);
    assert_eq!(pipeline.enforcement("ratio"), Enforcement::Enforce);
    let broken = || Ok::<_, ToolError>(ratio(2.0));
    let sent = pipeline.call_sync(&ctx("ratio_beta"), broken);
    assert!(!sent.is_error(), "{}", sent.text());
    assert_eq!(enforced_field(&sent), Some(&json!(false)));
    assert_refused(&pipeline.call_sync(&ctx("ratio"), broken), ErrorCode::OutputContractViolation);
    // Server-wide reaches every tool.
    let everywhere = Pipeline::builder().report_only().build();
    for tool in ["ratio", "ratio_beta", "anything"] {
        assert_eq!(everywhere.enforcement(tool), Enforcement::Report, "{tool}");
        assert!(!everywhere.call_sync(&ctx(tool), broken).is_error(), "{tool}");
    }
}

#[test]
fn a_report_only_violation_is_never_cached_the_next_call_runs_the_handler_again() {
    for report in [false, true] {
        let cache = Arc::new(InMemoryCache::new());
        let builder = Pipeline::builder().cache(cache.clone());
        let pipeline = if report { builder.report_only().build() } else { builder.build() };
        let runs = AtomicU32::new(0);
        let broken = || {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok::<_, ToolError>(ratio(1.5))
        };
        let first = pipeline.call_sync(&ctx("ratio"), broken);
        let second = pipeline.call_sync(&ctx("ratio"), broken);
        assert_eq!(runs.load(Ordering::SeqCst), 2, "report={report}: the handler ran for each call");
        assert!(cache.is_empty(), "report={report}: nothing was admitted");
        for result in [&first, &second] {
            assert_ne!(result.cache_status(), CacheStatus::Hit, "report={report}");
            assert_eq!(result.is_error(), !report, "report={report}: {}", result.text());
        }
        assert_eq!(pipeline.stats().cache_hits, 0);
        assert_eq!(pipeline.stats().cache_misses, 2);

        // Clean control: a valid result is admitted and the next call is a hit.
        let runs = AtomicU32::new(0);
        let clean = || {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok::<_, ToolError>(ratio(0.25))
        };
        let clean_ctx = CallContext::new("ratio", json!({ "n": 2 }));
        assert_clean(&pipeline.call_sync(&clean_ctx, clean));
        let hit = pipeline.call_sync(&clean_ctx, clean);
        assert_eq!(hit.cache_status(), CacheStatus::Hit);
        assert_clean(&hit);
        assert_eq!(runs.load(Ordering::SeqCst), 1, "report={report}: the clean result was cached");
        assert_eq!(pipeline.stats().cache_hits, 1);
    }
}

#[test]
fn a_cache_status_is_kept_on_a_report_only_result_and_its_meta_says_miss() {
    let pipeline = Pipeline::builder().cache(Arc::new(InMemoryCache::new())).report_only_for("ratio").build();
    let sent = pipeline.call_sync(&ctx("ratio"), || Ok::<_, ToolError>(ratio(3.0)));
    assert_eq!(enforced_field(&sent), Some(&json!(false)));
    assert_eq!(sent.meta().unwrap()["tool-contracts.dev/cache"], "miss", "{:?}", sent.meta());
    // The wire bytes say the same as the JSON form.
    let wire: Value = serde_json::from_slice(&sent.to_wire_bytes()).unwrap();
    assert_eq!(wire, sent.to_json());
    assert_eq!(wire["_meta"][META_KEY][ENFORCED_FIELD], false);
}

#[test]
fn false_completeness_is_reported_too_but_serialization_limits_and_middleware_stay_errors() {
    let ctx_rows = ctx("rows");
    let miscounted = || {
        Ok::<_, ToolError>(Rows {
            rows: vec![1, 2],
            completeness: Completeness::partial(5, None, Truncation::Server, "cap"),
        })
    };
    for path in PATHS {
        assert_refused(&builder(path).build().call_sync(&ctx_rows, miscounted), ErrorCode::FalseCompleteness);
        let sent = builder(path).report_only().build().call_sync(&ctx_rows, miscounted);
        assert!(!sent.is_error(), "{path}: {}", sent.text());
        assert_eq!(sent.structured_content().unwrap()["completeness"]["returned_count"], 5, "{path}: unchanged");
        assert_eq!(enforced_field(&sent), Some(&json!(false)), "{path}");
    }

    let report = Pipeline::builder().report_only().build();
    // NaN cannot be written as JSON: still an error, with nothing sent.
    let nan = report.call_sync(&ctx("ratio"), || Ok::<_, ToolError>(ratio(f64::NAN)));
    assert_refused(&nan, ErrorCode::SerializationError);
    // Past the size limit: still refused, judged or not.
    let small = Pipeline::builder().limits(Limits::default().with_max_bytes(32)).report_only().build();
    let big = Ratio { ratio: 9.0, token: "x".repeat(100) };
    assert_refused(&small.call_sync(&ctx("ratio"), || Ok::<_, ToolError>(big.clone())), ErrorCode::OutputLimitExceeded);
    // A failing middleware: still an error.
    let failing =
        Pipeline::builder().middleware(middleware_fn("boom", |_, _| Err("down".into()))).report_only().build();
    assert_refused(&failing.call_sync(&ctx("ratio"), || Ok::<_, ToolError>(ratio(9.0))), ErrorCode::MiddlewareError);
    // A handler error: still an error.
    let failed = report.call_sync(&ctx("ratio"), || Err::<Ratio, _>(ToolError::unavailable("later")));
    assert_refused(&failed, ErrorCode::Unavailable);
    assert_eq!(report.stats().report_only, 0, "none of these is a finding");

    // Clean control: the same pipelines pass a valid result.
    assert_clean(&report.call_sync(&ctx("ratio"), || Ok::<_, ToolError>(ratio(0.5))));
    assert_clean(&small.call_sync(&ctx("ratio"), || Ok::<_, ToolError>(ratio(0.5))));
}

#[test]
fn a_wrapped_root_is_sent_wrapped_for_older_peers_as_a_success_would_be() {
    let old = ProtocolVersion::new("2025-11-25");
    let report = Pipeline::builder().report_only().build();
    for (protocol, expected) in [(old, json!({ "result": 12 })), (ProtocolVersion::latest(), json!(12))] {
        let call = CallContext::new("level", json!({})).with_protocol(protocol.clone());
        assert_refused(
            &Pipeline::builder().build().call_sync(&call, || Ok::<_, ToolError>(Level(12))),
            ErrorCode::OutputContractViolation,
        );
        let sent = report.call_sync(&call, || Ok::<_, ToolError>(Level(12)));
        assert!(!sent.is_error(), "{protocol:?}: {}", sent.text());
        assert_eq!(sent.structured_content(), Some(&expected), "{protocol:?}");
        assert_eq!(serde_json::from_str::<Value>(sent.text()).unwrap(), expected, "{protocol:?}");
        // Clean control: a valid level has the same shape, enforced.
        let clean = report.call_sync(&call, || Ok::<_, ToolError>(Level(3)));
        assert!(!clean.is_error() && enforced_field(&clean).is_none(), "{protocol:?}: {}", clean.text());
        assert_eq!(clean.structured_content().unwrap().is_object(), expected.is_object(), "{protocol:?}");
    }
}

#[test]
fn process_value_and_process_serialized_follow_the_same_rollout() {
    let contract = Ratio::contract();
    let broken = json!({ "ratio": 4.0, "token": "t" });
    for report in [false, true] {
        let builder = Pipeline::builder();
        let pipeline = if report { builder.report_only_for("ratio").build() } else { builder.build() };
        let by_value = pipeline.process_value(&ctx("ratio"), contract, broken.clone());
        let by_text = pipeline.process_serialized(&ctx("ratio"), contract, broken.clone(), broken.to_string());
        for result in [by_value, by_text] {
            if report {
                assert!(!result.is_error(), "{}", result.text());
                assert_eq!(result.structured_content(), Some(&broken));
                assert_eq!(enforced_field(&result), Some(&json!(false)));
            } else {
                assert_refused(&result, ErrorCode::OutputContractViolation);
            }
        }
        // Clean control.
        assert_clean(&pipeline.process_value(&ctx("ratio"), contract, json!({ "ratio": 1.0, "token": "t" })));
    }
}
