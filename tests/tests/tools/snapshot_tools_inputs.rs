//! Input schema changes of a listed tool, classified for requests (clients write the
//! arguments): each shown under the tool with its line in the snapshot file, needing the
//! bump of the version that covers the tool (its contract's, or the server package's
//! for an uncontracted tool). Expected verdicts are written by hand from the request
//! rules: a new required argument or a new bound rejects calls that were valid
//! (breaking); a required argument made optional accepts more (additive); a changed
//! argument description is text.

use std::path::{Path, PathBuf};

use contract_runtime::{contracts, ContractSet, ToolOutput};
use contract_tools::tool_list::{self, ToolListing};
use serde_json::{json, Value};

#[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
#[tool_output(name = "search", version = "1.0.0", compatibility = "exact")]
struct Search {
    hits: u32,
}

/// The same contract with its version bumped, as the fix line asks.
#[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
#[tool_output(name = "search", version = "2.0.0", compatibility = "exact")]
struct SearchBumped {
    hits: u32,
}

/// The same contract with a minor bump.
#[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
#[tool_output(name = "search", version = "1.1.0", compatibility = "exact")]
struct SearchMinor {
    hits: u32,
}

fn input(required: &[&str], extra: &Value) -> Value {
    let mut properties = json!({ "query": { "type": "string", "description": "What to look for." } });
    for (k, v) in extra.as_object().unwrap() {
        properties[k] = v.clone();
    }
    json!({ "type": "object", "properties": properties, "required": required })
}

fn listing(version: &str, name: &str, input: Value) -> ToolListing {
    let mut tool = json!({ "name": name, "description": "Searches." });
    tool["inputSchema"] = input;
    ToolListing::from_json(version, &Value::Array(vec![tool])).unwrap()
}

fn fresh(name: &str, first: &ToolListing, set: &ContractSet) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("snapshot-tools-inputs").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    tool_list::review(&dir, first, set).unwrap().write(&dir).unwrap();
    tool_list::check(&dir, first, set).expect("clean control");
    dir
}

fn write(dir: &Path, listing: &ToolListing, set: &ContractSet) -> Result<(), String> {
    tool_list::review(dir, listing, set).map_err(|e| e.to_string())?.write(dir).map(drop).map_err(|e| e.to_string())
}

/// The 1-based line of the first line of `text` that contains `needle`: an oracle apart
/// from the review's own pointer-to-line code.
fn line_with(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).expect("the needle is in the text") + 1
}

#[test]
fn a_new_required_argument_of_a_contracted_tool_needs_a_major_contract_bump() {
    let set = contracts![Search];
    let dir = fresh("required", &listing("1.0.0", "search", input(&["query"], &json!({}))), &set);
    let changed = listing("1.0.0", "search", input(&["query", "limit"], &json!({ "limit": { "type": "integer" } })));
    let err = tool_list::check(&dir, &changed, &set).expect_err("stale").to_string();
    let generated = contract_tools::tool_list::render(&changed, &set).unwrap()["search.tool.json"].clone();
    let line = line_with(&generated, "\"limit\": {");
    let expected = format!(
        "tool search (contract search 1.0.0): + /inputSchema/properties/limit (required argument added: calls without it are refused): BREAKING, \
         needs 2.0.0; schemas-dir/tools/search.tool.json line {line}"
    );
    let shown = err.replace(&format!("{}/tools", dir.display()), "schemas-dir/tools");
    assert!(shown.contains(&expected), "{expected}\n{shown}");
    assert!(
        err.contains(
            "fix: set `#[tool_output(version = \"2.0.0\")]` (or later) on `Search`: tool search needs a major bump"
        ),
        "{err}"
    );
    let refused = write(&dir, &changed, &set).expect_err("refused at 1.0.0");
    assert!(refused.contains("nothing was written"), "{refused}");
    // A minor bump is still too small; the bump the fix names passes.
    assert!(write(&dir, &changed, &contracts![SearchMinor]).is_err());
    let bumped = contracts![SearchBumped];
    write(&dir, &changed, &bumped).expect("the fix applied");
    tool_list::check(&dir, &changed, &bumped).expect("passes after the fix");
}

#[test]
fn a_new_bound_on_an_argument_is_breaking_and_a_required_argument_made_optional_is_additive() {
    let set = contracts![Search];
    let first = listing("1.0.0", "search", input(&["query"], &json!({})));
    let dir = fresh("bounds", &first, &set);
    let mut bounded = input(&["query"], &json!({}));
    bounded["properties"]["query"]["maxLength"] = json!(64);
    let err = tool_list::check(&dir, &listing("1.0.0", "search", bounded), &set).expect_err("stale").to_string();
    assert!(
        err.contains("+ /inputSchema/properties/query/maxLength (64 added, tightened): BREAKING, needs 2.0.0"),
        "{err}"
    );

    let optional = listing("1.0.0", "search", input(&[], &json!({})));
    let err = tool_list::check(&dir, &optional, &set).expect_err("stale").to_string();
    assert!(err.contains("~ /inputSchema/properties/query (required → optional): additive, needs 1.1.0"), "{err}");
    write(&dir, &optional, &contracts![SearchMinor]).expect("a minor bump covers an additive input change");
}

#[test]
fn a_new_required_argument_of_an_uncontracted_tool_needs_a_major_server_bump() {
    let set = contracts![];
    let dir = fresh("uncontracted", &listing("1.2.0", "lookup", input(&["query"], &json!({}))), &set);
    let changed = listing("1.2.0", "lookup", input(&["query", "limit"], &json!({ "limit": { "type": "integer" } })));
    let err = tool_list::check(&dir, &changed, &set).expect_err("stale").to_string();
    assert!(
        err.contains("tool lookup (server version): + /inputSchema/properties/limit (required argument added: calls without it are refused): BREAKING, needs server version 2.0.0"),
        "{err}"
    );
    let fix = err.lines().find(|l| l.starts_with("fix: ")).expect("a fix line");
    assert!(fix.starts_with("fix: set `version = \"2.0.0\"` (or later) in the server package's Cargo.toml"), "{fix}");
    assert!(write(&dir, &changed, &set).is_err(), "refused at 1.2.0");
    let fixed = listing("2.0.0", "lookup", input(&["query", "limit"], &json!({ "limit": { "type": "integer" } })));
    write(&dir, &fixed, &set).expect("the fix applied");
    tool_list::check(&dir, &fixed, &set).expect("passes after the fix");
}

#[test]
fn an_argument_description_is_text_and_needs_no_bump() {
    let set = contracts![Search];
    let dir = fresh("argument-text", &listing("1.0.0", "search", input(&["query"], &json!({}))), &set);
    let mut edited = input(&["query"], &json!({}));
    edited["properties"]["query"]["description"] = json!("What to look for, in plain words.");
    let edited = listing("1.0.0", "search", edited);
    let err = tool_list::check(&dir, &edited, &set).expect_err("stale").to_string();
    assert!(err.contains("review: description of search argument `query` changed"), "{err}");
    assert!(err.contains("What to look [-for.-]{+for, in plain words.+}"), "{err}");
    assert!(!err.contains("fix:"), "no version is involved: {err}");
    write(&dir, &edited, &set).expect("a text change needs no bump");
    tool_list::check(&dir, &edited, &set).expect("regenerated");
}
