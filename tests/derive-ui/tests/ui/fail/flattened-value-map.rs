use std::collections::HashMap;

use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub struct Scrape {
    pub url: String,
    #[serde(flatten)]
    pub upstream: HashMap<String, serde_json::Value>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub enum Event {
    Raw {
        id: u32,
        #[serde(flatten)]
        rest: serde_json::Map<String, serde_json::Value>,
    },
}

fn main() {
    let _ = Scrape::contract();
    let _ = Event::contract();
}
