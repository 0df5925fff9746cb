//! The enforcement pipeline, for every contract of the demo slice: valid results pass,
//! dropped, renamed and mistyped fields are refused after middleware, caches serve only
//! under the current identity, completeness claims are checked, the text block equals
//! `structuredContent`, and the sync and async paths agree; each rejection with its
//! clean control.

// Test helpers sit next to the steps that use them; result types live in modules.
#![allow(unreachable_pub, dead_code, clippy::items_after_statements, clippy::unused_async)]

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use contract_runtime::cache::{CacheKey, CachedResult, InMemoryCache, ResultCache};
use contract_runtime::pipeline::{middleware_fn, BoxError, CallContext, Pipeline};
use contract_runtime::wire::{
    advertised_output_schema, CacheStatus, ErrorCode, ProtocolVersion, ToolCallResult, ToolError, META_KEY,
};
use contract_runtime::{Completeness, Disposition, OutputContract, ToolOutput, Truncation};
use qe_server::contracts::{
    CoverageGaps, FleetStatus, PipelineStatus, QualityAssess, ScrapePage, SearchTickets, SecurityScan, TaskStatus,
};
use qe_server::samples;
use serde_json::{json, Value};

/// Runs `check` for every demo contract with its sample value.
fn for_every_contract(mut check: impl FnMut(&dyn DemoCall)) {
    check(&Demo(samples::fleet_status()));
    check(&Demo(samples::task_status()));
    check(&Demo(samples::pipeline_status()));
    check(&Demo(samples::quality_assess()));
    check(&Demo(samples::security_scan()));
    check(&Demo(samples::coverage_gaps()));
    check(&Demo(samples::search_tickets()));
    check(&Demo(samples::ticket_page()));
    check(&Demo(samples::scrape_page()));
}

/// A demo tool: calls the pipeline with a handler returning its sample.
trait DemoCall {
    fn contract(&self) -> &'static OutputContract;
    fn call(&self, pipeline: &Pipeline, ctx: &CallContext) -> ToolCallResult;
    fn call_async(&self, pipeline: &Pipeline, ctx: &CallContext) -> ToolCallResult;
    fn call_failing(&self, pipeline: &Pipeline, ctx: &CallContext, error: ToolError) -> ToolCallResult;
    fn call_panicking(&self, pipeline: &Pipeline, ctx: &CallContext) -> ToolCallResult;
    fn sample(&self) -> Value;
}

struct Demo<T>(T);

impl<T: ToolOutput + Clone> DemoCall for Demo<T> {
    fn contract(&self) -> &'static OutputContract {
        T::contract()
    }
    fn call(&self, pipeline: &Pipeline, ctx: &CallContext) -> ToolCallResult {
        let value = self.0.clone();
        pipeline.call_sync(ctx, move || Ok::<_, ToolError>(value))
    }
    fn call_async(&self, pipeline: &Pipeline, ctx: &CallContext) -> ToolCallResult {
        let value = self.0.clone();
        block_on(pipeline.call(ctx, async move { Ok::<_, ToolError>(value) }))
    }
    fn call_failing(&self, pipeline: &Pipeline, ctx: &CallContext, error: ToolError) -> ToolCallResult {
        pipeline.call_sync(ctx, move || Err::<T, _>(error))
    }
    fn call_panicking(&self, pipeline: &Pipeline, ctx: &CallContext) -> ToolCallResult {
        pipeline.call_sync(ctx, || -> Result<T, ToolError> { panic!("{}", SECRETS[5]) })
    }
    fn sample(&self) -> Value {
        serde_json::to_value(&self.0).unwrap()
    }
}

/// The futures here never wait, so polling until ready needs no runtime.
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

fn ctx(demo: &dyn DemoCall) -> CallContext {
    CallContext::new(demo.contract().name(), json!({ "scope": "main" }))
}

/// A pipeline whose one middleware applies `edit` to every result.
fn with_edit(edit: impl Fn(&mut Value) + Send + Sync + 'static) -> Pipeline {
    Pipeline::builder()
        .middleware(middleware_fn("edit", move |_, v| {
            edit(v);
            Ok(())
        }))
        .build()
}

fn error_body(result: &ToolCallResult) -> Value {
    let text: Value = serde_json::from_str(result.text()).expect("the text block of an error is JSON");
    text["error"].clone()
}

