//! The human table (identical findings grouped) and the JSON document (every finding).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::json;

use crate::audit::{Audit, CallReport, ToolReport};
use crate::lint::{Finding, Level};
use crate::shown::clean;

/// The human report: one row per tool, then every finding.
pub(crate) fn table(audit: &Audit) -> String {
    let mut out = String::new();
    let s = &audit.server;
    let _ = writeln!(
        out,
        "server: {} {} over {} (protocol {}), {} tools",
        clean(s.name.as_deref().unwrap_or("(unnamed)")),
        clean(s.version.as_deref().unwrap_or("")),
        s.transport,
        s.protocol.as_deref().unwrap_or("?"),
        audit.tools.len()
    );
    let rows: Vec<[String; 5]> = audit
        .tools
        .iter()
        .map(|t| {
            let contract = match &t.contract {
                // Name and version fit a column; the JSON report has the full identity.
                Some(c) if c.qualified => match (&c.name, &c.version) {
                    (Some(name), Some(version)) => clean(&format!("{name}@{version}")),
                    _ => "qualified".to_owned(),
                },
                Some(_) => "unqualified".to_owned(),
                None => "-".to_owned(),
            };
            let call = t.call.as_ref().map_or_else(|| "-".to_owned(), |c| c.result.to_owned());
            let mut findings: Vec<String> = t.findings.iter().map(|f| format!("{}:{}", f.level, f.kind)).collect();
            findings.dedup();
            let findings = if findings.is_empty() { "ok".to_owned() } else { findings.join(" ") };
            [clean(&t.name), if t.output_schema { "yes" } else { "no" }.to_owned(), contract, call, findings]
        })
        .collect();
    let header = ["TOOL", "OUTPUT SCHEMA", "CONTRACT", "CALL", "FINDINGS"];
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 5]| {
        let mut text = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let _ = write!(text, "{cell:<width$}  ", width = widths[i]);
        }
        text.trim_end().to_owned() + "\n"
    };
    out.push_str(&line(header));
    for row in &rows {
        out.push_str(&line([&row[0], &row[1], &row[2], &row[3], &row[4]]));
    }
    let mut counts = [0_usize; 3];
    for tool in &audit.tools {
        for f in &tool.findings {
            counts[f.level as usize] += 1;
        }
    }
    // The column says what; the details say where, for findings that have a place or a
    // call behind them (the rest would repeat the same sentence for every tool).
    let detailed = |f: &&crate::lint::Finding| {
        (f.level >= Level::Warn && f.kind != "no-output-schema") || !f.pointer.is_empty() || f.site == "call"
    };
    if audit.tools.iter().any(|t| t.findings.iter().any(|f| detailed(&f)) || call_detail(t).is_some()) {
        out.push_str("\ndetails:\n");
    }
    for tool in &audit.tools {
        if let Some(call) = call_detail(tool) {
            let code = call.code.as_deref().map_or_else(String::new, |code| format!(" `{}`", clean(code)));
            let _ =
                writeln!(out, "  call  {}: {}{code} (call): {}", clean(&tool.name), call.result, clean(&call.detail));
        }
    }
    for group in groups(audit, detailed) {
        out.push_str(&group);
    }
    let declared = audit.tools.iter().filter(|t| t.output_schema).count();
    let _ = writeln!(
        out,
        "\n{} of {} tools declare an outputSchema; {} errors, {} warnings, {} notes",
        declared,
        audit.tools.len(),
        counts[Level::Error as usize],
        counts[Level::Warn as usize],
        counts[Level::Info as usize]
    );
    out
}

/// The most pointers a grouped line lists for one tool.
const MAX_POINTERS_SHOWN: usize = 8;

