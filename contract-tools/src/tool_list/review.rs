//! The review of `schemas/tools/`: per tool, the classified changes and the version that
//! covers them; for the folder, drift, removals, the manifest, the text and JSON reports.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use semver::Version;

use super::annotations::MANIFEST;
use super::text::word_diff;
use super::TOOLS_DIR;
use crate::evolution::tool::{TextChange, ToolChange, ToolVerdict};
use crate::evolution::{self, Bump, Policy, Side};
use crate::schemas::{normalize, Location, SnapshotError, Status};

/// `review: description of fleet_status changed`, `review: description of task_status
/// argument `task_id` changed`: the heading of a text change of `tool`.
fn heading(text: &TextChange, tool: &str) -> String {
    let field = text.field();
    let (keyword, rest) = match (field.split_once(" of "), field.split_once(" at ")) {
        (Some((keyword, rest)), _) => (keyword, format!(" {rest}")),
        (None, Some((keyword, rest))) => (keyword, format!(" at {rest}")),
        (None, None) => (field, String::new()),
    };
    format!("review: {keyword} of {tool}{rest} changed")
}

/// Which version covers a tool's changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Cover {
    /// The tool is bound to the same contract before and after: its `version`.
    Contract { name: String, type_name: String, old: Version, new: Version },
    /// The server package's version.
    Package,
}

/// One tool in a [`ToolsReview`].
#[derive(Clone, Debug)]
pub struct ToolReview {
    pub(super) name: String,
    pub(super) file: String,
    pub(super) shown_file: String,
    pub(super) status: Status,
    pub(super) changes: Vec<ToolChange>,
    /// Where each change is written in the snapshot file, change by change.
    pub(super) locations: Vec<Option<Location>>,
    pub(super) cover: Cover,
    pub(super) policy: Policy,
    pub(super) problem: Option<String>,
}

impl ToolReview {
    /// The tool name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The snapshot's file name inside `schemas/tools/`.
    #[must_use]
    pub fn file(&self) -> &str {
        &self.file
    }

    /// New, unchanged, changed, unreadable or removed.
    #[must_use]
    pub fn status(&self) -> Status {
        self.status
    }

    /// Every classified change from the checked-in snapshot to the live tool.
    #[must_use]
    pub fn changes(&self) -> &[ToolChange] {
        &self.changes
    }

    /// Where each of [`ToolReview::changes`] is written in the snapshot file (the old one
    /// for a removal), in the same order.
    #[must_use]
    pub fn locations(&self) -> &[Option<Location>] {
        &self.locations
    }

    /// Whether the contract version covers this tool's changes (`false`: the server
    /// package version does).
    #[must_use]
    pub fn covered_by_contract(&self) -> bool {
        matches!(self.cover, Cover::Contract { .. })
    }

    /// The version policy outcome of the changes the contract version covers.
    #[must_use]
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Why the checked-in snapshot could not be compared.
    #[must_use]
    pub fn problem(&self) -> Option<&str> {
        self.problem.as_deref()
    }

    pub(super) fn is_ok(&self) -> bool {
        self.policy.is_ok() && self.problem.is_none()
    }

    pub(super) fn header(&self) -> String {
        match &self.cover {
            Cover::Contract { name, old, new, .. } if old == new => {
                format!("tool {} (contract {name} {old})", self.name)
            }
            Cover::Contract { name, old, new, .. } => format!("tool {} (contract {name} {old} → {new})", self.name),
            Cover::Package => format!("tool {} (server version)", self.name),
        }
    }

    pub(super) fn needs(&self, change: &ToolChange, package: &PackageReview) -> (Option<Version>, bool) {
        let bump = change.verdict().bump();
        let (old, new) = match &self.cover {
            Cover::Contract { old, new, .. } => (Some(old), Some(new)),
            Cover::Package => (package.old.as_ref(), Some(&package.new)),
        };
        match (old, new) {
            (Some(old), Some(new)) => {
                (Some(evolution::minimum_version(old, bump)), evolution::satisfies(old, new, bump))
            }
            _ => (None, true),
        }
    }

