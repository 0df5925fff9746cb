//! The drift between a pinned tool and the one a server lists now, classified.

use std::fmt;

use serde_json::Value;

use super::digest::{digests, pinned_definition, Digests};
use super::file::{LockedServer, LockedTool};
use crate::contract::evolution::tool::{classify_tool, ToolChange, ToolVerdict};

/// Whether a tool is as pinned, changed, new or gone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DriftStatus {
    /// Listed with other digests.
    Changed,
    /// Listed, and not in the lock.
    Added,
    /// In the lock, and no longer listed.
    Removed,
}

impl DriftStatus {
    /// `changed`, `added` or `removed`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            DriftStatus::Changed => "changed",
            DriftStatus::Added => "added",
            DriftStatus::Removed => "removed",
        }
    }
}

/// How one tool differs from its pin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolDrift {
    name: String,
    status: DriftStatus,
    changes: Vec<ToolChange>,
    old: Option<Digests>,
    new: Option<Digests>,
}

impl ToolDrift {
    /// The tool's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Changed, added or removed.
    #[must_use]
    pub fn status(&self) -> DriftStatus {
        self.status
    }

    /// Every classified change; for an added or removed tool, the one change that says so.
    #[must_use]
    pub fn changes(&self) -> &[ToolChange] {
        &self.changes
    }

    /// The pinned digests (`None`: an added tool).
    #[must_use]
    pub fn old_digests(&self) -> Option<&Digests> {
        self.old.as_ref()
    }

    /// The live digests (`None`: a removed tool).
    #[must_use]
    pub fn new_digests(&self) -> Option<&Digests> {
        self.new.as_ref()
    }

    /// The most harmful verdict among the changes; cosmetic when there is none.
    #[must_use]
    pub fn worst(&self) -> ToolVerdict {
        self.changes.iter().map(ToolChange::verdict).max().unwrap_or(ToolVerdict::Cosmetic)
    }

    /// Whether any change is text a model reads.
    #[must_use]
    pub fn has_text(&self) -> bool {
        self.changes.iter().any(|c| c.verdict() == ToolVerdict::Text)
    }
}

impl fmt::Display for ToolDrift {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digest = |d: Option<&Digests>, pick: fn(&Digests) -> &str| d.map_or("-", pick).to_owned();
        write!(
            f,
            "tool `{}` {} (text {} → {}, shape {} → {})",
            self.name,
            self.status.as_str(),
            short(&digest(self.old.as_ref(), |d| &d.text)),
            short(&digest(self.new.as_ref(), |d| &d.text)),
            short(&digest(self.old.as_ref(), |d| &d.shape)),
            short(&digest(self.new.as_ref(), |d| &d.shape)),
        )?;
        for change in &self.changes {
            write!(f, "\n  {change}")?;
        }
        Ok(())
    }
}

/// `sha256:` and the first 12 hex digits: enough to tell two digests apart in a line.
fn short(digest: &str) -> String {
    match digest.strip_prefix("sha256:") {
        Some(hex) if hex.len() > 12 => format!("sha256:{}", &hex[..12]),
        _ => digest.to_owned(),
    }
}

/// How the live tool list differs from the pinned server: a [`ToolDrift`] for every tool
/// that changed, was added or was removed, sorted by name. Empty when every tool is as
/// pinned. A renamed tool is one removal and one addition.
#[must_use]
pub fn drift_of_server(pinned: &LockedServer, live: &[Value]) -> Vec<ToolDrift> {
    let names: Vec<&str> = live.iter().filter_map(|t| t["name"].as_str()).collect();
    let mut out = Vec::new();
    for tool in live {
        let name = tool["name"].as_str().unwrap_or_default();
        let others: Vec<&str> = names.iter().copied().filter(|n| *n != name).collect();
        if let Some(locked) = pinned.tool(name) {
            if let Some(drift) = drift_with(locked, tool, &others) {
                out.push(drift);
            }
        } else {
            let definition = pinned_definition(tool);
            out.push(ToolDrift {
                name: name.to_owned(),
                status: DriftStatus::Added,
                changes: vec![ToolChange::whole_tool(
                    true,
                    format!("+ tool {name} (not in the lock)"),
                    "tool added: not in the lock, so never approved".to_owned(),
                )],
                old: None,
                new: Some(digests(&definition)),
            });
        }
    }
    for locked in &pinned.tools {
        if !names.contains(&locked.name.as_str()) {
            out.push(ToolDrift {
                name: locked.name.clone(),
                status: DriftStatus::Removed,
                changes: vec![ToolChange::whole_tool(
                    false,
                    format!("- tool {} (no longer listed)", locked.name),
                    "tool removed: callers of it fail".to_owned(),
                )],
                old: Some(locked.digests.clone()),
                new: None,
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name).then(a.status.cmp(&b.status)));
    out
}

/// How one live tool differs from its pin; `None` when both digests are as pinned.
/// `others` are the other tools' names, for the instruction signals of a new text.
#[must_use]
pub fn drift_of_tool(pinned: &LockedTool, live: &Value, others: &[&str]) -> Option<ToolDrift> {
    drift_with(pinned, live, others)
}

fn drift_with(pinned: &LockedTool, live: &Value, others: &[&str]) -> Option<ToolDrift> {
    let definition = pinned_definition(live);
    let now = digests(&definition);
    if now == pinned.digests {
        return None;
    }
    Some(ToolDrift {
        name: pinned.name.clone(),
        status: DriftStatus::Changed,
        changes: classify_tool(&Value::Object(pinned.definition.clone()), &definition, others),
        old: Some(pinned.digests.clone()),
        new: Some(now),
    })
}
