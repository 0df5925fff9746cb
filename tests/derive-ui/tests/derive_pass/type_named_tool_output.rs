//! A user type named `ToolOutput` derives through the path form: importing the derive
//! would clash with the type's own name (see `fail/type-named-tool-output.rs`).

use contract_runtime::contracts;
use serde::Serialize;

/// The server's one generic result wrapper.
#[derive(Serialize, schemars::JsonSchema, contract_runtime::ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub struct ToolOutput<D> {
    pub ok: bool,
    pub data: Option<D>,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct Goal {
    pub score: f64,
}

pub type GoalOutput = ToolOutput<Goal>;

#[test]
fn type_named_tool_output() {
    let set = contracts![GoalOutput => "set_goal"];
    set.check().unwrap();
    assert_eq!(set.get("set_goal").unwrap().type_name(), "ToolOutput<Goal>");
    // The trait's methods by its path, or with `use contract_runtime::ToolOutput as _;`.
    let contract = <GoalOutput as contract_runtime::ToolOutput>::try_contract_for("set_goal").unwrap();
    assert_eq!(contract.name(), "set_goal");
}
