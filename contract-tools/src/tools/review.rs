//! The review of `schemas/tools/`: per tool, the classified changes and the version that
//! covers them; for the folder, drift, removals, the manifest, the text and JSON reports.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use semver::Version;
use serde_json::{Map, Value};

use contract_runtime::schema::canonical_string;
use contract_runtime::ContractSet;

use super::annotations::{classify_annotations, manifest_entry, MANIFEST};
use super::text::{instruction_signals, word_diff};
use super::{render, ToolListing, SERVER_FILE, TOOLS_DIR, TOOL_SUFFIX};
use crate::evolution::{self, Bump, Change, ChangeKind, Direction, Op, Policy, Side, Verdict};
use crate::report::{
    FileSide, LocationReport, ManifestReport, PackageReport, PolicyStatus, TextReport, ToolChangeReport, ToolReport,
    ToolsReport,
};
use crate::snapshot::{display_dir, line_of, normalize, unified_diff, Location, SnapshotError, Status};

/// Generated files larger than this (either side) get no unified diff in `--check`: the
/// classified changes say what changed, each text as a bounded word diff.
const MAX_UNIFIED_DIFF_INPUT: usize = 128 * 1024;

/// Which part of a tool a change is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolArea {
    /// The `inputSchema`, classified for requests.
    Input,
    /// The behaviour hints of `annotations`.
    Annotation,
    /// A title or description: no bump, always shown for review.
    Text,
    /// The output contract the tool is bound to.
    Contract,
    /// The tool itself: added to or removed from the listing.
    Tool,
}

impl ToolArea {
    /// `input`, `annotation`, `text`, `contract` or `tool`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ToolArea::Input => "input",
            ToolArea::Annotation => "annotation",
            ToolArea::Text => "text",
            ToolArea::Contract => "contract",
            ToolArea::Tool => "tool",
        }
    }
}

/// What a tool change means for clients; ordered from harmless to breaking.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ToolVerdict {
    /// Text a model reads changed: no bump, shown for review.
    Text,
    /// The bytes changed, no value's meaning: a patch bump.
    Cosmetic,
    /// Safe for existing clients: a minor bump.
    Additive,
    /// Breaks existing clients: a major bump.
    Breaking,
}

impl ToolVerdict {
    /// `text`, `cosmetic`, `additive` or `breaking`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ToolVerdict::Text => "text",
            ToolVerdict::Cosmetic => "cosmetic",
            ToolVerdict::Additive => "additive",
            ToolVerdict::Breaking => "breaking",
        }
    }

    /// The bump it needs: none for text.
    #[must_use]
    pub fn bump(self) -> Bump {
        match self {
            ToolVerdict::Text => Bump::None,
            ToolVerdict::Cosmetic => Bump::Patch,
            ToolVerdict::Additive => Bump::Minor,
            ToolVerdict::Breaking => Bump::Major,
        }
    }

    fn of(verdict: Verdict) -> Self {
        match verdict {
            Verdict::Cosmetic => ToolVerdict::Cosmetic,
            Verdict::Additive => ToolVerdict::Additive,
            Verdict::Breaking => ToolVerdict::Breaking,
        }
    }
}

/// A changed text: which one, both sides, the word diff and the review signals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TextChange {
    pub(crate) field: String,
    pub(crate) old: Option<String>,
    pub(crate) new: Option<String>,
    pub(crate) diff: String,
    pub(crate) signals: Vec<String>,
}

impl TextChange {
    /// `review: description of fleet_status changed`, `review: description of
    /// task_status argument `task_id` changed`.
    fn heading(&self, tool: &str) -> String {
        let field = self.field.as_str();
        let (keyword, rest) = match (field.split_once(" of "), field.split_once(" at ")) {
            (Some((keyword, rest)), _) => (keyword, format!(" {rest}")),
            (None, Some((keyword, rest))) => (keyword, format!(" at {rest}")),
            (None, None) => (field, String::new()),
        };
        format!("review: {keyword} of {tool}{rest} changed")
    }
}

