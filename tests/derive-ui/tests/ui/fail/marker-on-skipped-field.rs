use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub struct Session {
    pub user: String,
    #[serde(skip)]
    #[tool_output(sensitive)]
    pub token: String,
}

fn main() {
    let _ = Session::contract();
}
