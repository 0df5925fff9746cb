use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output]
pub struct FleetStatus {
    #[tool_output]
    pub coordinator_endpoint: String,
}

fn main() {
    let _ = FleetStatus::contract();
}
