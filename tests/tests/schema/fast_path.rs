//! The fast path through the pipeline: with no middleware, a result of a
//! covered contract is checked while it is written. Everything the caller sees must be
//! what the `Value` path gives: the same wire bytes and `structuredContent` for a valid
//! result, and the same error and violations for an invalid one, a non-finite float or
//! a limit passed. Each case runs the same handler output through a default pipeline and
//! through one with `fast_path(false)` and compares the two results whole.
//!
//! The per-value differential proof against `jsonschema` runs inside the suites that
//! judge many values (the serde corpus in the `schema_*.rs` files, the mutation suites,
//! validate_properties/), through `support/fast_path.rs`.

use std::collections::BTreeMap;

use contract_runtime::fused::{Coverage, Miss};
use contract_runtime::limits::Limits;
use contract_runtime::pipeline::{middleware_fn, CallContext, Pipeline};
use contract_runtime::wire::{ErrorCode, ProtocolVersion, ToolCallResult, ToolError};
use contract_runtime::{Completeness, ToolOutput, Truncation};
use qe_server::samples;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;

/// A result with every keyword family the plan judges: bounds, lengths, a pattern, a
/// format, an enum, closed nested objects, nullable fields, arrays and a map.
#[derive(Clone, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Report {
    #[schemars(range(min = 1, max = 10))]
    level: i32,
    #[schemars(length(min = 2, max = 8), regex(pattern = r"^[a-z]+$"))]
    code: String,
    #[schemars(extend("format" = "uuid"))]
    id: String,
    status: Status,
    ratio: Option<f64>,
    #[schemars(length(max = 3))]
    tags: Vec<String>,
    owner: Option<Owner>,
    counts: BTreeMap<String, u16>,
}

#[derive(Clone, Serialize, JsonSchema)]
struct Owner {
    name: String,
}

#[derive(Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Status {
    Open,
    InReview,
}

fn good() -> Report {
    Report {
        level: 3,
        code: "abc".to_owned(),
        id: "67e55044-10b1-426f-9247-bb680e5fe0c8".to_owned(),
        status: Status::InReview,
        ratio: Some(0.1 + 0.2),
        tags: vec!["a\"b\\c\u{1}é😀".to_owned()],
        owner: Some(Owner { name: "zoë \u{202e}".to_owned() }),
        counts: BTreeMap::from([("k\"ey".to_owned(), 7), ("other".to_owned(), u16::MAX)]),
    }
}

/// Runs `output` through both paths and asserts the results are the same.
fn same<T: ToolOutput + Clone>(limits: Limits, ctx: &CallContext, output: &T) -> ToolCallResult {
    let fast = Pipeline::builder().limits(limits).build();
    let value_path = Pipeline::builder().limits(limits).fast_path(false).build();
    let a = fast.call_sync(ctx, || Ok::<_, ToolError>(output.clone()));
    let b = value_path.call_sync(ctx, || Ok::<_, ToolError>(output.clone()));
    assert_eq!(a.to_wire_bytes(), b.to_wire_bytes(), "wire bytes");
    assert_eq!(a.structured_content(), b.structured_content(), "structuredContent");
    assert_eq!(a, b);
    a
}

fn ctx() -> CallContext {
    CallContext::new("report", json!({}))
}

#[test]
fn the_report_contract_is_covered_and_composed_shapes_say_why_not() {
    #[derive(Clone, Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = "exact")]
    #[serde(tag = "kind")]
    enum Shape {
        Circle { r: f64 },
        Square { side: f64 },
    }
    assert_eq!(Report::contract().fast_path(), Coverage::Covered);
    let Coverage::Fallback(why) = Shape::contract().fast_path() else { panic!("an internally tagged enum is covered") };
    assert!(why.contains("oneOf"), "{why}");
    // Fallback is per contract and still validates: a valid and an invalid value.
    assert!(!same(Limits::default(), &ctx(), &Shape::Circle { r: 1.0 }).is_error());
    let r = same(Limits::default(), &ctx(), &Shape::Square { side: f64::NAN });
    assert_eq!(r.error_code(), Some(ErrorCode::SerializationError));
}

#[test]
fn a_valid_result_is_written_identically() {
    let r = same(Limits::default(), &ctx(), &good());
    assert!(!r.is_error(), "{}", r.text());
    // The bytes are the typed result's own serde_json text, and the fast path wrote them.
    assert_eq!(r.text(), serde_json::to_string(&good()).unwrap());
    let written =
        contract_runtime::fused::write(Report::contract(), &good(), &Limits::default()).expect("judged valid");
    assert_eq!(written, r.text().as_bytes());
    let none =
        Report { status: Status::Open, ratio: None, owner: None, tags: vec![], counts: BTreeMap::new(), ..good() };
    assert!(!same(Limits::default(), &ctx(), &none).is_error());
}

