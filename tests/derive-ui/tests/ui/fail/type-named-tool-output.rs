//! A user type named `ToolOutput` next to an imported `ToolOutput` derive: the names
//! clash. The fix, `#[derive(contract_runtime::ToolOutput)]` without the import, is
//! `pass/type-named-tool-output.rs`.

use contract_runtime::ToolOutput;
use serde::Serialize;

#[derive(Serialize, schemars::JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub struct ToolOutput<D> {
    pub data: Option<D>,
}

fn main() {}
