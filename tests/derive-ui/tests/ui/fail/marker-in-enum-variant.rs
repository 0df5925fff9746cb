use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub enum Connection {
    Offline,
    Online {
        #[tool_output(sensitive)]
        token: String,
    },
}

fn main() {
    let _ = Connection::contract();
}
