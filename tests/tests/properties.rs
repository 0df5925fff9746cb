//! Seed 000, experiment 11: the property proof of every demo contract (issue #9, item 1).
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
//! the false accepts issue #9 reports under `exact`; those tests assert that they are still
//! found, so the fix in the schema generator turns them into proofs (see "hostile shapes").
//!
//! Everything is deterministic: one fixed seed per contract and fixed thresholds. The
//! counts are printed per contract (`cargo test -p contract-tests --all-features --test
//! properties -- --nocapture`); the thresholds are asserted.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use chrono::{DateTime, TimeZone, Utc};
use contract_runtime::{Completeness, Disposition, OutputContract, Truncation};
use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use proptest::sample::{select, Index};
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use qe_server::contracts as qe;
use serde::de::{DeserializeOwned, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Number, Value};

/// Values generated from the Rust type per contract, at least; none may be rejected.
const VALUES: usize = 10_000;
/// Single-fault payloads per contract that the oracle calls invalid, at least; none may
/// be accepted. The faults the oracle calls valid come on top.
const INVALID_FAULTS: usize = 10_000;
/// A bound on the cases per contract, so that a fault mix that stopped producing invalid
/// payloads fails the test instead of looping.
const MAX_CASES: usize = 40_000;

// ====================================================================== strategies

/// Strings of arbitrary unicode (controls, combining marks, astral planes), the empty
/// string, and a few that are awkward in JSON, paths or terminals.
fn text() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        1 => Just(String::new()),
        5 => vec(any::<char>(), 0..12).prop_map(String::from_iter),
        2 => select(&[
            "plain", "Grüße", "日本語のテキスト", "👩\u{200d}💻", "a\u{0}b", "\"quoted\\\"", "/etc/passwd",
            "\u{202e}rtl", " ", "null", "{}", "~1/~0", "é\u{301}",
        ][..])
        .prop_map(str::to_owned),
    ]
}

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

/// Every finite `f64` serde_json can write: both zeros, both extremes, the smallest
/// normal and subnormal, ordinary values and the whole finite range. NaN and infinities
/// serialize as `null` and are the pipeline's business (finite.rs), not a shape.
fn float() -> impl Strategy<Value = f64> + Clone {
    use proptest::num::f64 as f;
    prop_oneof![
        1 => select(&[0.0, -0.0, f64::MAX, f64::MIN, f64::MIN_POSITIVE, -f64::MIN_POSITIVE, 5e-324, f64::EPSILON][..]),
        2 => -1000.0..1000.0f64,
        3 => f::POSITIVE | f::NEGATIVE | f::NORMAL | f::SUBNORMAL | f::ZERO,
    ]
}

fn seconds(year: i32) -> i64 {
    Utc.with_ymd_and_hms(year, 1, 1, 0, 0, 0).single().expect("a valid year start").timestamp()
}

const DAY: i64 = 86_400;

/// Timestamps anywhere in the RFC 3339 years 0000–9999, with or without nanoseconds,
/// and leap seconds at the end of a UTC day (chrono writes them as `23:59:60`).
///
/// chrono also serializes timestamps that `format: date-time` refuses: years outside
/// 0000–9999 (`+10000-…`, `-0001-…`) and leap seconds at any other minute (`12:34:60`).
/// Those false rejects come from the schema of `DateTime<Utc>`, not from the demo types,
/// so they are kept out of these strategies and proven, counted and printed by
/// `known_issue_timestamps_chrono_writes_but_date_time_refuses` below.
fn time() -> impl Strategy<Value = DateTime<Utc>> + Clone {
    let (first, last) = (seconds(0), seconds(10_000) - 1);
    let at = |s: i64, n: u32| DateTime::from_timestamp(s, n).expect("in chrono's range");
    prop_oneof![
        1 => Just(DateTime::UNIX_EPOCH),
        1 => prop_oneof![Just(first), Just(last)].prop_map(move |s| at(s, 0)),
        4 => (first..=last).prop_map(move |s| at(s, 0)),
        4 => (first..=last, 0..1_000_000_000u32).prop_map(move |(s, n)| at(s, n)),
        1 => (first / DAY..last / DAY, 1_000_000_000..2_000_000_000u32).prop_map(move |(d, n)| at(d * DAY + DAY - 1, n)),
    ]
}

fn json_leaf() -> impl Strategy<Value = Value> + Clone {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        int!(i64).prop_map(Value::from),
        int!(u64).prop_map(Value::from),
        float().prop_map(Value::from),
        text().prop_map(Value::from),
    ]
}

