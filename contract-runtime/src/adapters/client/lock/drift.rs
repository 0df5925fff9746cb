//! The drift between a pinned tool and the one a server lists now, classified.

use std::fmt;

use serde_json::{Map, Value};

use super::digest::{digests, pinned_definition, Digests};
use super::file::{LockedServer, LockedTool};
use crate::contract::evolution::hints::{hint_changes, HINTS};
use crate::contract::evolution::text::instruction_signals;
use crate::contract::evolution::{self, ChangeKind, Direction, Verdict};

/// Which part of a tool a change is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DriftArea {
    /// A name, title or description a model reads.
    Text,
    /// The `inputSchema`, classified for requests.
    Input,
    /// The `outputSchema`, classified for responses.
    Output,
    /// The behaviour hints of `annotations`.
    Annotation,
    /// The contract identity the tool is served under.
    Contract,
    /// The tool itself: added or removed.
    Tool,
}

impl DriftArea {
    /// `text`, `input`, `output`, `annotation`, `contract` or `tool`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            DriftArea::Text => "text",
            DriftArea::Input => "input",
            DriftArea::Output => "output",
            DriftArea::Annotation => "annotation",
            DriftArea::Contract => "contract",
            DriftArea::Tool => "tool",
        }
    }
}

/// What a change means for a caller that approved the pinned tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DriftVerdict {
    /// The bytes changed, no value's meaning.
    Cosmetic,
    /// Safe for a caller built against the pinned tool.
    Additive,
    /// An output property the pinned tool declared is gone: every result still passes the
    /// pinned schema (the property was optional), but a client that read it finds nothing
    /// there, as when an SDK strips undeclared keys from `structuredContent`.
    Lost,
    /// Text a model reads changed: it must be read again before the model sees it.
    Text,
    /// Breaks a caller built against the pinned tool, or asks for less caution than it
    /// was approved with.
    Breaking,
}

impl DriftVerdict {
    /// `cosmetic`, `additive`, `lost`, `text` or `breaking`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            DriftVerdict::Cosmetic => "cosmetic",
            DriftVerdict::Additive => "additive",
            DriftVerdict::Lost => "lost",
            DriftVerdict::Text => "text",
            DriftVerdict::Breaking => "breaking",
        }
    }

    fn of(verdict: Verdict) -> Self {
        match verdict {
            Verdict::Cosmetic => DriftVerdict::Cosmetic,
            Verdict::Additive => DriftVerdict::Additive,
            Verdict::Breaking => DriftVerdict::Breaking,
        }
    }
}

impl fmt::Display for DriftVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One classified difference of a tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriftChange {
    area: DriftArea,
    kind: String,
    verdict: DriftVerdict,
    pointer: String,
    detail: String,
    old_text: Option<String>,
    new_text: Option<String>,
    signals: Vec<String>,
}

impl DriftChange {
    fn new(area: DriftArea, kind: &str, verdict: DriftVerdict, pointer: String, detail: String) -> Self {
        Self {
            area,
            kind: kind.to_owned(),
            verdict,
            pointer,
            detail,
            old_text: None,
            new_text: None,
            signals: Vec::new(),
        }
    }

    fn text(pointer: String, field: &str, old: Option<&str>, new: Option<&str>, others: &[&str]) -> Self {
        let mut change =
            Self::new(DriftArea::Text, "text_changed", DriftVerdict::Text, pointer, format!("{field} changed"));
        change.old_text = old.map(str::to_owned);
        change.new_text = new.map(str::to_owned);
        if let Some(new) = new {
            change.signals =
                instruction_signals(old.unwrap_or_default(), new, others).iter().map(ToString::to_string).collect();
        }
        change
    }

    /// Text, input, output, annotation, contract or tool.
    #[must_use]
    pub fn area(&self) -> DriftArea {
        self.area
    }

    /// The change kind: `text_changed`, `hint_less_safe`, `tool_removed`, or the schema
    /// change kind of `contract_runtime::evolution` (`property_added`, `enum_changed`, …).
    #[must_use]
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// What it means for a caller of the pinned tool.
    #[must_use]
    pub fn verdict(&self) -> DriftVerdict {
        self.verdict
    }

