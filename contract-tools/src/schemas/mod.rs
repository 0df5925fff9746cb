//! Writes and checks the `schemas/` folder: one canonical file per contract plus
//! `inventory.json`. This is what `cargo xtask schemas [--check]` calls; a project's own
//! xtask needs only a few lines (see the README).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use semver::Version;
use serde_json::Value;

use crate::evolution::{self, Change, Policy, Side, Verdict};
use crate::report::{
    ChangeReport, ContractReport, ContractStatus, FileReport, FileSide, FileStatus, Inventory, InventoryEntry,
    InventoryError, LocationReport, PolicyStatus, ReviewReport,
};
use contract_runtime::schema::canonical_string;
use contract_runtime::{ContractSet, OutputContract};

/// The inventory file name inside the schemas folder.
pub const INVENTORY: &str = "inventory.json";

/// The source manifest of a contract folder written by `tool-contracts schemas` (see
/// [`crate::manifest`]): never a schema of its own, never an orphan.
pub const MANIFEST: &str = contract_runtime::MANIFEST_FILE;

/// The file name a contract's schema is stored under: the tool name with every `/`
/// written as `__`, so slash-named tools stay portable file names.
///
/// # Examples
///
/// ```
/// assert_eq!(contract_tools::schemas::file_name("qe/coverage_gaps"), "qe__coverage_gaps.json");
/// ```
#[must_use]
pub fn file_name(tool: &str) -> String {
    format!("{}.json", tool.replace('/', "__"))
}

/// The file name a contract's declared error shape is stored under: [`file_name`] with
/// `.error` before `.json`.
///
/// # Examples
///
/// ```
/// assert_eq!(contract_tools::schemas::error_file_name("qe/task_status"), "qe__task_status.error.json");
/// ```
#[must_use]
pub fn error_file_name(tool: &str) -> String {
    format!("{}.error.json", tool.replace('/', "__"))
}

/// Renders every file the schemas folder must hold, by file name.
///
/// # Errors
///
/// Any contract that failed to build, two contracts with the same name, or two names
/// that map to the same file.
pub fn render(contracts: &ContractSet) -> Result<BTreeMap<String, String>, SnapshotError> {
    let mut errors: Vec<String> = match contracts.check() {
        Ok(()) => Vec::new(),
        Err(err) => err.problems().iter().map(ToString::to_string).collect(),
    };
    let mut files = BTreeMap::new();
    let mut owners: BTreeMap<String, (&str, &str)> = BTreeMap::new();
    let mut inventory = Vec::new();
    for contract in contracts.contracts() {
        let file = file_name(contract.name());
        if let Some((other, other_name)) = owners.insert(file.clone(), (contract.type_name(), contract.name())) {
            // Two contracts of one name are a set problem, reported above once.
            if other_name != contract.name() {
                let ty = contract.type_name();
                let fix = if ty.contains('<') {
                    format!("bind `{ty}` to another tool (`{ty} => \"…\"` in `contracts![…]`)")
                } else {
                    format!("give `{ty}` another `#[tool_output(name = \"…\")]`")
                };
                errors.push(format!(
                    "contracts `{other_name}` (type `{other}`) and `{}` (type `{ty}`) both write schemas/{file}: {fix}",
                    contract.name()
                ));
            }
            continue;
        }
        files.insert(file.clone(), String::from_utf8_lossy(contract.canonical_bytes()).into_owned());
        let error = contracts.error_shape(contract.name()).map(|shape| {
            let file = error_file_name(contract.name());
            files.insert(file.clone(), String::from_utf8_lossy(shape.schema().canonical_bytes()).into_owned());
            InventoryError {
                file,
                sha256: shape.schema().sha256().to_owned(),
                message: shape.message_pointer().to_owned(),
            }
        });
        inventory.push(InventoryEntry {
            name: contract.name().to_owned(),
            version: contract.version().to_string(),
            compatibility: contract.compatibility().as_str().to_owned(),
            sha256: contract.sha256().to_owned(),
            file,
            type_name: contract.type_name().to_owned(),
            sensitive: contract.sensitive_pointers().to_vec(),
            opaque: contract.opaque_pointers().to_vec(),
            error,
        });
    }
    if !errors.is_empty() {
        return Err(SnapshotError { problems: errors });
    }
    inventory.sort_by(|a, b| a.name.cmp(&b.name));
    let inventory = serde_json::to_value(Inventory { contracts: inventory }).expect("an inventory serializes");
    files.insert(INVENTORY.to_owned(), canonical_string(&inventory));
    Ok(files)
}

