use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub struct FleetStatus {
    #[tool_output(sensitive = true)]
    pub coordinator_endpoint: String,
    #[tool_output(opaque("metadata"))]
    pub metadata: serde_json::Value,
}

fn main() {
    let _ = FleetStatus::contract();
}
