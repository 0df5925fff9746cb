//! The oracle: strict serde twins of the demo result types, and the round trip that
//! judges a payload with them.
//!
//! The twins are written from the Rust types, not from the schemas. What an object does
//! with keys it does not know follows its contract: under `exact` it refuses them
//! (`#[serde(deny_unknown_fields)]`, or `Closed` where the twin needs a flattened
//! remainder, which serde does not combine with `deny_unknown_fields`); under `additive`
//! it keeps them in `Open` so that they serialize back, since those objects are open by
//! design. Every field is required: serde fills a missing `Option` with `None`, which then
//! serializes as `null` and no longer matches the payload.

use std::collections::BTreeMap;
use std::fmt;

use chrono::{DateTime, Utc};
use serde::de::{DeserializeOwned, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Number, Value};

/// Refuses every key: the twin of `deny_unknown_fields` for a flattened remainder.
#[derive(Debug)]
pub(crate) struct Closed;

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
pub(crate) type Open = BTreeMap<String, Value>;

#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum AgentRole {
    Coordinator,
    Worker,
    Reviewer,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum AgentState {
    Idle,
    Busy,
    Failed,
    Offline,
}

#[derive(Debug, Deserialize, Serialize)]
pub(crate) struct Agent {
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
pub(crate) struct FleetStatus {
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
pub(crate) enum TaskState {
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
pub(crate) struct TaskFields {
    pub(crate) task_id: String,
    pub(crate) attempts: u32,
    pub(crate) assigned_agent: Option<String>,
    pub(crate) updated_at: DateTime<Utc>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RunStatus {
    Pending,
    Running,
    Passed,
    Failed,
    Cancelled,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Stage {
    name: String,
    status: RunStatus,
    duration_ms: Option<u64>,
    started_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StageSummary {
    passed: u32,
    failed: u32,
    skipped: u32,
}

/// `exact`.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PipelineStatus {
    pipeline_id: String,
    status: RunStatus,
    commit_sha: String,
    triggered_by: String,
    stages: Vec<Stage>,
    summary: StageSummary,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum GateVerdict {
    Pass,
    Warn,
    Fail,
}

#[derive(Debug, Deserialize, Serialize)]
pub(crate) struct Metric {
    name: String,
    value: f64,
    threshold: Option<f64>,
    passed: bool,
    #[serde(flatten)]
    unknown: Open,
}

/// `additive`.
#[derive(Debug, Deserialize, Serialize)]
pub(crate) struct QualityAssess {
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
pub(crate) enum Severity {
    Critical,
    High,
    Medium,
    Low,
    Info,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Finding {
    id: String,
    severity: Severity,
    rule: String,
    file: String,
    line: Option<u32>,
    cwe: Option<String>,
    evidence: String,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SeverityCounts {
    critical: u32,
    high: u32,
    medium: u32,
    low: u32,
    info: u32,
}

/// `exact`.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SecurityScan {
    scan_id: String,
    target: String,
    findings: Vec<Finding>,
    counts: SeverityCounts,
    scanned_files: u32,
    completed_at: DateTime<Utc>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Disposition {
    Complete,
    Partial,
    Unknown,
    Unavailable,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Truncation {
    None,
    Client,
    Server,
    Unknown,
}

/// Open or closed with the contract that embeds it.
#[derive(Debug, Deserialize, Serialize)]
pub(crate) struct Completeness<X> {
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
pub(crate) enum Risk {
    Low,
    Medium,
    High,
}

#[derive(Debug, Deserialize, Serialize)]
pub(crate) struct FileGap {
    path: String,
    line_coverage: f64,
    uncovered_lines: Vec<u32>,
    risk: Risk,
    #[serde(flatten)]
    unknown: Open,
}

/// `additive`.
#[derive(Debug, Deserialize, Serialize)]
pub(crate) struct CoverageGaps {
    threshold: f64,
    overall_line_coverage: f64,
    files: Vec<FileGap>,
    completeness: Completeness<Open>,
    #[serde(flatten)]
    unknown: Open,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TicketStatus {
    Open,
    Closed,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Ticket {
    id: String,
    title: String,
    status: TicketStatus,
}

/// `exact`; the root is the array itself.
#[derive(Debug, Deserialize, Serialize)]
#[serde(transparent)]
pub(crate) struct SearchTickets(Vec<Ticket>);

/// `exact`.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TicketPage {
    query: String,
    tickets: Vec<Ticket>,
    next_cursor: Option<String>,
    completeness: Completeness<Closed>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ActionKind {
    Click,
    Scroll,
    Screenshot,
    Extract,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ActionResult {
    kind: ActionKind,
    output: Option<serde_json::Map<String, Value>>,
    #[serde(flatten)]
    unknown: Open,
}

/// `additive`.
#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ScrapePage {
    url: String,
    status_code: u16,
    title: Option<String>,
    markdown: String,
    links: Vec<String>,
    metadata: serde_json::Map<String, Value>,
    actions: Vec<ActionResult>,
    scraped_at: DateTime<Utc>,
    completeness: Completeness<Open>,
    #[serde(flatten)]
    unknown: Open,
}

/// `TaskStatus` (`exact`) flattens an internally tagged enum into the fixed fields. serde
/// cannot refuse unknown keys through a flatten, so this twin splits the object by hand:
/// the fixed fields come out by name, and everything else must be exactly one variant
/// (tag included) of the `deny_unknown_fields` enum.
#[derive(Debug)]
pub(crate) struct TaskStatusTwin {
    fields: TaskFields,
    state: TaskState,
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
pub(crate) fn oracle<T: DeserializeOwned + Serialize>(payload: &Value) -> Result<(), String> {
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
pub(crate) fn same_json(a: &Value, b: &Value) -> bool {
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
