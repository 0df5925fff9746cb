//! The property proof of every demo contract.
//!
//! For each contract of `qe_server::all_contracts()` the test draws values of the Rust
//! result type itself from proptest strategies written here (every shape serde can write:
//! empty collections, `None`s, integers at 0 and at their type's MIN and MAX, finite floats
//! at their extremes and subnormals, arbitrary unicode, every enum variant, timestamps
//! anywhere in the years 0000–9999 with nanoseconds and leap seconds, arbitrary JSON in the
//! opaque fields), serializes each one with serde, and validates it with the contract:
//! none may be rejected. That every listed shape and every variant was really generated
//! is asserted too, from lists written from the Rust types.
//!
//! Each serialized value then receives two independent single faults, each at a random
//! location (a key dropped, renamed or added, a value of another JSON type, an integer
//! out of a width's range, a string that is no variant, `null`, an array where an object
//! is and back, a string or key borrowed from elsewhere in the payload or from earlier
//! values of the type, an array edited, a number or boolean nudged). Whether a faulty
//! payload is still valid is decided by an oracle that never reads the schema under test:
//! the payload must deserialize into a strict twin of the Rust type (hand-written mirrors
//! below: exact integer widths, every field required, unknown keys refused where the
//! contract is `exact` and kept where it is `additive`) and the twin must serialize back to
//! the same JSON. Faults the oracle calls invalid must be rejected by the contract (false
//! accepts: 0); faults it calls valid must be accepted (false rejects: 0).
//!
//! "The same JSON" compares numbers by value, as JSON and JSON Schema do: `3` and `3.0` are
//! one number, and an `f64` field reads any number as the nearest double (`same_number`).
//!
//! Two controls keep the proof honest: the oracle is checked on hand-written cases
//! (`the_oracle_judges_hand_written_cases`), and the same runner against copies of a
//! schema with one family of constraints removed must report false accepts
//! (`a_weakened_schema_is_caught`). One known false reject in the schema of
//! `DateTime<Utc>` is kept out of the counts and counted on its own
//! (`known_issue_timestamps_chrono_writes_but_date_time_refuses`), and so is one false
//! accept no JSON Schema can avoid, integers written as `1.0`
//! (`known_limitation_integral_floats_pass_as_integers`); no fault of the mix writes an
//! integer as a float with a zero fraction.
//!
//! The same runner, pointed at three shapes from outside the demo slice (a flattened map
//! with `u32` keys, maps keyed by `bool` and `char`, a flattened `Option<Struct>`), finds
//! the false accepts schemars' schemas allowed under `exact`; those tests assert that they are still
//! found, so the fix in the schema generator turns them into proofs (`hostile.rs`).
//!
//! Everything is deterministic: one fixed seed per contract and fixed thresholds. The
//! counts are printed per contract (`cargo test -p contract-tests --all-features --test
//! properties -- --nocapture`); the thresholds are asserted.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use contract_runtime::OutputContract;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use qe_server::contracts as qe;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

#[path = "../support/mod.rs"]
mod support;

use support::fast_path;

/// An integer strategy that hits the type's MIN, MAX and 0 often, small values, and the
/// whole range.
macro_rules! int {
    ($t:ty) => {
        prop_oneof![
            1 => Just(<$t>::MIN),
            1 => Just(<$t>::MAX),
            1 => Just(0 as $t),
            2 => (0 as $t)..(16 as $t),
            4 => any::<$t>(),
        ]
    };
}

mod faults;
mod hostile;
mod strategies;
mod twins;

use faults::{apply, at_mut, locations, plan, pointer, Kind, Plan, Seg, KINDS};
use strategies::{
    coverage_gaps, fleet_status, pipeline_status, quality_assess, scrape_page, search_tickets, seconds, security_scan,
    task_status, ticket_page, DAY,
};
use twins::{oracle, TaskStatusTwin};

/// Values generated from the Rust type per contract, at least; none may be rejected.
const VALUES: usize = 10_000;
/// Single-fault payloads per contract that the oracle calls invalid, at least; none may
/// be accepted. The faults the oracle calls valid come on top.
const INVALID_FAULTS: usize = 10_000;
/// A bound on the cases per contract, so that a fault mix that stopped producing invalid
/// payloads fails the test instead of looping.
const MAX_CASES: usize = 40_000;

