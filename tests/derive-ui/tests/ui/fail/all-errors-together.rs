use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;

fn as_text<S: serde::Serializer>(value: &u64, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}

// Every misuse below is reported in one compilation, and the generic type gets a stub
// impl with the right bounds, so `main` adds no error of its own.
#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.x", compatibility = "loose", owner = "qe", name = "a b")]
#[tool_output(version = "2.0.0", opaque)]
pub struct Report<T> {
    #[tool_output(compatibility = "exact")]
    pub items: Vec<T>,
    #[serde(skip)]
    #[tool_output(sensitive)]
    pub secret: String,
    #[tool_output(sensitive, sensitive, hidden)]
    pub token: String,
    #[serde(serialize_with = "as_text")]
    pub count: u64,
}

fn main() {
    let _ = Report::<u32>::contract();
}
