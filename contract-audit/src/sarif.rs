//! SARIF 2.1.0, one run each: for `--locked`, a rule per change kind and a result per
//! difference, located in the lock file (its line, when the lock is in the canonical form
//! `pin` writes) and logically by tool and pointer; for the audit, a rule per finding kind
//! (and one for a call not made) and a result per finding, located logically by tool,
//! site and pointer (the server has no file to point at).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{json, Value};

use crate::audit::Audit;
use crate::lint::{Level, KINDS};
use crate::lock::Comparison;

/// The SARIF 2.1.0 schema's address, as `$schema`.
pub(crate) const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

pub(crate) fn level(level: Level) -> &'static str {
    match level {
        Level::Error => "error",
        Level::Warn => "warning",
        Level::Info => "note",
    }
}

/// The SARIF log of a comparison.
pub(crate) fn locked(c: &Comparison) -> String {
    let pinned = c.pinned();
    let server = c.lock.servers.iter().position(|s| s.source == c.source).unwrap_or_default();
    // Lines only when the file is the canonical text of what was parsed: then the line of
    // every pointer follows from the values alone.
    let canonical = c.text == c.lock.to_canonical_string();
    let root = serde_json::to_value(&c.lock).unwrap_or_default();
    let uri = artifact_uri(&c.file);

    let mut rules: BTreeMap<&str, (usize, &str)> = BTreeMap::new();
    for change in c.drift.iter().flat_map(|d| &d.changes) {
        let next = rules.len();
        rules.entry(change.kind.as_str()).or_insert((next, change.area));
    }
    let mut rule_list: Vec<Value> = {
        let mut ordered: Vec<(&str, usize, &str)> = rules.iter().map(|(k, (i, a))| (*k, *i, *a)).collect();
        ordered.sort_by_key(|r| r.1);
        ordered
            .iter()
            .map(|(kind, _, area)| {
                json!({
                    "id": kind,
                    "name": kind,
                    "shortDescription": {"text": format!("{area} change `{kind}` from the pinned tool")},
                })
            })
            .collect()
    };
    // A tool's own contentHash that does not verify: a rule of the audit's, located in
    // the live tool (the server has no file to point at).
    let mut published_rules: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, f) in &c.published {
        if !published_rules.contains_key(f.kind) {
            published_rules.insert(f.kind, rule_list.len());
            let meaning = KINDS.iter().find(|k| k.0 == f.kind).map_or("", |k| k.2);
            rule_list.push(json!({"id": f.kind, "name": f.kind, "shortDescription": {"text": meaning}}));
        }
    }

    let mut results = Vec::new();
    for tool in &c.drift {
        let at = pinned.tools.iter().position(|t| t.name == tool.name);
        for change in &tool.changes {
            let in_lock = match at {
                Some(t) => format!("/servers/{server}/tools/{t}/definition{}", change.pointer),
                None => format!("/servers/{server}/tools"),
            };
            let mut physical = json!({"artifactLocation": {"uri": uri}});
            if canonical {
                physical["region"] = json!({"startLine": line_of(&root, &in_lock)});
            }
            let mut message = format!("{}: {} ({})", tool.name, change.detail, change.verdict);
            if let Some(diff) = &change.word_diff {
                let _ = write!(message, "\n{diff}");
            }
            for signal in &change.signals {
                let _ = write!(message, "\nsignal: {signal}");
            }
            let name = if change.pointer.is_empty() { tool.name.clone() } else { change.pointer.clone() };
            results.push(json!({
                "ruleId": change.kind,
                "ruleIndex": rules[change.kind.as_str()].0,
                "level": level(change.level()),
                "message": {"text": message},
                "locations": [{
                    "physicalLocation": physical,
                    "logicalLocations": [{
                        "name": name,
                        "fullyQualifiedName": format!("{}{}", tool.name, change.pointer),
                        "kind": "member",
                    }],
                }],
                "properties": {
                    "tool": tool.name,
                    "status": tool.status,
                    "area": change.area,
                    "verdict": change.verdict.as_str(),
                    "pointer": change.pointer,
                },
            }));
        }
    }
    for (tool, f) in &c.published {
        results.push(json!({
            "ruleId": f.kind,
            "ruleIndex": published_rules[f.kind],
            "level": level(f.level),
            "message": {"text": format!("{tool}: {}", f.message)},
            "locations": [{"logicalLocations": [{
                "name": f.pointer,
                "fullyQualifiedName": format!("{tool}{}", f.pointer),
                "kind": "member",
            }]}],
            "properties": {"tool": tool, "site": f.site, "pointer": f.pointer},
        }));
    }
    let log = json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "contract-audit",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": env!("CARGO_PKG_REPOSITORY"),
                "rules": rule_list,
            }},
            "artifacts": [{"location": {"uri": uri}}],
            "results": results,
        }],
    });
    serde_json::to_string_pretty(&log).unwrap_or_default()
}

/// The rule of a call the audit did not make (on synthesized arguments, a tool not
/// annotated read-only, or annotated destructive; or no valid arguments): its results are
/// `notApplicable`, the call's findings were not evaluated.
const NOT_CALLED: &str = "call-not-called";

