use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
#[serde(transparent)]
pub struct Tokens {
    #[tool_output(sensitive)]
    pub tokens: Vec<String>,
}

fn main() {
    let _ = Tokens::contract();
}
