use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact", sensitive)]
pub struct FleetStatus {
    pub coordinator_endpoint: String,
}

fn main() {
    let _ = FleetStatus::contract();
}
