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
        [SetProblem::NoTool {
            tool: "fleet_status".to_owned(),
            contract: "fleet_status".to_owned(),
            type_name: "FleetStatus".to_owned(),
        }]
    );
    let message = err.to_string();
    assert!(message.contains("`FleetStatus => \"…\"` in `contracts![…]`"), "{message}");
    // The fix applied: the contract bound to the tool that returns it (here the same
    // type served under another tool name), and the set agrees with the server again.
    let mut renamed = tools.clone();
    renamed.push(("fleet_health".to_owned(), true));
    let fixed = qe_server::all_contracts().bind::<FleetStatus>("fleet_health");
    let fixed: ContractSet =
        fixed.bindings().filter(|b| b.tool() != "fleet_status").fold(ContractSet::new(), |mut set, b| {
            set.push(Ok(b.contract()), Some(b.tool()));
            set
        });
    check(&fixed, &renamed).unwrap_or_else(|err| panic!("{err}"));
}

#[test]
fn a_structured_tool_without_a_contract_is_fixed_by_binding_its_type() {
    let tools = [("weather", true)];
    let err = contracts![].check_tools(tools).unwrap_err();
    let message = err.to_string();
    assert!(message.ends_with("(`Type => \"weather\"` when the type's contract has another name)"), "{message}");
    // The fix applied, with a type whose contract is named otherwise.
    contracts![Forecast => "weather"].check_tools(tools).unwrap_or_else(|err| panic!("{err}"));
    // A type whose contract has the tool's name is simply listed.
    contracts![Weather].check_tools(tools).unwrap_or_else(|err| panic!("{err}"));
}

#[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Forecast {
    rain: bool,
}

#[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Weather {
    sunny: bool,
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
    assert!(message.contains("give one of them another `#[tool_output(name = \"…\")]`"), "{message}");
    // The fix applied: the same type with another name.
    qe_server::all_contracts().with::<RenamedFleet>().check().unwrap_or_else(|err| panic!("{err}"));
    // The same type twice is a duplicate too; once is fine.
    let err = contracts![FleetStatus, FleetStatus].check().unwrap_err();
    assert_eq!(err.to_string(), "tool `fleet_status` is bound twice to `FleetStatus`: list it once");
    assert!(contracts![FleetStatus].check().is_ok());
    // The schemas tooling refuses such a set, naming the same problem.
    let err = contract_tools::schemas::render(&set).unwrap_err().to_string();
    assert!(err.contains("tool `fleet_status` is bound twice"), "{err}");
}

/// [`ImpostorFleet`] with the fix applied: a name of its own.
#[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
#[tool_output(name = "fleet_status_v2", version = "1.0.0", compatibility = "exact")]
struct RenamedFleet {
    healthy: u32,
}

/// A generic wrapper next to a type whose contract has the wrapper's name.
#[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct Reply<D> {
    data: D,
}

#[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
#[tool_output(name = "reply", version = "1.0.0", compatibility = "exact")]
struct LegacyReply {
    text: String,
}

#[test]
fn two_types_of_one_contract_name_are_reported_with_a_fix_that_applies() {
    // Two types without type parameters: one of them renamed.
    let err = contracts![LegacyReply, ImpostorFleet => "impostor", FleetStatus].check().unwrap_err();
    assert_eq!(
        err.to_string(),
        "types `ImpostorFleet` and `FleetStatus` both derive contract `fleet_status`: give one of them another `#[tool_output(name = \"…\")]`"
    );
    contracts![LegacyReply, RenamedFleet => "impostor", FleetStatus].check().unwrap_or_else(|err| panic!("{err}"));

    // An instantiation that takes the wrapper's name `reply`, already taken: bound to its
    // tool, it is named after the tool instead.
    let err = contracts![LegacyReply => "legacy", Reply<u32>].check().unwrap_err();
    assert_eq!(
        err.to_string(),
        "types `LegacyReply` and `Reply<u32>` both have contract `reply`: bind each instantiation of a generic type to the tool that returns it, which names its contract: `Reply<u32> => \"…\"` in `contracts![…]`, or `.bind::<Reply<u32>>(\"…\")`"
    );
    let fixed = contracts![LegacyReply => "legacy", Reply<u32> => "count"];
    fixed.check().unwrap_or_else(|err| panic!("{err}"));
    contract_tools::schemas::render(&fixed).unwrap_or_else(|err| panic!("{err}"));
}

#[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
#[tool_output(name = "qe/scan", version = "1.0.0", compatibility = "exact")]
struct SlashScan {
    ok: bool,
}

#[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
#[tool_output(name = "qe__scan", version = "1.0.0", compatibility = "exact")]
struct UnderscoreScan {
    ok: bool,
}

#[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
#[tool_output(name = "qe_scan", version = "1.0.0", compatibility = "exact")]
struct RenamedScan {
    ok: bool,
}

#[test]
fn two_contract_names_of_one_schema_file_are_reported_with_a_fix_that_applies() {
    let render = |set: &ContractSet| contract_tools::schemas::render(set).map(|_| ()).map_err(|e| e.to_string());
    let err = render(&contracts![SlashScan, UnderscoreScan]).unwrap_err();
    assert_eq!(
        err,
        "contracts `qe/scan` (type `SlashScan`) and `qe__scan` (type `UnderscoreScan`) both write schemas/qe__scan.json: give `UnderscoreScan` another `#[tool_output(name = \"…\")]`"
    );
    render(&contracts![SlashScan, RenamedScan]).unwrap();
    // An instantiation bound to a tool whose file clashes: bound to another tool.
    let err = render(&contracts![SlashScan, Reply<bool> => "qe__scan"]).unwrap_err();
    assert!(err.ends_with("bind `Reply<bool>` to another tool (`Reply<bool> => \"…\"` in `contracts![…]`)"), "{err}");
    render(&contracts![SlashScan, Reply<bool> => "qe_scan"]).unwrap();
}
