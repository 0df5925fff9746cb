//! Hostile handler output: values the server itself produces that are
//! too deep, too large, too long or too big for a JSON number. Each gets a clear verdict
//! or a clear error, never a stack overflow, a panic or a pass beyond a limit. Every case
//! runs on a thread with a 2 MiB stack, the default of spawned threads, so an unbounded
//! recursion anywhere in the path would overflow it.

// Result types are declared next to the tests that use them.
#![allow(unreachable_pub, dead_code, clippy::items_after_statements)]

use contract_runtime::limits::{Limits, DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH};
use contract_runtime::pipeline::{middleware_fn, CallContext, Pipeline};
use contract_runtime::wire::{ErrorCode, ToolCallResult, ToolError};
use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};

const STACK: usize = 2 * 1024 * 1024;

/// Runs `f` on a fresh thread with a 2 MiB stack; a panic or an overflow fails the test.
fn on_small_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(STACK)
            .spawn_scoped(s, f)
            .expect("spawn")
            .join()
            .expect("the call neither panicked nor overflowed")
    })
}

/// A linked chain: each node is one JSON object level.
#[derive(Debug, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Chain {
    label: String,
    next: Option<Box<Chain>>,
}

impl Chain {
    /// A chain of `nodes` nodes, built bottom-up without recursion.
    fn of(nodes: usize) -> Self {
        let mut chain = Chain { label: "leaf".to_owned(), next: None };
        for _ in 1..nodes {
            chain = Chain { label: "node".to_owned(), next: Some(Box::new(chain)) };
        }
        chain
    }
}

// Dropped iteratively: the compiler's drop glue would recurse once per node. A server
// with recursive result types needs the same, or its handler's value overflows the
// stack when it is dropped, before or after the pipeline.
impl Drop for Chain {
    fn drop(&mut self) {
        let mut next = self.next.take();
        while let Some(mut node) = next {
            next = node.next.take();
        }
    }
}

/// A JSON value of `levels` nested arrays, built without recursion.
fn nested_arrays(levels: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..levels {
        v = Value::Array(vec![v]);
    }
    v
}

/// Takes a nested value apart without recursion (serde_json's drop recurses).
fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

fn ctx() -> CallContext {
    CallContext::new("hostile", json!({}))
}

fn message(result: &ToolCallResult) -> String {
    result.error().map(|e| e.message().to_owned()).unwrap_or_default()
}

#[test]
fn a_chain_10000_deep_is_refused_with_a_clear_error_not_an_overflow() {
    on_small_stack(|| {
        let pipeline = Pipeline::builder().build();
        let r = pipeline.call_sync(&ctx(), || Ok::<_, ToolError>(Chain::of(10_000)));
        assert_eq!(r.error_code(), Some(ErrorCode::OutputLimitExceeded), "{}", r.text());
        let text = message(&r);
        assert!(text.contains(&format!("nested deeper than {DEFAULT_MAX_DEPTH} levels")), "{text}");
        assert!(r.structured_content().is_none());
        // The contract's own API refuses it too, as a violation, without converting it.
        let report = Chain::contract().validate_output(&Chain::of(10_000)).unwrap_err();
        assert_eq!(report.violations()[0].keyword(), "maxDepth");
    });
}

#[test]
fn a_chain_at_the_limit_gets_a_verdict_and_one_past_it_is_refused() {
    on_small_stack(|| {
        let pipeline = Pipeline::builder().build();
        // Clean control: exactly at the default limit, judged (and valid) on a 2 MiB stack.
        let r = pipeline.call_sync(&ctx(), || Ok::<_, ToolError>(Chain::of(DEFAULT_MAX_DEPTH)));
        assert!(!r.is_error(), "{}", r.text());
        let r = pipeline.call_sync(&ctx(), || Ok::<_, ToolError>(Chain::of(DEFAULT_MAX_DEPTH + 1)));
        assert_eq!(r.error_code(), Some(ErrorCode::OutputLimitExceeded), "{}", r.text());
        // The limit is configurable.
        let tight = Pipeline::builder().limits(Limits::default().with_max_depth(10)).build();
        assert!(!tight.call_sync(&ctx(), || Ok::<_, ToolError>(Chain::of(10))).is_error());
        let r = tight.call_sync(&ctx(), || Ok::<_, ToolError>(Chain::of(11)));
        assert_eq!(r.error_code(), Some(ErrorCode::OutputLimitExceeded));
        assert!(message(&r).contains("deeper than 10 levels"), "{}", message(&r));
    });
}

