//! Generic contracts: one contract per instantiation, type and const parameters alike.

use contract_runtime::ToolOutput;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Serialize, Serializer};
use std::borrow::Cow;

/// One page of results of any item type.
#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub struct Page<T> {
    pub items: Vec<T>,
    pub total: u32,
}

/// A code of exactly `N` characters; its schema depends on `N`.
pub struct Code<const N: usize>(String);

impl<const N: usize> Serialize for Code<N> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<const N: usize> JsonSchema for Code<N> {
    fn schema_name() -> Cow<'static, str> {
        format!("Code{N}").into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "minLength": N, "maxLength": N })
    }
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "additive")]
pub struct Lookup<const N: usize> {
    pub code: Code<N>,
}

#[test]
fn generic() {
    let numbers = Page::<u32>::contract();
    let words = Page::<String>::contract();
    assert_eq!(numbers.name(), "page");
    assert_eq!(numbers.schema()["properties"]["items"]["items"]["type"], "integer");
    assert_eq!(words.schema()["properties"]["items"]["items"]["type"], "string");
    assert_ne!(numbers.sha256(), words.sha256());

    let page = Page { items: vec!["a".to_owned()], total: 1 };
    assert!(words.validate(&serde_json::to_value(&page).unwrap()).is_ok());
    assert!(numbers.validate(&serde_json::to_value(&page).unwrap()).is_err());

    let two = Lookup::<2>::contract();
    let three = Lookup::<3>::contract();
    assert_ne!(two.sha256(), three.sha256(), "each const instantiation needs its own contract");
    let value = serde_json::to_value(Lookup::<2> { code: Code("ab".to_owned()) }).unwrap();
    assert!(two.validate(&value).is_ok());
    assert!(three.validate(&value).is_err());
}
