//! `--submission FILE`: a ChatGPT app submission manifest (`chatgpt-app-submission.json`,
//! `schema_version: 1`) checked against the live server: every difference between the
//! manifest's hints and the server's, graded by safety like the lock; hints not set
//! explicitly on either side; tools missing from either side; `tools_triggered` naming a
//! tool the server does not list; tools without an output schema; inputs that solicit
//! credentials, MFA codes, government IDs, card or health data. Each finding says which
//! side to change.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::OnceLock;

use contract_runtime::evolution::hints::hint_changes;
use contract_runtime::evolution::Verdict;
use contract_runtime::schema::escape_pointer_token;
use regex::Regex;
use serde_json::{json, Map, Value};

use crate::audit::{self, Audit, Calls};
use crate::lint::Level;
use crate::report::clean;
use crate::{Format, Target};

/// The three hints a submission requires on every tool, explicitly.
const REQUIRED_HINTS: [&str; 3] = ["readOnlyHint", "openWorldHint", "destructiveHint"];

/// Every finding of the check: its kind, level and meaning (for `--help` and SARIF).
pub(crate) const KINDS: &[(&str, Level, &str)] = &[
    ("submission-hint-less-safe", Level::Error, "the server asks for less caution than the manifest declares"),
    ("submission-hint-safer", Level::Warn, "the server asks for more caution than the manifest declares"),
    ("submission-hint-not-set", Level::Error, "a required hint is missing or null: the submission is blocked"),
    ("submission-tool-not-in-manifest", Level::Error, "the server lists a tool the manifest does not declare"),
    ("submission-tool-not-served", Level::Error, "the manifest declares a tool the server does not list"),
    ("submission-unknown-tool-triggered", Level::Error, "a test case names a tool the server does not list"),
    ("submission-no-output-schema", Level::Warn, "the tool declares no outputSchema"),
    ("submission-sensitive-input", Level::Error, "an input solicits credentials, MFA codes, IDs, card or health data"),
];

/// One finding: where (the manifest's pointer, or the live tool's), what, and the fix.
#[derive(Debug, serde::Serialize)]
pub(crate) struct Finding {
    pub(crate) level: Level,
    pub(crate) kind: &'static str,
    /// The tool, when the finding is about one.
    pub(crate) tool: Option<String>,
    /// `manifest` (a pointer into the manifest) or `server` (into the tool's definition).
    pub(crate) side: &'static str,
    pub(crate) pointer: String,
    pub(crate) message: String,
    /// Which side to change, and how.
    pub(crate) fix: String,
}

/// The check of one manifest against one server.
pub(crate) struct Check {
    pub(crate) file: String,
    pub(crate) audit: Audit,
    pub(crate) findings: Vec<Finding>,
}

impl Check {
    pub(crate) fn worst(&self) -> Option<Level> {
        self.findings.iter().map(|f| f.level).max()
    }
}

/// Reads the manifest, lists the server, and compares them.
pub(crate) async fn check(target: &Target, path: &Path) -> Result<Check, String> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{file}: {e}"))?;
    let manifest: Value = serde_json::from_str(&text).map_err(|e| format!("{file}: not JSON: {e}"))?;
    if manifest.get("schema_version") != Some(&json!(1)) {
        return Err(format!("{file}: `/schema_version` must be 1 (a ChatGPT app submission manifest, version 1)"));
    }
    let Some(declared) = manifest.get("tools").and_then(Value::as_object) else {
        return Err(format!("{file}: `/tools` must be an object of tools by name"));
    };
    let audit = audit::run(target, Calls::default()).await?;
    let findings = compare(declared, &manifest, &audit.listed);
    Ok(Check { file, audit, findings })
}

fn finding(level: Level, kind: &'static str, tool: Option<&str>, side: &'static str, pointer: String) -> Finding {
    debug_assert!(KINDS.iter().any(|k| k.0 == kind && k.1 == level), "{kind}");
    Finding { level, kind, tool: tool.map(str::to_owned), side, pointer, message: String::new(), fix: String::new() }
}