    /// One line per change (`tool task_status (contract task_status 2.0.0): + required
    /// /inputSchema/required/…: BREAKING, needs 3.0.0; schemas/tools/task_status.tool.json
    /// line 9`); a text change gets its own heading (`review: description of fleet_status
    /// changed`) and its word diff, indented.
    pub(super) fn lines(&self, package: &PackageReview) -> Vec<String> {
        let header = self.header();
        let mut lines = Vec::new();
        if let Some(problem) = &self.problem {
            lines.push(format!("{header}: cannot classify the change: {problem}"));
        }
        for (i, change) in self.changes.iter().enumerate() {
            if let Some(text) = change.text_change() {
                lines.push(heading(text, &self.name));
                let diff = word_diff(text.old().unwrap_or_default(), text.new_text().unwrap_or_default());
                lines.push(format!("  {}", diff.replace('\n', "\n  ")));
                for signal in text.signals() {
                    lines.push(format!("  signal: {signal}"));
                }
                continue;
            }
            let verdict = match change.verdict() {
                ToolVerdict::Breaking => "BREAKING",
                other => other.as_str(),
            };
            let outcome = match self.needs(change, package) {
                (_, true) => "ok".to_owned(),
                (Some(needs), false) => match &self.cover {
                    Cover::Contract { .. } => format!("needs {needs}"),
                    Cover::Package => format!("needs server version {needs}"),
                },
                (None, false) => "needs a bump".to_owned(),
            };
            let place = self.locations.get(i).and_then(Option::as_ref).map_or_else(String::new, |l| {
                let when = if l.side() == Side::Old { " before the change" } else { "" };
                format!("; {} line {}{when}", self.shown_file, l.line())
            });
            lines.push(format!("{header}: {}: {verdict}, {outcome}{place}", change.line()));
        }
        lines
    }

    fn fix(&self) -> Option<String> {
        if self.problem.is_some() {
            return Some(format!(
                "restore {0} from version control (`git checkout -- {0}`) or repair it, then run again",
                self.shown_file
            ));
        }
        match (&self.policy, &self.cover) {
            (Policy::TooSmall { required, needs }, Cover::Contract { name, type_name, old, .. }) => Some(format!(
                "set `#[tool_output(version = \"{needs}\")]` (or later) on `{type_name}`: tool {} needs a {required} bump \
                 of contract {name} from {old}",
                self.name
            )),
            _ => None,
        }
    }
}

/// The server package version: what covers uncontracted tools and tool additions and
/// removals.
#[derive(Clone, Debug)]
pub(super) struct PackageReview {
    pub(super) old: Option<Version>,
    pub(super) new: Version,
    pub(super) required: Bump,
    pub(super) policy: Policy,
}

/// A file of `schemas/tools/` compared with what the listing produces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum FileState {
    UpToDate,
    Stale(String),
    Missing,
    Orphan,
    Unreadable(String),
}

/// The opt-in annotations manifest compared with the live hints.
#[derive(Clone, Debug)]
pub(super) struct ManifestReview {
    pub(super) expected: String,
    pub(super) up_to_date: bool,
    pub(super) lines: Vec<String>,
    pub(super) problem: Option<String>,
}

/// `schemas/tools/` compared with the live tool listing: drifted snapshots, classified
/// changes, the version that covers them. Made by [`super::review`].
#[derive(Clone, Debug)]
pub struct ToolsReview {
    pub(super) shown: String,
    pub(super) expected: BTreeMap<String, String>,
    pub(super) files: Vec<(String, FileState)>,
    pub(super) tools: Vec<ToolReview>,
    pub(super) package: PackageReview,
    pub(super) manifest: Option<ManifestReview>,
}