/// Arbitrary JSON, for the fields declared opaque.
fn json() -> impl Strategy<Value = Value> + Clone {
    json_leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            btree_map(text(), inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn items<T: fmt::Debug>(item: impl Strategy<Value = T>) -> impl Strategy<Value = Vec<T>> {
    vec(item, 0..4)
}

fn completeness() -> impl Strategy<Value = Completeness> {
    use Disposition as D;
    use Truncation as T;
    (
        select(&[D::Complete, D::Partial, D::Unknown, D::Unavailable][..]),
        int!(u64),
        proptest::option::of(int!(u64)),
        any::<bool>(),
        select(&[T::None, T::Client, T::Server, T::Unknown][..]),
        items(text()),
    )
        .prop_map(|(disposition, returned_count, total_known, pagination_complete, truncation, limitations)| {
            Completeness { disposition, returned_count, total_known, pagination_complete, truncation, limitations }
        })
}

fn fleet_status() -> impl Strategy<Value = qe::FleetStatus> {
    use qe::{AgentRole as R, AgentState as S};
    let agent = (
        text(),
        select(&[R::Coordinator, R::Worker, R::Reviewer][..]),
        select(&[S::Idle, S::Busy, S::Failed, S::Offline][..]),
        proptest::option::of(text()),
        time(),
        int!(u64),
    )
        .prop_map(|(id, role, state, current_task, last_heartbeat, tasks_completed)| qe::Agent {
            id,
            role,
            state,
            current_task,
            last_heartbeat,
            tasks_completed,
        });
    (items(agent), int!(u32), int!(u32), int!(u32), text(), time()).prop_map(
        |(agents, healthy, degraded, total, coordinator_endpoint, generated_at)| qe::FleetStatus {
            agents,
            healthy,
            degraded,
            total,
            coordinator_endpoint,
            generated_at,
        },
    )
}

fn task_status() -> impl Strategy<Value = qe::TaskStatus> {
    use qe::TaskState as S;
    let state = prop_oneof![
        int!(u32).prop_map(|position| S::Queued { position }),
        (int!(u8), time()).prop_map(|(progress_percent, started_at)| S::Running { progress_percent, started_at }),
        (time(), int!(u64)).prop_map(|(finished_at, duration_ms)| S::Succeeded { finished_at, duration_ms }),
        (time(), text(), any::<bool>()).prop_map(|(finished_at, error_code, retryable)| S::Failed {
            finished_at,
            error_code,
            retryable
        }),
        Just(S::Cancelled),
    ];
    (text(), state, int!(u32), proptest::option::of(text()), time()).prop_map(
        |(task_id, state, attempts, assigned_agent, updated_at)| qe::TaskStatus {
            task_id,
            state,
            attempts,
            assigned_agent,
            updated_at,
        },
    )
}

fn run_status() -> impl Strategy<Value = qe::RunStatus> + Clone {
    use qe::RunStatus as R;
    select(&[R::Pending, R::Running, R::Passed, R::Failed, R::Cancelled][..])
}

fn pipeline_status() -> impl Strategy<Value = qe::PipelineStatus> {
    let stage = (text(), run_status(), proptest::option::of(int!(u64)), proptest::option::of(time()))
        .prop_map(|(name, status, duration_ms, started_at)| qe::Stage { name, status, duration_ms, started_at });
    let summary = (int!(u32), int!(u32), int!(u32)).prop_map(|(passed, failed, skipped)| qe::StageSummary {
        passed,
        failed,
        skipped,
    });
    (text(), run_status(), text(), text(), items(stage), summary).prop_map(
        |(pipeline_id, status, commit_sha, triggered_by, stages, summary)| qe::PipelineStatus {
            pipeline_id,
            status,
            commit_sha,
            triggered_by,
            stages,
            summary,
        },
    )
}

fn quality_assess() -> impl Strategy<Value = qe::QualityAssess> {
    use qe::GateVerdict as G;
    let metric = (text(), float(), proptest::option::of(float()), any::<bool>())
        .prop_map(|(name, value, threshold, passed)| qe::Metric { name, value, threshold, passed });
    (float(), select(&[G::Pass, G::Warn, G::Fail][..]), items(metric), items(text()), time()).prop_map(
        |(overall_score, gate, metrics, recommendations, assessed_at)| qe::QualityAssess {
            overall_score,
            gate,
            metrics,
            recommendations,
            assessed_at,
        },
    )
}

fn security_scan() -> impl Strategy<Value = qe::SecurityScan> {
    use qe::Severity as S;
    let finding = (
        text(),
        select(&[S::Critical, S::High, S::Medium, S::Low, S::Info][..]),
        text(),
        text(),
        proptest::option::of(int!(u32)),
        proptest::option::of(text()),
        text(),
    )
        .prop_map(|(id, severity, rule, file, line, cwe, evidence)| qe::Finding {
            id,
            severity,
            rule,
            file,
            line,
            cwe,
            evidence,
        });
    let counts = (int!(u32), int!(u32), int!(u32), int!(u32), int!(u32))
        .prop_map(|(critical, high, medium, low, info)| qe::SeverityCounts { critical, high, medium, low, info });
    (text(), text(), items(finding), counts, int!(u32), time()).prop_map(
        |(scan_id, target, findings, counts, scanned_files, completed_at)| qe::SecurityScan {
            scan_id,
            target,
            findings,
            counts,
            scanned_files,
            completed_at,
        },
    )
}

fn coverage_gaps() -> impl Strategy<Value = qe::CoverageGaps> {
    use qe::Risk as R;
    let gap = (text(), float(), items(int!(u32)), select(&[R::Low, R::Medium, R::High][..])).prop_map(
        |(path, line_coverage, uncovered_lines, risk)| qe::FileGap { path, line_coverage, uncovered_lines, risk },
    );
    (float(), float(), items(gap), completeness()).prop_map(
        |(threshold, overall_line_coverage, files, completeness)| qe::CoverageGaps {
            threshold,
            overall_line_coverage,
            files,
            completeness,
        },
    )
}

fn ticket() -> impl Strategy<Value = qe::Ticket> + Clone {
    use qe::TicketStatus as S;
    (text(), text(), select(&[S::Open, S::Closed][..])).prop_map(|(id, title, status)| qe::Ticket { id, title, status })
}

fn search_tickets() -> impl Strategy<Value = qe::SearchTickets> {
    items(ticket()).prop_map(qe::SearchTickets)
}

fn ticket_page() -> impl Strategy<Value = qe::TicketPage> {
    (text(), items(ticket()), proptest::option::of(text()), completeness()).prop_map(
        |(query, tickets, next_cursor, completeness)| qe::TicketPage { query, tickets, next_cursor, completeness },
    )
}

fn scrape_page() -> impl Strategy<Value = qe::ScrapePage> {
    use qe::ActionKind as K;
    let action = (select(&[K::Click, K::Scroll, K::Screenshot, K::Extract][..]), json())
        .prop_map(|(kind, output)| qe::ActionResult { kind, output });
    let head = (text(), int!(u16), proptest::option::of(text()), text(), items(text()));
    (head, json(), items(action), time(), completeness()).prop_map(
        |((url, status_code, title, markdown, links), metadata, actions, scraped_at, completeness)| qe::ScrapePage {
            url,
            status_code,
            title,
            markdown,
            links,
            metadata,
            actions,
            scraped_at,
            completeness,
        },
    )
}

// ========================================================================== twins
//
// The oracle: strict mirrors of the result types, written from the Rust types (not from
// the schemas). `X` says what an object does with keys it does not know: `Closed` refuses
// them, as `#[serde(deny_unknown_fields)]` does (which cannot be combined with the
// flattened `X`), for `exact` contracts; `Open` keeps them so that they serialize back,
// for `additive` contracts, whose objects are open by design. Every field is required:
// serde fills a missing `Option` with `None`, which then serializes as `null` and no longer
// matches the payload.

/// Refuses every key: the twin of `deny_unknown_fields` for a flattened remainder.
#[derive(Debug)]
struct Closed;

impl<'de> Deserialize<'de> for Closed {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NoKeys;
        impl<'de> Visitor<'de> for NoKeys {
            type Value = Closed;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("no unknown keys")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Closed, A::Error> {
                match map.next_key::<String>()? {
                    None => Ok(Closed),
                    Some(key) => Err(serde::de::Error::custom(format_args!("unknown field `{key}`"))),
                }
            }
        }
        deserializer.deserialize_map(NoKeys)
    }
}

impl Serialize for Closed {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_map(Some(0))?.end()
    }
}

