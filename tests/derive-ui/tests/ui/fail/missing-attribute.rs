use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema, ToolOutput)]
pub struct FleetStatus {
    pub healthy: u32,
}

fn main() {
    let _ = FleetStatus::contract();
}
