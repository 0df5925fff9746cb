//! How the review is made: reading `schemas/tools/`, classifying each tool's changes,
//! the version that covers them, the manifest.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use semver::Version;
use serde_json::{Map, Value};

use contract_runtime::schema::canonical_string;
use contract_runtime::ContractSet;

use super::annotations::{manifest_entry, MANIFEST};
use super::review::{Cover, FileState, ManifestReview, PackageReview, ToolReview, ToolsReview};
use super::{render, ToolListing, SERVER_FILE, TOOLS_DIR, TOOL_SUFFIX};
use crate::evolution::tool::{classify_annotations, classify_tool, ToolChange, ToolVerdict};
use crate::evolution::{self, Bump, Policy, Side};
use crate::schemas::{display_dir, json_files, line_of, normalize, unified_diff, Location, SnapshotError, Status};

/// Generated files larger than this (either side) get no unified diff in `--check`: the
/// classified changes say what changed, each text as a bounded word diff.
const MAX_UNIFIED_DIFF_INPUT: usize = 128 * 1024;

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
            crate::schemas::strip_position(&e.to_string())
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

fn removed_tool(shown: &str, file: &str, name: &str, old_text: &str) -> ToolReview {
    let change = ToolChange::whole_tool(
        false,
        format!("- tool {name} (the server no longer lists it: its clients lose the tool)"),
        "tool removed: its clients lose the tool".to_owned(),
    );
    let location = (!old_text.is_empty()).then(|| Location::new(Side::Old, String::new(), 1));
    ToolReview {
        name: name.to_owned(),
        file: file.to_owned(),
        shown_file: format!("{shown}/{file}"),
        status: Status::Removed,
        changes: vec![change],
        locations: vec![location],
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
        locations: Vec::new(),
        cover: Cover::Package,
        policy: Policy::Ok,
        problem: None,
        name,
    };
    let old_text = match checked_in {
        // The first snapshot of the list: nothing was listed before it to compare with.
        None if ctx.first => return review,
        None => {
            review.changes.push(ToolChange::whole_tool(
                true,
                format!("+ tool {} (new in the listing)", review.name),
                "tool added: new in the listing".to_owned(),
            ));
            review.locations.push(None);
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
                crate::schemas::strip_position(&err.to_string())
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
        review.changes = classify_tool(&old, new, ctx.others);
        review.status = Status::Changed;
        review.locations = review
            .changes
            .iter()
            .map(|change| {
                let (side, pointer) = change.written();
                let text = if side == Side::Old { old_text.as_str() } else { new_text };
                line_of(text, pointer).map(|line| Location::new(side, pointer.to_owned(), line))
            })
            .collect();
    }
    if let Cover::Contract { old, new, .. } = &review.cover {
        let required = review.changes.iter().map(|c| c.verdict().bump()).max().unwrap_or(Bump::None);
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
            .map(|c| c.verdict().bump())
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
                        &change.pointer()["/annotations".len()..]
                    );
                    let line = line_of(&text, &pointer).map_or_else(String::new, |l| format!("; line {l}"));
                    let verdict = match change.verdict() {
                        ToolVerdict::Breaking => "BREAKING",
                        v => v.as_str(),
                    };
                    review.lines.push(format!("{shown_file}: tool {name}: {}: {verdict}{line}", change.line()));
                }
            }
        }
    }
    for name in old_tools.keys().filter(|n| !entries.contains_key(*n)) {
        review.lines.push(format!("{shown_file}: tool {name} is in the manifest but the server no longer lists it"));
    }
    Some(review)
}