impl Finding {
    fn says(mut self, message: impl Into<String>, fix: impl Into<String>) -> Self {
        self.message = message.into();
        self.fix = fix.into();
        self
    }
}

/// Every finding, in the order of the live listing, then the manifest's.
fn compare(declared: &Map<String, Value>, manifest: &Value, listed: &[Value]) -> Vec<Finding> {
    let mut out = Vec::new();
    let names: Vec<&str> = listed.iter().filter_map(|t| t["name"].as_str()).collect();
    for tool in listed {
        let name = tool["name"].as_str().unwrap_or_default();
        let at = format!("/tools/{}", escape_pointer_token(name));
        let live = tool.get("annotations").and_then(Value::as_object);
        for hint in REQUIRED_HINTS {
            if live.and_then(|a| a.get(hint)).is_none_or(Value::is_null) {
                out.push(
                    finding(
                        Level::Error,
                        "submission-hint-not-set",
                        Some(name),
                        "server",
                        format!("/annotations/{hint}"),
                    )
                    .says(
                        format!("the server does not set `{hint}` (a missing or null hint blocks the submission)"),
                        format!("server: set `annotations.{hint}` explicitly on the tool"),
                    ),
                );
            }
        }
        let Some(entry) = declared.get(name) else {
            out.push(
                finding(Level::Error, "submission-tool-not-in-manifest", Some(name), "manifest", "/tools".to_owned())
                    .says(
                        "the server lists the tool; the manifest does not declare it",
                        format!("manifest: add `{at}` with its three hints (or stop serving the tool)"),
                    ),
            );
            continue;
        };
        let stated = entry.get("annotations").and_then(Value::as_object);
        for hint in REQUIRED_HINTS {
            if stated.and_then(|a| a.get(hint)).is_none_or(Value::is_null) {
                out.push(
                    finding(
                        Level::Error,
                        "submission-hint-not-set",
                        Some(name),
                        "manifest",
                        format!("{at}/annotations/{hint}"),
                    )
                    .says(
                        format!("the manifest does not set `{hint}`"),
                        format!("manifest: set `{at}/annotations/{hint}` to the server's value after review"),
                    ),
                );
            }
        }
        // The manifest is what was reviewed: the server's hints are judged against it.
        let only = |m: Option<&Map<String, Value>>| -> Map<String, Value> {
            m.map(|m| {
                m.iter()
                    .filter(|(k, v)| REQUIRED_HINTS.contains(&k.as_str()) && !v.is_null())
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default()
        };
        let (stated_hints, live_hints) = (only(stated), only(live));
        for change in hint_changes(Some(&stated_hints), Some(&live_hints)) {
            let key = change.hint().key;
            if !(stated_hints.contains_key(key) && live_hints.contains_key(key)) {
                continue; // Said above: not set on one side.
            }
            let pointer = format!("{at}/annotations/{key}");
            let shown = format!("manifest {} → server {}", stated_hints[key], live_hints[key]);
            let f = if change.verdict() == Verdict::Breaking {
                finding(Level::Error, "submission-hint-less-safe", Some(name), "manifest", pointer).says(
                    format!("`{key}`: {shown}: the server asks for less caution than was declared for review"),
                    format!(
                        "server: restore `{key}`, or manifest: declare the new value and justify it (review again)"
                    ),
                )
            } else {
                finding(Level::Warn, "submission-hint-safer", Some(name), "manifest", pointer).says(
                    format!("`{key}`: {shown}: the server asks for more caution than the manifest declares"),
                    format!("manifest: set `{key}` to the server's value"),
                )
            };
            out.push(f);
        }
        if tool.get("outputSchema").is_none_or(Value::is_null) {
            out.push(
                finding(Level::Warn, "submission-no-output-schema", Some(name), "server", "/outputSchema".to_owned())
                    .says(
                        "no outputSchema: a reviewer and a client cannot check the tool's results",
                        "server: declare an outputSchema for the tool",
                    ),
            );
        }
        if let Some(schema) = tool.get("inputSchema") {
            sensitive_inputs(name, schema, "/inputSchema", 0, &mut out);
        }
    }
    for name in declared.keys().filter(|n| !names.contains(&n.as_str())) {
        let at = format!("/tools/{}", escape_pointer_token(name));
        out.push(finding(Level::Error, "submission-tool-not-served", Some(name), "manifest", at.clone()).says(
            "the manifest declares the tool; the server does not list it",
            format!("manifest: remove `{at}` (or serve the tool)"),
        ));
    }
    for list in ["test_cases", "negative_test_cases"] {
        for (i, case) in manifest.get(list).and_then(Value::as_array).into_iter().flatten().enumerate() {
            for (j, tool) in case.get("tools_triggered").and_then(Value::as_array).into_iter().flatten().enumerate() {
                let triggered = tool.as_str().unwrap_or_default();
                if !names.contains(&triggered) {
                    let pointer = format!("/{list}/{i}/tools_triggered/{j}");
                    out.push(
                        finding(
                            Level::Error,
                            "submission-unknown-tool-triggered",
                            Some(triggered),
                            "manifest",
                            pointer.clone(),
                        )
                        .says(
                            format!("`{pointer}` names a tool the server does not list"),
                            format!("manifest: name a listed tool at `{pointer}`"),
                        ),
                    );
                }
            }
        }
    }
    out
}

/// Words of a field (its name or its description) that solicit a credential, an MFA code,
/// a government ID, card or health data.
fn sensitive() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i-u)\b(password|passphrase|passcode|api ?key|secret|access ?token|auth ?token|bearer|otp|one ?time (pass)?code|mfa|2fa|two ?factor|verification code|ssn|social security|passport|driver'?s? licen[cs]e|national id|tax id|credit ?card|card ?number|cvv|cvc|bank account|routing number|diagnos[ei]s|medical|health (record|data|condition)|prescription)\b",
        )
        .expect("the pattern compiles")
    })
}

