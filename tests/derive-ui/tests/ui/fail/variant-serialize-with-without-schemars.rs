use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;

fn as_text<S: serde::Serializer>(value: &u64, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub enum Reading {
    #[serde(serialize_with = "as_text")]
    Big(u64),
    Small(u8),
}

fn main() {
    let _ = Reading::contract();
}
