use contract_runtime::{Completeness, ToolOutput};
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub struct Page {
    pub tickets: Vec<u32>,
    #[tool_output(counts = "ticket")]
    pub completeness: Completeness,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub struct Skipped {
    #[serde(skip)]
    pub tickets: Vec<u32>,
    #[tool_output(counts = "tickets")]
    pub completeness: Completeness,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub struct NoValue {
    pub tickets: Vec<u32>,
    #[tool_output(counts)]
    pub completeness: Completeness,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub enum InVariant {
    Page {
        tickets: Vec<u32>,
        #[tool_output(counts = "tickets")]
        completeness: Completeness,
    },
}

fn main() {
    let _ = Page::contract();
    let _ = Skipped::contract();
    let _ = NoValue::contract();
    let _ = InVariant::contract();
}