/// What happened to one contract's cases.
#[derive(Debug, Default)]
struct Tally {
    values: usize,
    values_rejected: Vec<String>,
    invalid_faults: usize,
    false_accepts: Vec<String>,
    valid_faults: usize,
    false_rejects: Vec<String>,
    /// Faults per kind: (invalid by the oracle, still valid).
    by_kind: BTreeMap<Kind, (usize, usize)>,
    /// Generated values holding each edge shape.
    shapes: BTreeMap<&'static str, usize>,
    /// Every string the generated values held, for the enum-variant coverage check; only
    /// strings of at most 12 bytes are kept, which every variant name is.
    short_strings: BTreeSet<String>,
    /// Keys and words earlier values of the type held, for faults.
    seen: Seen,
}

/// Object keys and lowercase words (`[a-z_]+`, the shape of field and variant names) the
/// values generated so far held, in the order first seen: material for faults that
/// borrow from another value of the same type, such as another variant's field or name.
#[derive(Debug, Default)]
struct Seen {
    keys: Vec<String>,
    words: Vec<String>,
    known: BTreeSet<(bool, String)>,
}

impl Seen {
    fn add(&mut self, is_key: bool, text: &str) {
        let word = !text.is_empty() && text.len() <= 24 && text.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
        if word && self.known.insert((is_key, text.to_owned())) {
            if is_key { &mut self.keys } else { &mut self.words }.push(text.to_owned());
        }
    }
}

/// Records the edge shapes `value` holds (walking its JSON, not its schema) in `tally`.
fn note_shapes(value: &Value, tally: &mut Tally) {
    fn walk(value: &Value, found: &mut BTreeSet<&'static str>, strings: &mut BTreeSet<String>, seen: &mut Seen) {
        match value {
            Value::Null => drop(found.insert("null")),
            Value::Number(n) => {
                let shape = match (n.as_u64(), n.as_f64()) {
                    (Some(0), _) => Some("integer 0"),
                    (Some(255), _) => Some("u8::MAX"),
                    (Some(65_535), _) => Some("u16::MAX"),
                    (Some(4_294_967_295), _) => Some("u32::MAX"),
                    (Some(u64::MAX), _) => Some("u64::MAX"),
                    (None, Some(f)) if f == 0.0 && f.is_sign_negative() => Some("-0.0"),
                    (None, Some(f)) if f.abs() >= f64::MAX || (f != 0.0 && !f.is_normal()) => {
                        Some("float at MAX or subnormal")
                    }
                    _ => None,
                };
                found.extend(shape);
            }
            Value::String(text) => {
                found.extend(text.is_empty().then_some("empty string"));
                found.extend((!text.is_ascii()).then_some("non-ASCII string"));
                found.extend(text.chars().any(char::is_control).then_some("control character"));
                found.extend(text.starts_with("0000-").then_some("year 0000"));
                found.extend(text.starts_with("9999-").then_some("year 9999"));
                found.extend(text.contains("T23:59:60").then_some("leap second"));
                if text.len() <= 12 {
                    strings.insert(text.clone());
                }
                seen.add(false, text);
            }
            Value::Array(items) => {
                found.extend(items.is_empty().then_some("empty array"));
                for v in items {
                    walk(v, found, strings, seen);
                }
            }
            Value::Object(map) => {
                for (key, v) in map {
                    seen.add(true, key);
                    walk(v, found, strings, seen);
                }
            }
            Value::Bool(_) => {}
        }
    }
    let mut found = BTreeSet::new();
    walk(value, &mut found, &mut tally.short_strings, &mut tally.seen);
    for shape in found {
        *tally.shapes.entry(shape).or_default() += 1;
    }
}

fn contract(name: &str) -> &'static OutputContract {
    let set = qe_server::all_contracts();
    set.check().unwrap_or_else(|err| panic!("{err}"));
    set.get(name).unwrap_or_else(|| panic!("no contract named {name}"))
}

/// What decides whether a payload passes: the contract under test, or, for the
/// harness's own negative control, a validator compiled from a weakened copy of a schema.
trait Judge {
    fn accepts(&self, payload: &Value) -> bool;
    /// The violations, for the printed examples.
    fn why(&self, payload: &Value) -> String;
}

