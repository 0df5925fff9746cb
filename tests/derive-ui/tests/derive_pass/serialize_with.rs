//! `serialize_with`, `with` and `into` are accepted once `#[schemars(with = …)]` names
//! the type serde writes, and the contract then describes what serde writes.

use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::{Serialize, Serializer};

// serde's `serialize_with` hands the field over by reference.
#[allow(clippy::trivially_copy_pass_by_ref)]
fn as_text<S: Serializer>(value: &u64, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}

mod as_text {
    #[allow(clippy::trivially_copy_pass_by_ref)]
    pub fn serialize<S: serde::Serializer>(value: &u64, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(value)
    }
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub struct Counter {
    #[serde(serialize_with = "as_text")]
    #[schemars(with = "String")]
    pub count: u64,
    #[serde(with = "as_text")]
    #[schemars(with = "String")]
    pub total: u64,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub enum Reading {
    #[serde(serialize_with = "as_text")]
    #[schemars(with = "String")]
    Big(u64),
    Small(u8),
}

#[derive(Clone, Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
#[serde(into = "String")]
#[schemars(with = "String")]
pub struct Ticket {
    pub number: u32,
}

impl From<Ticket> for String {
    fn from(ticket: Ticket) -> String {
        format!("T-{}", ticket.number)
    }
}

#[test]
fn serialize_with() {
    let counter = Counter::contract();
    assert_eq!(counter.schema()["properties"]["count"]["type"], "string");
    let value = serde_json::to_value(Counter { count: u64::MAX, total: 7 }).unwrap();
    assert_eq!(value, serde_json::json!({ "count": "18446744073709551615", "total": "7" }));
    assert!(counter.validate(&value).is_ok());

    let reading = Reading::contract();
    for instance in [Reading::Big(u64::MAX), Reading::Small(3)] {
        let value = serde_json::to_value(instance).unwrap();
        assert!(reading.validate(&value).is_ok(), "{value}");
    }

    let ticket = Ticket::contract();
    assert_eq!(ticket.schema()["type"], "string");
    let value = serde_json::to_value(Ticket { number: 12 }).unwrap();
    assert_eq!(value, "T-12");
    assert!(ticket.validate(&value).is_ok());
}