/// Every error result has the same shape: isError, a sanitized code/message/retryable,
/// no structuredContent, the contract identity in `_meta`.
fn assert_error(result: &ToolCallResult, code: ErrorCode) {
    assert!(result.is_error(), "expected {code}, got a success: {}", result.text());
    assert_eq!(result.error_code(), Some(code), "{}", result.text());
    assert!(result.structured_content().is_none());
    let wire: Value = serde_json::from_slice(&result.to_wire_bytes()).unwrap();
    assert_eq!(wire["isError"], true);
    assert!(wire.get("structuredContent").is_none(), "an error carries no structuredContent");
    assert_eq!(wire["content"].as_array().map(Vec::len), Some(1));
    let body = error_body(result);
    assert_eq!(body["code"], code.as_str());
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
    assert!(body["retryable"].is_boolean());
}

fn assert_success(result: &ToolCallResult, expected: &Value) {
    assert!(!result.is_error(), "expected a success, got {}", result.text());
    assert_eq!(result.structured_content(), Some(expected));
    // A client that reads only the text block gets the same JSON.
    let from_text: Value = serde_json::from_str(result.text()).unwrap();
    assert_eq!(&from_text, expected);
    let wire: Value = serde_json::from_slice(&result.to_wire_bytes()).unwrap();
    assert_eq!(wire, result.to_json(), "wire bytes and the JSON form agree");
    assert_eq!(wire["isError"], false);
}

#[test]
fn clean_calls_succeed_for_every_contract_sync_and_async() {
    let pipeline = Pipeline::builder().build();
    for_every_contract(|demo| {
        let sync = demo.call(&pipeline, &ctx(demo));
        assert_success(&sync, &demo.sample());
        // A result carries the identity (name, version and hash in one `id`); the
        // listing carries the details.
        let meta = &sync.meta().unwrap()[META_KEY];
        assert_eq!(meta, &json!({ "qualified": true, "id": demo.contract().id().to_string() }));
        let id: contract_runtime::ContractId = meta["id"].as_str().unwrap().parse().unwrap();
        assert_eq!(id.name(), demo.contract().name());
        assert_eq!(id.sha256(), demo.contract().sha256());
        // The async path gives the same result.
        assert_eq!(demo.call_async(&pipeline, &ctx(demo)), sync);
    });
}

/// Object paths of the sample (root first) where a required field is present.
fn required_fields(contract: &OutputContract, value: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    walk_required(contract.schema(), contract.schema(), value, "", &mut out);
    out
}

fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => resolve(root, root.pointer(&r[1..]).unwrap()),
        None => schema,
    }
}

