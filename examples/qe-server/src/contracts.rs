//! The contracted result types of the demo slice.

use chrono::{DateTime, Utc};
use contract_runtime::{Completeness, ContractSet, ToolOutput};
use schemars::JsonSchema;
use serde::Serialize;

/// Every contract this server publishes, for `cargo xtask schemas` and `tools/list`.
#[must_use]
pub fn all_contracts() -> ContractSet {
    contract_runtime::contracts![
        FleetStatus,
        TaskStatus,
        PipelineStatus,
        QualityAssess,
        SecurityScan,
        CoverageGaps,
        SearchTickets,
        TicketPage,
        ScrapePage,
    ]
}

// ---------------------------------------------------------------- fleet_status

/// Health of the agent fleet.
#[derive(Clone, Debug, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.3.1", compatibility = "additive")]
pub struct FleetStatus {
    /// Every agent known to the coordinator.
    pub agents: Vec<Agent>,
    /// Agents that answered their last heartbeat.
    pub healthy: u32,
    /// Agents that answered late or report errors.
    pub degraded: u32,
    /// All agents, healthy or not.
    pub total: u32,
    /// Where the coordinator listens; internal, never shown in errors.
    #[tool_output(sensitive)]
    pub coordinator_endpoint: String,
    /// When this snapshot was taken.
    pub generated_at: DateTime<Utc>,
}

/// One agent of the fleet.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Agent {
    pub id: String,
    pub role: AgentRole,
    pub state: AgentState,
    /// The task the agent works on, if any.
    pub current_task: Option<String>,
    pub last_heartbeat: DateTime<Utc>,
    pub tasks_completed: u64,
}

#[derive(Clone, Copy, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentRole {
    Coordinator,
    Worker,
    Reviewer,
}

#[derive(Clone, Copy, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentState {
    Idle,
    Busy,
    Failed,
    Offline,
}

// ---------------------------------------------------------------- task_status

/// The state of one orchestrated task. The state is an internally tagged enum flattened
/// into the result, so the contract closes the outer object with `unevaluatedProperties`.
#[derive(Clone, Debug, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "2.1.1", compatibility = "exact")]
pub struct TaskStatus {
    pub task_id: String,
    #[serde(flatten)]
    pub state: TaskState,
    pub attempts: u32,
    pub assigned_agent: Option<String>,
    pub updated_at: DateTime<Utc>,
}

/// Terminal and non-terminal task states; `state` is the discriminant.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum TaskState {
    Queued { position: u32 },
    Running { progress_percent: u8, started_at: DateTime<Utc> },
    Succeeded { finished_at: DateTime<Utc>, duration_ms: u64 },
    Failed { finished_at: DateTime<Utc>, error_code: String, retryable: bool },
    Cancelled,
}

// ---------------------------------------------------------------- pipeline_status

/// A CI pipeline run and its stages.
#[derive(Clone, Debug, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.1.1", compatibility = "exact")]
pub struct PipelineStatus {
    pub pipeline_id: String,
    pub status: RunStatus,
    pub commit_sha: String,
    pub triggered_by: String,
    pub stages: Vec<Stage>,
    pub summary: StageSummary,
}

#[derive(Clone, Copy, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Pending,
    Running,
    Passed,
    Failed,
    Cancelled,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Stage {
    pub name: String,
    pub status: RunStatus,
    /// Absent until the stage has finished.
    pub duration_ms: Option<u64>,
    pub started_at: Option<DateTime<Utc>>,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct StageSummary {
    pub passed: u32,
    pub failed: u32,
    pub skipped: u32,
}

// ---------------------------------------------------------------- quality_assess

/// A quality-gate assessment of one change.
#[derive(Clone, Debug, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.1.1", compatibility = "additive")]
pub struct QualityAssess {
    /// Weighted score, 0 to 100.
    pub overall_score: f64,
    pub gate: GateVerdict,
    pub metrics: Vec<Metric>,
    pub recommendations: Vec<String>,
    pub assessed_at: DateTime<Utc>,
}

#[derive(Clone, Copy, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GateVerdict {
    Pass,
    Warn,
    Fail,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Metric {
    pub name: String,
    pub value: f64,
    /// The gate's threshold, when the metric has one.
    pub threshold: Option<f64>,
    pub passed: bool,
}

// ---------------------------------------------------------------- security_scan

/// Findings of a static security scan.
#[derive(Clone, Debug, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.1.1", compatibility = "exact")]
pub struct SecurityScan {
    pub scan_id: String,
    pub target: String,
    pub findings: Vec<Finding>,
    pub counts: SeverityCounts,
    pub scanned_files: u32,
    pub completed_at: DateTime<Utc>,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Finding {
    pub id: String,
    pub severity: Severity,
    pub rule: String,
    pub file: String,
    pub line: Option<u32>,
    pub cwe: Option<String>,
    /// The matched source text; it may contain the secret that was found.
    #[schemars(transform = contract_runtime::sensitive)]
    pub evidence: String,
}

#[derive(Clone, Copy, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Critical,
    High,
    Medium,
    Low,
    Info,
}

#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct SeverityCounts {
    pub critical: u32,
    pub high: u32,
    pub medium: u32,
    pub low: u32,
    pub info: u32,
}

