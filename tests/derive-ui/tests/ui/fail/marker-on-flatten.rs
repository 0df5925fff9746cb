use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema)]
pub struct Credentials {
    pub user: String,
    pub token: String,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub struct Login {
    pub ok: bool,
    #[serde(flatten)]
    #[tool_output(sensitive)]
    pub credentials: Credentials,
}

fn main() {
    let _ = Login::contract();
}