fn walk_required(root: &Value, schema: &Value, value: &Value, at: &str, out: &mut Vec<(String, String)>) {
    let schema = resolve(root, schema);
    match value {
        Value::Object(map) => {
            for req in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
                let name = req.as_str().unwrap();
                if map.contains_key(name) {
                    out.push((at.to_owned(), name.to_owned()));
                }
            }
            for (k, v) in map {
                if let Some(sub) = schema.get("properties").and_then(|p| p.get(k)) {
                    walk_required(root, sub, v, &format!("{at}/{k}"), out);
                }
            }
        }
        Value::Array(items) => {
            if let (Some(first), Some(sub)) = (items.first(), schema.get("items")) {
                walk_required(root, sub, first, &format!("{at}/0"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn a_middleware_dropping_any_required_field_is_caught_and_never_cached() {
    let mut cases = 0;
    for_every_contract(|demo| {
        for (object, field) in required_fields(demo.contract(), &demo.sample()) {
            let cache = Arc::new(InMemoryCache::new());
            let (object2, field2) = (object.clone(), field.clone());
            let pipeline = Pipeline::builder()
                .middleware(middleware_fn("drop", move |_, v| {
                    v.pointer_mut(&object2).and_then(Value::as_object_mut).unwrap().remove(&field2);
                    Ok(())
                }))
                .cache(cache.clone())
                .build();
            let result = demo.call(&pipeline, &ctx(demo));
            assert_error(&result, ErrorCode::OutputContractViolation);
            assert!(
                result.violations().iter().any(|v| v.keyword == "required" || v.keyword == "oneOf"),
                "{}: dropping {object}/{field} reported {:?}",
                demo.contract().name(),
                result.violations()
            );
            assert!(cache.is_empty(), "a failed result is never admitted");
            cases += 1;
        }
        // Clean control: the same cache and middleware slot, a hook that changes nothing.
        let cache = Arc::new(InMemoryCache::new());
        let pipeline =
            Pipeline::builder().middleware(middleware_fn("noop", |_, _| Ok(()))).cache(cache.clone()).build();
        assert_success(&demo.call(&pipeline, &ctx(demo)), &demo.sample());
        assert_eq!(cache.len(), 1);
    });
    println!("required-field deletions rejected: {cases}");
    assert!(cases >= 40, "the demo slice has at least 40 required fields present in its samples ({cases})");
}

/// Finds the first integer and the first enum-typed string of the sample.
fn first_match(value: &Value, at: &str, pred: &dyn Fn(&Value) -> bool) -> Option<String> {
    if pred(value) {
        return Some(at.to_owned());
    }
    match value {
        Value::Object(map) => map.iter().find_map(|(k, v)| first_match(v, &format!("{at}/{k}"), pred)),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, v)| first_match(v, &format!("{at}/{i}"), pred)),
        _ => None,
    }
}

#[test]
fn a_count_turned_string_or_an_unknown_discriminant_is_rejected() {
    for_every_contract(|demo| {
        let sample = demo.sample();
        // A count turned into a string; search_tickets has no count, so its first
        // string (a ticket id) is turned into a number instead.
        let target = first_match(&sample, "", &|v| v.is_u64())
            .or_else(|| first_match(&sample, "", &|v| v.is_string()))
            .expect("every demo result has a typed leaf");
        let pipeline = with_edit(move |v| {
            let slot = v.pointer_mut(&target).unwrap();
            *slot = if slot.is_u64() { Value::String(slot.to_string()) } else { json!(7) };
        });
        let result = demo.call(&pipeline, &ctx(demo));
        assert_error(&result, ErrorCode::OutputContractViolation);

        let discriminants =
            ["open", "closed", "busy", "queued", "running", "failed", "warn", "high", "click", "partial"];
        if let Some(at) = first_match(&sample, "", &|v| v.as_str().is_some_and(|s| discriminants.contains(&s))) {
            let pipeline = with_edit(move |v| *v.pointer_mut(&at).unwrap() = json!("exploded"));
            assert_error(&demo.call(&pipeline, &ctx(demo)), ErrorCode::OutputContractViolation);
        }
    });
}

#[test]
fn clean_controls_are_not_over_rejected() {
    for_every_contract(|demo| {
        let contract = demo.contract();
        let sample = demo.sample();
        // Reordered keys: rebuild every object in reverse order.
        fn reverse(v: &Value) -> Value {
            match v {
                Value::Object(m) => {
                    let mut pairs: Vec<_> = m.iter().collect();
                    pairs.reverse();
                    Value::Object(pairs.into_iter().map(|(k, v)| (k.clone(), reverse(v))).collect())
                }
                Value::Array(items) => Value::Array(items.iter().map(reverse).collect()),
                other => other.clone(),
            }
        }
        let pipeline = with_edit(|v| *v = reverse(v));
        assert_success(&demo.call(&pipeline, &ctx(demo)), &reverse(&sample));

        // An extra optional field: accepted under additive, rejected under exact.
        if sample.is_object() {
            let pipeline = with_edit(|v| {
                v.as_object_mut().unwrap().insert("region".into(), json!("eu-west-1"));
            });
            let result = demo.call(&pipeline, &ctx(demo));
            match contract.compatibility() {
                contract_runtime::Compatibility::Additive => {
                    let mut expected = sample.clone();
                    expected["region"] = json!("eu-west-1");
                    assert_success(&result, &expected);
                }
                contract_runtime::Compatibility::Exact => assert_error(&result, ErrorCode::OutputContractViolation),
            }
        }
    });
    // Empty arrays and nulls where allowed, on concrete shapes.
    let pipeline = Pipeline::builder().build();
    let mut fleet = samples::fleet_status();
    fleet.agents.clear();
    let ctx = CallContext::new("fleet_status", json!({}));
    assert!(!pipeline.call_sync(&ctx, || Ok::<_, ToolError>(fleet.clone())).is_error());
    let mut stages = samples::pipeline_status();
    stages.stages.iter_mut().for_each(|s| {
        s.duration_ms = None;
        s.started_at = None;
    });
    assert!(!pipeline.call_sync(&ctx, || Ok::<_, ToolError>(stages.clone())).is_error());
    assert!(!pipeline.call_sync(&ctx, || Ok::<_, ToolError>(SearchTickets(vec![]))).is_error());
}

#[derive(Debug)]
enum ScanError {
    Timeout,
    Crashed(String),
}

impl std::fmt::Display for ScanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScanError::Timeout => f.write_str("the scanner timed out"),
            ScanError::Crashed(why) => write!(f, "the scanner crashed: {why}"),
        }
    }
}