    /// JSON pointer into the tool's definition (`/inputSchema/properties/id`,
    /// `/annotations/readOnlyHint`, `/description`); empty for the whole tool.
    #[must_use]
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// What changed, in words (`required argument added: calls without it are refused`).
    #[must_use]
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// A text change's old text (`None`: absent before).
    #[must_use]
    pub fn old_text(&self) -> Option<&str> {
        self.old_text.as_deref()
    }

    /// A text change's new text (`None`: removed).
    #[must_use]
    pub fn new_text(&self) -> Option<&str> {
        self.new_text.as_deref()
    }

    /// What the new text adds that reads like instructions to the model
    /// (`imperative: ignore previous instructions`): a heuristic, shown for review.
    #[must_use]
    pub fn signals(&self) -> &[String] {
        &self.signals
    }
}

impl fmt::Display for DriftChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() { "(tool)" } else { self.pointer.as_str() };
        write!(f, "{} {} at {at}: {} ({})", self.area.as_str(), self.kind, self.detail, self.verdict)
    }
}

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
    changes: Vec<DriftChange>,
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
    pub fn changes(&self) -> &[DriftChange] {
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
    pub fn worst(&self) -> DriftVerdict {
        self.changes.iter().map(DriftChange::verdict).max().unwrap_or(DriftVerdict::Cosmetic)
    }

    /// Whether any change is text a model reads.
    #[must_use]
    pub fn has_text(&self) -> bool {
        self.changes.iter().any(|c| c.verdict == DriftVerdict::Text)
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
                changes: vec![DriftChange::new(
                    DriftArea::Tool,
                    "tool_added",
                    DriftVerdict::Additive,
                    String::new(),
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
                changes: vec![DriftChange::new(
                    DriftArea::Tool,
                    "tool_removed",
                    DriftVerdict::Breaking,
                    String::new(),
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
        changes: classify(&Value::Object(pinned.definition.clone()), &definition, others),
        old: Some(pinned.digests.clone()),
        new: Some(now),
    })
}

/// Every change from the pinned definition to the live one.
fn classify(old: &Value, new: &Value, others: &[&str]) -> Vec<DriftChange> {
    let mut out = Vec::new();
    for key in ["title", "description"] {
        let (a, b) = (old[key].as_str(), new[key].as_str());
        if a != b {
            out.push(DriftChange::text(format!("/{key}"), key, a, b, others));
        }
    }
    let empty = Value::Object(Map::new());
    let (a, b) = (old.get("inputSchema").unwrap_or(&empty), new.get("inputSchema").unwrap_or(&empty));
    if a != b {
        schema_changes(Direction::Request, "/inputSchema", a, b, others, &mut out);
    }
    match (old.get("outputSchema"), new.get("outputSchema")) {
        (Some(a), Some(b)) if a != b => schema_changes(Direction::Response, "/outputSchema", a, b, others, &mut out),
        (None, Some(_)) => out.push(DriftChange::new(
            DriftArea::Output,
            "output_schema_added",
            DriftVerdict::Additive,
            "/outputSchema".to_owned(),
            "output schema added: results can now be checked".to_owned(),
        )),
        (Some(_), None) => out.push(DriftChange::new(
            DriftArea::Output,
            "output_schema_removed",
            DriftVerdict::Breaking,
            "/outputSchema".to_owned(),
            "output schema removed: results can no longer be checked".to_owned(),
        )),
        _ => {}
    }
    annotation_changes(old.get("annotations"), new.get("annotations"), others, &mut out);
    let (a, b) = (old.get("contract"), new.get("contract"));
    if a != b {
        let name = |v: Option<&Value>| v.and_then(|c| c["name"].as_str()).map(str::to_owned);
        let (kind, verdict, detail) = match (name(a), name(b)) {
            (Some(x), Some(y)) if x == y => (
                "contract_identity_changed",
                DriftVerdict::Cosmetic,
                "contract version or hash changed: its output changes are classified above",
            ),
            (None, Some(_)) => ("contract_bound", DriftVerdict::Additive, "the tool gains an enforced output contract"),
            (Some(_), None) => {
                ("contract_unbound", DriftVerdict::Breaking, "the tool loses its enforced output contract")
            }
            _ => ("contract_rebound", DriftVerdict::Breaking, "the tool answers under another contract"),
        };
        out.push(DriftChange::new(DriftArea::Contract, kind, verdict, "/contract".to_owned(), detail.to_owned()));
    }
    out
}

fn schema_changes(
    direction: Direction,
    prefix: &str,
    old: &Value,
    new: &Value,
    others: &[&str],
    out: &mut Vec<DriftChange>,
) {
    let area = if direction == Direction::Request { DriftArea::Input } else { DriftArea::Output };
    for change in evolution::diff_in(direction, old, new) {
        let pointer = format!("{prefix}{}", change.pointer());
        let is_text_keyword = change.pointer().ends_with("/description") || change.pointer().ends_with("/title");
        let is_text = |v: Option<&Value>| v.is_none_or(Value::is_string);
        if change.kind() == ChangeKind::AnnotationChanged
            && is_text_keyword
            && is_text(change.old_value())
            && is_text(change.new_value())
        {
            let keyword = pointer.rsplit('/').next().unwrap_or("description").to_owned();
            out.push(DriftChange::text(
                pointer.clone(),
                &format!("{keyword} at {}", pointer.rsplit_once('/').map_or("", |(at, _)| at)),
                change.old_value().and_then(Value::as_str),
                change.new_value().and_then(Value::as_str),
                others,
            ));
            continue;
        }
        let verdict = DriftVerdict::of(change.verdict());
        if direction == Direction::Response
            && change.kind() == ChangeKind::OptionalPropertyRemoved
            && verdict < DriftVerdict::Lost
        {
            out.push(DriftChange::new(area, change.kind().as_str(), DriftVerdict::Lost, pointer, lost_detail(&change)));
            continue;
        }
        let detail = change.detail().to_owned();
        out.push(DriftChange::new(area, change.kind().as_str(), verdict, pointer, detail));
    }
}

/// Who loses what when an optional output property is removed: the property's name (as a
/// JSON string, escaped and cut; it is the server's text) and where it was.
fn lost_detail(change: &evolution::Change) -> String {
    let token = change.pointer().rsplit('/').next().unwrap_or_default();
    let name: String = crate::contract::pointer::unescape(token).chars().take(64).collect();
    let name = serde_json::to_string(&name).unwrap_or_default();
    let within = change.pointer().rsplit_once('/').and_then(|(p, _)| p.strip_suffix("/properties")).unwrap_or("");
    let at = if within.is_empty() { "the result".to_owned() } else { format!("the object at {within}") };
    format!(
        "output property {name} of {at} removed: a client that reads it from the tool's results loses it (results still \
         pass the pinned schema; an SDK that strips undeclared keys drops it from structuredContent)"
    )
}

fn annotation_changes(old: Option<&Value>, new: Option<&Value>, others: &[&str], out: &mut Vec<DriftChange>) {
    fn title(m: Option<&Map<String, Value>>) -> Option<&str> {
        m.and_then(|m| m.get("title")).and_then(Value::as_str)
    }
    let (a, b) = (old.and_then(Value::as_object), new.and_then(Value::as_object));
    for change in hint_changes(a, b) {
        out.push(DriftChange::new(
            DriftArea::Annotation,
            change.kind(),
            DriftVerdict::of(change.verdict()),
            format!("/annotations/{}", change.hint().key),
            change.line().trim_start_matches("~ ").to_owned(),
        ));
    }
    if title(a) != title(b) {
        out.push(DriftChange::text("/annotations/title".to_owned(), "annotations title", title(a), title(b), others));
    }
    let known = |k: &str| k == "title" || HINTS.iter().any(|h| h.key == k);
    let mut keys: Vec<&String> = a.into_iter().chain(b).flat_map(Map::keys).filter(|k| !known(k)).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        if a.and_then(|m| m.get(key.as_str())) != b.and_then(|m| m.get(key.as_str())) {
            out.push(DriftChange::new(
                DriftArea::Annotation,
                "annotation_unclassified",
                DriftVerdict::Breaking,
                format!("/annotations/{}", crate::contract::pointer::escape(key)),
                "an annotation this check does not know changed, so assumed unsafe".to_owned(),
            ));
        }
    }
}