impl ToolsReview {
    /// The same review with the schemas folder shown as `shown` (`shown/tools/…`) in its
    /// lines: for snapshots read from elsewhere than where they live, such as those of a
    /// base revision exported from git.
    #[must_use]
    pub fn shown_as(mut self, shown: &str) -> Self {
        self.shown = format!("{shown}/{TOOLS_DIR}");
        for tool in &mut self.tools {
            tool.shown_file = format!("{}/{}", self.shown, tool.file);
        }
        self
    }

    /// Every tool: the listed ones in file order, then the removed ones.
    #[must_use]
    pub fn tools(&self) -> &[ToolReview] {
        &self.tools
    }

    /// Whether every snapshot (and the manifest, when there is one) is what the listing
    /// produces.
    #[must_use]
    pub fn is_up_to_date(&self) -> bool {
        self.files.iter().all(|(_, s)| *s == FileState::UpToDate) && self.manifest.as_ref().is_none_or(|m| m.up_to_date)
    }

    /// Whether every version covers its changes and every checked-in file could be read:
    /// what [`ToolsReview::write`] requires.
    #[must_use]
    pub fn policy_ok(&self) -> bool {
        self.package.policy.is_ok()
            && self.tools.iter().all(ToolReview::is_ok)
            && !self.files.iter().any(|(_, s)| matches!(s, FileState::Unreadable(_)))
            && self.manifest.as_ref().is_none_or(|m| m.problem.is_none())
    }

    /// The text changes, one `review: … changed` heading and word diff each: what a
    /// reviewer reads even when no version is involved.
    #[must_use]
    pub fn text_lines(&self) -> Vec<String> {
        self.lines().into_iter().filter(|l| l.starts_with("review: ") || l.starts_with("  ")).collect()
    }