impl Judge for OutputContract {
    fn accepts(&self, payload: &Value) -> bool {
        // Every payload the contract judges is judged by the fast path too:
        // a disagreement fails the run on the spot, naming the payload.
        let (valid, disagreement) = fast_path::compare(self, payload);
        if let Some(disagreement) = disagreement {
            panic!("fast path disagreement: {disagreement}");
        }
        valid
    }

    fn why(&self, payload: &Value) -> String {
        match self.validate(payload) {
            Ok(()) => "accepted".to_owned(),
            Err(report) => report
                .violations()
                .iter()
                .map(|v| format!("{} {}", v.pointer(), v.keyword()))
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

impl Judge for jsonschema::Validator {
    fn accepts(&self, payload: &Value) -> bool {
        self.is_valid(payload)
    }

    fn why(&self, payload: &Value) -> String {
        self.iter_errors(payload)
            .map(|e| format!("{} {}", e.instance_path(), e.kind().keyword()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Draws values of the contract's Rust type from `strategy` (at least `values` of them)
/// and two single faults per value, until the oracle (the strict twin `T`) has called at
/// least `invalid_faults` of them invalid; `judge` judges every payload. The seed comes
/// from `name`, so every run draws the same cases.
fn run<T, S>(name: &str, judge: &dyn Judge, strategy: S, values: usize, invalid_faults: usize) -> Tally
where
    T: DeserializeOwned + Serialize,
    S: Strategy,
    S::Value: Serialize,
{
    // One fixed seed per contract: deterministic, and the contracts do not share a stream.
    // XorShift rather than ChaCha: unoptimized ChaCha took most of a debug run's time.
    let mut seed = [7u8; 16];
    for (i, byte) in name.bytes().enumerate() {
        seed[i % seed.len()] ^= byte;
    }
    let config =
        Config { cases: u32::try_from(MAX_CASES).expect("fits"), failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::XorShift, &seed));
    // Two faults per value: faults are the larger half of the proof, and drawing a
    // value costs more than faulting one.
    let case = (strategy, plan(), plan());
    let mut tally = Tally::default();
    for _ in 0..config_cases(&runner) {
        if tally.values >= values && tally.invalid_faults >= invalid_faults {
            break;
        }
        let (typed, first, second) = case.new_tree(&mut runner).expect("the strategies never reject").current();
        let value = serde_json::to_value(&typed).expect("a generated value serializes");
        tally.values += 1;
        note_shapes(&value, &mut tally);
        if !judge.accepts(&value) {
            tally.values_rejected.push(format!("{value}\n      {}", judge.why(&value)));
        }
        // The generated value is the control the twin must agree with; a disagreement is a
        // bug of the twin, and every fault verdict after it would be worthless.
        if let Err(why) = oracle::<T>(&value) {
            panic!("{name}: the twin refuses a generated value ({why}):\n{value}");
        }
        for plan in [first, second] {
            judge_fault::<T>(judge, &plan, &value, &mut tally);
        }
    }
    tally
}

/// Runs the proof for contract `name`, whose Rust type `strategy` generates and whose
/// strict twin is `T`, prints the counts and asserts the thresholds. `shapes` are the
/// edge shapes the type can take and `variants` the serialized names of its enums'
/// variants (both written from the Rust type): each must have been generated.
fn prove<T, S>(name: &str, strategy: S, shapes: &[&str], variants: &[&str])
where
    T: DeserializeOwned + Serialize,
    S: Strategy,
    S::Value: Serialize,
{
    let tally = run::<T, S>(name, contract(name), strategy, VALUES, INVALID_FAULTS);
    report(name, &tally);
    let missing: Vec<&&str> = shapes.iter().chain(BASIC_SHAPES).filter(|s| !tally.shapes.contains_key(**s)).collect();
    assert!(missing.is_empty(), "{name}: no generated value held {missing:?}");
    let missing: Vec<&&str> = variants.iter().filter(|v| !tally.short_strings.contains(**v)).collect();
    assert!(missing.is_empty(), "{name}: variants never generated: {missing:?}");
}

/// Shapes every demo type can take: they all hold strings.
const BASIC_SHAPES: &[&str] = &["empty string", "non-ASCII string", "control character"];
/// The shapes a `DateTime<Utc>` field adds.
const TIME_SHAPES: [&str; 3] = ["year 0000", "year 9999", "leap second"];
/// The variants `Completeness` adds.
const COMPLETENESS_VARIANTS: [&str; 7] = ["complete", "partial", "unknown", "unavailable", "none", "client", "server"];

/// Applies one fault to `value` as `plan` says and records how the oracle and the judge
/// see the result.
fn judge_fault<T: DeserializeOwned + Serialize>(judge: &dyn Judge, plan: &Plan, value: &Value, tally: &mut Tally) {
    // The drawn kind first; kinds that fit nowhere in this value hand over to the next.
    // `ChangeType` fits every value, so some fault always applies.
    let (kind, (what, faulty)) = (0..KINDS.len())
        .map(|step| KINDS[(plan.kind + step) % KINDS.len()])
        .find_map(|kind| apply(kind, plan, value, &tally.seen).map(|fault| (kind, fault)))
        .expect("some fault applies");
    let accepted = judge.accepts(&faulty);
    let counts = tally.by_kind.entry(kind).or_default();
    if let Err(why) = oracle::<T>(&faulty) {
        tally.invalid_faults += 1;
        counts.0 += 1;
        if accepted {
            tally.false_accepts.push(format!("{what}: {why}\n      {faulty}"));
        }
    } else {
        tally.valid_faults += 1;
        counts.1 += 1;
        if !accepted {
            tally.false_rejects.push(format!("{what}: {}\n      {faulty}", judge.why(&faulty)));
        }
    }
}

fn config_cases(runner: &TestRunner) -> usize {
    usize::try_from(runner.config().cases).expect("fits")
}

fn report(name: &str, tally: &Tally) {
    println!(
        "properties {name}: {} values generated, {} rejected | {} single-fault payloads: {} invalid by the oracle, {} \
         accepted (false accepts); {} still valid, {} rejected (false rejects)",
        tally.values,
        tally.values_rejected.len(),
        tally.invalid_faults + tally.valid_faults,
        tally.invalid_faults,
        tally.false_accepts.len(),
        tally.valid_faults,
        tally.false_rejects.len(),
    );
    let kinds: Vec<String> =
        tally.by_kind.iter().map(|(kind, (invalid, valid))| format!("{kind:?} {invalid}/{valid}")).collect();
    println!("properties {name}: faults by kind (invalid/valid): {}", kinds.join(", "));
    println!("properties {name}: {} so far in this process, 0 disagreements (each one panics)", fast_path::totals());
    let shapes: Vec<String> = tally.shapes.iter().map(|(shape, n)| format!("{shape} {n}")).collect();
    println!("properties {name}: generated values holding each shape: {}", shapes.join(", "));
    for (label, cases) in [
        ("generated value rejected", &tally.values_rejected),
        ("FALSE ACCEPT", &tally.false_accepts),
        ("FALSE REJECT", &tally.false_rejects),
    ] {
        for case in cases.iter().take(5) {
            println!("  {name} {label}: {case}");
        }
    }
    assert!(tally.values >= VALUES, "{name}: only {} values generated", tally.values);
    assert!(tally.invalid_faults >= INVALID_FAULTS, "{name}: only {} invalid faults", tally.invalid_faults);
    assert!(tally.valid_faults > 0, "{name}: no fault kept the payload valid, so false rejects went unmeasured");
    assert!(tally.values_rejected.is_empty(), "{name}: {} generated values rejected", tally.values_rejected.len());
    assert!(tally.false_accepts.is_empty(), "{name}: {} false accepts", tally.false_accepts.len());
    assert!(tally.false_rejects.is_empty(), "{name}: {} false rejects", tally.false_rejects.len());
}

// ========================================================================== tests

/// The contracts proven below; the completeness test keeps it equal to the server's.
const PROVEN: [&str; 9] = [
    "fleet_status",
    "task_status",
    "pipeline_status",
    "quality_assess",
    "security_scan",
    "qe/coverage_gaps",
    "search_tickets",
    "search_tickets_page",
    "scrape_page",
];

#[test]
fn every_contract_has_a_property_proof() {
    let published: BTreeSet<String> =
        qe_server::all_contracts().contracts().iter().map(|c| c.name().to_owned()).collect();
    let proven: BTreeSet<String> = PROVEN.iter().map(|&n| n.to_owned()).collect();
    assert_eq!(published, proven, "a contract was added or removed: give it a strategy and a twin here");
}

#[test]
fn fleet_status_property() {
    let shapes = [&["empty array", "null", "integer 0", "u32::MAX", "u64::MAX"][..], &TIME_SHAPES].concat();
    let variants = ["coordinator", "worker", "reviewer", "idle", "busy", "failed", "offline"];
    prove::<twins::FleetStatus, _>("fleet_status", fleet_status(), &shapes, &variants);
}

#[test]
fn task_status_property() {
    let shapes = [&["null", "integer 0", "u8::MAX", "u32::MAX", "u64::MAX"][..], &TIME_SHAPES].concat();
    let variants = ["queued", "running", "succeeded", "failed", "cancelled"];
    prove::<TaskStatusTwin, _>("task_status", task_status(), &shapes, &variants);
}

#[test]
fn pipeline_status_property() {
    let shapes = [&["empty array", "null", "integer 0", "u32::MAX", "u64::MAX"][..], &TIME_SHAPES].concat();
    let variants = ["pending", "running", "passed", "failed", "cancelled"];
    prove::<twins::PipelineStatus, _>("pipeline_status", pipeline_status(), &shapes, &variants);
}

#[test]
fn quality_assess_property() {
    let shapes = [&["empty array", "null", "-0.0", "float at MAX or subnormal"][..], &TIME_SHAPES].concat();
    prove::<twins::QualityAssess, _>("quality_assess", quality_assess(), &shapes, &["pass", "warn", "fail"]);
}

#[test]
fn security_scan_property() {
    let shapes = [&["empty array", "null", "integer 0", "u32::MAX"][..], &TIME_SHAPES].concat();
    let variants = ["critical", "high", "medium", "low", "info"];
    prove::<twins::SecurityScan, _>("security_scan", security_scan(), &shapes, &variants);
}

#[test]
fn coverage_gaps_property() {
    let shapes = ["empty array", "null", "integer 0", "u32::MAX", "u64::MAX", "-0.0", "float at MAX or subnormal"];
    let variants = [&["low", "medium", "high"][..], &COMPLETENESS_VARIANTS].concat();
    prove::<twins::CoverageGaps, _>("qe/coverage_gaps", coverage_gaps(), &shapes, &variants);
}

#[test]
fn search_tickets_property() {
    prove::<twins::SearchTickets, _>("search_tickets", search_tickets(), &["empty array"], &["open", "closed"]);
}

#[test]
fn search_tickets_page_property() {
    let variants = [&["open", "closed"][..], &COMPLETENESS_VARIANTS].concat();
    prove::<twins::TicketPage, _>(
        "search_tickets_page",
        ticket_page(),
        &["empty array", "null", "integer 0", "u64::MAX"],
        &variants,
    );
}

#[test]
fn scrape_page_property() {
    let shapes =
        [&["empty array", "null", "integer 0", "u16::MAX", "u64::MAX", "float at MAX or subnormal"][..], &TIME_SHAPES]
            .concat();
    let variants = [&["click", "scroll", "screenshot", "extract"][..], &COMPLETENESS_VARIANTS].concat();
    prove::<twins::ScrapePage, _>("scrape_page", scrape_page(), &shapes, &variants);
}

/// KNOWN ISSUE, excluded from the counts above and counted here. chrono serializes every
/// `DateTime<Utc>` it can hold, and reads each one back, but the schema of `DateTime<Utc>`
/// (`format: date-time`, RFC 3339) refuses two classes of them: years outside 0000–9999
/// (`"+10000-01-01T00:00:00Z"`, `"-0001-…"`) and leap seconds anywhere but the end of a
/// UTC day (`"…T12:34:60Z"`, which chrono holds for any minute). A handler that returns
/// such a timestamp gets an `output_contract_violation` for a value its own type allows.
/// The cause is the generated schema (schemars' `DateTime<Utc>` schema), not the demo
/// types. This test asserts that the issue is still there,
/// so that the day the schema admits these timestamps it fails and they move into
/// `time()` above.
#[test]
fn known_issue_timestamps_chrono_writes_but_date_time_refuses() {
    const CASES: usize = 1_000;
    let contract = contract("task_status");
    let (first, end) = (seconds(0), seconds(10_000));
    let at = |s: i64, n: u32| DateTime::from_timestamp(s, n).expect("in chrono's range");
    let outside = prop_oneof![
        (end..=DateTime::<Utc>::MAX_UTC.timestamp(), 0..1_000_000_000u32).prop_map(move |(s, n)| at(s, n)),
        (DateTime::<Utc>::MIN_UTC.timestamp()..first, 0..1_000_000_000u32).prop_map(move |(s, n)| at(s, n)),
        // A leap second at the end of any minute but the last of a day.
        (first / 60..end / 60, 1_000_000_000..2_000_000_000u32)
            .prop_filter("not the end of a day", |(m, _)| (m + 1) % (DAY / 60) != 0)
            .prop_map(move |(m, n)| at(m * 60 + 59, n)),
    ];
    let mut runner = TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::XorShift, &[11; 16]));
    let mut refused = 0;
    for _ in 0..CASES {
        let updated_at = outside.new_tree(&mut runner).expect("never rejects all").current();
        let typed = qe::TaskStatus {
            task_id: "T-1".to_owned(),
            state: qe::TaskState::Cancelled,
            attempts: 1,
            assigned_agent: None,
            updated_at,
        };
        let value = serde_json::to_value(&typed).expect("serializes");
        if let Err(why) = oracle::<TaskStatusTwin>(&value) {
            panic!("serde does not read back what it wrote ({why}): {value}");
        }
        if !contract.is_valid(&value) {
            refused += 1;
        }
    }
    println!(
        "properties KNOWN ISSUE (schema of DateTime<Utc>): {refused} of {CASES} timestamps chrono writes (years \
         outside 0000-9999, leap seconds before 23:59) refused by format: date-time; excluded from the counts above"
    );
    assert_eq!(refused, CASES, "some of these timestamps are accepted now: move them into time() and update this test");
}

/// The oracle on hand-written cases, each decided from the Rust types alone: the proof
/// is only as good as its oracle, so the oracle is checked on its own first.
#[test]
fn the_oracle_judges_hand_written_cases() {
    use qe_server::samples as s;
    fn edit(value: &Value, pointer: &str, change: impl FnOnce(&mut Value)) -> Value {
        let mut value = value.clone();
        change(value.pointer_mut(pointer).unwrap_or_else(|| panic!("{pointer} exists")));
        value
    }
    fn add(key: &'static str) -> impl FnOnce(&mut Value) {
        move |v| drop(v.as_object_mut().expect("an object").insert(key.to_owned(), 1.into()))
    }
    let pipeline = serde_json::to_value(s::pipeline_status()).expect("serializes");
    let fleet = serde_json::to_value(s::fleet_status()).expect("serializes");
    let quality = serde_json::to_value(s::quality_assess()).expect("serializes");
    let tasks: Vec<Value> = s::task_statuses().iter().map(|t| serde_json::to_value(t).expect("serializes")).collect();
    let running = tasks.iter().find(|t| t["state"] == "running").expect("a running sample");

    // Clean controls: the samples, an unknown key under `additive`, an integer in an f64.
    assert_eq!(oracle::<twins::PipelineStatus>(&pipeline), Ok(()));
    assert_eq!(oracle::<twins::FleetStatus>(&fleet), Ok(()));
    assert_eq!(oracle::<TaskStatusTwin>(running), Ok(()));
    assert_eq!(oracle::<twins::FleetStatus>(&edit(&fleet, "", add("extra"))), Ok(()));
    assert_eq!(oracle::<twins::FleetStatus>(&edit(&fleet, "/agents/0", add("extra"))), Ok(()));
    assert_eq!(oracle::<twins::QualityAssess>(&edit(&quality, "/overall_score", |v| *v = 3.into())), Ok(()));

    // Faults: an unknown key under `exact`, at the root and nested, and beside a flattened
    // enum; a dropped `Option`; a u8 out of range; a timestamp serde never writes; a
    // variant in the wrong case; a key of another variant.
    let invalid = [
        oracle::<twins::PipelineStatus>(&edit(&pipeline, "", add("extra"))),
        oracle::<twins::PipelineStatus>(&edit(&pipeline, "/summary", add("extra"))),
        oracle::<TaskStatusTwin>(&edit(running, "", add("extra"))),
        oracle::<TaskStatusTwin>(&edit(running, "", add("position"))),
        oracle::<twins::PipelineStatus>(&edit(&pipeline, "/stages/0", |v| {
            v.as_object_mut().expect("an object").remove("duration_ms");
        })),
        oracle::<TaskStatusTwin>(&edit(running, "/progress_percent", |v| *v = 256.into())),
        oracle::<twins::FleetStatus>(&edit(&fleet, "/generated_at", |v| *v = "2026-11-30T12:00:00+02:00".into())),
        oracle::<twins::PipelineStatus>(&edit(&pipeline, "/status", |v| *v = "Passed".into())),
    ];
    for (i, verdict) in invalid.iter().enumerate() {
        assert!(verdict.is_err(), "fault {i} passed the oracle");
    }
}

/// The harness's own negative control: the same runner against copies of a contract's
/// schema with one family of constraints removed must find false accepts (and still no
/// false rejects, since removing constraints only loosens). A runner that derived its
/// faults from the schema under test would find fewer faults instead of failures.
#[test]
fn a_weakened_schema_is_caught() {
    fn strip(value: &mut Value, keyword: &str) -> usize {
        match value {
            Value::Object(map) => {
                let here = usize::from(map.remove(keyword).is_some());
                here + map.values_mut().map(|v| strip(v, keyword)).sum::<usize>()
            }
            Value::Array(items) => items.iter_mut().map(|v| strip(v, keyword)).sum(),
            _ => 0,
        }
    }
    let name = "pipeline_status";
    for keyword in ["additionalProperties", "required", "maximum", "format", "enum"] {
        let mut schema = contract(name).schema().clone();
        assert!(strip(&mut schema, keyword) > 0, "{name} has no {keyword:?} to remove");
        let weak = jsonschema::draft202012::options().should_validate_formats(true).build(&schema).expect("compiles");
        let tally = run::<twins::PipelineStatus, _>(name, &weak, pipeline_status(), 500, 1_000);
        println!(
            "properties negative control {name} without {keyword:?}: {} false accepts of {} invalid faults, {} false \
             rejects",
            tally.false_accepts.len(),
            tally.invalid_faults,
            tally.false_rejects.len()
        );
        assert!(!tally.false_accepts.is_empty(), "removing {keyword:?} went unnoticed");
        assert!(tally.false_rejects.is_empty() && tally.values_rejected.is_empty(), "a weaker schema rejected more");
    }
}

/// KNOWN LIMITATION, outside the fault mix above and counted here. JSON Schema counts a
/// number with a zero fraction as an integer (`1.0` is `"type": "integer"`), serde does
/// not: `serde_json` refuses `1.0` for a `u32`, so a Rust client whose type mirrors the
/// contract cannot read a payload the contract accepts. No 2020-12 keyword tells `1` from
/// `1.0` (they are one JSON number), so neither the schema generator nor the demo types
/// can close this; a producer built on serde never writes `1.0` for an integer, but
/// middleware or another server's `structuredContent` can. This test counts those cases
/// in the samples and asserts the state, so that it is noticed if either side changes.
#[test]
fn known_limitation_integral_floats_pass_as_integers() {
    use qe_server::samples as s;
    let cases = [
        ("fleet_status", serde_json::to_value(s::fleet_status()).expect("serializes")),
        ("pipeline_status", serde_json::to_value(s::pipeline_status()).expect("serializes")),
    ];
    let mut probes = 0;
    for (name, value) in cases {
        let contract = contract(name);
        let integers: Vec<Vec<Seg>> =
            locations(&value).into_iter().filter(|(_, v)| v.is_u64()).map(|(path, _)| path).collect();
        assert!(!integers.is_empty(), "{name}: the sample holds integers");
        for path in integers {
            let mut faulty = value.clone();
            let target = at_mut(&mut faulty, &path);
            let whole = target.as_u64().expect("an integer");
            // The samples' integers are small, so the float is exactly the same number.
            *target = Value::from(f64::from(u32::try_from(whole).expect("a small sample integer")));
            let verdict = if name == "fleet_status" {
                oracle::<twins::FleetStatus>(&faulty)
            } else {
                oracle::<twins::PipelineStatus>(&faulty)
            };
            assert!(verdict.is_err(), "{name}: serde reads {} as an integer now", pointer(&path));
            assert!(contract.is_valid(&faulty), "{name}: the contract refuses {} now", pointer(&path));
            probes += 1;
        }
    }
    println!(
        "properties KNOWN LIMITATION (JSON Schema integers): {probes} of {probes} integers written as floats with a \
         zero fraction are accepted by the contracts and refused by serde; not part of the fault mix"
    );
}
