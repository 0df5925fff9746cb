//! The benchmark workload, shared by the criterion bench and the ratio printer: a
//! ticket search result with every object closed and a `date-time` per ticket: the
//! workload the validation costs in BENCHMARKS.md were measured on.

// Included by the bench and by the ratio example; each uses what it needs.
#![allow(unreachable_pub, dead_code)]

use contract_runtime::pipeline::{CallContext, Pipeline};
use contract_runtime::wire::ToolError;
use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

#[derive(Clone, Debug, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub struct TicketPage {
    pub tickets: Vec<Ticket>,
    pub total: u64,
    pub complete: bool,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Ticket {
    pub id: String,
    pub title: String,
    pub status: Status,
    pub priority: u8,
    pub assignee: Option<String>,
    pub labels: Vec<String>,
    #[schemars(with = "DateTime")]
    pub updated_at: String,
}

/// An RFC 3339 timestamp, as chrono would write it.
#[derive(Debug, JsonSchema)]
#[schemars(transparent)]
pub struct DateTime(#[schemars(extend("format" = "date-time"))] pub String);

#[derive(Clone, Copy, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Open,
    Closed,
}

#[must_use]
pub fn page(n: usize) -> TicketPage {
    let tickets = (0..n)
        .map(|i| Ticket {
            id: format!("T-{i}"),
            title: format!("Ticket number {i}: login fails after password reset"),
            status: if i % 3 == 0 { Status::Closed } else { Status::Open },
            priority: u8::try_from(i % 5).unwrap_or(0),
            assignee: (i % 2 == 0).then(|| format!("agent-{}", i % 7)),
            labels: vec!["auth".to_owned(), "p1".to_owned()],
            updated_at: format!("2026-11-{:02}T10:{:02}:00Z", 1 + i % 28, i % 60),
        })
        .collect();
    TicketPage { tickets, total: n as u64, complete: true }
}

/// The floor: a server must serialize its result anyway.
#[must_use]
pub fn floor(page: &TicketPage) -> Vec<u8> {
    serde_json::to_vec(page).expect("serializes")
}

/// rmcp 3.x's `Json<T>` path, unvalidated: `to_value` for `structuredContent`,
/// `to_string` of that value for the text block, the result struct, then the
/// transport serializes the whole result.
#[must_use]
pub fn rmcp_like(page: &TicketPage) -> Vec<u8> {
    #[derive(Serialize)]
    struct Text {
        r#type: &'static str,
        text: String,
    }
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct CallToolResult {
        content: Vec<Text>,
        structured_content: Option<Value>,
        is_error: Option<bool>,
    }
    let value = serde_json::to_value(page).expect("serializes");
    let text = serde_json::to_string(&value).expect("serializes");
    let result = CallToolResult {
        content: vec![Text { r#type: "text", text }],
        structured_content: Some(value),
        is_error: Some(false),
    };
    serde_json::to_vec(&result).expect("serializes")
}

/// Our full path to wire bytes for the handler's output: serialize, check, validate,
/// build the envelope, write it (`Pipeline::process`, what `call` runs after the handler).
#[must_use]
pub fn validated(pipeline: &Pipeline, ctx: &CallContext, page: &TicketPage) -> Vec<u8> {
    let result = pipeline.process(ctx, TicketPage::contract(), page);
    assert!(!result.is_error(), "{}", result.text());
    result.to_wire_bytes()
}

/// The same through `call_sync`, whose handler clones the page to return it.
#[must_use]
pub fn validated_call(pipeline: &Pipeline, ctx: &CallContext, page: &TicketPage) -> Vec<u8> {
    let result = pipeline.call_sync(ctx, || Ok::<_, ToolError>(page.clone()));
    assert!(!result.is_error(), "{}", result.text());
    result.to_wire_bytes()
}

/// Validation alone, of an already-built value.
#[must_use]
pub fn validate_only(value: &Value) -> bool {
    // The raw validator: this path measures `jsonschema` alone, without the depth walk.
    TicketPage::contract().validator().is_valid(value)
}
