//! A generic result wrapper returned by several tools through type aliases: each
//! instantiation is bound to its own tool, has its own contract and schema file named
//! after that tool, the wrapper's version, and messages that show its type arguments.
//! The user's type is itself named `ToolOutput`, so it derives through the path form.

use std::time::Duration;

use contract_runtime::rmcp::{ContractedServer, Json};
use contract_runtime::{contracts, ContractSet, SetProblem, ToolError};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Health of the agent fleet: an ordinary contract next to the generic ones.
#[derive(Serialize, JsonSchema, contract_runtime::ToolOutput)]
#[tool_output(version = "1.0.0", compatibility = "exact")]
struct FleetStatus {
    healthy: u32,
}

/// The one result wrapper of the goal and plan tools.
#[derive(Serialize, JsonSchema, contract_runtime::ToolOutput)]
#[tool_output(version = "2.1.0", compatibility = "exact")]
struct ToolOutput<D> {
    ok: bool,
    data: Option<D>,
}

#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
enum GoalData {
    Scored(ScoredGoal),
    Pending(PendingGoal),
}

#[derive(Serialize, JsonSchema)]
struct ScoredGoal {
    goal: String,
    score: f64,
}

#[derive(Serialize, JsonSchema)]
struct PendingGoal {
    goal: String,
    queued: u32,
}

#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
enum PlanData {
    Steps(PlanSteps),
    Empty(EmptyPlan),
}

#[derive(Serialize, JsonSchema)]
struct PlanSteps {
    steps: Vec<String>,
    confidence: f32,
}

#[derive(Serialize, JsonSchema)]
struct EmptyPlan {
    reason: String,
}

type GoalOutput = ToolOutput<GoalData>;
type PlanOutput = ToolOutput<PlanData>;

/// The server's one list of contracts.
fn contracts() -> ContractSet {
    contracts![FleetStatus, GoalOutput => "set_goal", PlanOutput => "make_plan"]
}

#[test]
fn each_instantiation_has_its_own_contract_named_after_its_tool() {
    let set = contracts();
    set.check().unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(set.tools().collect::<Vec<_>>(), ["fleet_status", "set_goal", "make_plan"]);
    let goal = set.get("set_goal").expect("bound");
    let plan = set.get("make_plan").expect("bound");
    assert_eq!((goal.name(), goal.type_name()), ("set_goal", "ToolOutput<GoalData>"));
    assert_eq!((plan.name(), plan.type_name()), ("make_plan", "ToolOutput<PlanData>"));
    // The wrapper's version and compatibility apply to every instantiation.
    for contract in [goal, plan] {
        assert_eq!(contract.version().to_string(), "2.1.0");
        assert_eq!(contract.compatibility(), contract_runtime::Compatibility::Exact);
    }
    assert_ne!(goal.sha256(), plan.sha256(), "two instantiations, two schemas");
    // The same contracts through `bind`, with the type written out instead of the alias.
    let bound = ContractSet::new().bind::<ToolOutput<GoalData>>("set_goal");
    assert!(std::ptr::eq(bound.get("set_goal").expect("bound"), goal));

    // Schema files are named after the tools.
    let files = contract_tools::schemas::render(&set).unwrap_or_else(|err| panic!("{err}"));
    let names: Vec<&str> = files.keys().map(String::as_str).collect();
    assert_eq!(names, ["fleet_status.json", "inventory.json", "make_plan.json", "set_goal.json"]);
    let inventory: Value = serde_json::from_str(&files["inventory.json"]).expect("JSON");
    let types: Vec<&str> =
        inventory["contracts"].as_array().expect("array").iter().filter_map(|c| c["type"].as_str()).collect();
    assert_eq!(types, ["FleetStatus", "ToolOutput<PlanData>", "ToolOutput<GoalData>"]);

    // The schema is the instantiation's: the goal's score is a number, and an unknown
    // key is refused (exact).
    let good = json!({ "ok": true, "data": { "goal": "ship", "score": 0.5 } });
    goal.validate(&good).unwrap_or_else(|report| panic!("{report}"));
    assert!(goal.validate(&json!({ "ok": true, "data": { "goal": "ship", "score": "high" } })).is_err());
    assert!(plan.validate(&good).is_err(), "a goal is not a plan");
    // Every variant of the untagged enums, as serde writes it, passes its contract.
    let pending =
        ToolOutput { ok: true, data: Some(GoalData::Pending(PendingGoal { goal: "g".to_owned(), queued: 2 })) };
    goal.validate_output(&pending).unwrap_or_else(|report| panic!("{report}"));
    let steps = ToolOutput {
        ok: true,
        data: Some(PlanData::Steps(PlanSteps { steps: vec!["a".to_owned()], confidence: 0.25 })),
    };
    plan.validate_output(&steps).unwrap_or_else(|report| panic!("{report}"));
    let none: PlanOutput = ToolOutput { ok: false, data: None };
    plan.validate_output(&none).unwrap_or_else(|report| panic!("{report}"));
    // Through the pipeline, a call of `make_plan` is checked against the `make_plan`
    // contract, and an f32 NaN is refused at its pointer.
    let ctx = contract_runtime::CallContext::new("make_plan", json!({}));
    let pipeline = contract_runtime::Pipeline::default();
    let passed = pipeline.call_sync(&ctx, || Ok::<_, ToolError>(steps)).to_json();
    assert_eq!(passed["isError"], false, "{passed}");
    let id = passed["_meta"][contract_runtime::wire::META_KEY]["id"].as_str().unwrap_or_default();
    assert!(id.starts_with("make_plan@2.1.0+sha256:"), "{passed}");
    let nan = PlanSteps { steps: Vec::new(), confidence: f32::NAN };
    let refused =
        pipeline.call_sync(&ctx, || Ok::<_, ToolError>(ToolOutput { ok: true, data: Some(PlanData::Steps(nan)) }));
    let refused = refused.to_json();
    assert_eq!(refused["isError"], true, "{refused}");
    let text = refused["content"][0]["text"].as_str().expect("text");
    let error: Value = serde_json::from_str(text).expect("JSON error");
    assert_eq!(error["error"]["code"], "serialization_error", "{refused}");
    assert!(error["error"]["message"].as_str().unwrap_or_default().contains("`/data/confidence`"), "{refused}");
}

