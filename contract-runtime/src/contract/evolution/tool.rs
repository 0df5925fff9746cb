//! What changed in a tool's definition, and how bad it is: the one grader of a tool's
//! change. The review of `schemas/tools/` (`cargo xtask schemas --check`), the tools lock
//! (`contract-audit --locked`, the client harness) and the proxy's lock policy all call
//! [`classify_tool`].
//!
//! A definition is a tool as `tools/list` gives it (`name`, `title`, `description`,
//! `inputSchema`, `outputSchema`, `annotations`), with the contract it is bound to under
//! `contract` (`{"name", "version", …}`) when there is one. The input schema is classified
//! for requests and the output schema for responses (see [`super::diff_in`]); titles and
//! descriptions a model reads are text, with the instruction-like phrases a new text adds;
//! the behaviour hints by safety; any field the grader does not know is breaking.
//!
//! ```
//! use contract_runtime::evolution::tool::{classify_tool, ToolArea, ToolVerdict};
//! use serde_json::json;
//!
//! let old = json!({"name": "lookup", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}});
//! let mut new = old.clone();
//! new["annotations"]["readOnlyHint"] = json!(false);
//! let changes = classify_tool(&old, &new, &[]);
//! assert_eq!((changes[0].area(), changes[0].verdict()), (ToolArea::Annotation, ToolVerdict::Breaking));
//! assert_eq!(changes[0].pointer(), "/annotations/readOnlyHint");
//! assert!(classify_tool(&old, &old, &[]).is_empty());
//! ```

use std::fmt;

use serde_json::{Map, Value};

use super::hints::{hint_changes, HINTS};
use super::text::instruction_signals;
use super::{diff_in, Bump, Change, ChangeKind, Direction, Op, Side, Verdict};
use crate::contract::pointer;

/// Which part of a tool a change is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ToolArea {
    /// A name, title or description a model reads.
    Text,
    /// The `inputSchema`, classified for requests.
    Input,
    /// The `outputSchema`, classified for responses.
    Output,
    /// The behaviour hints of `annotations`.
    Annotation,
    /// The output contract the tool is bound to.
    Contract,
    /// The tool itself: added or removed.
    Tool,
}

impl ToolArea {
    /// `text`, `input`, `output`, `annotation`, `contract` or `tool`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ToolArea::Text => "text",
            ToolArea::Input => "input",
            ToolArea::Output => "output",
            ToolArea::Annotation => "annotation",
            ToolArea::Contract => "contract",
            ToolArea::Tool => "tool",
        }
    }
}

/// What a change means for a client built against the old definition; ordered from
/// harmless to harmful.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ToolVerdict {
    /// The bytes changed, no value's meaning: a patch bump.
    Cosmetic,
    /// Safe for existing clients: a minor bump.
    Additive,
    /// An output property the old definition declared is gone: every result still passes
    /// the old schema (the property was optional), but a client that read it finds nothing
    /// there, as when an SDK strips undeclared keys from `structuredContent`. A major
    /// bump: that client breaks.
    Lost,
    /// Text a model reads changed: no bump, but it must be read again before the model
    /// sees it.
    Text,
    /// Breaks existing clients, or asks for less caution than the tool was approved
    /// with: a major bump.
    Breaking,
}

impl ToolVerdict {
    /// `cosmetic`, `additive`, `lost`, `text` or `breaking`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ToolVerdict::Cosmetic => "cosmetic",
            ToolVerdict::Additive => "additive",
            ToolVerdict::Lost => "lost",
            ToolVerdict::Text => "text",
            ToolVerdict::Breaking => "breaking",
        }
    }

    /// The version bump it needs: none for text.
    #[must_use]
    pub fn bump(self) -> Bump {
        match self {
            ToolVerdict::Text => Bump::None,
            ToolVerdict::Cosmetic => Bump::Patch,
            ToolVerdict::Additive => Bump::Minor,
            ToolVerdict::Lost | ToolVerdict::Breaking => Bump::Major,
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

impl fmt::Display for ToolVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A changed text: which one, both sides, and what the new one adds that reads like
/// instructions to the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextChange {
    field: String,
    old: Option<String>,
    new: Option<String>,
    signals: Vec<String>,
}

impl TextChange {
    /// Which text: `description`, `annotations.title`, `description of argument `id``,
    /// `title at /outputSchema/properties/rows`.
    #[must_use]
    pub fn field(&self) -> &str {
        &self.field
    }

    /// The old text (`None`: absent before).
    #[must_use]
    pub fn old(&self) -> Option<&str> {
        self.old.as_deref()
    }

    /// The new text (`None`: removed).
    #[must_use]
    pub fn new_text(&self) -> Option<&str> {
        self.new.as_deref()
    }

    /// What the new text adds that reads like instructions to the model
    /// (`imperative: ignore previous instructions`): a heuristic, shown for review.
    #[must_use]
    pub fn signals(&self) -> &[String] {
        &self.signals
    }
}

/// One classified change of a tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolChange {
    area: ToolArea,
    kind: String,
    verdict: ToolVerdict,
    pointer: String,
    written: (Side, String),
    line: String,
    detail: String,
    text: Option<TextChange>,
}

