//! Writes and checks the `schemas/` folder: one canonical file per contract plus
//! `inventory.json`. This is what `cargo xtask schemas [--check]` calls; a project's own
//! xtask needs only a few lines (see the README).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use semver::Version;
use serde_json::Value;

use crate::evolution::{self, Change, Policy, Verdict};
use crate::report::{
    ChangeReport, ContractReport, ContractStatus, FileReport, FileStatus, Inventory, InventoryEntry, PolicyStatus,
    ReviewReport,
};
use contract_runtime::schema::canonical_string;
use contract_runtime::{ContractSet, OutputContract};

/// The inventory file name inside the schemas folder.
pub const INVENTORY: &str = "inventory.json";

/// The file name a contract's schema is stored under: the tool name with every `/`
/// written as `__`, so slash-named tools stay portable file names.
///
/// # Examples
///
/// ```
/// assert_eq!(contract_tools::snapshot::file_name("qe/coverage_gaps"), "qe__coverage_gaps.json");
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
pub fn render(contracts: &ContractSet) -> Result<BTreeMap<String, String>, SnapshotError> {
    let mut errors: Vec<String> = match contracts.check() {
        Ok(()) => Vec::new(),
        Err(err) => err.problems().iter().map(ToString::to_string).collect(),
    };
    let mut files = BTreeMap::new();
    let mut owners: BTreeMap<String, &str> = BTreeMap::new();
    let mut inventory = Vec::new();
    for contract in contracts.contracts() {
        let file = file_name(contract.name());
        if let Some(other) = owners.insert(file.clone(), contract.type_name()) {
            errors.push(format!(
                "contracts of `{other}` and `{}` both write schemas/{file}: give one a different `name`",
                contract.type_name()
            ));
            continue;
        }
        files.insert(file.clone(), String::from_utf8_lossy(contract.canonical_bytes()).into_owned());
        inventory.push(InventoryEntry {
            name: contract.name().to_owned(),
            version: contract.version().to_string(),
            compatibility: contract.compatibility().as_str().to_owned(),
            sha256: contract.sha256().to_owned(),
            file,
            type_name: contract.type_name().to_owned(),
            sensitive: contract.sensitive_pointers().to_vec(),
            opaque: contract.opaque_pointers().to_vec(),
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
/// use contract_tools::snapshot;
///
/// #[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
/// #[tool_output(version = "1.0.0", compatibility = "exact")]
/// struct Ping { ok: bool }
///
/// let dir = std::env::temp_dir().join(format!("review-doc-{}", std::process::id()));
/// let all = contracts![Ping];
/// let review = snapshot::review(&dir, &all).unwrap();
/// assert!(!review.is_up_to_date()); // nothing is checked in yet
/// assert!(review.policy_ok());      // a new contract needs no bump
/// review.write(&dir).unwrap();
/// assert!(snapshot::review(&dir, &all).unwrap().is_up_to_date());
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn review(dir: &Path, contracts: &ContractSet) -> Result<Review, SnapshotError> {
    let expected = render(contracts)?;
    let shown = display_dir(dir);
    let inventory = CheckedInInventory::read(dir, &shown);
    let mut files = Vec::new();
    for (name, contents) in &expected {
        let path = dir.join(name);
        let state = match std::fs::read_to_string(&path) {
            Ok(current) => {
                let current = normalize(&current);
                if current == *contents {
                    FileState::UpToDate
                } else {
                    FileState::Stale(unified_diff(&current, contents, &format!("{shown}/{name}")))
                }
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => FileState::Missing,
            Err(err) => FileState::Unreadable(format!("{shown}/{name}: {err}")),
        };
        files.push((name.clone(), state));
    }
    match json_files(dir) {
        Ok(names) => {
            for name in names.into_iter().filter(|n| !expected.contains_key(n)) {
                files.push((name, FileState::Orphan));
            }
        }
        Err(err) => files.push((String::new(), FileState::Unreadable(format!("{shown}: {err}")))),
    }
    let mut reviews: Vec<ContractReview> =
        contracts.contracts().into_iter().map(|contract| review_contract(dir, &shown, &inventory, contract)).collect();
    reviews.extend(removed_contracts(&shown, &inventory, &files, &reviews));
    Ok(Review { shown, expected, files, contracts: reviews })
}

/// Contracts that are checked in but that no type produces any more: every inventory
/// entry whose name no contract has, and every orphan schema file no inventory entry
/// claims. Each is a breaking removal, not mere drift: the tool is gone for its clients.
fn removed_contracts(
    shown: &str,
    inventory: &CheckedInInventory,
    files: &[(String, FileState)],
    reviews: &[ContractReview],
) -> Vec<ContractReview> {
    let removed = |name: &str, file: String, type_name: String, old_version: Option<Version>| ContractReview {
        name: name.to_owned(),
        shown_file: format!("{shown}/{file}"),
        file,
        type_name,
        status: Status::Removed,
        old_version,
        new_version: None,
        changes: vec![Change::contract_removed(name)],
        policy: Policy::Ok,
        problem: None,
    };
    let produced = |name: &str| reviews.iter().any(|r| r.name == name);
    let mut out = Vec::new();
    let mut claimed = Vec::new();
    if let CheckedInInventory::Read(entries) = inventory {
        for (name, entry) in entries.iter().filter(|(name, _)| !produced(name)) {
            let file = entry.file.clone().unwrap_or_else(|| file_name(name));
            claimed.push(file.clone());
            out.push(removed(name, file, entry.type_name.clone().unwrap_or_default(), Some(entry.version.clone())));
        }
    }
    for (file, _) in files.iter().filter(|(f, state)| *state == FileState::Orphan && !claimed.contains(f)) {
        // The name as `file_name` wrote it: `__` stood for `/`.
        let name = file.strip_suffix(".json").unwrap_or(file).replace("__", "/");
        out.push(removed(&name, file.clone(), String::new(), None));
    }
    out
}

fn review_contract(
    dir: &Path,
    shown: &str,
    inventory: &CheckedInInventory,
    contract: &OutputContract,
) -> ContractReview {
    let file = file_name(contract.name());
    let mut review = ContractReview {
        name: contract.name().to_owned(),
        file: file.clone(),
        shown_file: format!("{shown}/{file}"),
        type_name: contract.type_name().to_owned(),
        status: Status::New,
        old_version: None,
        new_version: Some(contract.version().clone()),
        changes: Vec::new(),
        policy: Policy::Ok,
        problem: None,
    };
    let shown_file = review.shown_file.clone();
    let text = match std::fs::read_to_string(dir.join(&file)) {
        Ok(text) => normalize(&text),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return review,
        Err(err) => return review.unreadable(format!("{shown_file}: {err}")),
    };
    let generated = String::from_utf8_lossy(contract.canonical_bytes());
    if text != generated {
        let old: Value = match serde_json::from_str(&text) {
            Ok(old) => old,
            Err(err) => {
                return review.unreadable(format!(
                    "{shown_file}: line {} column {}: not valid JSON ({})",
                    err.line(),
                    err.column(),
                    strip_position(&err.to_string())
                ));
            }
        };
        if let Err(problem) = evolution::check_schema(&old) {
            let line = line_of(&text, problem.pointer()).map_or_else(String::new, |l| format!(" (near line {l})"));
            return review.unreadable(format!("{shown_file}: not a JSON Schema {problem}{line}"));
        }
        review.changes = evolution::diff(&old, contract.schema());
    }
    review.status = if review.changes.is_empty() { Status::Unchanged } else { Status::Changed };
    match inventory.version_of(contract.name()) {
        Ok(Some(old_version)) => {
            review.policy = evolution::version_policy(&old_version, contract.version(), &review.changes);
            review.old_version = Some(old_version);
        }
        // An unchanged schema needs no bump, so its old version is not needed.
        Ok(None) | Err(_) if review.changes.is_empty() => {}
        Ok(None) => {
            return review.unreadable(format!(
                "{shown}/{INVENTORY} has no entry for `{}`, so the checked-in version of {shown_file} is unknown",
                contract.name()
            ));
        }
        Err(problem) => return review.unreadable(problem.clone()),
    }
    review
}

/// The checked-in inventory: the version (and file and type) each contract had.
enum CheckedInInventory {
    Missing,
    Read(BTreeMap<String, Entry>),
    Bad(String),
}

/// One contract as the checked-in inventory lists it.
struct Entry {
    version: Version,
    file: Option<String>,
    type_name: Option<String>,
}

impl CheckedInInventory {
    fn read(dir: &Path, shown: &str) -> Self {
        let shown_file = format!("{shown}/{INVENTORY}");
        let text = match std::fs::read_to_string(dir.join(INVENTORY)) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Self::Missing,
            Err(err) => return Self::Bad(format!("{shown_file}: {err}")),
        };
        let value: Value = match serde_json::from_str(&text) {
            Ok(value) => value,
            Err(err) => {
                return Self::Bad(format!(
                    "{shown_file}: line {} column {}: not valid JSON ({})",
                    err.line(),
                    err.column(),
                    strip_position(&err.to_string())
                ));
            }
        };
        let bad = |pointer: &str, what: &str| {
            let line = line_of(&text, pointer).map_or_else(String::new, |l| format!(" (near line {l})"));
            Self::Bad(format!("{shown_file}: at {pointer}{line}: {what}"))
        };
        let Some(entries) = value.get("contracts").and_then(Value::as_array) else {
            return bad("/contracts", "expected a list of contracts");
        };
        let mut versions = BTreeMap::new();
        for (i, entry) in entries.iter().enumerate() {
            let Some(name) = entry.get("name").and_then(Value::as_str) else {
                return bad(&format!("/contracts/{i}/name"), "expected the contract name");
            };
            let version = entry.get("version").and_then(Value::as_str).map(Version::parse);
            let Some(Ok(version)) = version else {
                return bad(&format!("/contracts/{i}/version"), "expected a semver version such as \"1.2.0\"");
            };
            let text = |key: &str| entry.get(key).and_then(Value::as_str).map(str::to_owned);
            versions.insert(name.to_owned(), Entry { version, file: text("file"), type_name: text("type") });
        }
        Self::Read(versions)
    }

    fn version_of(&self, name: &str) -> Result<Option<Version>, String> {
        match self {
            Self::Missing => Ok(None),
            Self::Read(versions) => Ok(versions.get(name).map(|e| e.version.clone())),
            Self::Bad(problem) => Err(problem.clone()),
        }
    }
}

/// serde_json appends " at line L column C" to its messages; the caller says it first.
fn strip_position(message: &str) -> &str {
    message.find(" at line ").map_or(message, |i| &message[..i])
}

/// About where the value at `pointer` sits in `text` (1-based line): each object key
/// on the way is searched after the previous one, so the line is exact for canonical
/// files and a best effort for others; array indices are not followed.
fn line_of(text: &str, pointer: &str) -> Option<usize> {
    let mut from = 0;
    for token in pointer.split('/').skip(1) {
        if token.parse::<usize>().is_ok() {
            continue;
        }
        let key = serde_json::to_string(&token.replace("~1", "/").replace("~0", "~")).ok()?;
        let at = text[from..].find(&format!("{key}:"))?;
        from += at + key.len();
    }
    Some(text[..from].matches('\n').count() + 1)
}

/// What the checked-in copy of one generated file looks like.
#[derive(Clone, Debug, PartialEq, Eq)]
enum FileState {
    UpToDate,
    /// The unified diff from the checked-in text to the generated text.
    Stale(String),
    Missing,
    Orphan,
    Unreadable(String),
}

/// How a contract's schema relates to its checked-in copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Nothing is checked in for this contract yet.
    New,
    /// The schema is the same as the checked-in one.
    Unchanged,
    /// The schema differs from the checked-in one; see [`ContractReview::changes`].
    Changed,
    /// The checked-in schema or inventory could not be read; see
    /// [`ContractReview::problem`].
    Unreadable,
    /// The contract is checked in but no type produces it any more: a breaking removal
    /// (one [`evolution::ChangeKind::ContractRemoved`] change) that no version covers.
    Removed,
}

impl Status {
    /// `"new"`, `"unchanged"`, `"changed"`, `"unreadable"` or `"removed"`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Status::New => "new",
            Status::Unchanged => "unchanged",
            Status::Changed => "changed",
            Status::Unreadable => "unreadable",
            Status::Removed => "removed",
        }
    }
}

/// One contract in a [`Review`]: its classified changes and the version verdict.
#[derive(Clone, Debug)]
pub struct ContractReview {
    name: String,
    file: String,
    /// The file as messages show it, such as `schemas/fleet_status.json`.
    shown_file: String,
    type_name: String,
    status: Status,
    old_version: Option<Version>,
    /// `None` for a removed contract.
    new_version: Option<Version>,
    changes: Vec<Change>,
    policy: Policy,
    problem: Option<String>,
}

impl ContractReview {
    fn unreadable(mut self, problem: String) -> Self {
        self.status = Status::Unreadable;
        self.changes.clear();
        self.problem = Some(problem);
        self
    }

    /// The tool name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The schema's file name inside the schemas folder.
    #[must_use]
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The Rust type the contract is derived from (for a removed contract, the type the
    /// inventory names, or empty when it names none).
    #[must_use]
    pub fn type_name(&self) -> &str {
        &self.type_name
    }

    /// New, unchanged, changed, unreadable or removed.
    #[must_use]
    pub fn status(&self) -> Status {
        self.status
    }

    /// The checked-in version, when there is one.
    #[must_use]
    pub fn old_version(&self) -> Option<&Version> {
        self.old_version.as_ref()
    }

    /// The declared version; `None` for a removed contract, which declares nothing.
    #[must_use]
    pub fn new_version(&self) -> Option<&Version> {
        self.new_version.as_ref()
    }

    /// Every classified change from the checked-in schema to the generated one.
    #[must_use]
    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    /// The version policy outcome ([`Policy::Ok`] for a new or unreadable contract).
    #[must_use]
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Why the checked-in files could not be compared, naming the file and the line or
    /// JSON pointer.
    #[must_use]
    pub fn problem(&self) -> Option<&str> {
        self.problem.as_deref()
    }

    /// Whether the contract passes the check: policy met, checked-in files readable, and
    /// not removed (a removal is breaking and no version covers it).
    #[must_use]
    pub fn is_ok(&self) -> bool {
        self.policy.is_ok() && self.problem.is_none() && self.status != Status::Removed
    }

    /// `fleet_status 1.2.0 → 1.3.0`, `task_status 2.0.0 (unchanged)` or
    /// `ping 1.0.0 (new)`.
    #[must_use]
    pub fn header(&self) -> String {
        match (&self.old_version, &self.new_version) {
            (Some(old), None) => format!("{} {old} (removed)", self.name),
            (None, None) => format!("{} (removed)", self.name),
            (Some(old), Some(new)) if old == new => format!("{} {old} (unchanged)", self.name),
            (Some(old), Some(new)) => format!("{} {old} → {new}", self.name),
            (None, Some(new)) => format!("{} {new} (new)", self.name),
        }
    }

    /// The smallest version each change needs, and whether the declared one is enough.
    /// `None` when no version can be enough (a removed contract).
    fn needs(&self, change: &Change) -> Option<(Version, bool)> {
        let new = self.new_version.as_ref()?;
        Some(match &self.old_version {
            Some(old) => {
                let bump = change.verdict().bump();
                (evolution::minimum_version(old, bump), evolution::satisfies(old, new, bump))
            }
            None => (new.clone(), true),
        })
    }

    /// One review line per change, such as
    /// `task_status 2.0.0 (unchanged): - required /properties/state: BREAKING, needs 3.0.0`,
    /// plus a line for a decreased version or an unreadable file.
    #[must_use]
    pub fn lines(&self) -> Vec<String> {
        let header = self.header();
        let mut lines = Vec::new();
        if let Some(problem) = &self.problem {
            lines.push(format!("{}: cannot classify the change: {problem}", self.name));
        }
        if self.policy == Policy::Decreased {
            lines.push(format!("{header}: version decreased; a version never decreases"));
        }
        for change in &self.changes {
            let verdict = match change.verdict() {
                Verdict::Breaking => "BREAKING",
                other => other.as_str(),
            };
            let outcome = match self.needs(change) {
                Some((_, true)) => "ok".to_owned(),
                Some((needs, false)) => format!("needs {needs}"),
                None => "no version bump covers a removal".to_owned(),
            };
            lines.push(format!("{header}: {change}: {verdict}, {outcome}"));
        }
        lines
    }

    /// What to do about a breach, naming the attribute to write; `None` when ok.
    #[must_use]
    pub fn fix(&self) -> Option<String> {
        if self.status == Status::Removed {
            let ty = if self.type_name.is_empty() { "its type".to_owned() } else { format!("`{}`", self.type_name) };
            return Some(format!(
                "{} is checked in but no contract produces `{}`: if that is a mistake, add {ty} back to the contract list; \
                 if the tool is retired on purpose, tell its clients (a breaking removal), then run `cargo xtask schemas` to delete its schema and inventory entry",
                self.shown_file, self.name
            ));
        }
        match (&self.policy, &self.problem) {
            (_, Some(_)) => Some(format!(
                "restore {0} from version control (`git checkout -- {0}`) or repair it, then run again",
                self.shown_file
            )),
            (Policy::TooSmall { required, needs }, None) => Some(format!(
                "set `#[tool_output(version = \"{needs}\")]` (or later) on `{}`: {} needs a {required} bump from {}",
                self.type_name,
                self.name,
                self.old_version.as_ref().map_or_else(String::new, ToString::to_string)
            )),
            (Policy::Decreased, None) => Some(format!(
                "set `#[tool_output(version = ...)]` on `{}` to {} or later",
                self.type_name,
                self.old_version.as_ref().map_or_else(String::new, ToString::to_string)
            )),
            (Policy::Ok, None) => None,
        }
    }

    fn report(&self) -> ContractReport {
        let changes = self
            .changes
            .iter()
            .map(|change| {
                let (needs, ok) = match self.needs(change) {
                    Some((needs, ok)) => (Some(needs.to_string()), ok),
                    None => (None, false),
                };
                ChangeReport {
                    pointer: change.pointer().to_owned(),
                    kind: change.kind().as_str().to_owned(),
                    op: change.op().as_str().to_owned(),
                    verdict: change.verdict().as_str().to_owned(),
                    bump: change.verdict().bump().as_str().to_owned(),
                    detail: change.detail().to_owned(),
                    line: change.to_string(),
                    old: change.old_value().cloned(),
                    new: change.new_value().cloned(),
                    needs,
                    ok,
                }
            })
            .collect();
        let (policy, needs) = match &self.policy {
            _ if self.problem.is_some() => (PolicyStatus::Unreadable, None),
            _ if self.status == Status::Removed => (PolicyStatus::Removed, None),
            Policy::Ok => (PolicyStatus::Ok, None),
            Policy::TooSmall { needs, .. } => (PolicyStatus::TooSmall, Some(needs.to_string())),
            Policy::Decreased => (PolicyStatus::Decreased, self.old_version.as_ref().map(ToString::to_string)),
        };
        let status = match self.status {
            Status::New => ContractStatus::New,
            Status::Unchanged => ContractStatus::Unchanged,
            Status::Changed => ContractStatus::Changed,
            Status::Unreadable => ContractStatus::Unreadable,
            Status::Removed => ContractStatus::Removed,
        };
        ContractReport {
            name: self.name.clone(),
            file: self.file.clone(),
            type_name: self.type_name.clone(),
            status,
            old_version: self.old_version.as_ref().map(ToString::to_string),
            new_version: self.new_version.as_ref().map(ToString::to_string),
            verdict: evolution::verdict(&self.changes).map(|v| v.as_str().to_owned()),
            required_bump: evolution::required_bump(&self.changes).as_str().to_owned(),
            policy,
            needs,
            ok: self.is_ok(),
            changes,
            lines: self.lines(),
            fix: self.fix(),
            problem: self.problem.clone(),
        }
    }
}

/// The checked-in schemas folder compared with the contracts: drifted files, classified
/// changes and version verdicts. Made by [`review`].
#[derive(Clone, Debug)]
pub struct Review {
    shown: String,
    expected: BTreeMap<String, String>,
    files: Vec<(String, FileState)>,
    contracts: Vec<ContractReview>,
}

impl Review {
    /// Every contract, in the order given to [`review`].
    #[must_use]
    pub fn contracts(&self) -> &[ContractReview] {
        &self.contracts
    }

    /// Whether every file in the folder is exactly what the contracts produce.
    #[must_use]
    pub fn is_up_to_date(&self) -> bool {
        self.files.iter().all(|(_, state)| *state == FileState::UpToDate)
    }

    /// Whether every declared version covers its schema's change and every checked-in
    /// file could be read: what [`Review::write`] requires.
    ///
    /// A removed contract ([`Status::Removed`]) declares no version, so it is not part of
    /// this: [`Review::check`] fails on it as a breaking removal, and writing (running
    /// `cargo xtask schemas`) is how a deliberate retirement is recorded.
    #[must_use]
    pub fn policy_ok(&self) -> bool {
        self.contracts.iter().filter(|c| c.status != Status::Removed).all(ContractReview::is_ok)
    }

    /// Whether a checked-in contract is no longer produced (see [`Status::Removed`]).
    #[must_use]
    pub fn has_removals(&self) -> bool {
        self.contracts.iter().any(|c| c.status == Status::Removed)
    }

    /// The classified list: one line per change of every changed contract, and one per
    /// decreased version or unreadable file.
    #[must_use]
    pub fn lines(&self) -> Vec<String> {
        self.contracts.iter().flat_map(ContractReview::lines).collect()
    }

    /// Passes when the folder is up to date.
    ///
    /// # Errors
    ///
    /// [`SnapshotError`] listing every stale file (with its unified diff followed by its
    /// classified changes), missing, orphan and unreadable file, what to change for a
    /// version breach, and the command that fixes the rest.
    pub fn check(&self) -> Result<(), SnapshotError> {
        let shown = &self.shown;
        let mut problems = Vec::new();
        for (name, state) in &self.files {
            let contract = self.contracts.iter().find(|c| c.file == *name);
            let lines = contract.map(ContractReview::lines).unwrap_or_default();
            match state {
                FileState::UpToDate => {}
                FileState::Stale(diff) => {
                    let mut message = format!("{shown}/{name} is not up to date:\n{diff}");
                    if !lines.is_empty() {
                        message.push_str(&lines.join("\n"));
                    }
                    problems.push(message.trim_end().to_owned());
                }
                FileState::Missing => {
                    let new = contract
                        .and_then(|c| Some(format!(" (new contract {} {})", c.name, c.new_version.as_ref()?)))
                        .unwrap_or_default();
                    problems.push(format!("{shown}/{name} is missing{new}"));
                }
                FileState::Orphan => {
                    problems.push(format!("{shown}/{name} is not produced by any contract (orphan file)"));
                }
                FileState::Unreadable(problem) => problems.push(problem.clone()),
            }
        }
        // A breach the files alone do not show, such as a lowered version.
        for contract in &self.contracts {
            let stale = self.files.iter().any(|(n, s)| *n == contract.file && matches!(s, FileState::Stale(_)));
            if !stale && !contract.is_ok() {
                problems.extend(contract.lines());
            }
        }
        if problems.is_empty() {
            return Ok(());
        }
        let fixes: Vec<String> = self.contracts.iter().filter_map(ContractReview::fix).collect();
        if fixes.is_empty() {
            problems.push("run `cargo xtask schemas` and commit".to_owned());
        } else {
            problems.extend(fixes.into_iter().map(|f| format!("fix: {f}")));
            problems.push("then run `cargo xtask schemas` and commit".to_owned());
        }
        Err(SnapshotError { problems })
    }

    /// Writes the folder as [`write()`] describes, unless the policy is breached.
    ///
    /// # Errors
    ///
    /// When [`Review::policy_ok`] is false: every classified change with the version it
    /// needs, and what to change; nothing is written. Otherwise an I/O error naming the
    /// file.
    pub fn write(&self, dir: &Path) -> Result<WriteSummary, SnapshotError> {
        if !self.policy_ok() {
            let mut problems =
                vec![format!("refusing to write {}: a declared version does not cover its schema change", self.shown)];
            problems.extend(self.lines());
            problems.extend(self.contracts.iter().filter_map(ContractReview::fix).map(|f| format!("fix: {f}")));
            problems.push("nothing was written".to_owned());
            return Err(SnapshotError { problems });
        }
        let io =
            |path: &Path, err: std::io::Error| SnapshotError { problems: vec![format!("{}: {err}", path.display())] };
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        let mut summary = WriteSummary::default();
        for (name, contents) in &self.expected {
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
            if !self.expected.contains_key(&name) {
                let path = dir.join(&name);
                std::fs::remove_file(&path).map_err(|e| io(&path, e))?;
                summary.removed.push(name);
            }
        }
        Ok(summary)
    }

    /// The machine-readable report, for bots that comment on pull requests: `ok`,
    /// `up_to_date`, `policy_ok`, one entry per contract (status, versions, verdict,
    /// required bump, policy, the version it needs, each change with pointer, kind,
    /// verdict and needed version, the review lines and the fix) and one entry per file
    /// (state and unified diff). Its JSON Schema is checked in as
    /// `contract-tools/schemas/schemas_review.json`.
    #[must_use]
    pub fn report(&self) -> ReviewReport {
        let files = self
            .files
            .iter()
            .map(|(name, state)| {
                let (status, diff, problem) = match state {
                    FileState::UpToDate => (FileStatus::UpToDate, None, None),
                    FileState::Stale(diff) => (FileStatus::Stale, Some(diff.clone()), None),
                    FileState::Missing => (FileStatus::Missing, None, None),
                    FileState::Orphan => (FileStatus::Orphan, None, None),
                    FileState::Unreadable(problem) => (FileStatus::Unreadable, None, Some(problem.clone())),
                };
                FileReport { file: name.clone(), status, diff, problem }
            })
            .collect();
        ReviewReport {
            ok: self.is_up_to_date() && self.policy_ok() && !self.has_removals(),
            up_to_date: self.is_up_to_date(),
            policy_ok: self.policy_ok(),
            dir: self.shown.clone(),
            contracts: self.contracts.iter().map(ContractReview::report).collect(),
            files,
        }
    }

    /// [`Review::report`] as a JSON value.
    ///
    /// # Panics
    ///
    /// Never: the report is plain data.
    #[must_use]
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.report()).expect("a review report serializes")
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

/// Returns the value of the inventory entry for `name` in rendered files, for tests.
#[doc(hidden)]
#[must_use]
pub fn inventory_entry(files: &BTreeMap<String, String>, name: &str) -> Option<Value> {
    let inventory: Value = serde_json::from_str(files.get(INVENTORY)?).ok()?;
    inventory["contracts"].as_array()?.iter().find(|c| c["name"] == name).cloned()
}
