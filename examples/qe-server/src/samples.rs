//! Realistic in-memory data for the demo slice: what the server returns, and what the
//! tests serialize as clean controls.

use chrono::{DateTime, TimeZone, Utc};
use contract_runtime::{Completeness, Truncation};
use serde_json::json;

use crate::contracts::{
    ActionKind, ActionResult, Agent, AgentRole, AgentState, CoverageGaps, FileGap, Finding, FleetStatus, GateVerdict,
    Metric, PipelineStatus, QualityAssess, Risk, RunStatus, ScrapePage, SearchTickets, SecurityScan, Severity,
    SeverityCounts, Stage, StageSummary, TaskState, TaskStatus, Ticket, TicketPage, TicketStatus,
};

fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 30, h, m, s).single().expect("valid time")
}

/// A fleet of four agents, one of them failed.
#[must_use]
pub fn fleet_status() -> FleetStatus {
    let agent = |id: &str, role, state, task: Option<&str>, done| Agent {
        id: id.to_owned(),
        role,
        state,
        current_task: task.map(str::to_owned),
        last_heartbeat: at(9, 59, 30),
        tasks_completed: done,
    };
    FleetStatus {
        agents: vec![
            agent("coord-1", AgentRole::Coordinator, AgentState::Busy, Some("T-1042"), 311),
            agent("worker-1", AgentRole::Worker, AgentState::Busy, Some("T-1043"), 128),
            agent("worker-2", AgentRole::Worker, AgentState::Idle, None, 97),
            agent("review-1", AgentRole::Reviewer, AgentState::Failed, None, 54),
        ],
        healthy: 3,
        degraded: 1,
        total: 4,
        coordinator_endpoint: "http://10.20.0.7:7400/coordinator".to_owned(),
        generated_at: at(10, 0, 0),
    }
}

/// One sample per task state, so every branch of the discriminant is exercised.
#[must_use]
pub fn task_statuses() -> Vec<TaskStatus> {
    let states = vec![
        TaskState::Queued { position: 3 },
        TaskState::Running { progress_percent: 42, started_at: at(9, 40, 0) },
        TaskState::Succeeded { finished_at: at(9, 55, 12), duration_ms: 912_004 },
        TaskState::Failed { finished_at: at(9, 51, 3), error_code: "E_TIMEOUT".to_owned(), retryable: true },
        TaskState::Cancelled,
    ];
    states
        .into_iter()
        .enumerate()
        .map(|(i, state)| TaskStatus {
            task_id: format!("T-{}", 1040 + i),
            state,
            attempts: u32::try_from(i).unwrap_or(0) + 1,
            assigned_agent: (i % 2 == 0).then(|| "worker-1".to_owned()),
            updated_at: at(10, 0, 0),
        })
        .collect()
}

/// The task status the `task_status` tool returns by default.
#[must_use]
pub fn task_status() -> TaskStatus {
    task_statuses().swap_remove(1)
}

/// A pipeline with a failed test stage.
#[must_use]
pub fn pipeline_status() -> PipelineStatus {
    let stage = |name: &str, status, duration_ms, started| Stage {
        name: name.to_owned(),
        status,
        duration_ms,
        started_at: started,
    };
    PipelineStatus {
        pipeline_id: "pl-8812".to_owned(),
        status: RunStatus::Failed,
        commit_sha: "ffc0c6a5173874070bb2d07b29e9ae2a7383ed55".to_owned(),
        triggered_by: "push:main".to_owned(),
        stages: vec![
            stage("build", RunStatus::Passed, Some(84_210), Some(at(9, 30, 0))),
            stage("unit-tests", RunStatus::Failed, Some(301_554), Some(at(9, 31, 30))),
            stage("deploy", RunStatus::Cancelled, None, None),
        ],
        summary: StageSummary { passed: 1, failed: 1, skipped: 1 },
    }
}

/// A warning verdict with one metric under its threshold.
#[must_use]
pub fn quality_assess() -> QualityAssess {
    let metric = |name: &str, value, threshold, passed| Metric { name: name.to_owned(), value, threshold, passed };
    QualityAssess {
        overall_score: 78.5,
        gate: GateVerdict::Warn,
        metrics: vec![
            metric("line_coverage", 81.2, Some(80.0), true),
            metric("mutation_score", 61.0, Some(65.0), false),
            metric("flaky_rate", 0.7, None, true),
        ],
        recommendations: vec!["Add tests that kill the surviving mutants in src/mcp/protocol-server.ts".to_owned()],
        assessed_at: at(10, 1, 0),
    }
}

