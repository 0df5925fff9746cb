//! Writes and checks the `schemas/` folder: one canonical file per contract plus
//! `inventory.json`. This is what `cargo xtask schemas [--check]` calls; a project's own
//! xtask needs only a few lines (see the README).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::contract::{ContractError, OutputContract};
use crate::schema::canonical_string;

/// The inventory file name inside the schemas folder.
pub const INVENTORY: &str = "inventory.json";

/// The file name a contract's schema is stored under: the tool name with every `/`
/// written as `__`, so slash-named tools stay portable file names.
///
/// # Examples
///
/// ```
/// assert_eq!(contract_runtime::snapshot::file_name("qe/coverage_gaps"), "qe__coverage_gaps.json");
/// ```
#[must_use]
pub fn file_name(tool: &str) -> String {
    format!("{}.json", tool.replace('/', "__"))
}

/// Renders every file the schemas folder must hold, by file name.
///
/// # Errors
///
/// Any contract that failed to build, two contracts with the same name, or two names
/// that map to the same file.
pub fn render(contracts: &[Result<&OutputContract, ContractError>]) -> Result<BTreeMap<String, String>, SnapshotError> {
    let mut errors = Vec::new();
    let mut files = BTreeMap::new();
    let mut owners: BTreeMap<String, &str> = BTreeMap::new();
    let mut inventory = Vec::new();
    for contract in contracts {
        let contract = match contract {
            Ok(c) => *c,
            Err(err) => {
                errors.push(err.to_string());
                continue;
            }
        };
        let file = file_name(contract.name());
        if let Some(other) = owners.insert(file.clone(), contract.type_name()) {
            errors.push(format!(
                "contracts of `{other}` and `{}` both write schemas/{file}: give one a different `name`",
                contract.type_name()
            ));
            continue;
        }
        files.insert(file.clone(), String::from_utf8_lossy(contract.canonical_bytes()).into_owned());
        inventory.push(json!({
            "name": contract.name(),
            "version": contract.version().to_string(),
            "compatibility": contract.compatibility().as_str(),
            "sha256": contract.sha256(),
            "file": file,
            "type": contract.type_name(),
            "sensitive": contract.sensitive_pointers(),
            "opaque": contract.opaque_pointers(),
        }));
    }
    if !errors.is_empty() {
        return Err(SnapshotError { problems: errors });
    }
    inventory.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    files.insert(INVENTORY.to_owned(), canonical_string(&json!({ "contracts": inventory })));
    Ok(files)
}

/// What [`write`] changed.
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
/// # Errors
///
/// A contract that failed to build, or an I/O error naming the file.
pub fn write(dir: &Path, contracts: &[Result<&OutputContract, ContractError>]) -> Result<WriteSummary, SnapshotError> {
    let expected = render(contracts)?;
    let io = |path: &Path, err: std::io::Error| SnapshotError { problems: vec![format!("{}: {err}", path.display())] };
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let mut summary = WriteSummary::default();
    for (name, contents) in &expected {
        let path = dir.join(name);
        match std::fs::read_to_string(&path) {
            Ok(current) if normalize(&current) == *contents => summary.unchanged.push(name.clone()),
            _ => {
                std::fs::write(&path, contents).map_err(|e| io(&path, e))?;
                summary.written.push(name.clone());
            }
        }
    }
    for name in json_files(dir).map_err(|e| io(dir, e))? {
        if !expected.contains_key(&name) {
            let path = dir.join(&name);
            std::fs::remove_file(&path).map_err(|e| io(&path, e))?;
            summary.removed.push(name);
        }
    }
    Ok(summary)
}

/// Compares `dir` with what the contracts produce, without writing anything.
///
/// # Errors
///
/// [`SnapshotError`] listing every stale file (with a unified diff), missing file and
/// orphan file, ending with the command that fixes them.
pub fn check(dir: &Path, contracts: &[Result<&OutputContract, ContractError>]) -> Result<(), SnapshotError> {
    let expected = render(contracts)?;
    let shown = display_dir(dir);
    let mut problems = Vec::new();
    for (name, contents) in &expected {
        let path = dir.join(name);
        match std::fs::read_to_string(&path) {
            Ok(current) => {
                let current = normalize(&current);
                if current != *contents {
                    problems.push(format!(
                        "{shown}/{name} is not up to date:\n{}",
                        unified_diff(&current, contents, &format!("{shown}/{name}"))
                    ));
                }
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                problems.push(format!("{shown}/{name} is missing"));
            }
            Err(err) => problems.push(format!("{shown}/{name}: {err}")),
        }
    }
    match json_files(dir) {
        Ok(names) => {
            for name in names.into_iter().filter(|n| !expected.contains_key(n)) {
                problems.push(format!("{shown}/{name} is not produced by any contract (orphan file)"));
            }
        }
        Err(err) => problems.push(format!("{shown}: {err}")),
    }
    if problems.is_empty() {
        Ok(())
    } else {
        problems.push("run `cargo xtask schemas` and commit".to_owned());
        Err(SnapshotError { problems })
    }
}

/// A unified diff from the checked-in text to the generated text.
#[must_use]
pub fn unified_diff(old: &str, new: &str, path: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("{path} (checked in)"), &format!("{path} (generated)"))
        .to_string()
}

fn normalize(text: &str) -> String {
    text.replace("\r\n", "\n")
}

fn display_dir(dir: &Path) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    dir.strip_prefix(&cwd).map_or_else(|_| dir.display().to_string(), |p| p.display().to_string())
}

fn json_files(dir: &Path) -> std::io::Result<Vec<String>> {
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

/// Why the schemas folder could not be written or is not up to date.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotError {
    problems: Vec<String>,
}

impl SnapshotError {
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

/// Lists the contracts of a set of types for [`render`], [`write`] and [`check`].
///
/// # Examples
///
/// ```
/// use contract_runtime::{contracts, ToolOutput};
///
/// #[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
/// #[tool_output(version = "1.0.0", compatibility = "exact")]
/// struct Ping { ok: bool }
///
/// let all = contracts![Ping];
/// let files = contract_runtime::snapshot::render(&all).unwrap();
/// assert!(files.contains_key("ping.json"));
/// assert!(files.contains_key("inventory.json"));
/// ```
#[macro_export]
macro_rules! contracts {
    ($($ty:ty),* $(,)?) => {
        ::std::vec![$(<$ty as $crate::ToolOutput>::try_contract()),*]
    };
}

/// Returns the value of the inventory entry for `name` in rendered files, for tests.
#[doc(hidden)]
#[must_use]
pub fn inventory_entry(files: &BTreeMap<String, String>, name: &str) -> Option<Value> {
    let inventory: Value = serde_json::from_str(files.get(INVENTORY)?).ok()?;
    inventory["contracts"].as_array()?.iter().find(|c| c["name"] == name).cloned()
}
