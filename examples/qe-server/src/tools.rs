//! The tools of the demo slice as plain functions over the in-memory data of
//! [`samples`]: the MCP server calls them, and so do the tests that
//! drive the enforcement pipeline in process, so every path runs the same code.

use contract_runtime::{Completeness, ErrorCode, ToolError, Truncation};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::contracts::{
    CoverageGaps, FleetStatus, PipelineStatus, QualityAssess, ScrapePage, SearchTickets, SecurityScan, TaskStatus,
    Ticket, TicketPage,
};
use crate::samples;

/// The name of the deliberately broken tool (served with `--broken`). It advertises the
/// `fleet_status` contract but drops the required `healthy` field.
pub const BROKEN_TOOL: &str = "broken_fleet_status";

/// The name of the uncontracted tool: usable, listed as `qualified: false`.
pub const UNCONTRACTED_TOOL: &str = "server_version";

/// The name of the deliberately broken long-running tool (served with `--broken`). It
/// runs as a task like `security_scan` (see [`runs_as_task`]), advertises the `security_scan` contract, but
/// drops the required `counts` field.
pub const BROKEN_TASK_TOOL: &str = "broken_security_scan";

/// The tools that are long by nature: a client of [`TASKS_SINCE`] or later that declared
/// the tasks extension gets their calls as tasks. Every other tool answers with its
/// complete result, whatever the client declared.
pub const TASK_TOOLS: [&str; 2] = ["security_scan", BROKEN_TASK_TOOL];

/// The first protocol revision that defines the tasks extension
/// (`io.modelcontextprotocol/tasks`, SEP-2663). Versions are dates, so they compare as
/// strings.
pub const TASKS_SINCE: &str = "2026-07-28";

/// Whether a call of `tool` runs as a task for a client whose negotiated protocol version
/// is `protocol` (`None` when unknown) and that did or did not declare the tasks
/// extension (`declared_tasks`): only a [`TASK_TOOLS`] tool, and only for a client on
/// [`TASKS_SINCE`] or later that declared the extension.
///
/// A client on an older revision gets every result complete, extension declared or not:
/// the extension is not part of its protocol, and such a client may read a task handle as
/// the tool's result (the MCP Inspector CLI does, in its 2025-11-25 era). A server may
/// always answer complete.
#[must_use]
pub fn runs_as_task(tool: &str, protocol: Option<&str>, declared_tasks: bool) -> bool {
    declared_tasks && protocol.is_some_and(|version| version >= TASKS_SINCE) && TASK_TOOLS.contains(&tool)
}

/// Arguments of `task_status`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskStatusArgs {
    /// The task id, such as `T-1041`.
    #[schemars(length(min = 1))]
    pub task_id: String,
}

/// Arguments of `pipeline_status`.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PipelineStatusArgs {
    /// The pipeline id; the latest run when absent.
    #[serde(default)]
    pub pipeline_id: Option<String>,
}

/// Arguments of `quality_assess`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QualityAssessArgs {
    /// The change to assess: a commit SHA or a pull-request reference.
    #[schemars(length(min = 1))]
    pub change: String,
}

/// Arguments of `security_scan`.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SecurityScanArgs {
    /// The repository and revision to scan; the default target when absent.
    #[serde(default)]
    pub target: Option<String>,
}

/// Arguments of `qe/coverage_gaps`.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CoverageGapsArgs {
    /// Line-coverage threshold in percent; 80 when absent.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 100.0))]
    pub threshold: Option<f64>,
}

/// Arguments of `search_tickets`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchTicketsArgs {
    /// Case-insensitive text to find in ticket titles and ids.
    #[schemars(length(min = 1))]
    pub query: String,
}

/// Arguments of `search_tickets_page`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchTicketsPageArgs {
    /// Case-insensitive text to find in ticket titles and ids.
    #[schemars(length(min = 1))]
    pub query: String,
    /// Tickets per page; 10 when absent.
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page; the first page when absent.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// Arguments of `scrape_page`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScrapePageArgs {
    /// The page to scrape.
    #[schemars(length(min = 1))]
    pub url: String,
}

fn not_found(what: &str) -> ToolError {
    ToolError::new(ErrorCode::ToolExecutionError, what.to_owned())
}

/// Health of the agent fleet.
pub fn fleet_status() -> Result<FleetStatus, ToolError> {
    Ok(samples::fleet_status())
}

/// The state of one task.
pub fn task_status(args: &TaskStatusArgs) -> Result<TaskStatus, ToolError> {
    samples::task_statuses()
        .into_iter()
        .find(|t| t.task_id == args.task_id)
        .ok_or_else(|| not_found(&format!("no task `{}`; known tasks are T-1040 to T-1044", args.task_id)))
}

/// A CI pipeline run.
pub fn pipeline_status(args: &PipelineStatusArgs) -> Result<PipelineStatus, ToolError> {
    let run = samples::pipeline_status();
    match &args.pipeline_id {
        Some(id) if *id != run.pipeline_id => Err(not_found(&format!("no pipeline run `{id}`"))),
        _ => Ok(run),
    }
}

