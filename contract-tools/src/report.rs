//! The typed files and reports of the build-time tooling: `inventory.json` and the JSON
//! review that `schemas --format json` prints for bots that comment on pull requests.
//!
//! Both are contracts of their own (derived with `#[derive(ToolOutput)]`), so their JSON
//! Schemas are generated and checked in like any tool's: `contract-tools/schemas/`
//! holds `schemas_review.json` and `schemas_inventory.json`, and a test fails when they
//! drift from these types.

use contract_runtime::{ContractSet, ToolOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `inventory.json`: every contract of the schemas folder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, ToolOutput)]
#[serde(deny_unknown_fields)]
#[tool_output(name = "schemas_inventory", version = "2.0.0", compatibility = "exact")]
pub struct Inventory {
    /// One entry per contract, sorted by name.
    pub contracts: Vec<InventoryEntry>,
}

/// One contract of the inventory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InventoryEntry {
    /// The contract (tool) name.
    pub name: String,
    /// The declared semver version.
    pub version: String,
    /// `exact` or `additive`.
    pub compatibility: String,
    /// SHA-256 of the canonical schema bytes, lowercase hex.
    pub sha256: String,
    /// The schema's file name inside the folder.
    pub file: String,
    /// The Rust type the contract is derived from.
    #[serde(rename = "type")]
    pub type_name: String,
    /// JSON pointers of values never shown in errors.
    pub sensitive: Vec<String>,
    /// JSON pointers declared opaque (accepting any value on purpose).
    pub opaque: Vec<String>,
    /// The server's declared error shape, when it answers failures as ordinary results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<InventoryError>,
}

/// The error shape of an inventory entry: the canonical file of its schema (objects
/// open), that file's SHA-256 and the JSON pointer of the message in an error answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InventoryError {
    /// The schema's file name inside the folder (`<name>.error.json`).
    pub file: String,
    /// SHA-256 of the canonical schema bytes, lowercase hex.
    pub sha256: String,
    /// The JSON pointer of the message in an error answer.
    pub message: String,
}

/// The review of a schemas folder, as `schemas --format json` prints it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, ToolOutput)]
#[serde(deny_unknown_fields)]
#[tool_output(name = "schemas_review", version = "3.0.1", compatibility = "exact")]
pub struct ReviewReport {
    /// Up to date and every version bump sufficient: the check passes.
    pub ok: bool,
    /// Every file in the folder is what the contracts produce.
    pub up_to_date: bool,
    /// Every declared version covers its schema's change.
    pub policy_ok: bool,
    /// The folder, as messages show it.
    pub dir: String,
    /// One entry per contract.
    pub contracts: Vec<ContractReport>,
    /// One entry per file that is or should be in the folder.
    pub files: Vec<FileReport>,
    /// The tool snapshots (`schemas/tools/`), when the xtask passes the tool list.
    pub tools: Option<ToolsReport>,
}

/// The review of the tool snapshots in `schemas/tools/`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolsReport {
    /// Every snapshot (and the annotations manifest, when kept) is what the listing produces.
    pub up_to_date: bool,
    /// Every contract version and the server package version cover their changes.
    pub policy_ok: bool,
    /// The server package version: it covers uncontracted tools, added and removed tools.
    pub package: PackageReport,
    /// One entry per listed or removed tool.
    pub tools: Vec<ToolReport>,
    /// One entry per file that is or should be in `schemas/tools/`.
    pub files: Vec<FileReport>,
    /// The opt-in annotations manifest, when it is checked in.
    pub manifest: Option<ManifestReport>,
    /// What to change, one line each.
    pub fixes: Vec<String>,
}

/// The server package version in a [`ToolsReport`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PackageReport {
    /// The version recorded in the checked-in `server.json`, when there is one.
    pub old_version: Option<String>,
    /// The version the xtask passes.
    pub new_version: String,
    /// The bump the tool list's changes need: `none`, `patch`, `minor` or `major`.
    pub required_bump: String,
    /// The version policy outcome.
    pub policy: PolicyStatus,
    /// The smallest version that satisfies it, when breached.
    pub needs: Option<String>,
}

