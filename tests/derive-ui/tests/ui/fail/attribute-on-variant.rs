use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub enum TaskState {
    Queued,
    #[tool_output(sensitive)]
    Failed {
        error: String,
    },
}

fn main() {
    let _ = TaskState::contract();
}