/// Keeps unknown keys, so that they serialize back unchanged.
type Open = BTreeMap<String, Value>;

mod twin {
    use super::{Closed, Open};
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Serialize};
    use serde_json::Value;

    #[derive(Debug, Deserialize, Serialize)]
    #[serde(rename_all = "snake_case")]
    pub(super) enum AgentRole {
        Coordinator,
        Worker,
        Reviewer,
    }

    #[derive(Debug, Deserialize, Serialize)]
    #[serde(rename_all = "snake_case")]
    pub(super) enum AgentState {
        Idle,
        Busy,
        Failed,
        Offline,
    }

    #[derive(Debug, Deserialize, Serialize)]
    pub(super) struct Agent {
        id: String,
        role: AgentRole,
        state: AgentState,
        current_task: Option<String>,
        last_heartbeat: DateTime<Utc>,
        tasks_completed: u64,
        #[serde(flatten)]
        unknown: Open,
    }

    /// `additive`.
    #[derive(Debug, Deserialize, Serialize)]
    pub(super) struct FleetStatus {
        agents: Vec<Agent>,
        healthy: u32,
        degraded: u32,
        total: u32,
        coordinator_endpoint: String,
        generated_at: DateTime<Utc>,
        #[serde(flatten)]
        unknown: Open,
    }

    /// The variant half of `TaskStatus`; `state` is the tag.
    #[derive(Debug, Deserialize, Serialize)]
    #[serde(tag = "state", rename_all = "snake_case", deny_unknown_fields)]
    pub(super) enum TaskState {
        Queued { position: u32 },
        Running { progress_percent: u8, started_at: DateTime<Utc> },
        Succeeded { finished_at: DateTime<Utc>, duration_ms: u64 },
        Failed { finished_at: DateTime<Utc>, error_code: String, retryable: bool },
        Cancelled,
    }

    /// The fixed half of `TaskStatus` (`exact`); see `TaskStatus` in the parent module for
    /// how the two halves are joined.
    #[derive(Debug, Deserialize, Serialize)]
    #[serde(deny_unknown_fields)]
    pub(super) struct TaskFields {
        pub(super) task_id: String,
        pub(super) attempts: u32,
        pub(super) assigned_agent: Option<String>,
        pub(super) updated_at: DateTime<Utc>,
    }

    #[derive(Debug, Deserialize, Serialize)]
    #[serde(rename_all = "snake_case")]
    pub(super) enum RunStatus {
        Pending,
        Running,
        Passed,
        Failed,
        Cancelled,
    }

    #[derive(Debug, Deserialize, Serialize)]
    pub(super) struct Stage {
        name: String,
        status: RunStatus,
        duration_ms: Option<u64>,
        started_at: Option<DateTime<Utc>>,
        #[serde(flatten)]
        unknown: Closed,
    }

    #[derive(Debug, Deserialize, Serialize)]
    pub(super) struct StageSummary {
        passed: u32,
        failed: u32,
        skipped: u32,
        #[serde(flatten)]
        unknown: Closed,
    }

    /// `exact`.
    #[derive(Debug, Deserialize, Serialize)]
    pub(super) struct PipelineStatus {
        pipeline_id: String,
        status: RunStatus,
        commit_sha: String,
        triggered_by: String,
        stages: Vec<Stage>,
        summary: StageSummary,
        #[serde(flatten)]
        unknown: Closed,
    }

    #[derive(Debug, Deserialize, Serialize)]
    #[serde(rename_all = "snake_case")]
    pub(super) enum GateVerdict {
        Pass,
        Warn,
        Fail,
    }

    #[derive(Debug, Deserialize, Serialize)]
    pub(super) struct Metric {
        name: String,
        value: f64,
        threshold: Option<f64>,
        passed: bool,
        #[serde(flatten)]
        unknown: Open,
    }

    /// `additive`.
    #[derive(Debug, Deserialize, Serialize)]
    pub(super) struct QualityAssess {
        overall_score: f64,
        gate: GateVerdict,
        metrics: Vec<Metric>,
        recommendations: Vec<String>,
        assessed_at: DateTime<Utc>,
        #[serde(flatten)]
        unknown: Open,
    }

    #[derive(Debug, Deserialize, Serialize)]
    #[serde(rename_all = "snake_case")]
    pub(super) enum Severity {
        Critical,
        High,
        Medium,
        Low,
        Info,
    }

    #[derive(Debug, Deserialize, Serialize)]
    pub(super) struct Finding {
        id: String,
        severity: Severity,
        rule: String,
        file: String,
        line: Option<u32>,
        cwe: Option<String>,
        evidence: String,
        #[serde(flatten)]
        unknown: Closed,
    }

    #[derive(Debug, Deserialize, Serialize)]
    pub(super) struct SeverityCounts {
        critical: u32,
        high: u32,
        medium: u32,
        low: u32,
        info: u32,
        #[serde(flatten)]
        unknown: Closed,
    }

    /// `exact`.
    #[derive(Debug, Deserialize, Serialize)]
    pub(super) struct SecurityScan {
        scan_id: String,
        target: String,
        findings: Vec<Finding>,
        counts: SeverityCounts,
        scanned_files: u32,
        completed_at: DateTime<Utc>,
        #[serde(flatten)]
        unknown: Closed,
    }

    #[derive(Debug, Deserialize, Serialize)]
    #[serde(rename_all = "snake_case")]
    pub(super) enum Disposition {
        Complete,
        Partial,
        Unknown,
        Unavailable,
    }

    #[derive(Debug, Deserialize, Serialize)]
    #[serde(rename_all = "snake_case")]
    pub(super) enum Truncation {
        None,
        Client,
        Server,
        Unknown,
    }

    /// Open or closed with the contract that embeds it.
    #[derive(Debug, Deserialize, Serialize)]
    pub(super) struct Completeness<X> {
        disposition: Disposition,
        returned_count: u64,
        total_known: Option<u64>,
        pagination_complete: bool,
        truncation: Truncation,
        limitations: Vec<String>,
        #[serde(flatten)]
        unknown: X,
    }

    #[derive(Debug, Deserialize, Serialize)]
    #[serde(rename_all = "snake_case")]
    pub(super) enum Risk {
        Low,
        Medium,
        High,
    }

    #[derive(Debug, Deserialize, Serialize)]
    pub(super) struct FileGap {
        path: String,
        line_coverage: f64,
        uncovered_lines: Vec<u32>,
        risk: Risk,
        #[serde(flatten)]
        unknown: Open,
    }

    /// `additive`.
    #[derive(Debug, Deserialize, Serialize)]
    pub(super) struct CoverageGaps {
        threshold: f64,
        overall_line_coverage: f64,
        files: Vec<FileGap>,
        completeness: Completeness<Open>,
        #[serde(flatten)]
        unknown: Open,
    }

    #[derive(Debug, Deserialize, Serialize)]
    #[serde(rename_all = "snake_case")]
    pub(super) enum TicketStatus {
        Open,
        Closed,
    }

    #[derive(Debug, Deserialize, Serialize)]
    pub(super) struct Ticket {
        id: String,
        title: String,
        status: TicketStatus,
        #[serde(flatten)]
        unknown: Closed,
    }

    /// `exact`; the root is the array itself.
    #[derive(Debug, Deserialize, Serialize)]
    #[serde(transparent)]
    pub(super) struct SearchTickets(Vec<Ticket>);

    /// `exact`.
    #[derive(Debug, Deserialize, Serialize)]
    pub(super) struct TicketPage {
        query: String,
        tickets: Vec<Ticket>,
        next_cursor: Option<String>,
        completeness: Completeness<Closed>,
        #[serde(flatten)]
        unknown: Closed,
    }

    #[derive(Debug, Deserialize, Serialize)]
    #[serde(rename_all = "snake_case")]
    pub(super) enum ActionKind {
        Click,
        Scroll,
        Screenshot,
        Extract,
    }

    #[derive(Debug, Deserialize, Serialize)]
    #[serde(rename_all = "camelCase")]
    pub(super) struct ActionResult {
        kind: ActionKind,
        output: Value,
        #[serde(flatten)]
        unknown: Open,
    }

    /// `additive`.
    #[derive(Debug, Deserialize, Serialize)]
    #[serde(rename_all = "camelCase")]
    pub(super) struct ScrapePage {
        url: String,
        status_code: u16,
        title: Option<String>,
        markdown: String,
        links: Vec<String>,
        metadata: Value,
        actions: Vec<ActionResult>,
        scraped_at: DateTime<Utc>,
        completeness: Completeness<Open>,
        #[serde(flatten)]
        unknown: Open,
    }
}