impl contract_runtime::ToolFailure for ScanError {
    fn code(&self) -> ErrorCode {
        match self {
            ScanError::Timeout => ErrorCode::Unavailable,
            ScanError::Crashed(_) => ErrorCode::ToolExecutionError,
        }
    }
    fn retryable(&self) -> bool {
        matches!(self, ScanError::Timeout)
    }
}

#[test]
fn handler_middleware_and_serialization_failures_are_errors() {
    let ctx = CallContext::new("security_scan", json!({}));
    let plain = Pipeline::builder().build();

    let r = plain.call_sync(&ctx, || Err::<SecurityScan, _>(ScanError::Timeout));
    assert_error(&r, ErrorCode::Unavailable);
    assert_eq!(error_body(&r)["retryable"], true);
    let r = plain.call_sync(&ctx, || Err::<SecurityScan, _>(ScanError::Crashed("segfault".into())));
    assert_error(&r, ErrorCode::ToolExecutionError);
    assert_eq!(error_body(&r)["retryable"], false);
    // Any other error type is a tool_execution_error.
    let r = plain.call_sync(&ctx, || Err::<SecurityScan, _>(std::io::Error::other("disk full")));
    assert_error(&r, ErrorCode::ToolExecutionError);
    // A panicking handler, sync and async.
    let r = plain.call_sync(&ctx, || -> Result<SecurityScan, ToolError> { panic!("index out of bounds") });
    assert_error(&r, ErrorCode::ToolExecutionError);
    async fn boom() -> Result<SecurityScan, ToolError> {
        panic!("async boom")
    }
    let r = block_on(plain.call(&ctx, boom()));
    assert_error(&r, ErrorCode::ToolExecutionError);

    // Middleware that fails, and one that panics.
    let failing = Pipeline::builder()
        .middleware(middleware_fn("audit", |_, _| Err::<(), BoxError>("audit log unreachable".into())))
        .build();
    assert_error(&failing.call_sync(&ctx, || Ok::<_, ToolError>(samples::security_scan())), ErrorCode::MiddlewareError);
    let panicking = Pipeline::builder().middleware(middleware_fn("bad", |_, _| panic!("hook bug"))).build();
    assert_error(
        &panicking.call_sync(&ctx, || Ok::<_, ToolError>(samples::security_scan())),
        ErrorCode::MiddlewareError,
    );

    // Clean control: the same pipeline shapes with a good handler and hook.
    let good = Pipeline::builder().middleware(middleware_fn("audit", |_, _| Ok(()))).build();
    assert_success(
        &good.call_sync(&ctx, || Ok::<_, ToolError>(samples::security_scan())),
        &serde_json::to_value(samples::security_scan()).unwrap(),
    );
}

/// Result types whose serialization fails in the three ways serde_json can.
mod broken {
    use contract_runtime::ToolOutput;
    use schemars::JsonSchema;
    use serde::{Serialize, Serializer};
    use std::collections::BTreeMap;

    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = "exact")]
    pub struct Scores {
        pub mean: Option<f64>,
        pub by_day: Vec<f64>,
    }

    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = "additive")]
    pub struct ByPair {
        #[schemars(with = "BTreeMap<String, u32>")]
        pub counts: BTreeMap<(u8, u8), u32>,
    }

    #[derive(JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = "exact")]
    pub struct Refuses {
        pub ok: bool,
    }

    impl Serialize for Refuses {
        fn serialize<S: Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("the report store handle is closed"))
        }
    }
}

#[test]
fn serialization_failures_are_never_a_success() {
    let pipeline = Pipeline::builder().build();
    let ctx = CallContext::new("scores", json!({}));
    // NaN in a nullable field would become a valid `null`: refused before that.
    let r = pipeline.call_sync(&ctx, || Ok::<_, ToolError>(broken::Scores { mean: Some(f64::NAN), by_day: vec![] }));
    assert_error(&r, ErrorCode::SerializationError);
    assert!(error_body(&r)["message"].as_str().unwrap().contains("/mean"));
    let r = pipeline
        .call_sync(&ctx, || Ok::<_, ToolError>(broken::Scores { mean: None, by_day: vec![1.0, f64::INFINITY] }));
    assert_error(&r, ErrorCode::SerializationError);
    let r = pipeline.call_sync(&ctx, || Ok::<_, ToolError>(broken::ByPair { counts: BTreeMap::from([((1, 2), 3)]) }));
    assert_error(&r, ErrorCode::SerializationError);
    let r = pipeline.call_sync(&ctx, || Ok::<_, ToolError>(broken::Refuses { ok: true }));
    assert_error(&r, ErrorCode::SerializationError);
    // Clean controls.
    let r = pipeline.call_sync(&ctx, || Ok::<_, ToolError>(broken::Scores { mean: None, by_day: vec![1.5] }));
    assert_success(&r, &json!({ "mean": null, "by_day": [1.5] }));
    let r = pipeline.call_sync(&ctx, || Ok::<_, ToolError>(broken::ByPair { counts: BTreeMap::new() }));
    assert_success(&r, &json!({ "counts": {} }));
}

