// schemars reads serde's `with` as the type to describe, so it reports the module too
// (E0573); our error says what to add, which fixes both.
use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;

mod as_text {
    pub fn serialize<S: serde::Serializer>(value: &u64, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(value)
    }
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub struct Counter {
    #[serde(with = "as_text")]
    pub count: u64,
}

fn main() {
    let _ = Counter::contract();
}
