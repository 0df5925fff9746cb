//! The contract set binds each tool name once, next to its type; a duplicate name, a
//! contract without its tool and a structured tool without a contract are reported by a
//! test (this one), not discovered when the server starts.

use contract_runtime::{contracts, ContractSet, SetProblem, ToolOutput};
use qe_server::contracts::FleetStatus;
use qe_server::server::QeServer;
use qe_server::tools::{BROKEN_TOOL, UNCONTRACTED_TOOL};
use rmcp::ServerHandler;

/// Every tool of the demo server as `(name, declares an outputSchema)`, from rmcp's own
/// tool list (the `#[tool]` attributes), not from our contract set.
fn server_tools(broken: bool) -> Vec<(String, bool)> {
    let server = QeServer::new(broken);
    let mut names: Vec<String> = qe_server::all_contracts().tools().map(str::to_owned).collect();
    names.extend([BROKEN_TOOL.to_owned(), UNCONTRACTED_TOOL.to_owned()]);
    names
        .into_iter()
        .filter_map(|name| server.get_tool(&name).map(|tool| (name, tool.output_schema.is_some())))
        .collect()
}

fn check(set: &ContractSet, tools: &[(String, bool)]) -> Result<(), contract_runtime::SetError> {
    set.check_tools(tools.iter().map(|(name, structured)| (name.as_str(), *structured)))
}

#[test]
fn the_demo_server_and_its_contract_set_agree() {
    let tools = server_tools(false);
    assert!(tools.len() >= 10, "the demo tools: {tools:?}");
    assert!(tools.iter().any(|(n, structured)| n == UNCONTRACTED_TOOL && !structured), "{tools:?}");
    check(&qe_server::all_contracts(), &tools).unwrap_or_else(|err| panic!("{err}"));

    // With --broken, the extra tool (which builds its result by hand and declares no
    // outputSchema) is bound to the contract it claims, as the server binds it.
    let broken = server_tools(true);
    assert!(broken.iter().any(|(n, _)| n == BROKEN_TOOL), "{broken:?}");
    check(&qe_server::all_contracts().bind::<FleetStatus>(BROKEN_TOOL), &broken).unwrap();
}

#[test]
fn a_structured_tool_without_a_contract_is_reported() {
    let mut tools = server_tools(false);
    tools.push(("weather".to_owned(), true));
    let err = check(&qe_server::all_contracts(), &tools).unwrap_err();
    assert_eq!(err.problems(), [SetProblem::NoContract { tool: "weather".to_owned() }], "{err}");
    // A plain-text tool without a contract is served as `qualified: false`, not refused.
    tools.pop();
    tools.push(("weather".to_owned(), false));
    check(&qe_server::all_contracts(), &tools).unwrap();
}

#[test]
fn a_contract_without_its_tool_is_reported() {
    let tools: Vec<(String, bool)> =
        server_tools(false).into_iter().filter(|(name, _)| name != "fleet_status").collect();
    let err = check(&qe_server::all_contracts(), &tools).unwrap_err();
    assert_eq!(
        err.problems(),
        [SetProblem::NoTool { tool: "fleet_status".to_owned(), contract: "fleet_status".to_owned() }]
    );
}

/// Another type deriving the `fleet_status` contract name.
#[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
#[tool_output(name = "fleet_status", version = "1.0.0", compatibility = "exact")]
struct ImpostorFleet {
    healthy: u32,
}

#[test]
fn a_tool_name_bound_twice_is_reported_with_both_types() {
    let set = qe_server::all_contracts().with::<ImpostorFleet>();
    let err = set.check().unwrap_err();
    assert_eq!(err.problems().len(), 1, "{err}");
    let message = err.to_string();
    assert!(message.contains("tool `fleet_status` is bound twice"), "{message}");
    assert!(message.contains("FleetStatus") && message.contains("ImpostorFleet"), "{message}");
    // The same type twice is a duplicate too; once is fine.
    assert!(contracts![FleetStatus, FleetStatus].check().is_err());
    assert!(contracts![FleetStatus].check().is_ok());
    // The schemas tooling refuses such a set, naming the same problem.
    let err = contract_tools::snapshot::render(&set).unwrap_err().to_string();
    assert!(err.contains("tool `fleet_status` is bound twice"), "{err}");
}
