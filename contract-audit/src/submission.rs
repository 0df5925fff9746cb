//! `--submission FILE`: a ChatGPT app submission manifest (`chatgpt-app-submission.json`,
//! `schema_version: 1`) checked against the live server: every difference between the
//! manifest's hints and the server's, graded by safety like the lock; hints not set
//! explicitly on either side; tools missing from either side; `tools_triggered` naming a
//! tool the server does not list; tools without an output schema; inputs that solicit
//! credentials, MFA codes, government IDs, card or health data. Each finding says which
//! side to change.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{json, Value};

use crate::audit::{self, Audit, Calls};
use crate::lint::Level;
use crate::shown::clean;
use crate::{Format, Target};

pub(crate) use contract_runtime::client::submission::KINDS;
use contract_runtime::client::submission::{self as manifest_check, Finding, Severity};

impl From<Severity> for Level {
    fn from(s: Severity) -> Self {
        match s {
            Severity::Warn => Self::Warn,
            Severity::Error => Self::Error,
        }
    }
}

/// The check of one manifest against one server.
pub(crate) struct Check {
    pub(crate) file: String,
    pub(crate) audit: Audit,
    pub(crate) findings: Vec<Finding>,
}

impl Check {
    pub(crate) fn worst(&self) -> Option<Level> {
        self.findings.iter().map(|f| Level::from(f.level)).max()
    }
}

/// Reads the manifest, lists the server, and compares them.
pub(crate) async fn check(target: &Target, path: &Path) -> Result<Check, String> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{file}: {e}"))?;
    let manifest = manifest_check::parse_manifest(&file, &text)?;
    let audit = audit::run(target, Calls::default()).await?;
    let findings = manifest_check::compare(&manifest, &audit.listed);
    Ok(Check { file, audit, findings })
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
    let count = |l: Level| c.findings.iter().filter(|f| Level::from(f.level) == l).count();
    let _ = writeln!(out, "\n{} errors, {} warnings", count(Level::Error), count(Level::Warn));
    out
}

fn json(c: &Check) -> String {
    let count = |l: Level| c.findings.iter().filter(|f| Level::from(f.level) == l).count();
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
                "defaultConfiguration": {"level": crate::sarif::level(Level::from(*level))}})
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
                "level": crate::sarif::level(Level::from(f.level)),
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