#[test]
fn every_invalid_result_gets_the_value_paths_report() {
    let cases: Vec<(&str, Report)> = vec![
        ("level below the minimum", Report { level: 0, ..good() }),
        ("level above the maximum", Report { level: 11, ..good() }),
        ("code too short", Report { code: "a".to_owned(), ..good() }),
        ("code too long", Report { code: "abcdefghi".to_owned(), ..good() }),
        ("code off the pattern", Report { code: "ABC".to_owned(), ..good() }),
        ("id not a uuid", Report { id: "not-a-uuid".to_owned(), ..good() }),
        ("too many tags", Report { tags: vec!["a".to_owned(); 4], ..good() }),
        ("several at once", Report { level: 99, code: "X".to_owned(), ..good() }),
    ];
    for (why, report) in cases {
        let r = same(Limits::default(), &ctx(), &report);
        assert_eq!(r.error_code(), Some(ErrorCode::OutputContractViolation), "{why}");
        assert!(!r.violations().is_empty(), "{why}");
        // The fast serializer alone refuses it too.
        assert!(
            matches!(
                contract_runtime::fused::write(Report::contract(), &report, &Limits::default()),
                Err(Miss::Invalid(_))
            ),
            "{why}"
        );
    }
}

#[test]
fn non_finite_floats_and_limits_get_the_value_paths_errors() {
    for ratio in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let r = same(Limits::default(), &ctx(), &Report { ratio: Some(ratio), ..good() });
        assert_eq!(r.error_code(), Some(ErrorCode::SerializationError));
    }
    let r = same(Limits::default().with_max_bytes(64), &ctx(), &good());
    assert_eq!(r.error_code(), Some(ErrorCode::OutputLimitExceeded));
    let r = same(Limits::default().with_max_depth(1), &ctx(), &good());
    assert_eq!(r.error_code(), Some(ErrorCode::OutputLimitExceeded));
    // Controls: the same result within the limits passes.
    assert!(!same(Limits::default().with_max_bytes(4096).with_max_depth(2), &ctx(), &good()).is_error());
}

fn is_covered<T: ToolOutput>(_: &T) -> bool {
    if let Coverage::Fallback(why) = T::contract().fast_path() {
        println!("  {}: {why}", T::contract().name());
    }
    T::contract().fast_path() == Coverage::Covered
}

#[test]
fn every_demo_contract_gives_the_same_result_on_both_paths() {
    let ctx = CallContext::new("demo", json!({}));
    let mut covered = 0;
    macro_rules! demo {
        ($($sample:expr),*) => {$(
            let sample = $sample;
            covered += usize::from(is_covered(&sample));
            println!("fast path of {}: covered = {}", stringify!($sample), is_covered(&sample));
            let r = same(Limits::default(), &ctx, &sample);
            assert!(!r.is_error(), "{}", r.text());
        )*};
    }
    demo!(
        samples::fleet_status(),
        samples::task_status(),
        samples::pipeline_status(),
        samples::quality_assess(),
        samples::security_scan(),
        samples::coverage_gaps(),
        samples::search_tickets(),
        samples::ticket_page(),
        samples::scrape_page()
    );
    println!("fast path: {covered} of 9 demo contracts covered");
    assert!(covered >= 5, "only {covered} demo contracts are covered");
}

#[test]
fn wrapped_roots_completeness_and_middleware_keep_their_behaviour() {
    // An array root, wrapped for an older peer.
    let old = CallContext::new("tickets", json!({})).with_protocol(ProtocolVersion::new("2025-11-25"));
    let r = same(Limits::default(), &old, &samples::search_tickets());
    assert!(r.text().starts_with("{\"result\":"), "{}", r.text());
    // A false completeness claim is still refused on the fast path.
    let mut page = samples::scrape_page();
    page.completeness = Completeness::partial(99, Some(100), Truncation::Server, "capped");
    let r = same(Limits::default(), &CallContext::new("scrape", json!({})), &page);
    assert_eq!(r.error_code(), Some(ErrorCode::FalseCompleteness));
    // With a middleware the Value path runs: the middleware's breakage is caught.
    let breaking = Pipeline::builder()
        .middleware(middleware_fn("break", |_, v| {
            v["level"] = json!(0);
            Ok(())
        }))
        .build();
    let r = breaking.call_sync(&ctx(), || Ok::<_, ToolError>(good()));
    assert_eq!(r.error_code(), Some(ErrorCode::OutputContractViolation));
}

