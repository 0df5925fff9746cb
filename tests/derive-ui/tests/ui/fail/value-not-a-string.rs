use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = 1.2, compatibility, name = fleet_status)]
pub struct FleetStatus {
    pub healthy: u32,
}

fn main() {
    let _ = FleetStatus::contract();
}
