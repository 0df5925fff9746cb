//! Snapshots of the whole tool list: every tool the server lists, contracted or not, as
//! the model and the client see it in `tools/list`, checked in under `schemas/tools/`.
//!
//! A tool's snapshot (`schemas/tools/<escaped name>.tool.json`) holds its `name`,
//! `title`, `description`, `inputSchema` and `annotations` as the server lists them,
//! and the output contract the tool is bound to (`{"name", "version", "sha256"}`) or
//! `"uncontracted"`. `schemas/tools/server.json` records the server package's version
//! and every listed tool with its file. Every difference is classified (see
//! [`ToolsReview`]) by the one grader of a tool's change,
//! [`crate::evolution::tool::classify_tool`] (the tools lock and the proxy call it too):
//! the input schema with [`crate::evolution::diff_in`] in the request direction, the
//! annotations by safety, text (titles and descriptions) as its own verdict that needs no
//! bump but is always shown for review.
//!
//! File names: every byte of the tool name outside `A-Z a-z 0-9 _ -` is written as
//! `%XX` (so `qe/coverage_gaps` is `qe%2Fcoverage_gaps.tool.json` and
//! `../../etc/passwd` stays inside the folder as `%2E%2E%2F%2E%2E%2Fetc%2Fpasswd.tool.json`);
//! an empty name, a name longer than [`MAX_TOOL_NAME`] bytes, a name with a control
//! character (NUL included), and two names whose files differ only by letter case are
//! refused.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use semver::Version;
use serde::Serialize;
use serde_json::{json, Map, Value};

use contract_runtime::schema::canonical_string;
use contract_runtime::ContractSet;

use crate::schemas::SnapshotError;

mod annotations;
mod classify;
mod json;
mod review;
pub mod text;

pub use annotations::{Hint, HINTS, MANIFEST};
pub use review::{ToolReview, ToolsReview};

/// The folder of the tool snapshots inside the schemas folder.
pub const TOOLS_DIR: &str = "tools";
/// The file inside [`TOOLS_DIR`] that records the server package version and the tools.
pub const SERVER_FILE: &str = "server.json";
/// The suffix of every tool snapshot file.
pub const TOOL_SUFFIX: &str = ".tool.json";
/// The longest tool name accepted, in bytes (MCP asks for 1 to 128 characters).
pub const MAX_TOOL_NAME: usize = 128;

/// The tools a server lists, with the version of the server package: what the tool
/// snapshots are generated from.
///
/// # Examples
///
/// ```
/// use contract_tools::tool_list::ToolListing;
/// use serde_json::json;
///
/// // A `tools/list` result, as any MCP server answers it.
/// let listing = ToolListing::from_json("1.0.0", &json!({ "tools": [
///     { "name": "ping", "description": "Answers pong.", "inputSchema": { "type": "object" } }
/// ]})).unwrap();
/// assert_eq!(listing.tools().len(), 1);
/// assert!(ToolListing::from_json("1.0", &json!([])).is_err());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ToolListing {
    version: Version,
    tools: Vec<Value>,
}

impl ToolListing {
    /// A listing from tool definitions as JSON: a `tools/list` result (`{"tools": […]}`)
    /// or the array of tools itself. `version` is the server package's semver version,
    /// such as `env!("CARGO_PKG_VERSION")` of the server crate.
    ///
    /// # Errors
    ///
    /// A version that is not semver, or JSON that is not a list of tool objects.
    pub fn from_json(version: &str, listing: &Value) -> Result<Self, SnapshotError> {
        let version = Version::parse(version).map_err(|e| {
            SnapshotError::new(vec![format!(
                "server package version `{version}` is not a semver version such as \"1.2.0\" ({e})"
            )])
        })?;
        let tools = match listing {
            Value::Array(tools) => tools,
            Value::Object(map) => match map.get("tools") {
                Some(Value::Array(tools)) => tools,
                _ => return Err(SnapshotError::new(vec!["a tools/list result has a `tools` array".to_owned()])),
            },
            _ => {
                return Err(SnapshotError::new(vec![
                    "expected a tools/list result or an array of tool definitions".to_owned()
                ]))
            }
        };
        Ok(Self { version, tools: tools.clone() })
    }