// ---------------------------------------------------------------- qe/coverage_gaps

/// Files whose line coverage falls below the threshold. A slash-named tool: its schema
/// is stored as `schemas/qe__coverage_gaps.json`.
#[derive(Clone, Debug, Serialize, JsonSchema, ToolOutput)]
#[tool_output(name = "qe/coverage_gaps", version = "1.2.1", compatibility = "additive")]
pub struct CoverageGaps {
    pub threshold: f64,
    pub overall_line_coverage: f64,
    pub files: Vec<FileGap>,
    /// Whether `files` lists every file under the threshold.
    // `returned_count` is the number of `files`; the pipeline checks it.
    #[tool_output(counts = "files")]
    pub completeness: Completeness,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct FileGap {
    pub path: String,
    pub line_coverage: f64,
    pub uncovered_lines: Vec<u32>,
    pub risk: Risk,
}

#[derive(Clone, Copy, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    Low,
    Medium,
    High,
}

// ---------------------------------------------------------------- search_tickets

/// Tickets matching a query. The root is an array (MCP 2026-07-28, SEP-2106).
#[derive(Clone, Debug, Serialize, JsonSchema, ToolOutput)]
#[serde(transparent)]
#[tool_output(version = "1.0.1", compatibility = "exact")]
pub struct SearchTickets(pub Vec<Ticket>);

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Ticket {
    pub id: String,
    pub title: String,
    pub status: TicketStatus,
}

#[derive(Clone, Copy, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TicketStatus {
    Open,
    Closed,
}

// ---------------------------------------------------------------- search_tickets_page

/// One page of a ticket search, and what the page knows about the rest: the
/// completeness metadata says whether these are all the matches.
#[derive(Clone, Debug, Serialize, JsonSchema, ToolOutput)]
#[tool_output(name = "search_tickets_page", version = "1.0.1", compatibility = "exact")]
pub struct TicketPage {
    /// The query, as searched.
    pub query: String,
    pub tickets: Vec<Ticket>,
    /// Pass it as `cursor` to get the next page; absent on the last page.
    pub next_cursor: Option<String>,
    // Whether these are all the matches: `returned_count` is the number of `tickets`,
    // which the pipeline checks. (A doc comment here would change the schema.)
    #[tool_output(counts = "tickets")]
    pub completeness: Completeness,
}

// ---------------------------------------------------------------- scrape_page

/// A scraped page: the documented keys are typed, the provider's pass-through values are
/// declared opaque.
#[derive(Clone, Debug, Serialize, JsonSchema, ToolOutput)]
#[serde(rename_all = "camelCase")]
#[tool_output(version = "1.3.0", compatibility = "additive")]
pub struct ScrapePage {
    pub url: String,
    pub status_code: u16,
    pub title: Option<String>,
    pub markdown: String,
    pub links: Vec<String>,
    /// Provider metadata, passed through as the provider wrote it (always an object).
    #[tool_output(opaque)]
    pub metadata: serde_json::Map<String, serde_json::Value>,
    pub actions: Vec<ActionResult>,
    pub scraped_at: DateTime<Utc>,
    /// Whether `links` holds every link of the page.
    // `returned_count` is the number of `links`; the pipeline checks it.
    #[tool_output(counts = "links")]
    pub completeness: Completeness,
}

/// The outcome of one browser action run before scraping.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActionResult {
    pub kind: ActionKind,
    /// What the action returned (a screenshot URL, extracted JSON, …), or null.
    #[schemars(transform = contract_runtime::opaque)]
    pub output: Option<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Clone, Copy, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActionKind {
    Click,
    Scroll,
    Screenshot,
    Extract,
}