/// `TaskStatus` (`exact`) flattens an internally tagged enum into the fixed fields. serde
/// cannot refuse unknown keys through a flatten, so this twin splits the object by hand:
/// the fixed fields come out by name, and everything else must be exactly one variant
/// (tag included) of the `deny_unknown_fields` enum.
#[derive(Debug)]
struct TaskStatusTwin {
    fields: twin::TaskFields,
    state: twin::TaskState,
}

impl<'de> Deserialize<'de> for TaskStatusTwin {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut rest = Map::<String, Value>::deserialize(deserializer)?;
        let mut fixed = Map::new();
        for key in ["task_id", "attempts", "assigned_agent", "updated_at"] {
            let value = rest.remove(key).ok_or_else(|| D::Error::missing_field(key))?;
            fixed.insert(key.to_owned(), value);
        }
        let fields = serde_json::from_value(Value::Object(fixed)).map_err(D::Error::custom)?;
        let state = serde_json::from_value(Value::Object(rest)).map_err(D::Error::custom)?;
        Ok(Self { fields, state })
    }
}

impl Serialize for TaskStatusTwin {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error;
        let parts = [serde_json::to_value(&self.fields), serde_json::to_value(&self.state)];
        let mut map = serializer.serialize_map(None)?;
        for part in parts {
            let Value::Object(part) = part.map_err(S::Error::custom)? else {
                return Err(S::Error::custom("a half of TaskStatus is not an object"));
            };
            for (key, value) in &part {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

/// The oracle's verdict on a payload, from the twin `T` alone.
fn oracle<T: DeserializeOwned + Serialize>(payload: &Value) -> Result<(), String> {
    let twin: T = serde_json::from_value(payload.clone()).map_err(|err| format!("does not deserialize: {err}"))?;
    let back = serde_json::to_value(&twin).map_err(|err| format!("does not serialize back: {err}"))?;
    if same_json(&back, payload) {
        Ok(())
    } else {
        Err(format!("serializes back as {back}"))
    }
}

/// JSON equality with numbers compared by value (`3` equals `3.0`), objects compared as
/// maps whatever their key order.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => same_number(x, y),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(key, x)| y.get(key).is_some_and(|y| same_json(x, y)))
        }
        _ => a == b,
    }
}

