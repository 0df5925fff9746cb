//! The review: per contract, the classified changes and the version verdict; for the folder, drift, the text and JSON reports.

#[allow(clippy::wildcard_imports)] // One unit split by concern: the parent holds the shared imports.
use super::*;

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

/// Where a change is written in its schema file: what a reviewer opens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub(super) side: Side,
    pub(super) pointer: String,
    pub(super) line: usize,
}

impl Location {
    pub(crate) fn new(side: Side, pointer: String, line: usize) -> Self {
        Self { side, pointer, line }
    }

    /// The new file (the generated one, to be checked in) or the old one (checked in
    /// before the change): the old one for a removal.
    #[must_use]
    pub fn side(&self) -> Side {
        self.side
    }

    /// The JSON pointer into that file, through `$defs` as the file is written (see
    /// [`Change::file_pointer`]).
    #[must_use]
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// The 1-based line of the node in that file's canonical text: the line of its key,
    /// or of its first character for an array entry.
    #[must_use]
    pub fn line(&self) -> usize {
        self.line
    }
}

/// Where the contracts of a review are declared, which decides what its fix lines say.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Derived Rust types: the fix is an attribute, the command `cargo xtask schemas`.
    #[default]
    Derived,
    /// A source manifest (`contracts.json`, shown as `file`), written with `command`.
    Manifest { file: String, command: String },
}

impl Origin {
    /// The command that writes the folder.
    fn command(&self) -> &str {
        match self {
            Origin::Derived => "cargo xtask schemas",
            Origin::Manifest { command, .. } => command,
        }
    }
}

/// One contract in a [`Review`]: its classified changes and the version verdict.
#[derive(Clone, Debug)]
pub struct ContractReview {
    pub(super) name: String,
    pub(super) file: String,
    /// The file as messages show it, such as `schemas/fleet_status.json`.
    pub(super) shown_file: String,
    pub(super) type_name: String,
    pub(super) status: Status,
    pub(super) old_version: Option<Version>,
    /// `None` for a removed contract.
    pub(super) new_version: Option<Version>,
    pub(super) changes: Vec<Change>,
    /// Where each change is written, in the order of `changes`.
    pub(super) locations: Vec<Option<Location>>,
    pub(super) policy: Policy,
    pub(super) problem: Option<String>,
    pub(super) origin: Origin,
}