/// One classified change of a tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolChange {
    pub(crate) area: ToolArea,
    pub(crate) kind: String,
    pub(crate) verdict: ToolVerdict,
    /// JSON pointer into the tool's snapshot file.
    pub(crate) pointer: String,
    pub(crate) line: String,
    /// Whether the node is only in the old file (a removal).
    pub(crate) removed: bool,
    pub(crate) location: Option<Location>,
    pub(crate) text: Option<TextChange>,
}

impl ToolChange {
    pub(crate) fn new(
        area: ToolArea,
        kind: &str,
        verdict: ToolVerdict,
        pointer: String,
        line: String,
        removed: bool,
    ) -> Self {
        Self { area, kind: kind.to_owned(), verdict, pointer, line, removed, location: None, text: None }
    }

    /// A text change at `pointer` in the snapshot, `field` as the review names it.
    pub(crate) fn text(pointer: &str, field: &str, old: Option<&str>, new: Option<&str>) -> Self {
        let diff = word_diff(old.unwrap_or_default(), new.unwrap_or_default());
        let line = format!("~ {pointer} (text: {field})");
        let mut change =
            Self::new(ToolArea::Text, "text_changed", ToolVerdict::Text, pointer.to_owned(), line, new.is_none());
        change.text = Some(TextChange {
            field: field.to_owned(),
            old: old.map(str::to_owned),
            new: new.map(str::to_owned),
            diff,
            signals: Vec::new(),
        });
        change
    }

    /// Input, annotation, text, contract or tool.
    #[must_use]
    pub fn area(&self) -> ToolArea {
        self.area
    }

    /// The change kind, such as `required_property_added` (input), `hint_less_safe`
    /// (annotation) or `text_changed`.
    #[must_use]
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// What it means for clients.
    #[must_use]
    pub fn verdict(&self) -> ToolVerdict {
        self.verdict
    }

    /// JSON pointer into the tool's snapshot file, such as `/inputSchema/properties/limit`.
    #[must_use]
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// Where it is written in the snapshot file.
    #[must_use]
    pub fn location(&self) -> Option<&Location> {
        self.location.as_ref()
    }

    /// For a text change, the word diff.
    #[must_use]
    pub fn word_diff(&self) -> Option<&str> {
        self.text.as_ref().map(|t| t.diff.as_str())
    }
}

impl std::fmt::Display for ToolChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.line)
    }
}

/// Which version covers a tool's changes.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Cover {
    /// The tool is bound to the same contract before and after: its `version`.
    Contract { name: String, type_name: String, old: Version, new: Version },
    /// The server package's version.
    Package,
}

/// One tool in a [`ToolsReview`].
#[derive(Clone, Debug)]
pub struct ToolReview {
    name: String,
    file: String,
    shown_file: String,
    status: Status,
    changes: Vec<ToolChange>,
    cover: Cover,
    policy: Policy,
    problem: Option<String>,
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

    fn is_ok(&self) -> bool {
        self.policy.is_ok() && self.problem.is_none()
    }

    fn header(&self) -> String {
        match &self.cover {
            Cover::Contract { name, old, new, .. } if old == new => {
                format!("tool {} (contract {name} {old})", self.name)
            }
            Cover::Contract { name, old, new, .. } => format!("tool {} (contract {name} {old} → {new})", self.name),
            Cover::Package => format!("tool {} (server version)", self.name),
        }
    }