/// One tool of a [`ToolsReport`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolReport {
    /// The tool name.
    pub name: String,
    /// The snapshot file inside the schemas folder, such as `tools/fleet_status.tool.json`.
    pub file: String,
    /// `new`, `unchanged`, `changed`, `unreadable` or `removed`.
    pub status: String,
    /// What version covers the changes: `contract <name>` or `server`.
    pub covered_by: String,
    /// That version as checked in, when known.
    pub old_version: Option<String>,
    /// That version as declared now.
    pub new_version: Option<String>,
    /// The version policy outcome of the changes the contract covers.
    pub policy: PolicyStatus,
    /// Whether the tool passes (its contract version covers its changes, its snapshot reads).
    pub ok: bool,
    /// Every classified change.
    pub changes: Vec<ToolChangeReport>,
    /// The review lines, as the text output prints them.
    pub lines: Vec<String>,
    /// Why the checked-in snapshot could not be compared.
    pub problem: Option<String>,
}

/// One classified change of a tool.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolChangeReport {
    /// `input`, `annotation`, `text`, `contract` or `tool`.
    pub area: String,
    /// The change kind: for `input` the schema change kind (such as
    /// `required_property_removed`), else `hint_less_safe`, `hint_safer`,
    /// `hint_spelled_out`, `hint_unclassified`, `annotation_unclassified`, `text_changed`,
    /// `contract_bound`, `contract_unbound`, `contract_rebound`,
    /// `contract_identity_changed`, `tool_added`, `tool_removed` or `unclassified`.
    pub kind: String,
    /// `text`, `cosmetic`, `additive` or `breaking`.
    pub verdict: String,
    /// The bump it needs (`none` for text).
    pub bump: String,
    /// JSON pointer into the tool's snapshot file.
    pub pointer: String,
    /// The change as one line.
    pub line: String,
    /// The smallest version that covers it, when known.
    pub needs: Option<String>,
    /// Whether the covering version is enough.
    pub ok: bool,
    /// Where it is written in the snapshot file.
    pub location: Option<LocationReport>,
    /// For a text change: both texts and the word diff, for a reviewer.
    pub text: Option<TextReport>,
}

/// A changed title or description.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TextReport {
    /// Which text, such as `description` or ``description of argument `task_id` ``.
    pub field: String,
    /// The text before (`null` when added).
    pub old: Option<String>,
    /// The text after (`null` when removed).
    pub new: Option<String>,
    /// The word diff, `[-removed-]{+added+}`, bounded.
    pub word_diff: String,
    /// Why the new text may read as instructions to the model, for a reviewer.
    pub signals: Vec<String>,
}

/// The opt-in annotations manifest in a [`ToolsReport`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ManifestReport {
    /// Its path inside the schemas folder.
    pub file: String,
    /// Whether it holds the live hints.
    pub up_to_date: bool,
    /// Each difference, classified by safety.
    pub lines: Vec<String>,
    /// Why it could not be read.
    pub problem: Option<String>,
}

/// One contract of a [`ReviewReport`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContractReport {
    /// The contract (tool) name.
    pub name: String,
    /// The schema's file name.
    pub file: String,
    /// The Rust type.
    #[serde(rename = "type")]
    pub type_name: String,
    /// How the schema relates to the checked-in copy.
    pub status: ContractStatus,
    /// The checked-in version, when known.
    pub old_version: Option<String>,
    /// The declared version (`null` for a removed contract).
    pub new_version: Option<String>,
    /// The strongest verdict of the changes (`breaking`, `additive`, `cosmetic`), or
    /// `null` without changes.
    pub verdict: Option<String>,
    /// The bump the changes need: `none`, `patch`, `minor` or `major`.
    pub required_bump: String,
    /// The version policy outcome.
    pub policy: PolicyStatus,
    /// The smallest version that satisfies the policy, when it is breached.
    pub needs: Option<String>,
    /// Whether the contract may be written.
    pub ok: bool,
    /// Every classified change.
    pub changes: Vec<ChangeReport>,
    /// The review lines, as the text output prints them.
    pub lines: Vec<String>,
    /// What to change, when not ok.
    pub fix: Option<String>,
    /// Why the checked-in files could not be compared.
    pub problem: Option<String>,
}

