//! The fixes the refusal of a flattened `serde_json::Value` map suggests: on a field of the
//! contract type `#[tool_output(opaque)]`, on a flattened field of a nested type or of an
//! enum variant `#[schemars(with = "contract_runtime::OpaqueMap")]`. Each contract builds,
//! lists the map's values as opaque, accepts what serde writes and still checks the fields
//! around the map.

use std::collections::{BTreeMap, HashMap};

use contract_runtime::ToolOutput;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub struct Scrape {
    pub url: String,
    #[serde(flatten)]
    #[tool_output(opaque)]
    pub upstream: HashMap<String, Value>,
}

#[derive(Serialize, JsonSchema)]
pub struct Page {
    pub url: String,
    #[serde(flatten)]
    #[schemars(with = "contract_runtime::OpaqueMap")]
    pub upstream: BTreeMap<String, Value>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub struct Crawl {
    pub pages: Vec<Page>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub enum Event {
    Raw {
        id: u32,
        #[serde(flatten)]
        #[schemars(with = "contract_runtime::OpaqueMap")]
        rest: serde_json::Map<String, Value>,
    },
}

#[test]
fn opaque_flattened_map() {
    let upstream: HashMap<String, Value> = [("anything".to_owned(), json!([1, { "deep": null }]))].into();
    let scrape = Scrape { url: "u".into(), upstream: upstream.clone() };
    assert!(Scrape::contract().validate_output(&scrape).is_ok());
    assert_eq!(Scrape::contract().opaque_pointers(), ["/*"]);
    // The field next to the map is still checked.
    assert!(!Scrape::contract().is_valid(&json!({ "url": 1, "x": 1 })));
    assert!(!Scrape::contract().is_valid(&json!({ "x": 1 })));

    let crawl = Crawl { pages: vec![Page { url: "u".into(), upstream: upstream.into_iter().collect() }] };
    assert!(Crawl::contract().validate_output(&crawl).is_ok());
    assert_eq!(Crawl::contract().opaque_pointers(), ["/pages/*/*"]);
    assert!(!Crawl::contract().is_valid(&json!({ "pages": [{ "x": 1 }] })));

    let raw = Event::Raw { id: 1, rest: [("k".to_owned(), json!({ "any": true }))].into_iter().collect() };
    assert!(Event::contract().validate_output(&raw).is_ok());
    assert_eq!(Event::contract().opaque_pointers(), ["/Raw/*"]);
    assert!(!Event::contract().is_valid(&json!({ "Raw": { "k": 1 } })));
}