#[test]
fn a_json_value_10000_deep_is_refused_on_every_path() {
    on_small_stack(|| {
        let contract = Chain::contract();
        let pipeline = Pipeline::builder().build();
        // An adapter's handler wrote the JSON itself.
        let r = pipeline.process_value(&ctx(), contract, nested_arrays(10_000));
        assert_eq!(r.error_code(), Some(ErrorCode::OutputLimitExceeded), "{}", r.text());
        // A middleware grows a valid result past the limit.
        let growing = Pipeline::builder()
            .middleware(middleware_fn("grow", |_, v| {
                v["next"] = nested_arrays(10_000);
                Ok(())
            }))
            .build();
        let r = growing.call_sync(&ctx(), || Ok::<_, ToolError>(Chain::of(2)));
        assert_eq!(r.error_code(), Some(ErrorCode::OutputLimitExceeded), "{}", r.text());
        // The contract's own check: a violation, not a crash.
        let deep = nested_arrays(10_000);
        let report = contract.validate(&deep).unwrap_err();
        assert_eq!(report.violations()[0].keyword(), "maxDepth");
        assert!(!contract.is_valid(&deep));
        dismantle(deep);
        // Clean control: a shallow valid value through the same paths passes.
        let r = pipeline.process_value(&ctx(), contract, json!({ "label": "x", "next": null }));
        assert!(!r.is_error(), "{}", r.text());
    });
}

#[derive(Debug, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Blob {
    body: String,
}

#[test]
fn a_50_mb_string_is_refused_by_default_and_judged_under_a_raised_limit() {
    let body = "x".repeat(50 * 1000 * 1000);
    on_small_stack(|| {
        let r = Pipeline::builder().build().call_sync(&ctx(), || Ok::<_, ToolError>(Blob { body: body.clone() }));
        assert_eq!(r.error_code(), Some(ErrorCode::OutputLimitExceeded), "{}", message(&r));
        assert!(message(&r).contains(&format!("larger than {DEFAULT_MAX_BYTES} bytes")), "{}", message(&r));
        // The error is small: the payload never rides along.
        assert!(r.text().len() < 1024);
        // The same as JSON from an adapter.
        let r = Pipeline::builder().build().process_value(&ctx(), Blob::contract(), json!({ "body": body }));
        assert_eq!(r.error_code(), Some(ErrorCode::OutputLimitExceeded));
        // Clean control: under a raised limit the same result is judged and passes whole.
        let roomy = Pipeline::builder().limits(Limits::default().with_max_bytes(64 * 1024 * 1024)).build();
        let r = roomy.call_sync(&ctx(), || Ok::<_, ToolError>(Blob { body: body.clone() }));
        assert!(!r.is_error(), "{}", message(&r));
        assert_eq!(r.structured_content().unwrap()["body"].as_str().map(str::len), Some(body.len()));
    });
}

#[test]
fn the_size_limit_counts_escapes() {
    on_small_stack(|| {
        // 1000 quotes are 2000 bytes of JSON once escaped, plus the field and braces.
        let limits = Limits::default().with_max_bytes(1500);
        let pipeline = Pipeline::builder().limits(limits).build();
        let r = pipeline.call_sync(&ctx(), || Ok::<_, ToolError>(Blob { body: "\"".repeat(1000) }));
        assert_eq!(r.error_code(), Some(ErrorCode::OutputLimitExceeded));
        // Clean control: 1000 plain characters fit.
        assert!(!pipeline.call_sync(&ctx(), || Ok::<_, ToolError>(Blob { body: "x".repeat(1000) })).is_error());
    });
}

#[derive(Debug, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Many {
    items: Vec<u32>,
}

fn million() -> Many {
    Many { items: (0..1_000_000).collect() }
}