impl ToolChange {
    fn new(area: ToolArea, kind: &str, verdict: ToolVerdict, pointer: String, line: String, detail: String) -> Self {
        Self {
            area,
            kind: kind.to_owned(),
            verdict,
            written: (Side::New, pointer.clone()),
            pointer,
            line,
            detail,
            text: None,
        }
    }

    fn removed(mut self) -> Self {
        self.written.0 = Side::Old;
        self
    }

    fn text(
        pointer: String,
        written: (Side, String),
        field: String,
        texts: [Option<&str>; 2],
        others: &[&str],
    ) -> Self {
        let [old, new] = texts;
        let line = format!("~ {} (text: {field})", written.1);
        let detail = format!("{field} changed");
        let mut change = Self::new(ToolArea::Text, "text_changed", ToolVerdict::Text, pointer, line, detail);
        change.written = written;
        let signals = new.map_or_else(Vec::new, |new| {
            instruction_signals(old.unwrap_or_default(), new, others).iter().map(ToString::to_string).collect()
        });
        change.text = Some(TextChange { field, old: old.map(str::to_owned), new: new.map(str::to_owned), signals });
        change
    }

    /// The change of a whole tool: added (additive) or removed (breaking: its clients
    /// lose it), with the caller's words for it (`line` as a review line, `detail` in
    /// prose).
    #[must_use]
    pub fn whole_tool(added: bool, line: String, detail: String) -> Self {
        if added {
            Self::new(ToolArea::Tool, "tool_added", ToolVerdict::Additive, String::new(), line, detail)
        } else {
            Self::new(ToolArea::Tool, "tool_removed", ToolVerdict::Breaking, String::new(), line, detail).removed()
        }
    }

    /// Text, input, output, annotation, contract or tool.
    #[must_use]
    pub fn area(&self) -> ToolArea {
        self.area
    }

    /// The change kind: `text_changed`, `hint_less_safe`, `tool_removed`,
    /// `annotation_unclassified`, `contract_rebound`, or a schema change kind
    /// (`property_added`, `required_property_added`, `enum_changed`, …).
    #[must_use]
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// What it means for clients of the old definition.
    #[must_use]
    pub fn verdict(&self) -> ToolVerdict {
        self.verdict
    }

    /// JSON pointer into the definition (`/inputSchema/properties/id`,
    /// `/annotations/readOnlyHint`, `/description`); empty for the whole tool.
    #[must_use]
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// Where the changed node is written: in the old definition (a removal) or the new
    /// one, by a JSON pointer into the document as it is (through `$defs`).
    #[must_use]
    pub fn written(&self) -> (Side, &str) {
        (self.written.0, &self.written.1)
    }

    /// The review line: `+ required /inputSchema/properties/id (…)`,
    /// `~ /annotations/readOnlyHint (true → false, …)`, `~ /description (text: description)`.
    #[must_use]
    pub fn line(&self) -> &str {
        &self.line
    }

    /// What changed, in words (`required argument added: calls without it are refused`).
    #[must_use]
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// For a text change, the text on both sides.
    #[must_use]
    pub fn text_change(&self) -> Option<&TextChange> {
        self.text.as_ref()
    }

    /// A text change's old text (`None`: absent before, or not a text change).
    #[must_use]
    pub fn old_text(&self) -> Option<&str> {
        self.text.as_ref().and_then(TextChange::old)
    }

    /// A text change's new text (`None`: removed, or not a text change).
    #[must_use]
    pub fn new_text(&self) -> Option<&str> {
        self.text.as_ref().and_then(TextChange::new_text)
    }

    /// A text change's instruction signals.
    #[must_use]
    pub fn signals(&self) -> &[String] {
        self.text.as_ref().map_or(&[], TextChange::signals)
    }
}

impl fmt::Display for ToolChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() { "(tool)" } else { self.pointer.as_str() };
        write!(f, "{} {} at {at}: {} ({})", self.area.as_str(), self.kind, self.detail, self.verdict)
    }
}

/// The fields of a definition the grader knows; a change in any other is breaking.
const KNOWN: [&str; 7] = ["name", "title", "description", "inputSchema", "outputSchema", "annotations", "contract"];

