//! The server's ChatGPT app submission manifest, checked by `schemas --check` when it is
//! present beside the schemas folder (with the default folder, at the workspace root):
//! [`contract_runtime::client::submission::compare`] of the manifest and the tool list
//! the xtask passes. The manifest is what was reviewed for the submission: it is read,
//! never written; each finding says whether the server or the manifest changes.

use std::path::{Path, PathBuf};

use contract_runtime::client::submission::{compare, parse_manifest, Finding, Severity, MANIFEST_FILE};

use crate::tool_list::ToolListing;

/// The manifest `schemas` reads for the folder `dir`: `chatgpt-app-submission.json` in
/// the folder's parent.
#[must_use]
pub fn manifest_path(dir: &Path) -> PathBuf {
    dir.parent().unwrap_or(Path::new(".")).join(MANIFEST_FILE)
}

/// The findings of one manifest against the tool list.
#[derive(Debug)]
pub struct SubmissionCheck {
    /// The manifest read.
    pub file: PathBuf,
    /// Every finding, in the order of the listing, then the manifest's.
    pub findings: Vec<Finding>,
}

impl SubmissionCheck {
    /// Reads the manifest beside `dir` and compares it with `listing`; `None` when there
    /// is no manifest.
    ///
    /// # Errors
    ///
    /// A manifest that cannot be read, is not JSON, or is not a version 1 manifest.
    pub fn run(dir: &Path, listing: &ToolListing) -> Result<Option<Self>, String> {
        let file = manifest_path(dir);
        let text = match std::fs::read_to_string(&file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("{}: {e}", file.display())),
        };
        let manifest = parse_manifest(&file.display().to_string(), &text)?;
        let findings = compare(&manifest, listing.tools());
        Ok(Some(Self { file, findings }))
    }

    /// The number of findings that fail the check.
    #[must_use]
    pub fn errors(&self) -> usize {
        self.findings.iter().filter(|f| f.level == Severity::Error).count()
    }

    /// Two lines per finding (what, then `fix:`), with `shown` naming the manifest.
    #[must_use]
    pub fn lines(&self, shown: &str) -> Vec<String> {
        let mut out = Vec::new();
        for f in &self.findings {
            let tool = f.tool.as_deref().map_or_else(String::new, |t| format!("{}: ", clean(t)));
            let place = if f.side == "manifest" { shown.to_owned() } else { "server".to_owned() };
            out.push(format!(
                "{shown}: {} {tool}{} ({place} at {}): {}",
                f.level,
                f.kind,
                clean(&f.pointer),
                clean(&f.message)
            ));
            out.push(format!("  fix: {}", clean(&f.fix)));
        }
        out
    }
}

/// Control characters (a newline in a tool name) shown as U+FFFD, so one finding is one
/// line.
fn clean(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { '\u{fffd}' } else { c }).collect()
}