/// The same tool name and version as TaskStatus, a different shape: what a deploy that
/// changed the type without a bump would look like.
mod v2 {
    use contract_runtime::ToolOutput;

    #[derive(Clone, serde::Serialize, schemars::JsonSchema, ToolOutput)]
    #[tool_output(name = "task_status", version = "2.1.1", compatibility = "exact")]
    pub struct TaskStatusRenamed {
        pub id: String,
        pub state: String,
    }

    #[derive(Clone, serde::Serialize, schemars::JsonSchema, ToolOutput)]
    #[tool_output(name = "task_status", version = "3.0.0", compatibility = "exact")]
    pub struct TaskStatusV3 {
        pub id: String,
        pub state: String,
    }
}

#[test]
fn a_cached_result_cannot_satisfy_another_contract() {
    for revalidate in [false, true] {
        let cache = Arc::new(InMemoryCache::new().with_revalidation(revalidate));
        let pipeline = Pipeline::builder().cache(cache.clone()).build();
        let ctx = CallContext::new("task_status", json!({ "task_id": "T-1041" }));
        let v1 = samples::task_status();
        let first = pipeline.call_sync(&ctx, || Ok::<_, ToolError>(v1.clone()));
        assert_eq!(first.cache_status(), CacheStatus::Miss);
        // Clean control: the same contract is served from the cache, handler not run.
        let hit =
            pipeline.call_sync(&ctx, || -> Result<TaskStatus, ToolError> { panic!("handler must not run on a hit") });
        assert_eq!(hit.cache_status(), CacheStatus::Hit);
        assert_eq!(hit.structured_content(), first.structured_content());

        // Same name and version, different schema hash: a miss, and the entry is evicted.
        let renamed = v2::TaskStatusRenamed { id: "T-1041".into(), state: "running".into() };
        assert_eq!(v2::TaskStatusRenamed::contract().version(), TaskStatus::contract().version());
        assert_ne!(v2::TaskStatusRenamed::contract().id(), TaskStatus::contract().id());
        let r = pipeline.call_sync(&ctx, || Ok::<_, ToolError>(renamed.clone()));
        assert_eq!(r.cache_status(), CacheStatus::Miss);
        assert_eq!(r.structured_content(), Some(&json!({ "id": "T-1041", "state": "running" })));
        // The key names the contract identity: the v1 entry is not even found.
        assert_eq!(cache.stats().evictions, 0);
        // A version bump: an entry under v3's key but written under v2's identity (as a
        // shared store written by an older replica could hold) is evicted, not served.
        let v3_key = CacheKey::new("task_status", v2::TaskStatusV3::contract().id(), ctx.arguments());
        let written_by_v2 = CachedResult {
            contract: v2::TaskStatusRenamed::contract().id().clone(),
            text: Arc::from(r#"{"id":"T-1041","state":"running"}"#),
        };
        cache.put(v3_key, written_by_v2);
        let v3 = v2::TaskStatusV3 { id: "T-1041".into(), state: "done".into() };
        let r = pipeline.call_sync(&ctx, || Ok::<_, ToolError>(v3.clone()));
        assert_eq!(r.cache_status(), CacheStatus::Miss);
        assert_eq!(r.structured_content(), Some(&json!({ "id": "T-1041", "state": "done" })));
        assert_eq!(cache.stats().evictions, 1);
    }
}

#[test]
fn a_poisoned_shared_entry_is_caught_by_revalidation() {
    let ctx = CallContext::new("fleet_status", json!({}));
    let key = CacheKey::new("fleet_status", FleetStatus::contract().id(), &json!({}));
    let poisoned = CachedResult {
        contract: FleetStatus::contract().id().clone(),
        text: Arc::from(r#"{"agents":[],"healthy":"all"}"#),
    };
    let shared = Arc::new(InMemoryCache::new().with_revalidation(true));
    shared.put(key.clone(), poisoned);
    let pipeline = Pipeline::builder().cache(shared.clone()).build();
    let r = pipeline.call_sync(&ctx, || Ok::<_, ToolError>(samples::fleet_status()));
    assert_eq!(r.cache_status(), CacheStatus::Miss, "the poisoned entry is not served");
    assert_success(&r, &serde_json::to_value(samples::fleet_status()).unwrap());
    // Clean control: the entry the pipeline just admitted is served.
    let again = pipeline.call_sync(&ctx, || Ok::<_, ToolError>(samples::fleet_status()));
    assert_eq!(again.cache_status(), CacheStatus::Hit);
}

#[test]
fn a_false_complete_claim_is_refused() {
    let pipeline = Pipeline::builder().build();
    let ctx = CallContext::new("scrape_page", json!({}));
    let lies = [
        Completeness { disposition: Disposition::Complete, ..Completeness::partial(1, Some(48), Truncation::None, "") },
        Completeness { pagination_complete: false, ..Completeness::complete(1) },
        Completeness { truncation: Truncation::Server, ..Completeness::complete(1) },
    ];
    for lie in lies {
        let mut page = samples::scrape_page();
        page.completeness = lie;
        assert_error(&pipeline.call_sync(&ctx, || Ok::<_, ToolError>(page.clone())), ErrorCode::FalseCompleteness);
        let mut gaps = samples::coverage_gaps();
        gaps.completeness = page.completeness.clone();
        assert_error(&pipeline.call_sync(&ctx, || Ok::<_, ToolError>(gaps)), ErrorCode::FalseCompleteness);
    }
    // Clean controls: honest partial and honest complete results.
    let mut page = samples::scrape_page();
    assert_eq!(page.completeness.disposition, Disposition::Partial);
    assert!(!pipeline.call_sync(&ctx, || Ok::<_, ToolError>(page.clone())).is_error());
    page.completeness = Completeness::complete(1);
    assert!(!pipeline.call_sync(&ctx, || Ok::<_, ToolError>(page)).is_error());
    // The paginated search: every page the tool gives is honest and passes; a page that
    // claims to be complete while a next page exists is refused.
    let search = |limit: Option<u32>, cursor: Option<&str>| qe_server::tools::SearchTicketsPageArgs {
        query: "login".to_owned(),
        limit,
        cursor: cursor.map(str::to_owned),
    };
    let ctx = CallContext::new("search_tickets_page", json!({}));
    for (limit, cursor, disposition) in
        [(Some(2), None, "partial"), (Some(2), Some("2"), "partial"), (None, None, "complete")]
    {
        let r = pipeline.call_sync(&ctx, || qe_server::tools::search_tickets_page(&search(limit, cursor)));
        assert!(!r.is_error(), "{}", r.text());
        assert_eq!(r.structured_content().unwrap()["completeness"]["disposition"], disposition);
    }
    let r = pipeline.call_sync(&ctx, || {
        qe_server::tools::search_tickets_page(&search(Some(2), None)).map(|mut page| {
            page.completeness.disposition = Disposition::Complete;
            page
        })
    });
    assert_error(&r, ErrorCode::FalseCompleteness);
    // A middleware that flips an honest partial into "complete" is caught as well.
    let flip = with_edit(|v| v["completeness"]["disposition"] = json!("complete"));
    assert_error(&flip.call_sync(&ctx, || Ok::<_, ToolError>(samples::scrape_page())), ErrorCode::FalseCompleteness);
}

#[test]
fn protocol_eras_wrap_non_object_roots_for_older_peers_only() {
    let pipeline = Pipeline::builder().build();
    let tickets = serde_json::to_value(samples::search_tickets()).unwrap();
    let old = ProtocolVersion::new("2025-11-25");
    let new = ProtocolVersion::new("2026-07-28");
    let call = |p: &ProtocolVersion| {
        pipeline
            .call_sync(&CallContext::new("search_tickets", json!({"query": "bug"})).with_protocol(p.clone()), || {
                Ok::<_, ToolError>(samples::search_tickets())
            })
    };
    assert_success(&call(&new), &tickets);
    let wrapped = call(&old);
    assert_success(&wrapped, &json!({ "result": tickets }));
    // The advertised wrapper schema accepts the wrapped value and rejects a bad item.
    let schema = advertised_output_schema(SearchTickets::contract(), &old);
    assert_eq!(schema["type"], "object");
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(validator.is_valid(wrapped.structured_content().unwrap()));
    assert!(!validator.is_valid(&json!({ "result": [{ "id": "T-1", "title": "x", "status": "done" }] })));
    assert_eq!(advertised_output_schema(SearchTickets::contract(), &new), *SearchTickets::contract().schema());
    // Object roots are never wrapped.
    let fleet = serde_json::to_value(samples::fleet_status()).unwrap();
    let r = pipeline.call_sync(&CallContext::new("fleet_status", json!({})).with_protocol(old.clone()), || {
        Ok::<_, ToolError>(samples::fleet_status())
    });
    assert_success(&r, &fleet);
    // Validation applies either way.
    let bad = with_edit(|v| v[0]["status"] = json!("done"));
    for p in [&old, &new] {
        let r = bad.call_sync(&CallContext::new("search_tickets", json!({})).with_protocol(p.clone()), || {
            Ok::<_, ToolError>(samples::search_tickets())
        });
        assert_error(&r, ErrorCode::OutputContractViolation);
    }
}

const SECRETS: [&str; 8] = [
    "sk-live-51HxQ2eZvKYlo2C0aBcD",
    "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "AKIAIOSFODNN7EXAMPLE",
    "hunter2-the-password",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "/home/deploy/agentic-qe/src/mcp/handlers/fleet.rs",
    "10.20.0.7:7400/coordinator",
    "std::panicking::begin_panic",
];

fn assert_clean(result: &ToolCallResult) {
    let wire = String::from_utf8(result.to_wire_bytes()).unwrap();
    for secret in SECRETS {
        assert!(!wire.contains(secret), "{secret:?} leaked in {wire}");
    }
    assert!(!wire.contains("/home/"), "an absolute path leaked in {wire}");
}

#[test]
fn errors_stay_useful_and_leak_nothing() {
    let ctx = CallContext::new("fleet_status", json!({}));
    let plain = Pipeline::builder().build();
    let message = format!(
        "connect to {} failed: Authorization: Bearer {} (key {}, aws {}, password={}) at {}\n   0: {}\n   1: fleet::handler",
        SECRETS[6], SECRETS[4], SECRETS[0], SECRETS[2], SECRETS[3], SECRETS[5], SECRETS[7]
    );
    let r = plain.call_sync(&ctx, || Err::<FleetStatus, _>(ToolError::unavailable(message.clone())));
    assert_error(&r, ErrorCode::Unavailable);
    let text = error_body(&r)["message"].as_str().unwrap().to_owned();
    assert!(text.contains("connect to") && text.contains("failed"), "the message stays useful: {text}");
    // The coordinator endpoint is not a recognisable secret in a handler's own words,
    // so only the patterns apply here; everything else must be gone.
    for secret in &SECRETS[..6] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
    assert!(!text.contains(SECRETS[7]));

    // A middleware error quoting the result's sensitive field and a token.
    let leaky = Pipeline::builder()
        .middleware(middleware_fn("leaky", |_, v| {
            Err::<(), BoxError>(format!("cannot reach {} with {}", v["coordinator_endpoint"], SECRETS[1]).into())
        }))
        .build();
    let r = leaky.call_sync(&ctx, || Ok::<_, ToolError>(samples::fleet_status()));
    assert_error(&r, ErrorCode::MiddlewareError);
    assert_clean(&r);
    assert!(!r.text().contains("http://10.20.0.7"));

    // A violating payload with secrets planted: an unknown key under an exact contract,
    // a mistyped sensitive field, secrets in values.
    let plant = with_edit(|v| {
        v["coordinator_endpoint"] = json!(42);
        v["healthy"] = json!(format!("{} {}", SECRETS[0], SECRETS[5]));
        v["agents"][0]["id"] = json!(7);
    });
    let r = plant.call_sync(&ctx, || Ok::<_, ToolError>(samples::fleet_status()));
    assert_error(&r, ErrorCode::OutputContractViolation);
    assert_clean(&r);
    assert!(r.violations().iter().any(|v| v.pointer == "/healthy" && v.keyword == "type"), "{:?}", r.violations());

    let exact_ctx = CallContext::new("security_scan", json!({}));
    let plant_key = with_edit(|v| {
        v.as_object_mut().unwrap().insert(SECRETS[0].to_owned(), json!(SECRETS[2]));
        v["findings"][0]["evidence"] = json!(["not", "a", "string", SECRETS[1]]);
    });
    let r = plant_key.call_sync(&exact_ctx, || Ok::<_, ToolError>(samples::security_scan()));
    assert_error(&r, ErrorCode::OutputContractViolation);
    assert_clean(&r);
    assert!(r.violations().iter().any(|v| v.keyword == "additionalProperties"));

    // Clean control: a success carries its sensitive field (it is the tool's output),
    // and nothing is redacted from a valid result.
    let ok = plain.call_sync(&ctx, || Ok::<_, ToolError>(samples::fleet_status()));
    assert_success(&ok, &serde_json::to_value(samples::fleet_status()).unwrap());
}

#[test]
fn invalid_arguments_is_an_error_result() {
    let r = ToolCallResult::invalid_arguments("`query` is required; token=abc123secret", None);
    assert_error(&r, ErrorCode::InvalidArguments);
    assert!(!r.text().contains("abc123secret"));
}

#[test]
fn wire_bytes_equal_the_json_form_for_successes_and_errors() {
    let pipeline = Pipeline::builder().build();
    for_every_contract(|demo| {
        let r = demo.call(&pipeline, &ctx(demo));
        assert_eq!(serde_json::from_slice::<Value>(&r.to_wire_bytes()).unwrap(), r.to_json());
    });
    let r = pipeline.call_sync(&CallContext::new("x", json!({})), || Err::<FleetStatus, _>("nope".to_owned()));
    assert_eq!(serde_json::from_slice::<Value>(&r.to_wire_bytes()).unwrap(), r.to_json());
}

#[test]
fn unused_tools_keep_quiet() {
    // Every demo contract is reachable from the helper above.
    let mut names = Vec::new();
    for_every_contract(|demo| names.push(demo.contract().name().to_owned()));
    let all: Vec<String> = qe_server::all_contracts().contracts().iter().map(|c| c.name().to_owned()).collect();
    assert_eq!(names, all);
    let _ = (CoverageGaps::contract(), PipelineStatus::contract(), QualityAssess::contract(), ScrapePage::contract());
}

#[test]
fn for_every_contract_failures_are_errors_and_leak_nothing() {
    let plain = Pipeline::builder().build();
    let failing_hook = Pipeline::builder()
        .middleware(middleware_fn("export", |_, _| {
            Err::<(), BoxError>(format!("export to {} failed with {}", SECRETS[5], SECRETS[1]).into())
        }))
        .build();
    let planting = with_edit(|v| {
        // A planted unknown key that is itself a secret, and a secret replacing the
        // first string value; under exact the key alone is a violation.
        if let Some(obj) = v.as_object_mut() {
            obj.insert(SECRETS[0].to_owned(), json!(SECRETS[2]));
            obj.insert("count_of_things".to_owned(), json!(SECRETS[4]));
        } else if let Some(first) = v.as_array_mut().and_then(|a| a.first_mut()) {
            first["status"] = json!(SECRETS[3]);
        }
    });
    for_every_contract(|demo| {
        let message = format!("backend said: password={} at {}\n   0: {}", SECRETS[3], SECRETS[5], SECRETS[7]);
        for code in [ErrorCode::ToolExecutionError, ErrorCode::Unavailable] {
            let r = demo.call_failing(&plain, &ctx(demo), ToolError::new(code, message.clone()));
            assert_error(&r, code);
            assert_clean(&r);
            assert!(error_body(&r)["message"].as_str().unwrap().contains("backend said"));
        }
        let r = demo.call_panicking(&plain, &ctx(demo));
        assert_error(&r, ErrorCode::ToolExecutionError);
        assert_clean(&r);
        let r = demo.call(&failing_hook, &ctx(demo));
        assert_error(&r, ErrorCode::MiddlewareError);
        assert_clean(&r);
        let r = demo.call(&planting, &ctx(demo));
        if demo.contract().compatibility() == contract_runtime::Compatibility::Exact || !demo.sample().is_object() {
            assert_error(&r, ErrorCode::OutputContractViolation);
            assert_clean(&r);
        } else {
            // Additive contracts accept unknown keys: the planted values are the tool's
            // own output then, and a success is not redacted (clean control).
            assert!(!r.is_error(), "{}", r.text());
        }
        // Clean control: the same pipeline shape without the failure succeeds.
        assert_success(&demo.call(&plain, &ctx(demo)), &demo.sample());
    });
}

#[test]
fn contract_ids_round_trip_through_text_and_serde() {
    for_every_contract(|demo| {
        let id = demo.contract().id();
        let parsed: contract_runtime::ContractId = id.to_string().parse().expect("parses");
        assert_eq!(&parsed, id);
        let json = serde_json::to_value(id).unwrap();
        assert_eq!(json, Value::String(id.to_string()));
        assert_eq!(&serde_json::from_value::<contract_runtime::ContractId>(json).unwrap(), id);
    });
    for bad in
        ["", "x", "x@1.0.0", "@1.0.0+sha256:00", "x@one+sha256:00", &format!("x@1.0.0+sha256:{}", "A".repeat(64))]
    {
        assert!(bad.parse::<contract_runtime::ContractId>().is_err(), "{bad:?} parsed");
    }
}
