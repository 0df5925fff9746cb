//! rmcp's own `Json` looks like ours to everything before a call. rmcp's `#[tool]` macro
//! recognises `Json` by the last segment of the return type and builds the
//! `outputSchema` from `T` alone, so a tool returning `rmcp::Json<T>` is listed exactly
//! as one returning `contract_runtime::rmcp::Json<T>`, and both `ContractSet::check_tools`
//! and `ContractedServer::new` accept it. That is why the catch before deployment is
//! clippy's `disallowed-types` (real_shapes_clippy.rs); the call itself is refused
//! (rmcp_adapter_probe.rs).

use contract_runtime::rmcp::{ContractedServer, Json};
use contract_runtime::{contracts, ToolOutput};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::{tool, tool_handler, tool_router, ServerHandler};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;

#[derive(Serialize, JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Score {
    score: f64,
}

#[derive(Clone)]
struct Twins {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Twins {
    #[tool(description = "A score.")]
    async fn ours(&self) -> Json<Score> {
        Json(Score { score: 0.5 })
    }

    #[tool(description = "A score.")]
    async fn theirs(&self) -> rmcp::Json<Score> {
        rmcp::Json(Score { score: 0.5 })
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Twins {}

#[test]
fn rmcps_json_is_listed_as_ours_and_passes_every_check_before_a_call() {
    let tools = Twins::tool_router().list_all();
    let listed: Vec<(&str, bool)> = tools.iter().map(|t| (t.name.as_ref(), t.output_schema.is_some())).collect();
    let entry = |name: &str| {
        let tool = tools.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("{name} is listed"));
        let mut entry = serde_json::to_value(tool).expect("a tool serializes");
        entry.as_object_mut().expect("an object").remove("name");
        entry
    };
    // The same entry but for the name, with an outputSchema: the one schemars gives `Score`.
    assert_eq!(entry("ours"), entry("theirs"));
    let output = &entry("theirs")["outputSchema"];
    assert_eq!(output["required"], json!(["score"]), "{output}");
    assert_eq!(output["properties"]["score"]["type"], "number", "{output}");

    // Both pass the listing check and the server's construction.
    let set = || contracts![Score => "ours", Score => "theirs"];
    set().check_tools(listed.iter().copied()).expect("check_tools accepts both");
    ContractedServer::new(Twins { tool_router: Twins::tool_router() }, set()).expect("the server accepts both");

    // Control: the listing check does judge the listing. With only ours contracted,
    // rmcp's is a structured tool without a contract.
    let err = contracts![Score => "ours"].check_tools(listed.iter().copied()).expect_err("theirs has no contract");
    let problems: Vec<String> = err.problems().iter().map(ToString::to_string).collect();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("`theirs`"), "{problems:?}");
}
