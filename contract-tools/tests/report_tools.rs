//! The tools section of the JSON review matches the review's checked-in schema in every
//! state a tool can be in: new, unchanged, changed (input, annotation, text, contract),
//! removed, unreadable; with and without the annotations manifest.

use std::path::PathBuf;

use contract_tools::report::ReviewReport;
use contract_tools::tool_list::{self, ToolListing};
use contract_tools::{report, schemas};
use serde_json::{json, Value};

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn listing(version: &str, tools: &Value) -> ToolListing {
    ToolListing::from_json(version, tools).unwrap()
}

fn report_of(dir: &std::path::Path, listing: &ToolListing) -> ReviewReport {
    let set = report::contracts();
    let mut report = schemas::review(dir, &set).unwrap().report();
    report.tools = Some(tool_list::review(dir, listing, &set).unwrap().report());
    report
}

#[test]
fn every_tool_state_matches_the_review_schema() {
    let dir = Scratch(std::env::temp_dir().join(format!("contract-tools-report-tools-{}", std::process::id())));
    let dir = &dir.0;
    let _ = std::fs::remove_dir_all(dir);
    let first = listing(
        "1.0.0",
        &json!([
            { "name": "schemas_review", "description": "The review.", "inputSchema": { "type": "object" },
              "annotations": { "readOnlyHint": true } },
            { "name": "echo", "title": "Echo", "inputSchema": { "type": "object", "properties": { "text": { "type": "string" } } } },
            { "name": "gone", "inputSchema": { "type": "object" } }
        ]),
    );
    let new = report_of(dir, &first);
    new.validate().unwrap_or_else(|e| panic!("new: {e}"));
    assert_eq!(new.tools.as_ref().unwrap().tools.len(), 3);
    let set = report::contracts();
    tool_list::review(dir, &first, &set).unwrap().write(dir).unwrap();
    std::fs::write(dir.join("tools/annotations.json"), "{}\n").unwrap();
    let unchanged = report_of(dir, &first);
    unchanged.validate().unwrap_or_else(|e| panic!("unchanged: {e}"));
    assert!(unchanged.tools.as_ref().unwrap().tools.iter().all(|t| t.status == "unchanged"));

    let changed = listing(
        "1.0.0",
        &json!([
            { "name": "schemas_review", "description": "The review, for bots.", "inputSchema": { "type": "object", "required": ["x"], "properties": { "x": { "type": "integer" } } },
              "annotations": { "readOnlyHint": false } },
            { "name": "echo", "title": "Echo back", "inputSchema": { "type": "object" } },
            { "name": "fresh", "inputSchema": { "type": "object" } }
        ]),
    );
    std::fs::write(dir.join("tools/echo.tool.json"), "{ not json").unwrap();
    let report = report_of(dir, &changed);
    report.validate().unwrap_or_else(|e| panic!("changed: {e}"));
    let tools = report.tools.as_ref().unwrap();
    let status = |name: &str| tools.tools.iter().find(|t| t.name == name).map(|t| t.status.clone());
    assert_eq!(status("schemas_review").as_deref(), Some("changed"));
    assert_eq!(status("echo").as_deref(), Some("unreadable"));
    assert_eq!(status("gone").as_deref(), Some("removed"));
    assert_eq!(status("fresh").as_deref(), Some("new"));
    let areas: Vec<&str> = tools.tools.iter().flat_map(|t| &t.changes).map(|c| c.area.as_str()).collect();
    for area in ["text", "input", "annotation", "tool"] {
        assert!(areas.contains(&area), "{area} in {areas:?}");
    }
    assert!(!tools.policy_ok && !tools.fixes.is_empty());
    assert!(tools.manifest.as_ref().is_some_and(|m| !m.up_to_date));
}