    fn needs(&self, change: &ToolChange, package: &PackageReview) -> (Option<Version>, bool) {
        let bump = change.verdict.bump();
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
    fn lines(&self, package: &PackageReview) -> Vec<String> {
        let header = self.header();
        let mut lines = Vec::new();
        if let Some(problem) = &self.problem {
            lines.push(format!("{header}: cannot classify the change: {problem}"));
        }
        for change in &self.changes {
            if let Some(text) = &change.text {
                lines.push(text.heading(&self.name));
                lines.push(format!("  {}", text.diff.replace('\n', "\n  ")));
                for signal in &text.signals {
                    lines.push(format!("  signal: {signal}"));
                }
                continue;
            }
            let verdict = match change.verdict {
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
            let place = change.location.as_ref().map_or_else(String::new, |l| {
                let when = if l.side() == Side::Old { " before the change" } else { "" };
                format!("; {} line {}{when}", self.shown_file, l.line())
            });
            lines.push(format!("{header}: {}: {verdict}, {outcome}{place}", change.line));
        }
        lines
    }

    fn fix(&self) -> Option<String> {
        if let Some(problem) = &self.problem {
            let _ = problem;
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
struct PackageReview {
    old: Option<Version>,
    new: Version,
    required: Bump,
    policy: Policy,
}

/// A file of `schemas/tools/` compared with what the listing produces.
#[derive(Clone, Debug, PartialEq, Eq)]
enum FileState {
    UpToDate,
    Stale(String),
    Missing,
    Orphan,
    Unreadable(String),
}

/// The opt-in annotations manifest compared with the live hints.
#[derive(Clone, Debug)]
struct ManifestReview {
    expected: String,
    up_to_date: bool,
    lines: Vec<String>,
    problem: Option<String>,
}

/// `schemas/tools/` compared with the live tool listing: drifted snapshots, classified
/// changes, the version that covers them. Made by [`super::review`].
#[derive(Clone, Debug)]
pub struct ToolsReview {
    shown: String,
    expected: BTreeMap<String, String>,
    files: Vec<(String, FileState)>,
    tools: Vec<ToolReview>,
    package: PackageReview,
    manifest: Option<ManifestReview>,
}

pub(super) fn review(dir: &Path, listing: &ToolListing, contracts: &ContractSet) -> Result<ToolsReview, SnapshotError> {
    let expected = render(listing, contracts)?;
    let tools_dir = dir.join(TOOLS_DIR);
    let shown = format!("{}/{TOOLS_DIR}", display_dir(dir));
    let server = read_server(&tools_dir, &shown);
    let mut files = Vec::new();
    let mut tools = Vec::new();
    let names: Vec<&str> = listing.tools.iter().filter_map(|t| t["name"].as_str()).collect();
    for (file, contents) in &expected {
        let path = tools_dir.join(file);
        let current = match std::fs::read_to_string(&path) {
            Ok(text) => Some(Ok(normalize(text))),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => Some(Err(format!("{shown}/{file}: {err}"))),
        };
        let state = match &current {
            None => FileState::Missing,
            Some(Err(problem)) => FileState::Unreadable(problem.clone()),
            Some(Ok(text)) if text == contents => FileState::UpToDate,
            Some(Ok(text)) if text.len() > MAX_UNIFIED_DIFF_INPUT || contents.len() > MAX_UNIFIED_DIFF_INPUT => {
                FileState::Stale(format!(
                    "({} → {} bytes: too large for a unified diff; the classified changes follow)\n",
                    text.len(),
                    contents.len()
                ))
            }
            Some(Ok(text)) => FileState::Stale(unified_diff(text, contents, &format!("{shown}/{file}"))),
        };
        files.push((file.clone(), state));
        if file == SERVER_FILE {
            continue;
        }
        let new: Value = serde_json::from_str(contents).expect("a rendered snapshot parses");
        let name = new["name"].as_str().unwrap_or_default().to_owned();
        let others: Vec<&str> = names.iter().copied().filter(|n| *n != name).collect();
        let checked_in = match current {
            Some(Ok(text)) => Some(Ok(text)),
            Some(Err(problem)) => Some(Err(problem)),
            // A listed tool with no snapshot: new, unless the index lists it (then its file went missing).
            None if server.as_ref().is_ok_and(|s| s.as_ref().is_some_and(|s| s.tools.contains_key(&name))) => {
                Some(Err(format!("{shown}/{file} is missing but {shown}/{SERVER_FILE} lists tool `{name}`")))
            }
            None => None,
        };
        let ctx = Context { shown: &shown, contracts, others: &others, first: matches!(server, Ok(None)) };
        tools.push(review_tool(&ctx, file, &new, contents, checked_in));
    }
    // Checked-in snapshots of tools the server no longer lists.
    let mut removed_files = BTreeSet::new();
    match json_files(&tools_dir) {
        Ok(found) => {
            for file in found.into_iter().filter(|f| !expected.contains_key(f) && f != MANIFEST) {
                files.push((file.clone(), FileState::Orphan));
                if let Some(stem) = file.strip_suffix(TOOL_SUFFIX) {
                    let text = std::fs::read_to_string(tools_dir.join(&file)).unwrap_or_default();
                    let name = serde_json::from_str::<Value>(&text)
                        .ok()
                        .and_then(|v| v["name"].as_str().map(str::to_owned))
                        .unwrap_or_else(|| stem.to_owned());
                    removed_files.insert(file.clone());
                    tools.push(removed_tool(&shown, &file, &name, &text));
                }
            }
        }
        Err(err) => files.push((String::new(), FileState::Unreadable(format!("{shown}: {err}")))),
    }
    if let Ok(Some(server)) = &server {
        for (name, file) in &server.tools {
            if !expected.contains_key(file) && !removed_files.contains(file) {
                tools.push(removed_tool(&shown, file, name, ""));
            }
        }
    }
    let package = package_review(&server, listing, &tools);
    let manifest = manifest_review(&tools_dir, &shown, listing);
    let mut review = ToolsReview { shown, expected, files, tools, package, manifest };
    if let Err(problem) = server {
        review.files.push((SERVER_FILE.to_owned(), FileState::Unreadable(problem)));
    }
    Ok(review)
}

/// The checked-in `server.json`: the package version and every tool with its file.
struct Server {
    version: Version,
    tools: BTreeMap<String, String>,
}

fn read_server(tools_dir: &Path, shown: &str) -> Result<Option<Server>, String> {
    let shown_file = format!("{shown}/{SERVER_FILE}");
    let text = match std::fs::read_to_string(tools_dir.join(SERVER_FILE)) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(format!("{shown_file}: {err}")),
    };
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{shown_file}: line {} column {}: not valid JSON ({})",
            e.line(),
            e.column(),
            crate::snapshot::strip_position(&e.to_string())
        )
    })?;
    let bad = |pointer: &str, what: &str| {
        let line = line_of(&text, pointer).map_or_else(String::new, |l| format!(" (near line {l})"));
        format!("{shown_file}: at {pointer}{line}: {what}")
    };
    let version = value["version"]
        .as_str()
        .and_then(|v| Version::parse(v).ok())
        .ok_or_else(|| bad("/version", "expected a semver version such as \"1.2.0\""))?;
    let list = value["tools"].as_array().ok_or_else(|| bad("/tools", "expected a list of tools"))?;
    let mut tools = BTreeMap::new();
    for (i, entry) in list.iter().enumerate() {
        let (Some(name), Some(file)) = (entry["name"].as_str(), entry["file"].as_str()) else {
            return Err(bad(&format!("/tools/{i}"), "expected `name` and `file`"));
        };
        tools.insert(name.to_owned(), file.to_owned());
    }
    Ok(Some(Server { version, tools }))
}

fn json_files(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(names),
        Err(err) => return Err(err),
    };
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "json") {
            if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
                names.push(name.to_owned());
            }
        }
    }
    names.sort();
    Ok(names)
}