#[test]
fn unbound_instantiations_are_reported_with_their_type_arguments_and_a_fix_that_applies() {
    // Listed alone, both instantiations take the wrapper's name: one tool, two types.
    let set = contracts![FleetStatus, GoalOutput, PlanOutput];
    let err = set.check().unwrap_err();
    assert_eq!(
        err.problems(),
        [SetProblem::DuplicateTool {
            tool: "tool_output".to_owned(),
            first: "ToolOutput<GoalData>".to_owned(),
            second: "ToolOutput<PlanData>".to_owned(),
        }]
    );
    assert_eq!(
        err.to_string(),
        "tool `tool_output` is bound twice (to `ToolOutput<GoalData>` and to `ToolOutput<PlanData>`): bind each \
         instantiation of a generic type to the tool that returns it: `ToolOutput<PlanData> => \"…\"` in \
         `contracts![…]`, or `.bind::<ToolOutput<PlanData>>(\"…\")`"
    );
    // The schemas tooling prints that problem once, not a second time as a file clash.
    let problems = contract_tools::schemas::render(&set).unwrap_err().problems().to_vec();
    assert_eq!(problems, [err.to_string()]);

    // The fix, applied to each: every instantiation bound to its tool.
    let fixed = contracts![FleetStatus, GoalOutput => "set_goal", PlanOutput => "make_plan"];
    fixed.check().unwrap_or_else(|err| panic!("{err}"));
    contract_tools::schemas::render(&fixed).unwrap_or_else(|err| panic!("{err}"));
    // Only the second bound: the first keeps the wrapper's name, which is now unique.
    contracts![GoalOutput, PlanOutput => "make_plan"].check().unwrap_or_else(|err| panic!("{err}"));

    // Two instantiations bound to one tool: the same fix names the second.
    let err = contracts![GoalOutput => "set_goal", PlanOutput => "set_goal"].check().unwrap_err();
    assert!(err.to_string().contains("`ToolOutput<PlanData> => \"…\"`"), "{err}");
}

#[test]
fn a_contract_without_its_tool_names_the_instantiation_and_the_binding_that_fixes_it() {
    let tools = [("fleet_status", true), ("set_goal", true), ("make_plan", true)];
    contracts().check_tools(tools).unwrap_or_else(|err| panic!("{err}"));
    // A typo in the tool name.
    let typo = contracts![FleetStatus, GoalOutput => "set_gaol", PlanOutput => "make_plan"];
    let err = typo.check_tools(tools).unwrap_err();
    assert_eq!(
        err.problems(),
        [
            SetProblem::NoTool {
                tool: "set_gaol".to_owned(),
                contract: "set_gaol".to_owned(),
                type_name: "ToolOutput<GoalData>".to_owned(),
            },
            SetProblem::NoContract { tool: "set_goal".to_owned() },
        ],
        "{err}"
    );
    let text = err.to_string();
    assert!(text.contains("`ToolOutput<GoalData> => \"…\"` in `contracts![…]`"), "{text}");
    assert!(text.contains("`Type => \"set_goal\"`"), "{text}");
}

// ------------------------------------------------------------------ the rmcp server

#[derive(Deserialize, JsonSchema)]
struct GoalArgs {
    /// A score for the goal; `nan` for a NaN.
    score: String,
}