/// The SARIF log of an audit: every finding, and every call not made.
pub(crate) fn audit(audit: &Audit) -> String {
    let mut rules: Vec<Value> = KINDS
        .iter()
        .map(|(kind, level_of, meaning)| {
            json!({
                "id": kind,
                "name": kind,
                "shortDescription": {"text": meaning},
                "defaultConfiguration": {"level": level(*level_of)},
            })
        })
        .collect();
    rules.push(json!({
        "id": NOT_CALLED,
        "name": NOT_CALLED,
        "shortDescription": {"text": "the tool was not called, so no call finding was evaluated; the message says why"},
        "defaultConfiguration": {"level": "none"},
    }));
    let index = |kind: &str| KINDS.iter().position(|k| k.0 == kind).unwrap_or(KINDS.len());
    let located = |tool: &str, site: &str, pointer: &str| {
        let name = if pointer.is_empty() { tool.to_owned() } else { pointer.to_owned() };
        json!([{"logicalLocations": [{
            "name": name,
            "fullyQualifiedName": format!("{tool}/{site}{pointer}"),
            "kind": "member",
        }]}])
    };
    let mut results = Vec::new();
    for tool in &audit.tools {
        for f in &tool.findings {
            results.push(json!({
                "ruleId": f.kind,
                "ruleIndex": index(f.kind),
                "level": level(f.level),
                "message": {"text": format!("{}: {}", tool.name, f.message)},
                "locations": located(&tool.name, f.site, &f.pointer),
                "properties": {"tool": tool.name, "site": f.site, "pointer": f.pointer},
            }));
        }
        if let Some(call) = tool.call.as_ref().filter(|c| c.result == "not-called") {
            results.push(json!({
                "ruleId": NOT_CALLED,
                "ruleIndex": KINDS.len(),
                "kind": "notApplicable",
                "level": "none",
                "message": {"text": format!("{}: not called: {}", tool.name, call.detail)},
                "locations": located(&tool.name, "call", ""),
                "properties": {"tool": tool.name, "site": "call", "pointer": "", "arguments": call.arguments},
            }));
        }
    }
    let log = json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "contract-audit",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": env!("CARGO_PKG_REPOSITORY"),
                "rules": rules,
            }},
            "properties": {"server": audit.server},
            "results": results,
        }],
    });
    serde_json::to_string_pretty(&log).unwrap_or_default()
}

/// The lock file as a SARIF artifact URI: a relative path with `/` separators (relative
/// to where contract-audit ran, which code scanning takes as the repository root), or a
/// `file://` URI for an absolute path.
pub(crate) fn artifact_uri(file: &str) -> String {
    let slashed = file.replace('\\', "/");
    let encoded: String = slashed
        .chars()
        .map(|c| match c {
            ' ' => "%20".to_owned(),
            '%' => "%25".to_owned(),
            '#' => "%23".to_owned(),
            '?' => "%3F".to_owned(),
            c => c.to_string(),
        })
        .collect();
    let trimmed = encoded.strip_prefix("./").unwrap_or(&encoded).to_owned();
    if trimmed.starts_with('/') {
        format!("file://{trimmed}")
    } else {
        trimmed
    }
}

/// How many lines `value` takes in the canonical form.
fn span(value: &Value) -> usize {
    match value {
        Value::Object(map) if !map.is_empty() => 2 + map.values().map(span).sum::<usize>(),
        Value::Array(items) if !items.is_empty() => 2 + items.iter().map(span).sum::<usize>(),
        _ => 1,
    }
}

/// The 1-based line where `pointer` starts in the canonical form of `root` (keys sorted,
/// one member per line); the nearest enclosing value that exists for a pointer that does
/// not (a property the live tool added).
pub(crate) fn line_of(root: &Value, pointer: &str) -> usize {
    let mut line = 1;
    let mut at = root;
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        let mut inner = line + 1;
        let next = match at {
            Value::Object(map) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                entries.into_iter().find_map(|(key, value)| {
                    if *key == token {
                        Some(value)
                    } else {
                        inner += span(value);
                        None
                    }
                })
            }
            Value::Array(items) => token.parse::<usize>().ok().and_then(|i| {
                let found = items.get(i)?;
                inner += items[..i].iter().map(span).sum::<usize>();
                Some(found)
            }),
            _ => None,
        };
        match next {
            Some(value) => {
                line = inner;
                at = value;
            }
            None => return line,
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use contract_runtime::schema::canonical_string;

    /// The line found by counting is the line the canonical text has the key on.
    #[test]
    fn lines_follow_the_canonical_text() {
        let value = json!({"b": {"y": [1, {"k": "v"}, []], "x": {}}, "a": "s", "c": [{"d": 1}]});
        let text = canonical_string(&value);
        let lines: Vec<&str> = text.lines().collect();
        let check = |pointer: &str, expected: &str| {
            let n = line_of(&value, pointer);
            assert_eq!(lines[n - 1].trim(), expected, "{pointer} at line {n} of\n{text}");
        };
        check("", "{");
        check("/a", "\"a\": \"s\",");
        check("/b", "\"b\": {");
        check("/b/x", "\"x\": {},");
        check("/b/y", "\"y\": [");
        check("/b/y/0", "1,");
        check("/b/y/1", "{");
        check("/b/y/1/k", "\"k\": \"v\"");
        check("/b/y/2", "[]");
        check("/c/0/d", "\"d\": 1");
        // A pointer that is not there: its nearest enclosing value.
        check("/b/y/1/missing", "{");
        check("/b/nothing/deeper", "\"b\": {");
    }

    #[test]
    fn artifact_uris_are_relative_or_file_uris() {
        assert_eq!(artifact_uri("./tools.lock.json"), "tools.lock.json");
        assert_eq!(artifact_uri("tests/interop/a b.json"), "tests/interop/a%20b.json");
        assert_eq!(artifact_uri("/tmp/x.json"), "file:///tmp/x.json");
    }
}