#[test]
fn a_million_items_get_a_verdict_and_a_bounded_report() {
    on_small_stack(|| {
        let plain = Pipeline::builder().build();
        let r = plain.call_sync(&ctx(), || Ok::<_, ToolError>(million()));
        assert!(!r.is_error(), "{}", message(&r));
        assert_eq!(r.structured_content().unwrap()["items"].as_array().map(Vec::len), Some(1_000_000));
        // One bad item at the end is found, with its exact pointer.
        let last_bad = Pipeline::builder()
            .middleware(middleware_fn("break", |_, v| {
                v["items"][999_999] = json!("x");
                Ok(())
            }))
            .build();
        let r = last_bad.call_sync(&ctx(), || Ok::<_, ToolError>(million()));
        assert_eq!(r.error_code(), Some(ErrorCode::OutputContractViolation));
        assert_eq!(r.violations().len(), 1);
        assert_eq!(r.violations()[0].pointer, "/items/999999");
        // Every item bad: the report lists the first hundred and counts the rest.
        let all_bad = Pipeline::builder()
            .middleware(middleware_fn("break", |_, v| {
                for item in v["items"].as_array_mut().unwrap() {
                    *item = json!("x");
                }
                Ok(())
            }))
            .build();
        let r = all_bad.call_sync(&ctx(), || Ok::<_, ToolError>(million()));
        assert_eq!(r.error_code(), Some(ErrorCode::OutputContractViolation));
        assert_eq!(r.violations().len(), contract_runtime::validate::MAX_REPORTED_VIOLATIONS);
        assert!(message(&r).contains("1000000 violations, the first 100 shown"), "{}", message(&r));
        assert!(r.text().len() < 64 * 1024, "the error stays small: {} bytes", r.text().len());
    });
}

#[derive(Debug, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Big {
    n: u64,
}

#[derive(Debug, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Huge {
    n: u128,
}

#[test]
fn integers_beyond_2_pow_53_keep_every_digit_and_beyond_u64_are_refused() {
    on_small_stack(|| {
        let pipeline = Pipeline::builder().build();
        for n in [(1_u64 << 53) + 1, u64::MAX] {
            let r = pipeline.call_sync(&ctx(), || Ok::<_, ToolError>(Big { n }));
            assert!(!r.is_error(), "{}", message(&r));
            // The text block carries the exact digits (no rounding through f64).
            assert_eq!(r.text(), format!("{{\"n\":{n}}}"));
            assert_eq!(r.structured_content().unwrap()["n"].as_u64(), Some(n));
        }
        // serde_json cannot hold a u128 above u64::MAX: a clear serialization error.
        let r = pipeline.call_sync(&ctx(), || Ok::<_, ToolError>(Huge { n: u128::from(u64::MAX) + 1 }));
        assert_eq!(r.error_code(), Some(ErrorCode::SerializationError), "{}", r.text());
        assert!(message(&r).contains("could not be serialized"), "{}", message(&r));
        // Clean control: a u128 within u64 passes.
        assert!(!pipeline.call_sync(&ctx(), || Ok::<_, ToolError>(Huge { n: 7 })).is_error());
    });
}

/// A cache shared by pipelines with different limits serves an entry only to a
/// pipeline whose limits it fits.
#[test]
fn cached_results_must_fit_the_serving_pipelines_limits() {
    use contract_runtime::cache::InMemoryCache;
    use contract_runtime::wire::CacheStatus;
    use std::sync::Arc;

    let cache = Arc::new(InMemoryCache::new());
    let roomy = Pipeline::builder().cache(cache.clone()).build();
    let tight = Pipeline::builder().cache(cache).limits(Limits::default().with_max_bytes(1024)).build();
    let blob = || Ok::<_, ToolError>(Blob { body: "x".repeat(2000) });
    assert_eq!(roomy.call_sync(&ctx(), blob).cache_status(), CacheStatus::Miss);
    // Clean control: the pipeline that admitted it is served from the cache.
    assert_eq!(roomy.call_sync(&ctx(), blob).cache_status(), CacheStatus::Hit);
    let r = tight.call_sync(&ctx(), blob);
    assert_eq!(r.error_code(), Some(ErrorCode::OutputLimitExceeded), "{}", r.text());
    // The entry is left for the pipeline it fits.
    assert_eq!(roomy.call_sync(&ctx(), blob).cache_status(), CacheStatus::Hit);
}