/// Every change from the `old` definition of a tool to the `new` one. `others` are the
/// other listed tools' names, for the instruction signals of a new text.
#[must_use]
pub fn classify_tool(old: &Value, new: &Value, others: &[&str]) -> Vec<ToolChange> {
    let mut out = Vec::new();
    for key in ["title", "description"] {
        let (a, b) = (old[key].as_str(), new[key].as_str());
        if a != b {
            let pointer = format!("/{key}");
            let written = (if b.is_none() { Side::Old } else { Side::New }, pointer.clone());
            out.push(ToolChange::text(pointer, written, key.to_owned(), [a, b], others));
        }
    }
    let empty = Value::Object(Map::new());
    let (a, b) = (old.get("inputSchema").unwrap_or(&empty), new.get("inputSchema").unwrap_or(&empty));
    if a != b {
        schema_changes(Direction::Request, a, b, others, &mut out);
    }
    match (old.get("outputSchema"), new.get("outputSchema")) {
        (Some(a), Some(b)) if a != b => schema_changes(Direction::Response, a, b, others, &mut out),
        (None, Some(_)) => out.push(ToolChange::new(
            ToolArea::Output,
            "output_schema_added",
            ToolVerdict::Additive,
            "/outputSchema".to_owned(),
            "+ /outputSchema (output schema added: results can now be checked)".to_owned(),
            "output schema added: results can now be checked".to_owned(),
        )),
        (Some(_), None) => out.push(
            ToolChange::new(
                ToolArea::Output,
                "output_schema_removed",
                ToolVerdict::Breaking,
                "/outputSchema".to_owned(),
                "- /outputSchema (output schema removed: results can no longer be checked)".to_owned(),
                "output schema removed: results can no longer be checked".to_owned(),
            )
            .removed(),
        ),
        _ => {}
    }
    annotation_changes(old["annotations"].as_object(), new["annotations"].as_object(), others, &mut out);
    let (a, b) = (&old["contract"], &new["contract"]);
    if a != b {
        out.push(contract_change(a, b));
    }
    let unknown = |v: &Value| -> Vec<(String, Value)> {
        v.as_object()
            .map(|m| {
                m.iter().filter(|(k, _)| !KNOWN.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect()
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
            "fields this check does not know changed, so assumed unsafe".to_owned(),
        ));
    }
    out
}

/// Every change from `old` annotations to `new` (`None` when absent): each hint by
/// safety, `title` as text, any other key as unclassified (breaking).
#[must_use]
pub fn classify_annotations(old: Option<&Map<String, Value>>, new: Option<&Map<String, Value>>) -> Vec<ToolChange> {
    let mut out = Vec::new();
    annotation_changes(old, new, &[], &mut out);
    out
}

fn annotation_changes(
    old: Option<&Map<String, Value>>,
    new: Option<&Map<String, Value>>,
    others: &[&str],
    out: &mut Vec<ToolChange>,
) {
    let get = |m: Option<&Map<String, Value>>, k: &str| m.and_then(|m| m.get(k)).cloned();
    for change in hint_changes(old, new) {
        let line = change.line();
        let detail = line.trim_start_matches("~ ").to_owned();
        let pointer = format!("/annotations/{}", change.hint().key);
        let mut out_change = ToolChange::new(
            ToolArea::Annotation,
            change.kind(),
            ToolVerdict::of(change.verdict()),
            pointer,
            line,
            detail,
        );
        if change.new_value().is_none() {
            out_change = out_change.removed();
        }
        out.push(out_change);
    }
    let title = |m: Option<&Map<String, Value>>| get(m, "title").and_then(|v| v.as_str().map(str::to_owned));
    let (a, b) = (title(old), title(new));
    if a != b {
        let pointer = "/annotations/title".to_owned();
        let written = (if b.is_none() { Side::Old } else { Side::New }, pointer.clone());
        out.push(ToolChange::text(
            pointer,
            written,
            "annotations.title".to_owned(),
            [a.as_deref(), b.as_deref()],
            others,
        ));
    }
    let known = |k: &str| k == "title" || HINTS.iter().any(|h| h.key == k);
    let mut keys: Vec<&String> = old.into_iter().chain(new).flat_map(Map::keys).filter(|k| !known(k)).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        let (a, b) = (get(old, key), get(new, key));
        if a != b {
            let pointer = format!("/annotations/{}", pointer::escape(key));
            let line = format!("~ {pointer} (an annotation this review does not know, so assumed unsafe)");
            let detail = "an annotation this check does not know changed, so assumed unsafe".to_owned();
            let change = ToolChange::new(
                ToolArea::Annotation,
                "annotation_unclassified",
                ToolVerdict::Breaking,
                pointer,
                line,
                detail,
            );
            out.push(if b.is_none() { change.removed() } else { change });
        }
    }
}

