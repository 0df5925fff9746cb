use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact", name = "fleet status")]
pub struct FleetStatus {
    pub healthy: u32,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact", name = "/qe/coverage_gaps")]
pub struct CoverageGaps {
    pub files: Vec<String>,
}

fn main() {
    let _ = FleetStatus::contract();
    let _ = CoverageGaps::contract();
}