/// Two findings, one of them a leaked credential.
#[must_use]
pub fn security_scan() -> SecurityScan {
    SecurityScan {
        scan_id: "scan-5521".to_owned(),
        target: "agentic-qe@ffc0c6a".to_owned(),
        findings: vec![
            Finding {
                id: "F-1".to_owned(),
                severity: Severity::High,
                rule: "hardcoded-credential".to_owned(),
                file: "src/config/defaults.ts".to_owned(),
                line: Some(17),
                cwe: Some("CWE-798".to_owned()),
                evidence: "apiKey = \"sk-live-4f9a…\"".to_owned(),
            },
            Finding {
                id: "F-2".to_owned(),
                severity: Severity::Low,
                rule: "weak-random".to_owned(),
                file: "src/util/id.ts".to_owned(),
                line: None,
                cwe: None,
                evidence: "Math.random()".to_owned(),
            },
        ],
        counts: SeverityCounts { high: 1, low: 1, ..SeverityCounts::default() },
        scanned_files: 412,
        completed_at: at(10, 2, 0),
    }
}

/// Two files under an 80 % threshold.
#[must_use]
pub fn coverage_gaps() -> CoverageGaps {
    CoverageGaps {
        threshold: 80.0,
        overall_line_coverage: 81.2,
        files: vec![
            FileGap {
                path: "src/mcp/protocol-server.ts".to_owned(),
                line_coverage: 54.3,
                uncovered_lines: vec![647, 648, 665, 730, 731, 767],
                risk: Risk::High,
            },
            FileGap {
                path: "src/cache/result-cache.ts".to_owned(),
                line_coverage: 77.9,
                uncovered_lines: vec![],
                risk: Risk::Medium,
            },
        ],
        completeness: Completeness::complete(2),
    }
}

/// Three tickets: two open, one closed.
#[must_use]
pub fn search_tickets() -> SearchTickets {
    let ticket = |id: &str, title: &str, status| Ticket { id: id.to_owned(), title: title.to_owned(), status };
    SearchTickets(vec![
        ticket("T-1", "Login bug", TicketStatus::Open),
        ticket("T-2", "Billing", TicketStatus::Closed),
        ticket("T-9", "API timeout", TicketStatus::Open),
    ])
}

/// The ticket store the paginated search reads: those three tickets and more.
#[must_use]
pub fn tickets() -> Vec<Ticket> {
    let titles = [
        ("T-1", "Login bug", TicketStatus::Open),
        ("T-2", "Billing", TicketStatus::Closed),
        ("T-3", "Login bug after password reset", TicketStatus::Open),
        ("T-4", "Flaky login test on CI", TicketStatus::Closed),
        ("T-5", "Cache returns stale fleet status", TicketStatus::Open),
        ("T-6", "Export of quality report times out", TicketStatus::Open),
        ("T-7", "Typo in billing email", TicketStatus::Closed),
        ("T-8", "Login page slow on mobile", TicketStatus::Open),
        ("T-9", "API timeout", TicketStatus::Open),
    ];
    titles
        .into_iter()
        .map(|(id, title, status)| Ticket { id: id.to_owned(), title: title.to_owned(), status })
        .collect()
}

/// A first page of two of the four tickets matching "login".
#[must_use]
pub fn ticket_page() -> TicketPage {
    let matching: Vec<Ticket> = tickets().into_iter().filter(|t| t.title.to_lowercase().contains("login")).collect();
    let total = matching.len() as u64;
    TicketPage {
        query: "login".to_owned(),
        tickets: matching.into_iter().take(2).collect(),
        next_cursor: Some("2".to_owned()),
        completeness: Completeness::partial(
            2,
            Some(total),
            Truncation::Client,
            "the page size is 2; ask for the next page with `cursor`",
        ),
    }
}

/// The members of a JSON object literal.
fn object(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    match value {
        serde_json::Value::Object(members) => members,
        _ => serde_json::Map::new(),
    }
}

/// A scraped page with provider metadata passed through untouched.
#[must_use]
pub fn scrape_page() -> ScrapePage {
    ScrapePage {
        url: "https://docs.example.com/guide".to_owned(),
        status_code: 200,
        title: Some("Guide".to_owned()),
        markdown: "# Guide\n\nStart here.".to_owned(),
        links: vec!["https://docs.example.com/guide/install".to_owned()],
        metadata: object(json!({ "language": "en", "ogImage": null, "robots": ["index", "follow"] })),
        actions: vec![
            ActionResult { kind: ActionKind::Click, output: None },
            ActionResult {
                kind: ActionKind::Extract,
                output: Some(object(json!({ "price": 12.5, "currency": "EUR" }))),
            },
        ],
        scraped_at: at(10, 3, 0),
        completeness: Completeness::partial(
            1,
            Some(48),
            Truncation::Server,
            "the provider returns at most one link per page on the free plan",
        ),
    }
}
