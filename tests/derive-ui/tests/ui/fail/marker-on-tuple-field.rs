use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub struct Pair(pub String, #[tool_output(sensitive)] pub String);

fn main() {
    let _ = Pair::contract();
}