/// Splits `apiKey`, `api_key`, `card-number` into words.
fn words(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c == '_' || c == '-' {
            out.push(' ');
        } else {
            if c.is_uppercase() && i > 0 {
                out.push(' ');
            }
            out.push(c);
        }
    }
    out
}

/// The string inputs whose name or description solicits sensitive data, at any depth of
/// `properties` (and `items`).
fn sensitive_inputs(tool: &str, schema: &Value, pointer: &str, depth: usize, out: &mut Vec<Finding>) {
    const MAX_DEPTH: usize = 32;
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return };
    if depth > MAX_DEPTH {
        return;
    }
    for (name, property) in properties {
        let at = format!("{pointer}/properties/{}", escape_pointer_token(name));
        let types = property.get("type");
        let string = types == Some(&json!("string"))
            || types.and_then(Value::as_array).is_some_and(|t| t.contains(&json!("string")));
        // A name is read for any input that may be text; a description only for a string
        // input (a union's description tends to explain, not ask).
        let text = string || types.is_none();
        let said = |s: &str| sensitive().find(s).map(|m| m.as_str().to_owned());
        let described = property.get("description").and_then(Value::as_str).filter(|_| string);
        let hit = said(&words(name)).or_else(|| described.and_then(said));
        if let (true, Some(word)) = (text, hit) {
            let word: String = word.chars().take(40).collect();
            out.push(finding(Level::Error, "submission-sensitive-input", Some(tool), "server", at.clone()).says(
                format!("the input asks for sensitive data (`{}`)", clean(&word)),
                "server: remove the input, or take the data through the app's own authentication",
            ));
        }
        sensitive_inputs(tool, property, &at, depth + 1, out);
        if let Some(items) = property.get("items") {
            sensitive_inputs(tool, items, &format!("{at}/items"), depth + 1, out);
        }
    }
}

/// The report in `format`.
pub(crate) fn render(c: &Check, format: Format) -> String {
    match format {
        Format::Table => table(c),
        Format::Json => json(c) + "\n",
        Format::Sarif => sarif(c) + "\n",
    }
}

