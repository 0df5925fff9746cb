//! Field markers point at the names serde writes, after `rename_all` and `rename`.

use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
#[serde(rename_all = "camelCase")]
pub struct FleetStatus {
    pub healthy_agents: u32,
    #[tool_output(sensitive)]
    pub coordinator_endpoint: String,
    #[tool_output(opaque)]
    #[serde(rename = "raw/meta.data")]
    pub raw_metadata: serde_json::Value,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "additive")]
#[serde(rename_all(serialize = "SCREAMING-KEBAB-CASE"))]
pub struct Credentials {
    pub user_name: String,
    #[tool_output(sensitive)]
    pub api_token: String,
    #[tool_output(sensitive)]
    #[serde(rename(serialize = "refreshToken"))]
    pub refresh_token: String,
}

#[test]
fn rename_markers() {
    let fleet = FleetStatus::contract();
    assert_eq!(fleet.sensitive_pointers(), ["/coordinatorEndpoint"]);
    // `/` in a key is escaped as `~1` in a JSON pointer (RFC 6901).
    assert_eq!(fleet.opaque_pointers(), ["/raw~1meta.data"]);
    let value = serde_json::to_value(FleetStatus {
        healthy_agents: 3,
        coordinator_endpoint: "http://10.0.0.1:9000".to_owned(),
        raw_metadata: serde_json::json!({ "anything": [1, 2] }),
    })
    .unwrap();
    assert!(fleet.validate(&value).is_ok());

    let credentials = Credentials::contract();
    assert_eq!(credentials.sensitive_pointers(), ["/API-TOKEN", "/refreshToken"]);
    assert!(credentials.opaque_pointers().is_empty());
}