#[derive(Clone)]
struct Planner {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Planner {
    #[tool(description = "Health of the agent fleet.")]
    async fn fleet_status(&self) -> Result<Json<FleetStatus>, ToolError> {
        Ok(Json(FleetStatus { healthy: 3 }))
    }

    #[tool(description = "Sets a goal and scores it.")]
    async fn set_goal(&self, Parameters(args): Parameters<GoalArgs>) -> Result<Json<GoalOutput>, ToolError> {
        let score = if args.score == "nan" {
            f64::NAN
        } else {
            args.score.parse().map_err(|_| ToolError::new(contract_runtime::ErrorCode::InvalidArguments, "score"))?
        };
        // Built as the wrapper always was: no newtype per alias.
        Ok(Json(ToolOutput { ok: true, data: Some(GoalData::Scored(ScoredGoal { goal: "ship".to_owned(), score })) }))
    }

    #[tool(description = "Makes a plan.")]
    async fn make_plan(&self) -> Result<Json<PlanOutput>, ToolError> {
        Ok(Json(ToolOutput { ok: true, data: Some(PlanData::Empty(EmptyPlan { reason: "nothing to do".to_owned() })) }))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Planner {}

const WAIT: Duration = Duration::from_secs(10);

async fn request(
    to: &mut tokio::io::WriteHalf<tokio::io::DuplexStream>,
    from: &mut tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    id: u64,
    method: &str,
    params: Value,
) -> Value {
    let mut line = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string();
    line.push('\n');
    to.write_all(line.as_bytes()).await.expect("write");
    loop {
        let line = tokio::time::timeout(WAIT, from.next_line()).await.expect("an answer").expect("read").expect("open");
        let message: Value = serde_json::from_str(&line).expect("JSON line");
        if message["id"] == json!(id) {
            return message["result"].clone();
        }
    }
}

#[test]
fn the_server_advertises_and_enforces_each_instantiation_under_its_tool() {
    let planner = Planner { tool_router: Planner::tool_router() };
    // The server's own tool list agrees with the set.
    let tools: Vec<(String, bool)> =
        planner.tool_router.list_all().into_iter().map(|t| (t.name.to_string(), t.output_schema.is_some())).collect();
    contracts().check_tools(tools.iter().map(|(n, s)| (n.as_str(), *s))).unwrap_or_else(|err| panic!("{err}"));
    // The server refuses to start with the instantiations unbound, naming the fix.
    let err = ContractedServer::new(planner.clone(), contracts![FleetStatus, GoalOutput, PlanOutput]).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("`ToolOutput<PlanData> => \"…\"` in `contracts![…]`"), "{text}");
    assert!(text.contains("`tool_output`, which the server does not have"), "{text}");
    // The fix applied: it starts.
    let server = ContractedServer::new(planner, contracts()).unwrap_or_else(|err| panic!("{err}"));

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async move {
        let (client, server_side) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(tokio::io::split(server_side)).await {
                let _ = running.waiting().await;
            }
        });
        let (read, mut to) = tokio::io::split(client);
        let mut from = BufReader::new(read).lines();
        let init = json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } });
        request(&mut to, &mut from, 0, "initialize", init).await;
        to.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").await.expect("write");

        let list = request(&mut to, &mut from, 1, "tools/list", json!({})).await;
        let identity = |tool: &str| {
            let tool = list["tools"].as_array().expect("tools").iter().find(|t| t["name"] == tool).expect("listed");
            tool["_meta"][contract_runtime::wire::META_KEY].clone()
        };
        assert_eq!(identity("set_goal")["name"], "set_goal", "{list}");
        assert_eq!(identity("set_goal")["version"], "2.1.0", "{list}");
        assert_eq!(identity("make_plan")["name"], "make_plan", "{list}");

        let call = |name: &str, arguments: Value| json!({ "name": name, "arguments": arguments });
        let ok = request(&mut to, &mut from, 2, "tools/call", call("set_goal", json!({ "score": "0.75" }))).await;
        assert_eq!(ok["isError"], false, "{ok}");
        assert_eq!(ok["structuredContent"]["data"]["score"], 0.75, "{ok}");
        let plan = request(&mut to, &mut from, 3, "tools/call", call("make_plan", json!({}))).await;
        assert_eq!(plan["isError"], false, "{plan}");

        // A NaN score deep in the untagged enum behind `Option<D>` is still refused, with
        // its pointer.
        let nan = request(&mut to, &mut from, 4, "tools/call", call("set_goal", json!({ "score": "nan" }))).await;
        assert_eq!(nan["isError"], true, "{nan}");
        assert!(nan.get("structuredContent").is_none(), "{nan}");
        let text = nan["content"][0]["text"].as_str().expect("text");
        let error: Value = serde_json::from_str(text).expect("JSON error");
        assert_eq!(error["error"]["code"], "serialization_error", "{nan}");
        assert!(error["error"]["message"].as_str().unwrap_or_default().contains("`/data/score`"), "{nan}");
    });
}