fn schema_changes(direction: Direction, old: &Value, new: &Value, others: &[&str], out: &mut Vec<ToolChange>) {
    let (area, prefix) = if direction == Direction::Request {
        (ToolArea::Input, "/inputSchema")
    } else {
        (ToolArea::Output, "/outputSchema")
    };
    for change in diff_in(direction, old, new) {
        let pointer = format!("{prefix}{}", change.pointer());
        let written = match change.file_pointer() {
            Some((side, p)) => (side, format!("{prefix}{p}")),
            None => (if change.op() == Op::Removed { Side::Old } else { Side::New }, pointer.clone()),
        };
        let is_text_keyword = change.pointer().ends_with("/description") || change.pointer().ends_with("/title");
        let is_text = |v: Option<&Value>| v.is_none_or(Value::is_string);
        if change.kind() == ChangeKind::AnnotationChanged
            && is_text_keyword
            && is_text(change.old_value())
            && is_text(change.new_value())
        {
            let field = schema_text_field(direction, prefix, change.pointer());
            let texts = [change.old_value().and_then(Value::as_str), change.new_value().and_then(Value::as_str)];
            out.push(ToolChange::text(pointer, written, field, texts, others));
            continue;
        }
        let shown = change.to_string();
        let line = match shown.split_once(' ') {
            Some((sign, rest)) => {
                format!("{sign} {}", rest.replacen('/', &format!("{prefix}/"), 1).replacen("(root)", prefix, 1))
            }
            None => shown,
        };
        let verdict = ToolVerdict::of(change.verdict());
        let (verdict, detail) = if direction == Direction::Response
            && change.kind() == ChangeKind::OptionalPropertyRemoved
            && verdict < ToolVerdict::Lost
        {
            (ToolVerdict::Lost, lost_detail(&change))
        } else {
            (verdict, change.detail().to_owned())
        };
        let mut graded = ToolChange::new(area, change.kind().as_str(), verdict, pointer, line, detail);
        graded.written = written;
        out.push(graded);
    }
}

/// How a review names a text inside a schema: `description of argument `query``,
/// `title of the input schema`, `description at /outputSchema/properties/rows/items`.
fn schema_text_field(direction: Direction, prefix: &str, at: &str) -> String {
    let keyword = if at.ends_with("/title") { "title" } else { "description" };
    let at = at.rsplit_once('/').map_or("", |(at, _)| at);
    let (property, schema) = if direction == Direction::Request {
        ("argument", "input schema")
    } else {
        ("output property", "output schema")
    };
    match at.strip_prefix("/properties/") {
        Some(name) if !name.contains('/') => format!("{keyword} of {property} `{}`", pointer::unescape(name)),
        _ if at.is_empty() => format!("{keyword} of the {schema}"),
        _ => format!("{keyword} at {prefix}{at}"),
    }
}

/// Who loses what when an optional output property is removed: the property's name (as a
/// JSON string, escaped and cut; it is the server's text) and where it was.
fn lost_detail(change: &Change) -> String {
    let token = change.pointer().rsplit('/').next().unwrap_or_default();
    let name: String = pointer::unescape(token).chars().take(64).collect();
    let name = serde_json::to_string(&name).unwrap_or_default();
    let within = change.pointer().rsplit_once('/').and_then(|(p, _)| p.strip_suffix("/properties")).unwrap_or("");
    let at = if within.is_empty() { "the result".to_owned() } else { format!("the object at {within}") };
    format!(
        "output property {name} of {at} removed: a client that reads it from the tool's results loses it (results still \
         pass the pinned schema; an SDK that strips undeclared keys drops it from structuredContent)"
    )
}

fn contract_change(old: &Value, new: &Value) -> ToolChange {
    let name = |v: &Value| v["name"].as_str().map(str::to_owned);
    let shown = |v: &Value| match (v["name"].as_str(), v["version"].as_str()) {
        (Some(n), Some(ver)) => format!("{n} {ver}"),
        _ => "uncontracted".to_owned(),
    };
    let (kind, verdict, why, detail) = match (name(old), name(new)) {
        (Some(a), Some(b)) if a == b => (
            "contract_identity_changed",
            ToolVerdict::Cosmetic,
            "its output changes are reviewed in its schema",
            "contract version or hash changed: its output changes are classified above",
        ),
        (None, Some(_)) => (
            "contract_bound",
            ToolVerdict::Additive,
            "the tool gains an enforced output contract",
            "the tool gains an enforced output contract",
        ),
        (Some(_), None) => (
            "contract_unbound",
            ToolVerdict::Breaking,
            "clients lose the output contract they relied on",
            "the tool loses its enforced output contract",
        ),
        _ => (
            "contract_rebound",
            ToolVerdict::Breaking,
            "the tool now answers under another contract",
            "the tool answers under another contract",
        ),
    };
    let line = format!("~ /contract ({} → {}, {why})", shown(old), shown(new));
    ToolChange::new(ToolArea::Contract, kind, verdict, "/contract".to_owned(), line, detail.to_owned())
}