fn removed_tool(shown: &str, file: &str, name: &str, old_text: &str) -> ToolReview {
    let mut change = ToolChange::new(
        ToolArea::Tool,
        "tool_removed",
        ToolVerdict::Breaking,
        String::new(),
        format!("- tool {name} (the server no longer lists it: its clients lose the tool)"),
        true,
    );
    if !old_text.is_empty() {
        change.location = Some(Location::new(Side::Old, String::new(), 1));
    }
    ToolReview {
        name: name.to_owned(),
        file: file.to_owned(),
        shown_file: format!("{shown}/{file}"),
        status: Status::Removed,
        changes: vec![change],
        cover: Cover::Package,
        policy: Policy::Ok,
        problem: None,
    }
}

fn contract_of(snapshot: &Value) -> Option<(String, Version)> {
    let name = snapshot["contract"]["name"].as_str()?;
    let version = Version::parse(snapshot["contract"]["version"].as_str()?).ok()?;
    Some((name.to_owned(), version))
}

/// What one tool's review needs besides its files.
struct Context<'a> {
    shown: &'a str,
    contracts: &'a ContractSet,
    /// The other listed tools' names.
    others: &'a [&'a str],
    /// Whether nothing was checked in before (the first snapshot).
    first: bool,
}

fn review_tool(
    ctx: &Context<'_>,
    file: &str,
    new: &Value,
    new_text: &str,
    checked_in: Option<Result<String, String>>,
) -> ToolReview {
    let name = new["name"].as_str().unwrap_or_default().to_owned();
    let mut review = ToolReview {
        shown_file: format!("{}/{file}", ctx.shown),
        file: file.to_owned(),
        status: Status::New,
        changes: Vec::new(),
        cover: Cover::Package,
        policy: Policy::Ok,
        problem: None,
        name,
    };
    let old_text = match checked_in {
        // The first snapshot of the list: nothing was listed before it to compare with.
        None if ctx.first => return review,
        None => {
            review.changes.push(ToolChange::new(
                ToolArea::Tool,
                "tool_added",
                ToolVerdict::Additive,
                String::new(),
                format!("+ tool {} (new in the listing)", review.name),
                false,
            ));
            return review;
        }
        Some(Err(problem)) => {
            review.status = Status::Unreadable;
            review.problem = Some(problem);
            return review;
        }
        Some(Ok(text)) => text,
    };
    if old_text == new_text {
        review.status = Status::Unchanged;
    }
    let old: Value = match serde_json::from_str(&old_text) {
        Ok(old) => old,
        Err(err) => {
            review.status = Status::Unreadable;
            review.problem = Some(format!(
                "{}: line {} column {}: not valid JSON ({})",
                review.shown_file,
                err.line(),
                err.column(),
                crate::snapshot::strip_position(&err.to_string())
            ));
            return review;
        }
    };
    if let (Some((old_name, old_version)), Some(contract)) = (contract_of(&old), ctx.contracts.get(&review.name)) {
        if old_name == contract.name() {
            review.cover = Cover::Contract {
                name: old_name,
                type_name: contract.type_name().to_owned(),
                old: old_version,
                new: contract.version().clone(),
            };
        }
    }
    if old_text != new_text {
        review.changes = classify(&old, new);
        review.status = Status::Changed;
        for change in &mut review.changes {
            let (side, text) = if change.removed { (Side::Old, old_text.as_str()) } else { (Side::New, new_text) };
            if let Some(line) = line_of(text, &change.pointer) {
                change.location = Some(Location::new(side, change.pointer.clone(), line));
            }
            if let Some(t) = &mut change.text {
                t.signals = instruction_signals(t.old.as_deref(), t.new.as_deref(), ctx.others);
            }
        }
    }
    if let Cover::Contract { old, new, .. } = &review.cover {
        let required = review.changes.iter().map(|c| c.verdict.bump()).max().unwrap_or(Bump::None);
        review.policy = policy(old, new, required);
    }
    review
}