/// Two integers must be equal exactly. A float meets the other side only where the twin
/// has an `f64` field (elsewhere serde_json keeps integers and floats apart and the twin
/// writes back what it read), and there the payload's number means what every JSON
/// reader of a double makes of it: the nearest `f64`. So `18446744073709551615` in an
/// `f64` field is the double 2^64, as in JavaScript; refusing it would call a schema
/// wrong for not knowing which integers a double holds exactly.
fn same_number(x: &Number, y: &Number) -> bool {
    fn integer(n: &Number) -> Option<i128> {
        n.as_u64().map(i128::from).or_else(|| n.as_i64().map(i128::from))
    }
    #[allow(clippy::float_cmp)] // Exact equality is the point: the same double, or not.
    match (integer(x), integer(y)) {
        (Some(a), Some(b)) => a == b,
        _ => x.as_f64() == y.as_f64(),
    }
}

// ========================================================================= faults

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Seg {
    Key(String),
    Index(usize),
}

fn pointer(path: &[Seg]) -> String {
    path.iter()
        .map(|seg| match seg {
            Seg::Key(k) => format!("/{}", k.replace('~', "~0").replace('/', "~1")),
            Seg::Index(i) => format!("/{i}"),
        })
        .collect()
}

fn at_mut<'v>(value: &'v mut Value, path: &[Seg]) -> &'v mut Value {
    path.iter().fold(value, |v, seg| match seg {
        Seg::Key(k) => v.get_mut(k.as_str()).expect("the path exists"),
        Seg::Index(i) => v.get_mut(*i).expect("the path exists"),
    })
}

