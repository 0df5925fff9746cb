//! The tools section of the JSON review.

use super::review::{Cover, FileState, ToolReview, ToolsReview};
use super::text::word_diff;
use super::{MANIFEST, TOOLS_DIR};
use crate::evolution::{Policy, Side};
use crate::report::{
    FileReport, FileSide, FileStatus, LocationReport, ManifestReport, PackageReport, PolicyStatus, TextReport,
    ToolChangeReport, ToolReport, ToolsReport,
};

impl ToolsReview {
    /// The machine-readable part of the review for the tools.
    #[must_use]
    pub fn report(&self) -> ToolsReport {
        let package = &self.package;
        let tools = self.tools.iter().map(|t| self.tool_report(t)).collect();
        let files = self
            .files
            .iter()
            .map(|(file, state)| FileReport {
                file: format!("{TOOLS_DIR}/{file}"),
                status: match state {
                    FileState::UpToDate => FileStatus::UpToDate,
                    FileState::Stale(_) => FileStatus::Stale,
                    FileState::Missing => FileStatus::Missing,
                    FileState::Orphan => FileStatus::Orphan,
                    FileState::Unreadable(_) => FileStatus::Unreadable,
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
            .enumerate()
            .map(|(i, c)| {
                let (needs, ok) = tool.needs(c, &self.package);
                ToolChangeReport {
                    area: c.area().as_str().to_owned(),
                    kind: c.kind().to_owned(),
                    verdict: c.verdict().as_str().to_owned(),
                    bump: c.verdict().bump().as_str().to_owned(),
                    pointer: c.written().1.to_owned(),
                    line: c.line().to_owned(),
                    needs: needs.map(|v| v.to_string()),
                    ok,
                    location: tool.locations.get(i).and_then(Option::as_ref).map(|l| LocationReport {
                        side: if l.side() == Side::Old { FileSide::Old } else { FileSide::New },
                        pointer: l.pointer().to_owned(),
                        line: l.line() as u64,
                    }),
                    text: c.text_change().map(|t| TextReport {
                        field: t.field().to_owned(),
                        old: t.old().map(str::to_owned),
                        new: t.new_text().map(str::to_owned),
                        word_diff: word_diff(t.old().unwrap_or_default(), t.new_text().unwrap_or_default()),
                        signals: t.signals().to_vec(),
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