fn policy(old: &Version, new: &Version, required: Bump) -> Policy {
    if evolution::decreased(old, new) {
        Policy::Decreased
    } else if evolution::satisfies(old, new, required) {
        Policy::Ok
    } else {
        Policy::TooSmall { required, needs: evolution::minimum_version(old, required) }
    }
}

/// Every change from the `old` snapshot to the `new` one, with pointers into the file.
fn classify(old: &Value, new: &Value) -> Vec<ToolChange> {
    let mut out = Vec::new();
    for key in ["title", "description"] {
        let (a, b) = (old[key].as_str(), new[key].as_str());
        if a != b {
            out.push(ToolChange::text(&format!("/{key}"), key, a, b));
        }
    }
    let empty = Value::Object(Map::new());
    let (a, b) = (old.get("inputSchema").unwrap_or(&empty), new.get("inputSchema").unwrap_or(&empty));
    if a != b {
        out.extend(evolution::diff_in(Direction::Request, a, b).iter().map(input_change));
    }
    out.extend(classify_annotations(old["annotations"].as_object(), new["annotations"].as_object()));
    let (a, b) = (&old["contract"], &new["contract"]);
    if a != b {
        out.push(contract_change(a, b));
    }
    let known = ["name", "title", "description", "inputSchema", "annotations", "contract"];
    let unknown = |v: &Value| -> Vec<(String, Value)> {
        v.as_object()
            .map(|m| {
                m.iter().filter(|(k, _)| !known.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect()
            })
            .unwrap_or_default()
    };
    if unknown(old) != unknown(new) || old["name"] != new["name"] {
        out.push(ToolChange::new(
            ToolArea::Tool,
            "unclassified",
            ToolVerdict::Breaking,
            String::new(),
            "~ (root) (fields this review does not know changed, so assumed unsafe)".to_owned(),
            false,
        ));
    }
    out
}

fn input_change(change: &Change) -> ToolChange {
    let in_file = |p: &str| format!("/inputSchema{p}");
    let (removed, pointer) = match change.file_pointer() {
        Some((side, p)) => (side == Side::Old, in_file(p)),
        None => (change.op() == Op::Removed, in_file(change.pointer())),
    };
    let text_keyword = change.pointer().ends_with("/description") || change.pointer().ends_with("/title");
    let is_text = |v: Option<&Value>| v.is_none_or(Value::is_string);
    if change.kind() == ChangeKind::AnnotationChanged
        && text_keyword
        && is_text(change.old_value())
        && is_text(change.new_value())
    {
        let keyword = if change.pointer().ends_with("/title") { "title" } else { "description" };
        let at = change.pointer().rsplit_once('/').map_or("", |(at, _)| at);
        let field = match at.strip_prefix("/properties/") {
            Some(arg) if !arg.contains('/') => {
                format!("{keyword} of argument `{}`", contract_runtime::pointer::unescape(arg))
            }
            _ if at.is_empty() => format!("{keyword} of the input schema"),
            _ => format!("{keyword} at /inputSchema{at}"),
        };
        let mut text = ToolChange::text(
            &pointer,
            &field,
            change.old_value().and_then(Value::as_str),
            change.new_value().and_then(Value::as_str),
        );
        text.removed = removed;
        return text;
    }
    let shown = change.to_string();
    let line = match shown.split_once(' ') {
        Some((sign, rest)) => {
            format!("{sign} {}", rest.replacen('/', "/inputSchema/", 1).replacen("(root)", "/inputSchema", 1))
        }
        None => shown,
    };
    ToolChange::new(ToolArea::Input, change.kind().as_str(), ToolVerdict::of(change.verdict()), pointer, line, removed)
}

fn contract_change(old: &Value, new: &Value) -> ToolChange {
    let name = |v: &Value| v["name"].as_str().map(str::to_owned);
    let shown = |v: &Value| match (v["name"].as_str(), v["version"].as_str()) {
        (Some(n), Some(ver)) => format!("{n} {ver}"),
        _ => "uncontracted".to_owned(),
    };
    let (kind, verdict, why) = match (name(old), name(new)) {
        (Some(a), Some(b)) if a == b => {
            ("contract_identity_changed", ToolVerdict::Cosmetic, "its output changes are reviewed in its schema")
        }
        (None, Some(_)) => ("contract_bound", ToolVerdict::Additive, "the tool gains an enforced output contract"),
        (Some(_), None) => {
            ("contract_unbound", ToolVerdict::Breaking, "clients lose the output contract they relied on")
        }
        _ => ("contract_rebound", ToolVerdict::Breaking, "the tool now answers under another contract"),
    };
    let line = format!("~ /contract ({} → {}, {why})", shown(old), shown(new));
    ToolChange::new(ToolArea::Contract, kind, verdict, "/contract".to_owned(), line, false)
}

fn package_review(
    server: &Result<Option<Server>, String>,
    listing: &ToolListing,
    tools: &[ToolReview],
) -> PackageReview {
    let old = server.as_ref().ok().and_then(|s| s.as_ref().map(|s| s.version.clone()));
    let new = listing.version.clone();
    // Without a checked-in server.json everything is new: nothing to cover yet.
    let required = if old.is_some() {
        tools
            .iter()
            .filter(|t| !t.covered_by_contract())
            .flat_map(|t| &t.changes)
            .map(|c| c.verdict.bump())
            .max()
            .unwrap_or(Bump::None)
    } else {
        Bump::None
    };
    let policy = old.as_ref().map_or(Policy::Ok, |old| policy(old, &new, required));
    PackageReview { old, new, required, policy }
}

fn manifest_review(tools_dir: &Path, shown: &str, listing: &ToolListing) -> Option<ManifestReview> {
    let path = tools_dir.join(MANIFEST);
    let shown_file = format!("{shown}/{MANIFEST}");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => normalize(text),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return None,
        Err(err) => {
            return Some(ManifestReview {
                expected: String::new(),
                up_to_date: false,
                lines: Vec::new(),
                problem: Some(format!("{shown_file}: {err}")),
            })
        }
    };
    let mut entries = Map::new();
    for tool in &listing.tools {
        if let Some(name) = tool["name"].as_str() {
            entries.insert(name.to_owned(), manifest_entry(tool["annotations"].as_object()));
        }
    }
    let expected = canonical_string(&serde_json::json!({ "tools": entries }));
    let mut review = ManifestReview { up_to_date: text == expected, expected, lines: Vec::new(), problem: None };
    if review.up_to_date {
        return Some(review);
    }
    let old: Value = match serde_json::from_str(&text) {
        Ok(old) => old,
        Err(err) => {
            review.problem = Some(format!("{shown_file}: line {} column {}: not valid JSON", err.line(), err.column()));
            return Some(review);
        }
    };
    // `{}` is how a project opts in: the first `cargo xtask schemas` fills it.
    let none = Map::new();
    let opted_in = old.as_object().is_some_and(Map::is_empty).then_some(&none);
    let Some(old_tools) = old["tools"].as_object().or(opted_in) else {
        review.problem = Some(format!("{shown_file}: at /tools: expected an object of tool name → hints"));
        return Some(review);
    };
    for (name, hints) in &entries {
        match old_tools.get(name) {
            None => review.lines.push(format!("{shown_file}: tool {name} is listed but not in the manifest")),
            Some(before) => {
                for change in classify_annotations(before.as_object(), hints.as_object()) {
                    let pointer = format!(
                        "/tools/{}{}",
                        contract_runtime::pointer::escape(name),
                        &change.pointer["/annotations".len()..]
                    );
                    let line = line_of(&text, &pointer).map_or_else(String::new, |l| format!("; line {l}"));
                    let verdict = match change.verdict {
                        ToolVerdict::Breaking => "BREAKING",
                        v => v.as_str(),
                    };
                    review.lines.push(format!("{shown_file}: tool {name}: {}: {verdict}{line}", change.line));
                }
            }
        }
    }
    for name in old_tools.keys().filter(|n| !entries.contains_key(*n)) {
        review.lines.push(format!("{shown_file}: tool {name} is in the manifest but the server no longer lists it"));
    }
    Some(review)
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

    fn fixes(&self) -> Vec<String> {
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
    pub fn write(&self, dir: &Path) -> Result<crate::snapshot::WriteSummary, SnapshotError> {
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
        let mut summary = crate::snapshot::WriteSummary::default();
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
        for name in json_files(&dir).map_err(|e| io(&dir, e))? {
            if !self.expected.contains_key(&name) && name != MANIFEST {
                let path = dir.join(&name);
                std::fs::remove_file(&path).map_err(|e| io(&path, e))?;
                summary.removed.push(format!("{TOOLS_DIR}/{name}"));
            }
        }
        Ok(summary)
    }

    /// The machine-readable part of the review for the tools.
    #[must_use]
    pub fn report(&self) -> ToolsReport {
        let package = &self.package;
        let tools = self.tools.iter().map(|t| self.tool_report(t)).collect();
        let files = self
            .files
            .iter()
            .map(|(file, state)| crate::report::FileReport {
                file: format!("{TOOLS_DIR}/{file}"),
                status: match state {
                    FileState::UpToDate => crate::report::FileStatus::UpToDate,
                    FileState::Stale(_) => crate::report::FileStatus::Stale,
                    FileState::Missing => crate::report::FileStatus::Missing,
                    FileState::Orphan => crate::report::FileStatus::Orphan,
                    FileState::Unreadable(_) => crate::report::FileStatus::Unreadable,
                },
                diff: match state {
                    FileState::Stale(diff) => Some(diff.clone()),
                    _ => None,
                },
                problem: match state {
                    FileState::Unreadable(p) => Some(p.clone()),
                    _ => None,
                },
            })
            .collect();
        ToolsReport {
            up_to_date: self.is_up_to_date(),
            policy_ok: self.policy_ok(),
            package: PackageReport {
                old_version: package.old.as_ref().map(ToString::to_string),
                new_version: package.new.to_string(),
                required_bump: package.required.as_str().to_owned(),
                policy: policy_status(&package.policy),
                needs: match &package.policy {
                    Policy::TooSmall { needs, .. } => Some(needs.to_string()),
                    _ => None,
                },
            },
            tools,
            files,
            manifest: self.manifest.as_ref().map(|m| ManifestReport {
                file: format!("{TOOLS_DIR}/{MANIFEST}"),
                up_to_date: m.up_to_date,
                lines: m.lines.clone(),
                problem: m.problem.clone(),
            }),
            fixes: self.fixes(),
        }
    }

    fn tool_report(&self, tool: &ToolReview) -> ToolReport {
        let changes = tool
            .changes
            .iter()
            .map(|c| {
                let (needs, ok) = tool.needs(c, &self.package);
                ToolChangeReport {
                    area: c.area.as_str().to_owned(),
                    kind: c.kind.clone(),
                    verdict: c.verdict.as_str().to_owned(),
                    bump: c.verdict.bump().as_str().to_owned(),
                    pointer: c.pointer.clone(),
                    line: c.line.clone(),
                    needs: needs.map(|v| v.to_string()),
                    ok,
                    location: c.location.as_ref().map(|l| LocationReport {
                        side: if l.side() == Side::Old { FileSide::Old } else { FileSide::New },
                        pointer: l.pointer().to_owned(),
                        line: l.line() as u64,
                    }),
                    text: c.text.as_ref().map(|t| TextReport {
                        field: t.field.clone(),
                        old: t.old.clone(),
                        new: t.new.clone(),
                        word_diff: t.diff.clone(),
                        signals: t.signals.clone(),
                    }),
                }
            })
            .collect();
        let (covered_by, old_version, new_version) = match &tool.cover {
            Cover::Contract { name, old, new, .. } => {
                (format!("contract {name}"), Some(old.to_string()), Some(new.to_string()))
            }
            Cover::Package => (
                "server".to_owned(),
                self.package.old.as_ref().map(ToString::to_string),
                Some(self.package.new.to_string()),
            ),
        };
        ToolReport {
            name: tool.name.clone(),
            file: format!("{TOOLS_DIR}/{}", tool.file),
            status: tool.status.as_str().to_owned(),
            covered_by,
            old_version,
            new_version,
            policy: if tool.problem.is_some() { PolicyStatus::Unreadable } else { policy_status(&tool.policy) },
            ok: tool.is_ok(),
            changes,
            lines: tool.lines(&self.package),
            problem: tool.problem.clone(),
        }
    }
}

fn policy_status(policy: &Policy) -> PolicyStatus {
    match policy {
        Policy::Ok => PolicyStatus::Ok,
        Policy::TooSmall { .. } => PolicyStatus::TooSmall,
        Policy::Decreased => PolicyStatus::Decreased,
    }
}