    /// A listing from tool values that serialize as MCP tool definitions, such as rmcp's
    /// `ToolRouter::list_all()`.
    ///
    /// # Errors
    ///
    /// As [`ToolListing::from_json`], and a tool that does not serialize.
    pub fn from_tools<T: Serialize>(version: &str, tools: impl IntoIterator<Item = T>) -> Result<Self, SnapshotError> {
        let tools = tools
            .into_iter()
            .map(|t| serde_json::to_value(t))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| SnapshotError::new(vec![format!("a tool definition does not serialize: {e}")]))?;
        Self::from_json(version, &Value::Array(tools))
    }

    /// The server package version.
    #[must_use]
    pub fn version(&self) -> &Version {
        &self.version
    }

    /// The tool definitions, as listed.
    #[must_use]
    pub fn tools(&self) -> &[Value] {
        &self.tools
    }
}

/// The file name a tool's snapshot is stored under inside `schemas/tools/`.
///
/// # Errors
///
/// An empty name, a name longer than [`MAX_TOOL_NAME`] bytes, or one with a control
/// character: such a tool cannot be checked in, and no MCP client should be offered it.
///
/// # Examples
///
/// ```
/// use contract_tools::tool_list::tool_file_name;
/// assert_eq!(tool_file_name("fleet_status").unwrap(), "fleet_status.tool.json");
/// assert_eq!(tool_file_name("qe/coverage_gaps").unwrap(), "qe%2Fcoverage_gaps.tool.json");
/// assert_eq!(tool_file_name("..").unwrap(), "%2E%2E.tool.json");
/// assert!(tool_file_name("a\0b").is_err());
/// ```
pub fn tool_file_name(tool: &str) -> Result<String, String> {
    if tool.is_empty() {
        return Err("a tool has an empty name".to_owned());
    }
    if tool.len() > MAX_TOOL_NAME {
        let start: String = tool.chars().take(40).collect();
        return Err(format!(
            "tool `{}…` has a name of {} bytes, longer than {MAX_TOOL_NAME}: give it a shorter name",
            start.escape_debug(),
            tool.len()
        ));
    }
    if tool.chars().any(char::is_control) {
        return Err(format!(
            "tool `{}` has a control character in its name: give it a name of printable characters",
            tool.escape_debug()
        ));
    }
    let mut file = String::with_capacity(tool.len() + TOOL_SUFFIX.len());
    for byte in tool.bytes() {
        if byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-' {
            file.push(char::from(byte));
        } else {
            let _ = write!(file, "%{byte:02X}");
        }
    }
    file.push_str(TOOL_SUFFIX);
    Ok(file)
}

/// Every file `schemas/tools/` must hold, by file name: one snapshot per listed tool
/// and [`SERVER_FILE`].
///
/// # Errors
///
/// A tool without a string `name` or an object `inputSchema`, a name [`tool_file_name`]
/// refuses, a tool listed twice, two names whose files differ only by letter case; each
/// problem names the tool and its JSON pointer in the listing.
pub fn render(listing: &ToolListing, contracts: &ContractSet) -> Result<BTreeMap<String, String>, SnapshotError> {
    let mut problems = Vec::new();
    let mut files = BTreeMap::new();
    let mut index = Vec::new();
    let mut lowercase: BTreeMap<String, String> = BTreeMap::new();
    for (i, tool) in listing.tools.iter().enumerate() {
        let snapshot = match snapshot_of(tool, contracts) {
            Ok(snapshot) => snapshot,
            Err(problem) => {
                problems.push(format!("tool list /tools/{i}: {problem}"));
                continue;
            }
        };
        let name = snapshot["name"].as_str().unwrap_or_default().to_owned();
        let file = match tool_file_name(&name) {
            Ok(file) => file,
            Err(problem) => {
                problems.push(format!("tool list /tools/{i}/name: {problem}"));
                continue;
            }
        };
        if files.contains_key(&file) {
            problems.push(format!("tool list /tools/{i}/name: tool `{name}` is listed twice"));
            continue;
        }
        if let Some(other) = lowercase.insert(file.to_lowercase(), name.clone()) {
            problems.push(format!(
                "tool list /tools/{i}/name: tools `{other}` and `{name}` differ only by letter case, so their \
                 snapshots would be one file on a case-insensitive file system: rename one"
            ));
            continue;
        }
        files.insert(file.clone(), canonical_string(&snapshot));
        index.push(json!({ "name": name, "file": file }));
    }
    if !problems.is_empty() {
        return Err(SnapshotError::new(problems));
    }
    index.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    let server = json!({ "version": listing.version.to_string(), "tools": index });
    files.insert(SERVER_FILE.to_owned(), canonical_string(&server));
    Ok(files)
}