/// What [`write()`] changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct WriteSummary {
    /// Files created or rewritten.
    pub written: Vec<String>,
    /// Orphan `.json` files removed.
    pub removed: Vec<String>,
    /// Files already up to date.
    pub unchanged: Vec<String>,
}

/// Regenerates `dir`: writes every contract's schema and the inventory, removes orphan
/// `.json` files, leaves files that are already up to date untouched.
///
/// Refuses (and writes nothing) when a contract's declared version is too small for how
/// its schema changed against the checked-in file, when a version decreased, or when a
/// checked-in file cannot be read as a schema; see [`review`] and [`Review::write`].
///
/// # Errors
///
/// A contract that failed to build, a version policy breach (each change with the
/// version it needs), an unreadable checked-in file, or an I/O error naming the file.
pub fn write(dir: &Path, contracts: &ContractSet) -> Result<WriteSummary, SnapshotError> {
    review(dir, contracts)?.write(dir)
}

/// Compares `dir` with what the contracts produce, without writing anything.
///
/// # Errors
///
/// [`SnapshotError`] listing every stale file (with a unified diff and, for a schema,
/// each change classified with the version it needs), missing file and orphan file,
/// ending with the command that fixes them.
pub fn check(dir: &Path, contracts: &ContractSet) -> Result<(), SnapshotError> {
    review(dir, contracts)?.check()
}

/// Reads the checked-in folder and compares it with the contracts: which files drifted,
/// how each contract's schema changed (classified by [`evolution::diff`]) and whether its
/// declared version covers the change ([`evolution::version_policy`]). The old schema is
/// the checked-in `<name>.json`, the old version its entry in the checked-in
/// `inventory.json`. Nothing is written.
///
/// # Errors
///
/// Only when a contract failed to build or two contracts clash, as in [`render`];
/// problems with the checked-in files are part of the review.
///
/// # Examples
///
/// ```
/// use contract_runtime::{contracts, ToolOutput};
/// use contract_tools::schemas;
///
/// #[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
/// #[tool_output(version = "1.0.0", compatibility = "exact")]
/// struct Ping { ok: bool }
///
/// let dir = std::env::temp_dir().join(format!("review-doc-{}", std::process::id()));
/// let all = contracts![Ping];
/// let review = schemas::review(&dir, &all).unwrap();
/// assert!(!review.is_up_to_date()); // nothing is checked in yet
/// assert!(review.policy_ok());      // a new contract needs no bump
/// review.write(&dir).unwrap();
/// assert!(schemas::review(&dir, &all).unwrap().is_up_to_date());
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn review(dir: &Path, contracts: &ContractSet) -> Result<Review, SnapshotError> {
    let expected = render(contracts)?;
    let shown = display_dir(dir);
    let inventory = CheckedInInventory::read(dir, &shown);
    let mut files = Vec::new();
    // Each checked-in file is read once; the contract reviews below use the same text.
    let mut checked_in: BTreeMap<&str, Result<String, String>> = BTreeMap::new();
    for (name, contents) in &expected {
        let path = dir.join(name);
        let state = match std::fs::read_to_string(&path) {
            Ok(current) => {
                let current = normalize(current);
                let state = if current == *contents {
                    FileState::UpToDate
                } else {
                    FileState::Stale(unified_diff(&current, contents, &format!("{shown}/{name}")))
                };
                checked_in.insert(name, Ok(current));
                state
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => FileState::Missing,
            Err(err) => {
                let problem = format!("{shown}/{name}: {err}");
                checked_in.insert(name, Err(problem.clone()));
                FileState::Unreadable(problem)
            }
        };
        files.push((name.clone(), state));
    }
    match generated_files(dir) {
        Ok(names) => {
            for name in names.into_iter().filter(|n| !expected.contains_key(n)) {
                files.push((name, FileState::Orphan));
            }
        }
        Err(err) => files.push((String::new(), FileState::Unreadable(format!("{shown}: {err}")))),
    }
    let mut reviews: Vec<ContractReview> = contracts
        .contracts()
        .into_iter()
        .map(|contract| {
            let text =
                checked_in.get(file_name(contract.name()).as_str()).map(|t| t.as_deref().map_err(String::as_str));
            review_contract(&shown, &inventory, contract, text)
        })
        .collect();
    reviews.extend(removed_contracts(&shown, &inventory, &files, &reviews));
    Ok(Review { shown, expected, files, contracts: reviews, origin: Origin::Derived })
}

/// Checks a run-time contract folder (contracts of tools registered at run time, read by
/// `ContractSet::load_dir`): the same checks the server makes when it loads it —
/// canonical form, each file's SHA-256 against `inventory.json`, a semver version, no
/// silent `{}` unless declared opaque, no file without an entry. The folder is a source:
/// nothing here writes it. Returns how many contracts it holds.
///
/// # Errors
///
/// Every problem, each naming the file and the JSON pointer.
pub fn check_runtime_dir(dir: &Path) -> Result<usize, SnapshotError> {
    // Read through the path as messages show it (relative to the current directory when
    // inside it), so that every problem names the file that way.
    ContractSet::load_dir(PathBuf::from(display_dir(dir)))
        .map(|set| set.len())
        .map_err(|err| SnapshotError { problems: err.problems().iter().map(ToString::to_string).collect() })
}

mod checked_in;
mod review;
pub mod submission;

pub(crate) use checked_in::{line_of, strip_position};
use checked_in::{removed_contracts, review_contract, CheckedInInventory, FileState};
use review::Origin;
pub use review::{ContractReview, Location, Review, Status};

/// A unified diff from the checked-in text to the generated text.
#[must_use]
pub fn unified_diff(old: &str, new: &str, path: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("{path} (checked in)"), &format!("{path} (generated)"))
        .to_string()
}

