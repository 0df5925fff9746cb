//! A ChatGPT app submission manifest (`chatgpt-app-submission.json`, `schema_version: 1`)
//! compared with a server's tool list: every difference between the manifest's hints and
//! the server's, graded by safety like the lock; hints not set explicitly on either side;
//! tools missing from either side; `tools_triggered` naming a tool the server does not
//! list; tools without an output schema; inputs that solicit credentials, MFA codes,
//! government IDs, card or health data. Each finding says which side to change, and no
//! fix is ever "copy the server's values over the manifest": the manifest is what was
//! reviewed.
//!
//! The comparison is pure (a manifest and a tool list in, findings out): `contract-audit
//! --submission` runs it against a live server, and `cargo xtask schemas --check` against
//! the server's own tool list.

use std::fmt;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::{json, Map, Value};

use crate::contract::evolution::hints::hint_changes;
use crate::contract::evolution::Verdict;
use crate::contract::schema::escape_pointer_token;

/// The file name a submission manifest goes by.
pub const MANIFEST_FILE: &str = "chatgpt-app-submission.json";

/// The three hints a submission requires on every tool, explicitly.
pub const REQUIRED_HINTS: [&str; 3] = ["readOnlyHint", "openWorldHint", "destructiveHint"];

/// How much a finding matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth fixing before submitting; does not block it.
    Warn,
    /// Blocks the submission, or misleads its review.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            Self::Warn => "warn",
            Self::Error => "error",
        })
    }
}

/// Every finding of the check: its kind, severity and meaning (for help texts and SARIF).
pub const KINDS: &[(&str, Severity, &str)] = &[
    ("submission-hint-less-safe", Severity::Error, "the server's hint is less safe than the manifest declares"),
    ("submission-hint-safer", Severity::Warn, "the server's hint is safer than the manifest declares"),
    ("submission-hint-not-set", Severity::Error, "a required hint is missing or null: the submission is blocked"),
    ("submission-tool-not-in-manifest", Severity::Error, "the server lists a tool the manifest does not declare"),
    ("submission-tool-not-served", Severity::Error, "the manifest declares a tool the server does not list"),
    ("submission-unknown-tool-triggered", Severity::Error, "a test case names a tool the server does not list"),
    ("submission-no-output-schema", Severity::Warn, "the tool declares no outputSchema"),
    (
        "submission-sensitive-input",
        Severity::Error,
        "an input solicits credentials, MFA codes, IDs, card or health data",
    ),
];

/// One finding: where (the manifest's pointer, or the live tool's), what, and the fix.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// How much it matters.
    pub level: Severity,
    /// One of [`KINDS`].
    pub kind: &'static str,
    /// The tool, when the finding is about one.
    pub tool: Option<String>,
    /// `manifest` (a pointer into the manifest) or `server` (into the tool's definition).
    pub side: &'static str,
    /// A JSON pointer into the side's document.
    pub pointer: String,
    /// What differs or is missing.
    pub message: String,
    /// Which side to change, and how.
    pub fix: String,
}

/// Reads a manifest's text: JSON, `schema_version: 1`, `tools` an object by name.
/// `file` names it in the error.
///
/// # Errors
///
/// A message naming the file and what is wrong with it.
pub fn parse_manifest(file: &str, text: &str) -> Result<Value, String> {
    let manifest: Value = serde_json::from_str(text).map_err(|e| format!("{file}: not JSON: {e}"))?;
    if manifest.get("schema_version") != Some(&json!(1)) {
        return Err(format!("{file}: `/schema_version` must be 1 (a ChatGPT app submission manifest, version 1)"));
    }
    if !manifest.get("tools").is_some_and(Value::is_object) {
        return Err(format!("{file}: `/tools` must be an object of tools by name"));
    }
    Ok(manifest)
}

fn finding(level: Severity, kind: &'static str, tool: Option<&str>, side: &'static str, pointer: String) -> Finding {
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

/// Every finding of `manifest` (as [`parse_manifest`] returns it) against the tools a
/// server lists, in the order of the listing, then the manifest's.
#[must_use]
pub fn compare(manifest: &Value, listed: &[Value]) -> Vec<Finding> {
    let empty = Map::new();
    let declared = manifest.get("tools").and_then(Value::as_object).unwrap_or(&empty);
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
                        Severity::Error,
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
                finding(
                    Severity::Error,
                    "submission-tool-not-in-manifest",
                    Some(name),
                    "manifest",
                    "/tools".to_owned(),
                )
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
                        Severity::Error,
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
        hint_findings(name, &at, stated, live, &mut out);
        if tool.get("outputSchema").is_none_or(Value::is_null) {
            out.push(
                finding(
                    Severity::Warn,
                    "submission-no-output-schema",
                    Some(name),
                    "server",
                    "/outputSchema".to_owned(),
                )
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
        out.push(finding(Severity::Error, "submission-tool-not-served", Some(name), "manifest", at.clone()).says(
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
                            Severity::Error,
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

/// The hints set on both sides that differ, graded by safety. The manifest is what was
/// reviewed: the server's hints are judged against it.
fn hint_findings(
    name: &str,
    at: &str,
    stated: Option<&Map<String, Value>>,
    live: Option<&Map<String, Value>>,
    out: &mut Vec<Finding>,
) {
    let only = |m: Option<&Map<String, Value>>| -> Map<String, Value> {
        m.map(|m| {
            m.iter()
                .filter(|(k, v)| REQUIRED_HINTS.contains(&k.as_str()) && !v.is_null())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
    };
    let (stated, live) = (only(stated), only(live));
    for change in hint_changes(Some(&stated), Some(&live)) {
        let key = change.hint().key;
        if !(stated.contains_key(key) && live.contains_key(key)) {
            continue; // Reported as not set on one side.
        }
        let pointer = format!("{at}/annotations/{key}");
        let shown = format!("manifest {} → server {}", stated[key], live[key]);
        out.push(if change.verdict() == Verdict::Breaking {
            finding(Severity::Error, "submission-hint-less-safe", Some(name), "manifest", pointer).says(
                format!("`{key}`: {shown}: the tool is less safe than was declared for review"),
                format!("server: restore `{key}`, or manifest: declare the new value and justify it (review again)"),
            )
        } else {
            finding(Severity::Warn, "submission-hint-safer", Some(name), "manifest", pointer).says(
                format!("`{key}`: {shown}: the server's hint is safer than the manifest declares"),
                format!("manifest: set `{key}` to the server's value"),
            )
        });
    }
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
            // The pattern matches ASCII words and spaces only: nothing to escape.
            let word: String = word.chars().take(40).collect();
            out.push(finding(Severity::Error, "submission-sensitive-input", Some(tool), "server", at.clone()).says(
                format!("the input asks for sensitive data (`{word}`)"),
                "server: remove the input, or take the data through the app's own authentication",
            ));
        }
        sensitive_inputs(tool, property, &at, depth + 1, out);
        if let Some(items) = property.get("items") {
            sensitive_inputs(tool, items, &format!("{at}/items"), depth + 1, out);
        }
    }
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