/// A quality-gate assessment of one change.
pub fn quality_assess(args: &QualityAssessArgs) -> Result<QualityAssess, ToolError> {
    let mut assessment = samples::quality_assess();
    if args.change.starts_with("wip") {
        assessment.recommendations.push("Finish the change before asking for a gate verdict".to_owned());
    }
    Ok(assessment)
}

/// A static security scan.
pub fn security_scan(args: &SecurityScanArgs) -> Result<SecurityScan, ToolError> {
    let mut scan = samples::security_scan();
    if let Some(target) = &args.target {
        target.clone_into(&mut scan.target);
    }
    Ok(scan)
}

/// Files under a coverage threshold.
pub fn coverage_gaps(args: &CoverageGapsArgs) -> Result<CoverageGaps, ToolError> {
    let mut gaps = samples::coverage_gaps();
    if let Some(threshold) = args.threshold {
        gaps.threshold = threshold;
        gaps.files.retain(|f| f.line_coverage < threshold);
    }
    Ok(gaps)
}

/// Tickets whose id or title contains the query.
pub fn search_tickets(args: &SearchTicketsArgs) -> Result<SearchTickets, ToolError> {
    let query = args.query.to_lowercase();
    let mut found = samples::search_tickets();
    found.0.retain(|t| t.title.to_lowercase().contains(&query) || t.id.to_lowercase().contains(&query));
    Ok(found)
}

/// One page of the tickets whose id or title contains the query. The completeness
/// metadata is honest: a page that stops before the last match is `partial`.
pub fn search_tickets_page(args: &SearchTicketsPageArgs) -> Result<TicketPage, ToolError> {
    let query = args.query.to_lowercase();
    let matching: Vec<Ticket> = samples::tickets()
        .into_iter()
        .filter(|t| t.title.to_lowercase().contains(&query) || t.id.to_lowercase().contains(&query))
        .collect();
    let start = match args.cursor.as_deref() {
        None => 0,
        Some(cursor) => cursor.parse::<usize>().ok().filter(|&n| n <= matching.len()).ok_or_else(|| {
            ToolError::new(ErrorCode::InvalidArguments, "`cursor` is not a cursor this search gave out")
        })?,
    };
    let limit = args.limit.map_or(10, |l| usize::try_from(l).unwrap_or(usize::MAX));
    let total = matching.len();
    let page: Vec<Ticket> = matching.into_iter().skip(start).take(limit).collect();
    let end = start + page.len();
    let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
    let completeness = if start == 0 && end == total {
        Completeness::complete(count(total))
    } else {
        Completeness::partial(
            count(page.len()),
            Some(count(total)),
            Truncation::Client,
            format!("tickets {} to {end} of {total}; the page size is {limit}", start + 1),
        )
    };
    Ok(TicketPage {
        query: args.query.clone(),
        tickets: page,
        next_cursor: (end < total).then(|| end.to_string()),
        completeness,
    })
}

/// A scraped page.
pub fn scrape_page(args: &ScrapePageArgs) -> Result<ScrapePage, ToolError> {
    let mut page = samples::scrape_page();
    if !args.url.starts_with("http://") && !args.url.starts_with("https://") {
        return Err(ToolError::new(ErrorCode::Unavailable, "only http and https pages can be scraped".to_owned()));
    }
    args.url.clone_into(&mut page.url);
    Ok(page)
}

/// The secret the broken handler leaks into its result; no response may carry it.
pub const BROKEN_TOOL_SECRET: &str = "password=hunter2 at /home/ci/.ssh/id_rsa";

/// The deliberately broken handler: a fleet status whose required `healthy` field a
/// refactoring "forgot", and whose `degraded` count became a log line holding
/// [`BROKEN_TOOL_SECRET`]. Served only with `--broken` / `QE_SERVER_BROKEN=1`.
#[must_use]
pub fn broken_fleet_status() -> Value {
    let mut value = serde_json::to_value(samples::fleet_status()).unwrap_or(Value::Null);
    if let Some(obj) = value.as_object_mut() {
        obj.remove("healthy");
        obj.insert("degraded".to_owned(), Value::String(BROKEN_TOOL_SECRET.to_owned()));
    }
    value
}

/// The deliberately broken scan: a security scan whose required `counts` a refactoring
/// "forgot", and whose `scanned_files` count became a log line holding
/// [`BROKEN_TOOL_SECRET`]. Served only with `--broken` / `QE_SERVER_BROKEN=1`.
#[must_use]
pub fn broken_security_scan() -> Value {
    let mut value = serde_json::to_value(samples::security_scan()).unwrap_or(Value::Null);
    if let Some(obj) = value.as_object_mut() {
        obj.remove("counts");
        obj.insert("scanned_files".to_owned(), Value::String(BROKEN_TOOL_SECRET.to_owned()));
    }
    value
}

/// The uncontracted tool's text.
#[must_use]
pub fn server_version() -> String {
    format!("qe-server {}", env!("CARGO_PKG_VERSION"))
}
