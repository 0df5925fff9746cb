//! Enums in every serde representation are contracts, and fields inside their variants
//! are marked with the schemars transforms the compile errors point to.

use contract_runtime::{OutputContract, ToolOutput};
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub enum External {
    Offline,
    Online {
        #[schemars(transform = contract_runtime::sensitive)]
        token: String,
    },
    Count(u32),
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Internal {
    Offline,
    Online {
        #[schemars(transform = contract_runtime::sensitive)]
        token: String,
    },
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "additive")]
#[serde(tag = "t", content = "c")]
pub enum Adjacent {
    Offline,
    Online {
        #[schemars(transform = contract_runtime::sensitive)]
        token: String,
    },
    Count(u32),
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
#[serde(untagged)]
pub enum Untagged {
    Online {
        #[schemars(transform = contract_runtime::sensitive)]
        token: String,
    },
    Count(u32),
}

fn accepts<T: Serialize>(contract: &OutputContract, instances: &[T]) {
    for instance in instances {
        let value = serde_json::to_value(instance).unwrap();
        if let Err(report) = contract.validate(&value) {
            panic!("{} rejects {value}: {report}", contract.name());
        }
    }
}

#[test]
fn enum_representations() {
    let token = || "secret".to_owned();

    let external = External::contract();
    assert_eq!(external.sensitive_pointers(), ["/Online/token"]);
    accepts(external, &[External::Offline, External::Online { token: token() }, External::Count(2)]);
    assert!(external.validate(&serde_json::json!({ "Online": { "token": "x", "extra": 1 } })).is_err());

    let internal = Internal::contract();
    assert_eq!(internal.sensitive_pointers(), ["/token"]);
    accepts(internal, &[Internal::Offline, Internal::Online { token: token() }]);
    assert!(internal.validate(&serde_json::json!({ "state": "gone" })).is_err());

    let adjacent = Adjacent::contract();
    assert_eq!(adjacent.sensitive_pointers(), ["/c/token"]);
    accepts(adjacent, &[Adjacent::Offline, Adjacent::Online { token: token() }, Adjacent::Count(2)]);

    let untagged = Untagged::contract();
    assert_eq!(untagged.sensitive_pointers(), ["/token"]);
    accepts(untagged, &[Untagged::Online { token: token() }, Untagged::Count(2)]);
    assert!(untagged.validate(&serde_json::json!("neither")).is_err());
}
