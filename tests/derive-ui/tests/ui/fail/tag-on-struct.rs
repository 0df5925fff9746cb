use contract_runtime::ToolOutput;

#[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
#[serde(tag = "kind")]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Event {
    id: String,
}

fn main() {
    let _ = Event::contract();
}
