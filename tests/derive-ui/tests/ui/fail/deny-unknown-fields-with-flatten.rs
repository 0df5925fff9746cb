use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema)]
pub struct Page {
    pub offset: u32,
    pub limit: u32,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
#[serde(deny_unknown_fields)]
pub struct Listing {
    pub items: Vec<String>,
    #[serde(flatten)]
    pub page: Page,
}

fn main() {
    let _ = Listing::contract();
}