/// The findings under `details:`, one entry per group of identical findings (the same
/// level, kind, site and message): a finding alone is one line, `tool: kind (site at
/// pointer): message`; a group is a line saying what and how often, then one line per
/// tool with its pointers. The JSON report keeps every finding.
fn groups(audit: &Audit, shown: impl Fn(&&Finding) -> bool) -> Vec<String> {
    type Key<'a> = (Level, &'a str, &'a str, &'a str);
    let mut order: Vec<Key> = Vec::new();
    let mut members: BTreeMap<Key, Vec<(&str, &str)>> = BTreeMap::new();
    for tool in &audit.tools {
        for f in tool.findings.iter().filter(&shown) {
            let key = (f.level, f.kind, f.site, f.message.as_str());
            if !members.contains_key(&key) {
                order.push(key);
            }
            members.entry(key).or_default().push((&tool.name, &f.pointer));
        }
    }
    let mut out = Vec::new();
    for key @ (level, kind, site, message) in order {
        let found = &members[&key];
        if let [(tool, pointer)] = found.as_slice() {
            let at = if pointer.is_empty() { String::new() } else { format!(" at {}", clean(pointer)) };
            out.push(format!("  {level:<5} {}: {kind} ({site}{at}): {}\n", clean(tool), clean(message)));
            continue;
        }
        let mut by_tool: Vec<(&str, Vec<&str>)> = Vec::new();
        for (tool, pointer) in found {
            match by_tool.iter_mut().find(|(t, _)| t == tool) {
                Some((_, pointers)) => pointers.push(pointer),
                None => by_tool.push((tool, vec![pointer])),
            }
        }
        let tools = if by_tool.len() == 1 { "1 tool".to_owned() } else { format!("{} tools", by_tool.len()) };
        let mut text = format!("  {level:<5} {kind} ({site}): {}: {} in {tools}\n", clean(message), found.len());
        if found.iter().all(|(_, pointer)| pointer.is_empty()) {
            // Findings about whole schemas: the tools, on one line.
            let names: Vec<String> = by_tool.iter().map(|(tool, _)| clean(tool)).collect();
            let _ = writeln!(text, "          {}", names.join(", "));
            out.push(text);
            continue;
        }
        for (tool, mut pointers) in by_tool {
            pointers.sort_unstable();
            pointers.dedup();
            let mut at: Vec<String> = pointers
                .iter()
                .take(MAX_POINTERS_SHOWN)
                .map(|p| if p.is_empty() { "(root)".to_owned() } else { clean(p) })
                .collect();
            if pointers.len() > MAX_POINTERS_SHOWN {
                at.push(format!("and {} more", pointers.len() - MAX_POINTERS_SHOWN));
            }
            let _ = writeln!(text, "          {} at {}", clean(tool), at.join(", "));
        }
        out.push(text);
    }
    out
}

/// A call worth a line under `details:` that no finding carries: a declared error (the
/// tool's own answer: its code and reason) or a call that was not made (and why).
fn call_detail(tool: &ToolReport) -> Option<&CallReport> {
    tool.call.as_ref().filter(|c| {
        matches!(c.result, "declared-error" | "not-called") && !tool.findings.iter().any(|f| f.site == "call")
    })
}

/// The CI report.
pub(crate) fn json(audit: &Audit) -> String {
    let count = |level: Level| audit.tools.iter().flat_map(|t| &t.findings).filter(|f| f.level == level).count();
    let document = json!({
        "server": audit.server,
        "tools": audit.tools,
        "summary": {
            "tools": audit.tools.len(),
            "output_schema_declared": audit.tools.iter().filter(|t| t.output_schema).count(),
            "errors": count(Level::Error),
            "warnings": count(Level::Warn),
            "notes": count(Level::Info),
        }
    });
    serde_json::to_string_pretty(&document).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::clean;

    #[test]
    fn control_characters_never_reach_the_terminal() {
        assert_eq!(clean("echo\u{1b}[2J\rdone"), "echo\u{fffd}[2J\u{fffd}done");
        assert_eq!(clean("get-sum"), "get-sum");
    }
}