    /// Every review line: the classified changes of every tool, the package version and
    /// the manifest.
    #[must_use]
    pub fn lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self.tools.iter().flat_map(|t| t.lines(&self.package)).collect();
        lines.extend(self.package_lines());
        if let Some(manifest) = &self.manifest {
            lines.extend(manifest.problem.iter().cloned());
            lines.extend(manifest.lines.iter().cloned());
        }
        lines
    }

    fn package_lines(&self) -> Vec<String> {
        let p = &self.package;
        match (&p.policy, &p.old) {
            (Policy::Decreased, Some(old)) => {
                vec![format!("server version {old} → {}: version decreased; a version never decreases", p.new)]
            }
            (Policy::TooSmall { required, needs }, Some(old)) => vec![format!(
                "server version {old} → {}: the tool list needs a {required} bump, {needs} or later",
                p.new
            )],
            _ => Vec::new(),
        }
    }

    pub(super) fn fixes(&self) -> Vec<String> {
        let mut fixes: Vec<String> = self.tools.iter().filter_map(ToolReview::fix).collect();
        let p = &self.package;
        match (&p.policy, &p.old) {
            (Policy::TooSmall { needs, .. }, _) => fixes.push(format!(
                "set `version = \"{needs}\"` (or later) in the server package's Cargo.toml: its tool list changed \
                 ({} bump from {})",
                p.required,
                p.old.as_ref().map_or_else(String::new, ToString::to_string)
            )),
            (Policy::Decreased, Some(old)) => {
                fixes.push(format!("set the server package's version to {old} or later: a version never decreases"));
            }
            _ => {}
        }
        fixes
    }

    /// Passes when every snapshot is up to date and every version covers its change.
    ///
    /// # Errors
    ///
    /// Every stale snapshot (its unified diff, bounded, then its classified changes and
    /// text diffs), missing snapshot, tool the server no longer lists, stale manifest,
    /// what to change for a version breach, and the command that fixes the rest.
    pub fn check(&self) -> Result<(), SnapshotError> {
        let shown = &self.shown;
        let mut problems = Vec::new();
        let by_file: BTreeMap<&str, &ToolReview> = self.tools.iter().map(|t| (t.file.as_str(), t)).collect();
        let mut shown_tools = BTreeSet::new();
        for (file, state) in &self.files {
            let tool = by_file.get(file.as_str()).copied();
            let lines = tool.map(|t| t.lines(&self.package)).unwrap_or_default();
            match state {
                FileState::UpToDate => continue,
                FileState::Stale(diff) => {
                    problems.push(
                        format!("{shown}/{file} is not up to date:\n{diff}{}", lines.join("\n")).trim_end().to_owned(),
                    );
                }
                FileState::Missing => {
                    let mut message = format!("{shown}/{file} is missing");
                    if let Some(tool) = tool {
                        let _ = write!(message, " (tool {} is listed but has no snapshot)", tool.name);
                    }
                    problems.push(message);
                    problems.extend(lines);
                }
                FileState::Orphan => {
                    problems.push(format!("{shown}/{file} is checked in but the server lists no such tool"));
                    problems.extend(lines);
                }
                FileState::Unreadable(problem) => problems.push(problem.clone()),
            }
            if let Some(tool) = tool {
                shown_tools.insert(tool.file.as_str());
            }
        }
        for tool in self.tools.iter().filter(|t| !shown_tools.contains(t.file.as_str())) {
            if !tool.is_ok() || tool.status == Status::Removed {
                problems.extend(tool.lines(&self.package));
            }
        }
        problems.extend(self.package_lines());
        if let Some(manifest) = &self.manifest {
            if !manifest.up_to_date || manifest.problem.is_some() {
                problems.push(format!("{shown}/{MANIFEST} is not up to date with the live tool list:"));
                problems.extend(manifest.problem.iter().cloned());
                problems.extend(manifest.lines.iter().cloned());
            }
        }
        if problems.is_empty() {
            return Ok(());
        }
        let fixes = self.fixes();
        if fixes.is_empty() {
            problems.push("run `cargo xtask schemas` and commit".to_owned());
        } else {
            problems.extend(fixes.into_iter().map(|f| format!("fix: {f}")));
            problems.push("then run `cargo xtask schemas` and commit".to_owned());
        }
        Err(SnapshotError::new(problems))
    }

    /// Writes `schemas/tools/` (and the manifest, when there is one), removing
    /// snapshots of tools the server no longer lists, unless a version does not cover
    /// its change.
    ///
    /// # Errors
    ///
    /// The policy breach (every change with the version it needs, and what to change;
    /// nothing is written), or an I/O error naming the file.
    pub fn write(&self, dir: &Path) -> Result<crate::schemas::WriteSummary, SnapshotError> {
        if !self.policy_ok() {
            let mut problems =
                vec![format!("refusing to write {}: a version does not cover the tool list's change", self.shown)];
            problems.extend(self.lines());
            problems.extend(self.fixes().into_iter().map(|f| format!("fix: {f}")));
            problems.push("nothing was written".to_owned());
            return Err(SnapshotError::new(problems));
        }
        let dir = dir.join(TOOLS_DIR);
        let io = |path: &Path, err: std::io::Error| SnapshotError::new(vec![format!("{}: {err}", path.display())]);
        std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
        let mut summary = crate::schemas::WriteSummary::default();
        let mut expected: Vec<(String, &str)> = self.expected.iter().map(|(k, v)| (k.clone(), v.as_str())).collect();
        if let Some(manifest) = &self.manifest {
            expected.push((MANIFEST.to_owned(), manifest.expected.as_str()));
        }
        for (name, contents) in &expected {
            let path = dir.join(name);
            if std::fs::read_to_string(&path).ok().map(normalize).as_deref() == Some(*contents) {
                summary.unchanged.push(format!("{TOOLS_DIR}/{name}"));
            } else {
                std::fs::write(&path, contents).map_err(|e| io(&path, e))?;
                summary.written.push(format!("{TOOLS_DIR}/{name}"));
            }
        }
        for name in crate::schemas::json_files(&dir).map_err(|e| io(&dir, e))? {
            if !self.expected.contains_key(&name) && name != MANIFEST {
                let path = dir.join(&name);
                std::fs::remove_file(&path).map_err(|e| io(&path, e))?;
                summary.removed.push(format!("{TOOLS_DIR}/{name}"));
            }
        }
        Ok(summary)
    }
}