/// Status of one contract in a review.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ContractStatus {
    /// Nothing checked in yet.
    New,
    /// Same schema as checked in.
    Unchanged,
    /// The schema changed.
    Changed,
    /// The checked-in files could not be read.
    Unreadable,
    /// Checked in, but no longer produced by any type: a breaking removal.
    Removed,
}

/// The version policy outcome of one contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PolicyStatus {
    /// The declared version covers the change.
    Ok,
    /// The bump is too small.
    TooSmall,
    /// The version decreased.
    Decreased,
    /// The checked-in files could not be read.
    Unreadable,
    /// The contract was removed.
    Removed,
}

/// One classified change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangeReport {
    /// JSON pointer into the dereferenced schema (through every `$ref`, no `$defs`
    /// name); `location` says where the node is written in the file.
    pub pointer: String,
    /// The change kind, such as `required_property_removed`.
    pub kind: String,
    /// `added`, `removed` or `changed`.
    pub op: String,
    /// `breaking`, `additive` or `cosmetic`.
    pub verdict: String,
    /// The bump this change needs.
    pub bump: String,
    /// The smallest version that covers this change (`null` when none can: a removal).
    pub needs: Option<String>,
    /// Whether the declared version covers it.
    pub ok: bool,
    /// The change as one line of text.
    pub line: String,
    /// Extra detail, possibly empty.
    pub detail: String,
    /// The old schema fragment, when relevant.
    #[schemars(transform = contract_runtime::opaque)]
    pub old: Option<Value>,
    /// The new schema fragment, when relevant.
    #[schemars(transform = contract_runtime::opaque)]
    pub new: Option<Value>,
    /// Where the change is written in the schema file (`null` for a change of the whole
    /// schema): `pointer` is the logical one resolved through `$defs`.
    pub location: Option<LocationReport>,
}

/// Where a change is written: the file (new or old), the JSON pointer into it, the line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LocationReport {
    /// `new` (the generated file, to be checked in) or `old` (the file checked in before
    /// the change): `old` for a removal.
    pub side: FileSide,
    /// JSON pointer into that file, through `$defs` as it is written, such as
    /// `/$defs/SearchResult/properties/category`.
    pub pointer: String,
    /// The 1-based line of the node in that file: the line of its key, or of its first
    /// character for an array entry.
    pub line: u64,
}

/// Which schema file a [`LocationReport`] points into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FileSide {
    /// The file checked in before the change.
    Old,
    /// The generated file, as it is to be checked in.
    New,
}

/// One file of a [`ReviewReport`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileReport {
    /// The file name inside the folder.
    pub file: String,
    /// The file's state.
    pub status: FileStatus,
    /// The unified diff, for a stale file.
    pub diff: Option<String>,
    /// Why it could not be read.
    pub problem: Option<String>,
}

/// State of one file in a review.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    /// Exactly what the contracts produce.
    UpToDate,
    /// Different from what the contracts produce.
    Stale,
    /// Not checked in.
    Missing,
    /// Checked in, produced by no contract.
    Orphan,
    /// Could not be read.
    Unreadable,
}

/// The contracts of the tooling's own files, for its schemas folder
/// (`contract-tools/schemas/`): the review, the inventory and the tools lock
/// (`tools.lock.json`, which `contract-audit pin` writes).
#[must_use]
pub fn contracts() -> ContractSet {
    contract_runtime::contracts![ReviewReport, Inventory, contract_runtime::client::lock::Lock]
}

impl ReviewReport {
    /// The report as canonical JSON text (keys sorted, two-space indent, final newline).
    ///
    /// # Panics
    ///
    /// Never: the report is plain data.
    #[must_use]
    pub fn to_canonical_string(&self) -> String {
        let value = serde_json::to_value(self).expect("a review report serializes");
        contract_runtime::schema::canonical_string(&value)
    }

    /// Checks the report against its own contract: what a bot reading it may rely on.
    ///
    /// # Errors
    ///
    /// The violations, if the report breaks its schema.
    pub fn validate(&self) -> Result<(), contract_runtime::Report> {
        ReviewReport::contract().validate_output(self).map(drop)
    }
}