fn table(c: &Check) -> String {
    let mut out = String::new();
    let s = &c.audit.server;
    let _ = writeln!(
        out,
        "server: {} {} over {}, {} tools; submission manifest {}",
        clean(s.name.as_deref().unwrap_or("(unnamed)")),
        clean(s.version.as_deref().unwrap_or("")),
        s.transport,
        c.audit.listed.len(),
        c.file
    );
    if c.findings.is_empty() {
        out.push_str("the manifest and the server agree\n");
        return out;
    }
    for f in &c.findings {
        let tool = f.tool.as_deref().map_or_else(String::new, |t| format!("{}: ", clean(t)));
        let _ = writeln!(
            out,
            "  {:<5} {tool}{} ({} at {}): {}",
            f.level,
            f.kind,
            f.side,
            clean(&f.pointer),
            clean(&f.message)
        );
        let _ = writeln!(out, "        fix: {}", clean(&f.fix));
    }
    let count = |l: Level| c.findings.iter().filter(|f| f.level == l).count();
    let _ = writeln!(out, "\n{} errors, {} warnings", count(Level::Error), count(Level::Warn));
    out
}

fn json(c: &Check) -> String {
    let count = |l: Level| c.findings.iter().filter(|f| f.level == l).count();
    let document = json!({
        "manifest": c.file,
        "server": c.audit.server,
        "findings": c.findings,
        "summary": {"tools": c.audit.listed.len(), "errors": count(Level::Error), "warnings": count(Level::Warn)},
    });
    serde_json::to_string_pretty(&document).unwrap_or_default()
}

fn sarif(c: &Check) -> String {
    let rules: Vec<Value> = KINDS
        .iter()
        .map(|(kind, level, meaning)| {
            json!({"id": kind, "name": kind, "shortDescription": {"text": meaning},
                "defaultConfiguration": {"level": crate::sarif::level(*level)}})
        })
        .collect();
    let uri = crate::sarif::artifact_uri(&c.file);
    let results: Vec<Value> = c
        .findings
        .iter()
        .map(|f| {
            let tool = f.tool.clone().unwrap_or_default();
            let mut location = json!({"logicalLocations": [{
                "name": if f.pointer.is_empty() { tool.clone() } else { f.pointer.clone() },
                "fullyQualifiedName": if f.side == "manifest" { format!("manifest{}", f.pointer) } else { format!("{tool}{}", f.pointer) },
                "kind": "member",
            }]});
            if f.side == "manifest" {
                location["physicalLocation"] = json!({"artifactLocation": {"uri": uri}});
            }
            json!({
                "ruleId": f.kind,
                "ruleIndex": KINDS.iter().position(|k| k.0 == f.kind).unwrap_or_default(),
                "level": crate::sarif::level(f.level),
                "message": {"text": format!("{}{}\nfix: {}", f.tool.as_deref().map_or_else(String::new, |t| format!("{t}: ")), f.message, f.fix)},
                "locations": [location],
                "properties": {"tool": f.tool, "side": f.side, "pointer": f.pointer},
            })
        })
        .collect();
    let log = json!({
        "$schema": crate::sarif::SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "contract-audit", "version": env!("CARGO_PKG_VERSION"),
                "informationUri": env!("CARGO_PKG_REPOSITORY"), "rules": rules}},
            "artifacts": [{"location": {"uri": uri}}],
            "results": results,
        }],
    });
    serde_json::to_string_pretty(&log).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sensitive_words_are_found_in_names_and_descriptions_and_ordinary_ones_are_not() {
        let schema = json!({"type": "object", "properties": {
            "apiKey": {"type": "string"},
            "code": {"type": "string", "description": "The one-time code from your authenticator (MFA)"},
            "card": {"type": "object", "properties": {"cardNumber": {"type": "string"}}},
            "byApiKey": {"type": "boolean"},
            "url": {"type": "string", "description": "The page to scrape"},
            "keyword": {"type": "string"}
        }});
        let mut out = Vec::new();
        sensitive_inputs("t", &schema, "/inputSchema", 0, &mut out);
        let at: Vec<&str> = out.iter().map(|f| f.pointer.as_str()).collect();
        assert_eq!(
            at,
            [
                "/inputSchema/properties/apiKey",
                "/inputSchema/properties/card/properties/cardNumber",
                "/inputSchema/properties/code"
            ]
        );
    }
}
