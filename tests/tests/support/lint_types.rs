//! The result types the schema lint tests and the fix-line tests share: types the lints
//! refuse, and the same types written as the messages say.

#![allow(dead_code, unused_imports, unreachable_pub)]

use std::collections::{BTreeMap, HashMap};

use contract_runtime::{ContractError, OutputContract, ToolOutput};
use contract_tools::schemas;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub(crate) struct RawPayload {
    pub(crate) url: String,
    pub(crate) payload: Value,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact", name = "opaque_payload")]
pub(crate) struct OpaquePayload {
    pub(crate) url: String,
    #[tool_output(opaque)]
    pub(crate) payload: Value,
}

#[derive(Serialize, JsonSchema)]
pub(crate) struct RawPage {
    pub(crate) url: String,
    pub(crate) metadata: Value,
}

#[derive(Serialize, JsonSchema)]
pub(crate) struct OpaquePage {
    pub(crate) url: String,
    #[schemars(transform = contract_runtime::opaque)]
    pub(crate) metadata: Value,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "additive")]
pub(crate) struct RawPages {
    pub(crate) pages: Vec<RawPage>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "additive", name = "opaque_pages")]
pub(crate) struct OpaquePages {
    pub(crate) pages: Vec<OpaquePage>,
    pub(crate) by_key: BTreeMap<String, OpaquePage>,
}

/// Written with an alias, so that the derive cannot see the map of `Value` and the
/// refusal comes from building the contract.
pub(crate) type Bag = BTreeMap<String, Value>;

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub(crate) struct FlattenedValueMap {
    pub(crate) id: u32,
    #[serde(flatten)]
    pub(crate) rest: Bag,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "additive")]
#[serde(transparent)]
pub(crate) struct Anything(pub(crate) Value);

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "additive")]
#[serde(transparent)]
pub(crate) struct Numbers(pub(crate) Vec<u32>);

#[derive(Serialize, JsonSchema)]
pub(crate) struct Upstream {
    pub(crate) url: String,
    #[serde(flatten)]
    pub(crate) rest: HashMap<String, Value>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub(crate) struct RawCrawl {
    pub(crate) pages: Vec<Upstream>,
}

#[derive(Serialize, JsonSchema)]
pub(crate) struct OpaqueUpstream {
    pub(crate) url: String,
    #[serde(flatten)]
    #[schemars(with = "contract_runtime::OpaqueMap")]
    pub(crate) rest: HashMap<String, Value>,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub(crate) struct OpaqueCrawl {
    pub(crate) pages: Vec<OpaqueUpstream>,
}

#[derive(Serialize, JsonSchema)]
pub(crate) struct Meta {
    pub(crate) source: String,
}

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
pub(crate) struct OpaqueFlattenedStruct {
    pub(crate) id: u32,
    #[serde(flatten)]
    #[tool_output(opaque)]
    pub(crate) meta: Meta,
}
