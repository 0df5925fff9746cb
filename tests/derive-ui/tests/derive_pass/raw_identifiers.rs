//! Raw identifiers serialize without their `r#` prefix, and markers follow.

use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "0.1.0", compatibility = "exact")]
pub struct r#Match {
    pub r#type: String,
    #[tool_output(sensitive)]
    pub r#ref: String,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "0.1.0", compatibility = "exact")]
#[serde(rename_all = "UPPERCASE")]
pub struct Keywords {
    #[tool_output(opaque)]
    pub r#loop: serde_json::Value,
}

#[test]
fn raw_identifiers() {
    let contract = Match::contract();
    assert_eq!(contract.name(), "match");
    assert_eq!(contract.sensitive_pointers(), ["/ref"]);
    let value =
        serde_json::to_value(Match { r#type: "issue".to_owned(), r#ref: "refs/heads/main".to_owned() }).unwrap();
    assert_eq!(value, serde_json::json!({ "type": "issue", "ref": "refs/heads/main" }));
    assert!(contract.validate(&value).is_ok());

    assert_eq!(Keywords::contract().opaque_pointers(), ["/LOOP"]);
}