#[test]
fn floats_against_integer_bounds_are_compared_exactly() {
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(version = "1.0.0", compatibility = "exact")]
    struct Counter {
        n: u64,
    }
    let contract = Counter::contract();
    let limits = Limits::default();
    // 2^64 as a float rounds to the same f64 as u64::MAX, but is above it: the property
    // tests found the plan comparing the two as floats.
    let above = json!({ "n": 18_446_744_073_709_551_616.0_f64 });
    assert!(!contract.is_valid(&above));
    assert!(matches!(contract_runtime::fused::write(contract, &above, &limits), Err(Miss::Invalid(_))));
    // Controls: u64::MAX itself, and an integral float inside the range.
    for fine in [json!({ "n": u64::MAX }), json!({ "n": 4.0 })] {
        assert!(contract.is_valid(&fine), "{fine}");
        let bytes = contract_runtime::fused::write(contract, &fine, &limits).expect("accepted");
        assert_eq!(bytes, serde_json::to_vec(&fine).unwrap());
    }
    let below = json!({ "n": -0.5 });
    assert!(!contract.is_valid(&below));
    assert!(contract_runtime::fused::write(contract, &below, &limits).is_err());
}

/// The text block's escaper against serde_json's, on generated strings: every control
/// character, quotes, backslashes, DEL, non-ASCII of every width, U+2028/U+2029, and
/// long runs of each, at every alignment. The oracle is serde_json's own writer.
#[test]
fn the_text_block_escaper_writes_what_serde_json_writes() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    let piece = prop_oneof![
        (0u32..0x20).prop_map(|c| char::from_u32(c).unwrap().to_string()),
        Just("\"".to_owned()),
        Just("\\".to_owned()),
        Just("\u{7f}".to_owned()),
        Just("\u{2028}\u{2029}".to_owned()),
        Just("é😀中".to_owned()),
        "[a-z0-9 ,:{}]{1,40}",
        ("[\"\\\\a]", 1usize..200).prop_map(|(s, n)| s.repeat(n)),
        any::<char>().prop_map(String::from),
    ];
    let text = proptest::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat());
    let mut runner = TestRunner::new(Config { cases: 2_000, failure_persistence: None, ..Config::default() });
    let checked = std::cell::Cell::new(0usize);
    runner
        .run(&text, |text| {
            let mut ours = b"head".to_vec();
            contract_runtime::wire::write_json_string(&mut ours, &text);
            let theirs = serde_json::to_vec(&text).unwrap();
            prop_assert_eq!(&ours[4..], theirs.as_slice());
            checked.set(checked.get() + 1);
            Ok(())
        })
        .unwrap();
    assert!(checked.get() >= 2_000, "{} strings checked", checked.get());
    // Clean control: a string with nothing to escape comes out as it went in, quoted.
    let mut plain = Vec::new();
    contract_runtime::wire::write_json_string(&mut plain, "nothing to escape here at all");
    assert_eq!(plain, b"\"nothing to escape here at all\"");
}

#[test]
fn the_wire_bytes_are_the_result_serialized() {
    // Results whose texts hold every kind of escape: the report (quotes, a backslash, a
    // control character, non-ASCII), an error, and a wrapped root.
    let old = CallContext::new("tickets", json!({})).with_protocol(ProtocolVersion::new("2025-11-25"));
    let results = [
        Pipeline::builder().build().call_sync(&ctx(), || Ok::<_, ToolError>(good())),
        Pipeline::builder().build().call_sync(&ctx(), || Err::<Report, _>(ToolError::unavailable("down \"now\"\n"))),
        Pipeline::builder().build().call_sync(&old, || Ok::<_, ToolError>(samples::search_tickets())),
    ];
    for r in &results {
        let bytes = r.to_wire_bytes();
        // The text block is the text, escaped as serde_json escapes it.
        let head = format!(r#"{{"content":[{{"type":"text","text":{}}}]"#, serde_json::to_string(r.text()).unwrap());
        assert!(bytes.starts_with(head.as_bytes()), "{}", String::from_utf8_lossy(&bytes));
        assert_eq!(serde_json::from_slice::<serde_json::Value>(&bytes).unwrap(), r.to_json());
        assert_eq!(r.to_wire().to_vec(), bytes);
    }
    assert!(results[1].is_error() && !results[0].is_error());
}