impl ContractReview {
    pub(super) fn unreadable(mut self, problem: String) -> Self {
        self.status = Status::Unreadable;
        self.changes.clear();
        self.locations.clear();
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

    /// Where each of [`ContractReview::changes`] is written (same order): the file
    /// pointer and line in the new file, or the old one for a removal; `None` for a
    /// change of the whole schema.
    #[must_use]
    pub fn locations(&self) -> &[Option<Location>] {
        &self.locations
    }

    /// Where a change is written, as the review line ends: `; schemas/goal.json line 14:
    /// /$defs/GoalData/anyOf/1`, with `before the change` for the old file, and without
    /// the pointer when it is the change's own.
    fn place(&self, change: &Change, location: Option<&Location>) -> String {
        let Some(location) = location else { return String::new() };
        let when = if location.side == Side::Old { " before the change" } else { "" };
        let pointer =
            if location.pointer == change.pointer() { String::new() } else { format!(": {}", location.pointer) };
        format!("; {} line {}{when}{pointer}", self.shown_file, location.line)
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
    /// `task_status 2.0.0 (unchanged): - required /properties/state: BREAKING, needs 3.0.0`
    /// followed by where the change is written (`; schemas/task_status.json line 9 before
    /// the change`), plus a line for a decreased version or an unreadable file.
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
        for (i, change) in self.changes.iter().enumerate() {
            let verdict = match change.verdict() {
                Verdict::Breaking => "BREAKING",
                other => other.as_str(),
            };
            let outcome = match self.needs(change) {
                Some((_, true)) => "ok".to_owned(),
                Some((needs, false)) => format!("needs {needs}"),
                None => "no version bump covers a removal".to_owned(),
            };
            let place = self.place(change, self.locations.get(i).and_then(Option::as_ref));
            lines.push(format!("{header}: {change}: {verdict}, {outcome}{place}"));
        }
        lines
    }

    /// What to do about a breach, naming the attribute to write; `None` when ok.
    #[must_use]
    pub fn fix(&self) -> Option<String> {
        let command = self.origin.command();
        if let Origin::Manifest { file, .. } = &self.origin {
            return self.manifest_fix(file, command);
        }
        if self.status == Status::Removed {
            let ty = if self.type_name.is_empty() { "its type".to_owned() } else { format!("`{}`", self.type_name) };
            return Some(format!(
                "{} is checked in but no contract produces `{}`: if that is a mistake, add {ty} back to the contract list; \
                 if the tool is retired on purpose, tell its clients (a breaking removal), then run `{command}` to delete its schema and inventory entry",
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

    /// [`ContractReview::fix`] for a contract declared in the manifest `manifest`.
    fn manifest_fix(&self, manifest: &str, command: &str) -> Option<String> {
        let old = self.old_version.as_ref().map_or_else(String::new, ToString::to_string);
        if self.status == Status::Removed {
            return Some(format!(
                "{} is checked in but {manifest} has no contract `{}`: if that is a mistake, add it back to {manifest}; \
                 if the tool is retired on purpose, tell its clients (a breaking removal), then run `{command}` to \
                 delete its schema and inventory entry",
                self.shown_file, self.name
            ));
        }
        match (&self.policy, &self.problem) {
            (_, Some(_)) => Some(format!(
                "restore {0} from version control (`git checkout -- {0}`) or repair it, then run again",
                self.shown_file
            )),
            (Policy::TooSmall { required, needs }, None) => Some(format!(
                "set \"version\": \"{needs}\" (or later) for `{}` in {manifest}: it needs a {required} bump from {old}",
                self.name
            )),
            (Policy::Decreased, None) => {
                Some(format!("set \"version\" for `{}` in {manifest} to {old} or later", self.name))
            }
            (Policy::Ok, None) => None,
        }
    }

    fn report(&self) -> ContractReport {
        let changes = self
            .changes
            .iter()
            .enumerate()
            .map(|(i, change)| {
                let location = self.locations.get(i).and_then(Option::as_ref).map(|l| LocationReport {
                    side: if l.side == Side::Old { FileSide::Old } else { FileSide::New },
                    pointer: l.pointer.clone(),
                    line: l.line as u64,
                });
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
                    location,
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
    pub(super) shown: String,
    pub(super) expected: BTreeMap<String, String>,
    pub(super) files: Vec<(String, FileState)>,
    pub(super) contracts: Vec<ContractReview>,
    pub(super) origin: Origin,
}

impl Review {
    /// The same review for contracts declared in the source manifest shown as `manifest`
    /// (`contracts/contracts.json`) and written by `command`: its fix lines name the
    /// manifest's `"version"` rather than a Rust attribute, and the command to run.
    #[must_use]
    pub fn for_manifest(mut self, manifest: &str, command: &str) -> Self {
        self.origin = Origin::Manifest { file: manifest.to_owned(), command: command.to_owned() };
        for contract in &mut self.contracts {
            contract.origin = self.origin.clone();
        }
        self
    }

    /// The same review with the folder shown as `shown` in its lines and fixes: for a
    /// folder read from elsewhere than where it lives, such as the schemas of a base
    /// revision exported from git, shown as the folder they came from.
    #[must_use]
    pub fn shown_as(mut self, shown: &str) -> Self {
        shown.clone_into(&mut self.shown);
        for contract in &mut self.contracts {
            contract.shown_file = format!("{shown}/{}", contract.file);
        }
        self
    }

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
        // Indexed by file once: scanning the list per file was quadratic in the contracts.
        let by_file: BTreeMap<&str, &ContractReview> =
            self.contracts.iter().rev().map(|c| (c.file.as_str(), c)).collect();
        let mut stale_files = std::collections::BTreeSet::new();
        for (name, state) in &self.files {
            let contract = by_file.get(name.as_str()).copied();
            match state {
                FileState::UpToDate => {}
                FileState::Stale(diff) => {
                    stale_files.insert(name.as_str());
                    let lines = contract.map(ContractReview::lines).unwrap_or_default();
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
            let stale = stale_files.contains(contract.file.as_str());
            if !stale && !contract.is_ok() {
                problems.extend(contract.lines());
            }
        }
        if problems.is_empty() {
            return Ok(());
        }
        let fixes: Vec<String> = self.contracts.iter().filter_map(ContractReview::fix).collect();
        if fixes.is_empty() {
            problems.push(format!("run `{}` and commit", self.origin.command()));
        } else {
            problems.extend(fixes.into_iter().map(|f| format!("fix: {f}")));
            problems.push(format!("then run `{}` and commit", self.origin.command()));
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
            let current = std::fs::read_to_string(&path).ok().map(normalize);
            if current.as_deref() == Some(contents.as_str()) {
                summary.unchanged.push(name.clone());
            } else {
                std::fs::write(&path, contents).map_err(|e| io(&path, e))?;
                summary.written.push(name.clone());
            }
        }
        for name in generated_files(dir).map_err(|e| io(dir, e))? {
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
            tools: None,
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