/// The snapshot of one listed tool: the fields the model and the client rely on, and
/// the contract it is bound to.
fn snapshot_of(tool: &Value, contracts: &ContractSet) -> Result<Value, String> {
    let Some(map) = tool.as_object() else { return Err("a tool definition is a JSON object".to_owned()) };
    let Some(name) = map.get("name").and_then(Value::as_str) else {
        return Err("a tool has a string `name`".to_owned());
    };
    let mut out = Map::new();
    out.insert("name".to_owned(), Value::String(name.to_owned()));
    for key in ["title", "description"] {
        match map.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => {
                out.insert(key.to_owned(), Value::String(text.clone()));
            }
            Some(_) => return Err(format!("tool `{}`: `{key}` is a string", name.escape_debug())),
        }
    }
    match map.get("inputSchema") {
        Some(schema @ Value::Object(_)) => {
            out.insert("inputSchema".to_owned(), schema.clone());
        }
        _ => return Err(format!("tool `{}`: `inputSchema` is a JSON Schema object", name.escape_debug())),
    }
    match map.get("annotations") {
        None | Some(Value::Null) => {}
        Some(Value::Object(hints)) if hints.is_empty() => {}
        Some(hints @ Value::Object(_)) => {
            out.insert("annotations".to_owned(), hints.clone());
        }
        Some(_) => return Err(format!("tool `{}`: `annotations` is an object", name.escape_debug())),
    }
    let contract = contracts.get(name).map_or_else(
        || Value::String("uncontracted".to_owned()),
        |c| json!({ "name": c.name(), "version": c.version().to_string(), "sha256": c.sha256() }),
    );
    out.insert("contract".to_owned(), contract);
    Ok(Value::Object(out))
}

/// Compares `schemas/tools/` inside `dir` with the live listing, without writing.
///
/// # Errors
///
/// Only when the listing cannot be rendered ([`render`]); problems with the checked-in
/// files are part of the review.
pub fn review(dir: &Path, listing: &ToolListing, contracts: &ContractSet) -> Result<ToolsReview, SnapshotError> {
    classify::review(dir, listing, contracts)
}

/// Fails when the live listing differs from the snapshots checked in under
/// `dir/tools/`: a `#[test]` calls it with the server's real tool list, so a description
/// edited without regenerating cannot ship.
///
/// ```no_run
/// # fn my_tools() -> Vec<serde_json::Value> { Vec::new() }
/// # fn contracts() -> contract_runtime::ContractSet { contract_runtime::ContractSet::new() }
/// #[test]
/// fn the_tool_list_is_checked_in() {
///     let listing = contract_tools::tool_list::ToolListing::from_tools(env!("CARGO_PKG_VERSION"), my_tools()).unwrap();
///     let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas");
///     contract_tools::tool_list::check(&dir, &listing, &contracts()).unwrap_or_else(|e| panic!("{e}"));
/// }
/// ```
///
/// # Errors
///
/// Every stale, missing and orphan snapshot with its classified changes, and the
/// command that regenerates them.
pub fn check(dir: &Path, listing: &ToolListing, contracts: &ContractSet) -> Result<(), SnapshotError> {
    review(dir, listing, contracts)?.check()
}
