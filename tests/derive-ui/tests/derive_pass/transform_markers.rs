//! Where `#[tool_output(sensitive)]` cannot name a key (tuple, newtype and transparent
//! structs), the schemars transform the compile error suggests marks the right pointer.

use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub struct Pair(pub String, #[schemars(transform = contract_runtime::sensitive)] pub String);

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub struct Secret(#[schemars(transform = contract_runtime::sensitive)] pub String);

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
#[serde(transparent)]
pub struct Tokens {
    #[schemars(transform = contract_runtime::sensitive)]
    pub tokens: Vec<String>,
}

#[test]
fn transform_markers() {
    assert_eq!(Pair::contract().sensitive_pointers(), ["/1"]);
    assert_eq!(Secret::contract().sensitive_pointers(), [""]);
    assert_eq!(Tokens::contract().sensitive_pointers(), [""]);
    let value = serde_json::to_value(Tokens { tokens: vec!["a".to_owned()] }).unwrap();
    assert!(Tokens::contract().validate(&value).is_ok());
}
