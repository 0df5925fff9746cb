use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact", version = "1.1.0")]
pub struct FleetStatus {
    pub healthy: u32,
}

fn main() {
    let _ = FleetStatus::contract();
}