/// Every location of `value` (the root first) with the value found there.
fn locations(value: &Value) -> Vec<(Vec<Seg>, &Value)> {
    fn walk<'v>(value: &'v Value, path: &mut Vec<Seg>, out: &mut Vec<(Vec<Seg>, &'v Value)>) {
        out.push((path.clone(), value));
        match value {
            Value::Object(map) => {
                for (key, v) in map {
                    path.push(Seg::Key(key.clone()));
                    walk(v, path, out);
                    path.pop();
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    path.push(Seg::Index(i));
                    walk(v, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(value, &mut Vec::new(), &mut out);
    out
}

/// The kinds of single faults. Some usually break the payload (a dropped key), some
/// usually keep it valid (a string swapped for another string): the oracle decides each
/// case, not the kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    DropKey,
    RenameKey,
    AddKey,
    ChangeType,
    OutOfRange,
    NotAVariant,
    Null,
    WrongContainer,
    SwapString,
    EditArray,
    Nudge,
}

const KINDS: [Kind; 11] = [
    Kind::DropKey,
    Kind::RenameKey,
    Kind::AddKey,
    Kind::ChangeType,
    Kind::OutOfRange,
    Kind::NotAVariant,
    Kind::Null,
    Kind::WrongContainer,
    Kind::SwapString,
    Kind::EditArray,
    Kind::Nudge,
];

/// The random choices of one fault, drawn by proptest beside the value.
#[derive(Clone, Debug)]
struct Plan {
    kind: usize,
    location: Index,
    /// Which variant of the fault kind, where it has several.
    choice: Index,
    /// Which item (key, element, replacement) the fault uses.
    pick: Index,
    name: String,
    leaf: Value,
}

fn plan() -> impl Strategy<Value = Plan> {
    (0..KINDS.len(), any::<Index>(), any::<Index>(), any::<Index>(), text(), json_leaf())
        .prop_map(|(kind, location, choice, pick, name, leaf)| Plan { kind, location, choice, pick, name, leaf })
}

/// The JSON type class of a value; integers and other numbers are different classes
/// because integer fields must refuse `1.5`.
fn class(value: &Value) -> u8 {
    match value {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Number(n) if n.is_f64() && n.as_f64().is_some_and(|f| f.fract() != 0.0) => 3,
        Value::Number(_) => 2,
        Value::String(_) => 4,
        Value::Array(_) => 5,
        Value::Object(_) => 6,
    }
}

/// Values no integer width of the demo types holds all of: one past each boundary of
/// u8, u16, u32, i64 and u64, negatives for the unsigned, and huge floats.
fn out_of_range() -> Vec<Value> {
    vec![
        Value::from(-1),
        Value::from(256),
        Value::from(65_536),
        Value::from(4_294_967_296_u64),
        Value::from(-4_294_967_296_i64),
        Value::from(i64::MIN),
        Value::from(u64::MAX),
        // 2^64 and -2^63 - 2^11: serde_json holds them as floats, no integer type can.
        Value::from(18_446_744_073_709_551_616.0),
        Value::from(-9_223_372_036_854_777_856.0),
        Value::from(1e300),
        Value::from(-1e300),
    ]
}

/// Applies the fault `kind` to `value` at the location `plan` chooses among those where
/// the kind applies. `None` when no location fits or the fault would change nothing.
fn apply(kind: Kind, plan: &Plan, value: &Value, seen: &Seen) -> Option<(String, Value)> {
    let all = locations(value);
    let fits = |v: &Value| match kind {
        Kind::DropKey | Kind::RenameKey => v.as_object().is_some_and(|m| !m.is_empty()),
        Kind::AddKey => v.is_object(),
        Kind::OutOfRange => v.is_number(),
        Kind::NotAVariant | Kind::SwapString => v.is_string(),
        Kind::Null => !v.is_null(),
        Kind::WrongContainer => v.is_object() || v.is_array(),
        Kind::EditArray => v.as_array().is_some_and(|a| !a.is_empty()),
        Kind::Nudge => v.is_number() || v.is_boolean(),
        Kind::ChangeType => true,
    };
    let candidates: Vec<&(Vec<Seg>, &Value)> = all.iter().filter(|(_, v)| fits(v)).collect();
    if candidates.is_empty() {
        return None;
    }
    let (path, old) = candidates[plan.location.index(candidates.len())];
    let (path, old) = (path.clone(), (*old).clone());
    let here = pointer(&path);
    let mut out = value.clone();
    let target = at_mut(&mut out, &path);
    let what = match kind {
        Kind::DropKey | Kind::RenameKey => {
            let map = target.as_object_mut().expect("fits");
            let key = map.keys().nth(plan.pick.index(map.len())).expect("in range").clone();
            let moved = map.remove(&key).expect("present");
            if kind == Kind::RenameKey {
                let renamed = format!("{key}_");
                if map.contains_key(&renamed) {
                    return None;
                }
                map.insert(renamed.clone(), moved);
                format!("rename {here}/{key} to {renamed:?}")
            } else {
                format!("drop {here}/{key}")
            }
        }
        Kind::AddKey => {
            // A key of arbitrary unicode; a key some other object of the payload has, or
            // one that earlier values of the type had (another variant's field: the
            // likeliest unknown keys to slip through a composed schema); a keyword name.
            let elsewhere: Vec<&String> = all
                .iter()
                .filter_map(|(p, _)| match p.last() {
                    Some(Seg::Key(k)) => Some(k),
                    _ => None,
                })
                .collect();
            let key = match plan.choice.index(4) {
                0 => plan.name.clone(),
                1 if !elsewhere.is_empty() => elsewhere[plan.pick.index(elsewhere.len())].clone(),
                2 if !seen.keys.is_empty() => seen.keys[plan.pick.index(seen.keys.len())].clone(),
                _ => ["__proto__", "$ref", "additionalProperties", "", "state", "id", "extra"][plan.pick.index(7)]
                    .to_owned(),
            };
            let map = target.as_object_mut().expect("fits");
            if map.contains_key(&key) {
                return None;
            }
            map.insert(key.clone(), plan.leaf.clone());
            format!("add {here}/{key:?} = {}", plan.leaf)
        }
        Kind::ChangeType => {
            let pool = [
                Value::Null,
                Value::Bool(true),
                Value::from(7),
                Value::from(1.5),
                Value::from("text"),
                Value::Array(vec![]),
                Value::Object(Map::new()),
                Value::Array(vec![Value::from(1)]),
                serde_json::json!({ "k": 1 }),
            ];
            let other: Vec<&Value> = pool.iter().filter(|v| class(v) != class(&old)).collect();
            *target = other[plan.pick.index(other.len())].clone();
            format!("type of {here} -> {target}")
        }
        Kind::OutOfRange => {
            let pool = out_of_range();
            *target = pool[plan.pick.index(pool.len())].clone();
            format!("number {here} -> {target}")
        }
        Kind::NotAVariant => {
            let s = old.as_str().expect("fits");
            let upper = s.to_uppercase();
            *target = Value::from(match plan.choice.index(4) {
                0 => format!("{s}x"),
                1 if upper != s => upper,
                1 => format!("{s} "),
                2 if !s.is_empty() => String::new(),
                _ => plan.name.clone(),
            });
            format!("string {here} -> {target}")
        }
        Kind::Null => {
            *target = Value::Null;
            format!("null at {here}")
        }
        Kind::WrongContainer => {
            *target = match &old {
                Value::Object(_) => Value::Array(vec![old.clone()]),
                Value::Array(items) if plan.choice.index(2) == 0 || items.is_empty() => Value::Object(Map::new()),
                Value::Array(items) => serde_json::json!({ "0": items[0] }),
                _ => unreachable!("fits"),
            };
            format!("container at {here} -> {target}")
        }
        Kind::SwapString => {
            // A string from elsewhere in the payload, or a word earlier values of the type
            // held (another variant's name, a discriminant of another branch).
            let mut others: Vec<Value> =
                all.iter().map(|(_, v)| *v).filter(|v| v.is_string() && **v != old).cloned().collect();
            if plan.choice.index(2) == 0 || others.is_empty() {
                others = seen.words.iter().filter(|w| **w != old).map(|w| Value::from(w.as_str())).collect();
            }
            if others.is_empty() {
                return None;
            }
            *target = others[plan.pick.index(others.len())].clone();
            format!("string {here} -> {target} (seen elsewhere)")
        }
        Kind::EditArray => {
            let items = target.as_array_mut().expect("fits");
            let i = plan.pick.index(items.len());
            match plan.choice.index(3) {
                0 => {
                    items.remove(i);
                    format!("remove {here}/{i}")
                }
                1 => {
                    items.insert(i, items[i].clone());
                    format!("duplicate {here}/{i}")
                }
                _ => {
                    items.clear();
                    format!("empty {here}")
                }
            }
        }
        Kind::Nudge => {
            *target = match &old {
                Value::Bool(b) => Value::Bool(!b),
                Value::Number(n) => match (n.as_u64(), n.as_i64(), plan.choice.index(2)) {
                    (_, _, 0) => Value::from(0),
                    (Some(u), _, _) => Value::from(u.wrapping_add(1)),
                    (_, Some(i), _) => Value::from(i.wrapping_add(1)),
                    _ => Value::from(n.as_f64().expect("finite") / 2.0),
                },
                _ => unreachable!("fits"),
            };
            format!("nudge {here} -> {target}")
        }
    };
    (out != *value).then_some((what, out))
}

// ========================================================================= runner

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
    qe_server::all_contracts()
        .into_iter()
        .map(|c| c.unwrap_or_else(|err| panic!("{err}")))
        .find(|c| c.name() == name)
        .unwrap_or_else(|| panic!("no contract named {name}"))
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
        self.is_valid(payload)
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
        qe_server::all_contracts().into_iter().map(|c| c.expect("a valid contract").name().to_owned()).collect();
    let proven: BTreeSet<String> = PROVEN.iter().map(|&n| n.to_owned()).collect();
    assert_eq!(published, proven, "a contract was added or removed: give it a strategy and a twin here");
}

#[test]
fn fleet_status_property() {
    let shapes = [&["empty array", "null", "integer 0", "u32::MAX", "u64::MAX"][..], &TIME_SHAPES].concat();
    let variants = ["coordinator", "worker", "reviewer", "idle", "busy", "failed", "offline"];
    prove::<twin::FleetStatus, _>("fleet_status", fleet_status(), &shapes, &variants);
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
    prove::<twin::PipelineStatus, _>("pipeline_status", pipeline_status(), &shapes, &variants);
}

#[test]
fn quality_assess_property() {
    let shapes = [&["empty array", "null", "-0.0", "float at MAX or subnormal"][..], &TIME_SHAPES].concat();
    prove::<twin::QualityAssess, _>("quality_assess", quality_assess(), &shapes, &["pass", "warn", "fail"]);
}

#[test]
fn security_scan_property() {
    let shapes = [&["empty array", "null", "integer 0", "u32::MAX"][..], &TIME_SHAPES].concat();
    let variants = ["critical", "high", "medium", "low", "info"];
    prove::<twin::SecurityScan, _>("security_scan", security_scan(), &shapes, &variants);
}

#[test]
fn coverage_gaps_property() {
    let shapes = ["empty array", "null", "integer 0", "u32::MAX", "u64::MAX", "-0.0", "float at MAX or subnormal"];
    let variants = [&["low", "medium", "high"][..], &COMPLETENESS_VARIANTS].concat();
    prove::<twin::CoverageGaps, _>("qe/coverage_gaps", coverage_gaps(), &shapes, &variants);
}

#[test]
fn search_tickets_property() {
    prove::<twin::SearchTickets, _>("search_tickets", search_tickets(), &["empty array"], &["open", "closed"]);
}

#[test]
fn search_tickets_page_property() {
    let variants = [&["open", "closed"][..], &COMPLETENESS_VARIANTS].concat();
    prove::<twin::TicketPage, _>(
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
    prove::<twin::ScrapePage, _>("scrape_page", scrape_page(), &shapes, &variants);
}

/// KNOWN ISSUE, excluded from the counts above and counted here. chrono serializes every
/// `DateTime<Utc>` it can hold, and reads each one back, but the schema of `DateTime<Utc>`
/// (`format: date-time`, RFC 3339) refuses two classes of them: years outside 0000–9999
/// (`"+10000-01-01T00:00:00Z"`, `"-0001-…"`) and leap seconds anywhere but the end of a
/// UTC day (`"…T12:34:60Z"`, which chrono holds for any minute). A handler that returns
/// such a timestamp gets an `output_contract_violation` for a value its own type allows.
/// The cause is the generated schema, not the demo types (schema.rs, owned elsewhere);
/// see RESEARCH.md, "schemars traps". This test asserts that the issue is still there,
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
    assert_eq!(oracle::<twin::PipelineStatus>(&pipeline), Ok(()));
    assert_eq!(oracle::<twin::FleetStatus>(&fleet), Ok(()));
    assert_eq!(oracle::<TaskStatusTwin>(running), Ok(()));
    assert_eq!(oracle::<twin::FleetStatus>(&edit(&fleet, "", add("extra"))), Ok(()));
    assert_eq!(oracle::<twin::FleetStatus>(&edit(&fleet, "/agents/0", add("extra"))), Ok(()));
    assert_eq!(oracle::<twin::QualityAssess>(&edit(&quality, "/overall_score", |v| *v = 3.into())), Ok(()));

    // Faults: an unknown key under `exact`, at the root and nested, and beside a flattened
    // enum; a dropped `Option`; a u8 out of range; a timestamp serde never writes; a
    // variant in the wrong case; a key of another variant.
    let invalid = [
        oracle::<twin::PipelineStatus>(&edit(&pipeline, "", add("extra"))),
        oracle::<twin::PipelineStatus>(&edit(&pipeline, "/summary", add("extra"))),
        oracle::<TaskStatusTwin>(&edit(running, "", add("extra"))),
        oracle::<TaskStatusTwin>(&edit(running, "", add("position"))),
        oracle::<twin::PipelineStatus>(&edit(&pipeline, "/stages/0", |v| {
            v.as_object_mut().expect("an object").remove("duration_ms");
        })),
        oracle::<TaskStatusTwin>(&edit(running, "/progress_percent", |v| *v = 256.into())),
        oracle::<twin::FleetStatus>(&edit(&fleet, "/generated_at", |v| *v = "2026-11-30T12:00:00+02:00".into())),
        oracle::<twin::PipelineStatus>(&edit(&pipeline, "/status", |v| *v = "Passed".into())),
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
        let tally = run::<twin::PipelineStatus, _>(name, &weak, pipeline_status(), 500, 1_000);
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
                oracle::<twin::FleetStatus>(&faulty)
            } else {
                oracle::<twin::PipelineStatus>(&faulty)
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

// ================================================================ hostile shapes
//
// KNOWN ISSUE (issue #9, item 2; the fix belongs to schema.rs, owned elsewhere): three
// shapes from outside the demo slice on which `exact` contracts accept payloads serde can
// never write. The same runner proves it: each test below asserts that false accepts are
// still found. When the schema closes a shape, its test fails: turn it into a proof then
// (`report`, which asserts 0 false accepts and 0 false rejects).

/// `exact`, with a flattened map whose keys are `u32`: serde writes the keys as decimal
/// strings, so any other key is unknown.
#[derive(Debug, Serialize, schemars::JsonSchema, contract_runtime::ToolOutput)]
#[tool_output(name = "hostile_flat_u32_map", version = "1.0.0", compatibility = "exact")]
struct FlatU32Map {
    id: u32,
    #[serde(flatten)]
    extra: BTreeMap<u32, String>,
}

/// The twin of `FlatU32Map`, by hand: serde cannot read a flattened map with integer keys
/// back, so the keys are parsed here; a key that is no `u32` in its canonical spelling is
/// refused or does not serialize back the same.
#[derive(Debug)]
struct FlatU32MapTwin(Map<String, Value>);

impl<'de> Deserialize<'de> for FlatU32MapTwin {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut map = Map::<String, Value>::deserialize(deserializer)?;
        let id: u32 = serde_json::from_value(map.remove("id").ok_or_else(|| D::Error::missing_field("id"))?)
            .map_err(D::Error::custom)?;
        let mut out = Map::from_iter([("id".to_owned(), Value::from(id))]);
        for (key, value) in map {
            let key: u32 = key.parse().map_err(|_| D::Error::custom(format_args!("unknown field `{key}`")))?;
            let value: String = serde_json::from_value(value).map_err(D::Error::custom)?;
            out.insert(key.to_string(), Value::from(value));
        }
        Ok(Self(out))
    }
}

impl Serialize for FlatU32MapTwin {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// `exact`, with maps keyed by `bool` and by `char`: only `"true"`/`"false"` and
/// one-character keys can be written.
#[derive(Debug, Serialize, schemars::JsonSchema, contract_runtime::ToolOutput)]
#[tool_output(name = "hostile_typed_keys", version = "1.0.0", compatibility = "exact")]
struct TypedKeys {
    by_flag: BTreeMap<bool, u32>,
    by_char: BTreeMap<char, u32>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct TypedKeysTwin {
    by_flag: BTreeMap<bool, u32>,
    by_char: BTreeMap<char, u32>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Audit {
    created_by: String,
    created_at: u64,
}

/// `exact`, with a flattened `Option<Struct>`: serde writes all of its fields or none.
#[derive(Debug, Serialize, schemars::JsonSchema, contract_runtime::ToolOutput)]
#[tool_output(name = "hostile_flat_option", version = "1.0.0", compatibility = "exact")]
struct FlatOption {
    id: u32,
    #[serde(flatten)]
    audit: Option<Audit>,
}

#[derive(Debug, Deserialize, Serialize)]
struct AuditTwin {
    created_by: String,
    created_at: u64,
}

/// serde reads a partial `audit` as `None`, which then serializes back without the
/// partial fields: the round trip refuses it. `Closed` refuses any other key.
#[derive(Debug, Deserialize, Serialize)]
struct FlatOptionTwin {
    id: u32,
    #[serde(flatten)]
    audit: Option<AuditTwin>,
    #[serde(flatten)]
    unknown: Closed,
}

/// Runs the runner on a hostile shape, prints its counts and asserts that the known false
/// accepts are still there (and that nothing else is wrong).
fn still_accepts_what_serde_never_writes<T, S>(name: &str, contract: &OutputContract, strategy: S)
where
    T: DeserializeOwned + Serialize,
    S: Strategy,
    S::Value: Serialize,
{
    let tally = run::<T, S>(name, contract, strategy, 2_000, 2_000);
    println!(
        "properties KNOWN ISSUE (issue #9 item 2) {name}: {} values generated, {} rejected | {} false accepts of {} \
         invalid faults; {} false rejects of {} valid ones",
        tally.values,
        tally.values_rejected.len(),
        tally.false_accepts.len(),
        tally.invalid_faults,
        tally.false_rejects.len(),
        tally.valid_faults,
    );
    for case in tally.false_accepts.iter().take(2) {
        println!("  {name} FALSE ACCEPT: {case}");
    }
    assert!(tally.values_rejected.is_empty() && tally.false_rejects.is_empty(), "{name}: false rejects");
    assert!(
        !tally.false_accepts.is_empty(),
        "{name}: the schema closes this shape now; make this test a proof (`report`, 0 false accepts)"
    );
}

#[test]
fn known_issue_flattened_map_with_integer_keys() {
    use contract_runtime::ToolOutput;
    let strategy = (int!(u32), btree_map(int!(u32), text(), 0..4)).prop_map(|(id, extra)| FlatU32Map { id, extra });
    still_accepts_what_serde_never_writes::<FlatU32MapTwin, _>(
        "hostile_flat_u32_map",
        FlatU32Map::contract(),
        strategy,
    );
}

#[test]
fn known_issue_maps_with_typed_keys() {
    use contract_runtime::ToolOutput;
    let strategy = (btree_map(any::<bool>(), int!(u32), 0..3), btree_map(any::<char>(), int!(u32), 0..4))
        .prop_map(|(by_flag, by_char)| TypedKeys { by_flag, by_char });
    still_accepts_what_serde_never_writes::<TypedKeysTwin, _>("hostile_typed_keys", TypedKeys::contract(), strategy);
}

#[test]
fn known_issue_flattened_option_struct() {
    use contract_runtime::ToolOutput;
    let strategy = (int!(u32), proptest::option::of((text(), int!(u64)))).prop_map(|(id, audit)| FlatOption {
        id,
        audit: audit.map(|(created_by, created_at)| Audit { created_by, created_at }),
    });
    still_accepts_what_serde_never_writes::<FlatOptionTwin, _>("hostile_flat_option", FlatOption::contract(), strategy);
}