pub(crate) fn normalize(text: String) -> String {
    // Almost every file has no CR: it is kept as read rather than copied.
    if text.contains('\r') {
        text.replace("\r\n", "\n")
    } else {
        text
    }
}

pub(crate) fn display_dir(dir: &Path) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    dir.strip_prefix(&cwd).map_or_else(|_| dir.display().to_string(), |p| p.display().to_string())
}

/// The names of the `.json` files in `dir`, sorted; none when it does not exist.
pub(crate) fn json_files(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(names),
        Err(err) => return Err(err),
    };
    for entry in entries {
        let path: PathBuf = entry?.path();
        if path.extension().is_some_and(|e| e == "json") {
            if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
                names.push(name.to_owned());
            }
        }
    }
    names.sort();
    Ok(names)
}

/// The folder's generated files: its `.json` files but the source manifest `tool-contracts
/// schemas` writes the folder from.
fn generated_files(dir: &Path) -> std::io::Result<Vec<String>> {
    Ok(json_files(dir)?.into_iter().filter(|name| name != MANIFEST).collect())
}

/// Why the schemas folder could not be written or is not up to date.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotError {
    problems: Vec<String>,
}

impl SnapshotError {
    pub(crate) fn new(problems: Vec<String>) -> Self {
        Self { problems }
    }

    /// Each problem as one message (a stale file's message includes its diff).
    #[must_use]
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.problems.join("\n"))
    }
}

impl std::error::Error for SnapshotError {}

/// Returns the value of the inventory entry for `name` in rendered files, for tests.
#[doc(hidden)]
#[must_use]
pub fn inventory_entry(files: &BTreeMap<String, String>, name: &str) -> Option<Value> {
    let inventory: Value = serde_json::from_str(files.get(INVENTORY)?).ok()?;
    inventory["contracts"].as_array()?.iter().find(|c| c["name"] == name).cloned()
}
