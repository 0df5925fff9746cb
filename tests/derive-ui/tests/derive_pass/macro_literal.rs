//! Contracts declared through `macro_rules!` with `$x:literal` arguments, which reach
//! the derive wrapped in invisible groups.

use contract_runtime::ToolOutput;

macro_rules! contract {
    ($name:ident, $version:literal, $compat:literal) => {
        #[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
        #[tool_output(version = $version, compatibility = $compat)]
        struct $name {
            ok: bool,
        }
    };
}

contract!(Exact, "1.2.0", "exact");
contract!(Additive, "0.3.1", "additive");

#[test]
fn macro_literal() {
    assert_eq!(Exact::contract().version().to_string(), "1.2.0");
    assert_eq!(Exact::contract().compatibility(), contract_runtime::Compatibility::Exact);
    assert_eq!(Additive::contract().compatibility(), contract_runtime::Compatibility::Additive);
    assert_eq!(Exact::contract().schema()["additionalProperties"], false);
    let _ = (Exact { ok: true }.ok, Additive { ok: false }.ok);
}
