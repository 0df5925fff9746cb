//! `contract-audit pin` and `contract-audit --locked`: a server's tools pinned into a lock
//! file, and the live server compared with its pin.

use std::fmt::Write as _;
use std::path::Path;

use contract_runtime::client::lock::{
    drift_of_server, Digests, Lock, LockedServer, PinnedServerInfo, ServerSource, ToolDrift,
};
use contract_runtime::evolution::tool::{ToolChange, ToolVerdict};
use contract_tools::tool_list::text::word_diff;
use serde_json::{json, Value};

use crate::audit::{self, Audit, Calls};
use crate::lint::{Finding, Level};
use crate::shown::clean;
use crate::{PinArgs, Target};

/// The level a verdict reaches for `--deny`: a breaking change, a changed text (what a
/// model reads) or a lost output property (what the harness and the proxy quarantine by
/// default) is an error; an additive or cosmetic change, or a new tool, is a note.
pub(crate) fn level_of(verdict: ToolVerdict) -> Level {
    match verdict {
        ToolVerdict::Breaking | ToolVerdict::Text | ToolVerdict::Lost => Level::Error,
        ToolVerdict::Additive | ToolVerdict::Cosmetic => Level::Info,
    }
}

/// The flag that accepts lost output properties, as the fix line names it.
pub(crate) const ALLOW_LOST: &str = "--allow-lost-output";

/// One difference, as reported.
#[derive(Debug)]
pub(crate) struct Change {
    pub(crate) area: &'static str,
    pub(crate) kind: String,
    pub(crate) verdict: ToolVerdict,
    pub(crate) pointer: String,
    pub(crate) detail: String,
    pub(crate) old_text: Option<String>,
    pub(crate) new_text: Option<String>,
    pub(crate) word_diff: Option<String>,
    pub(crate) signals: Vec<String>,
    /// A lost output property accepted with `--allow-lost-output`: a note.
    pub(crate) accepted: bool,
}

impl Change {
    fn of(change: &ToolChange, allow_lost: bool) -> Self {
        let is_text = change.verdict() == ToolVerdict::Text;
        Self {
            area: change.area().as_str(),
            kind: change.kind().to_owned(),
            verdict: change.verdict(),
            pointer: change.pointer().to_owned(),
            detail: change.detail().to_owned(),
            old_text: change.old_text().map(str::to_owned),
            new_text: change.new_text().map(str::to_owned),
            word_diff: is_text
                .then(|| word_diff(change.old_text().unwrap_or_default(), change.new_text().unwrap_or_default())),
            signals: change.signals().to_vec(),
            accepted: allow_lost && change.verdict() == ToolVerdict::Lost,
        }
    }

    /// A digest that moved with nothing classified: the bytes changed, no meaning.
    fn digest_only() -> Self {
        Self {
            area: "tool",
            kind: "digest_changed".to_owned(),
            verdict: ToolVerdict::Cosmetic,
            pointer: String::new(),
            detail: "the definition's bytes changed (another spelling of the same values)".to_owned(),
            old_text: None,
            new_text: None,
            word_diff: None,
            signals: Vec::new(),
            accepted: false,
        }
    }

    pub(crate) fn level(&self) -> Level {
        if self.accepted {
            Level::Info
        } else {
            level_of(self.verdict)
        }
    }
}

/// One tool that differs from its pin.
#[derive(Debug)]
pub(crate) struct Drifted {
    pub(crate) name: String,
    pub(crate) status: &'static str,
    pub(crate) old: Option<Digests>,
    pub(crate) new: Option<Digests>,
    pub(crate) changes: Vec<Change>,
}

impl Drifted {
    fn of(drift: &ToolDrift, allow_lost: bool) -> Self {
        let mut changes: Vec<Change> = drift.changes().iter().map(|c| Change::of(c, allow_lost)).collect();
        if changes.is_empty() {
            changes.push(Change::digest_only());
        }
        Self {
            name: drift.name().to_owned(),
            status: drift.status().as_str(),
            old: drift.old_digests().cloned(),
            new: drift.new_digests().cloned(),
            changes,
        }
    }

    pub(crate) fn level(&self) -> Level {
        self.changes.iter().map(Change::level).max().unwrap_or(Level::Info)
    }

    pub(crate) fn worst(&self) -> ToolVerdict {
        self.changes.iter().map(|c| c.verdict).max().unwrap_or(ToolVerdict::Cosmetic)
    }
}

/// The live server compared with its pin.
#[derive(Debug)]
pub(crate) struct Comparison {
    /// The lock file, as given.
    pub(crate) file: String,
    /// Its text, for the lines of SARIF locations.
    pub(crate) text: String,
    pub(crate) lock: Lock,
    pub(crate) source: ServerSource,
    pub(crate) audit: Audit,
    pub(crate) drift: Vec<Drifted>,
    /// The live tools whose own `contentHash` is not their declaration's (or cannot be
    /// read): `(tool, finding)`.
    pub(crate) published: Vec<(String, Finding)>,
}

/// The `published-hash-*` findings of the audit's tools, by tool.
fn published_findings(audit: &Audit) -> Vec<(String, Finding)> {
    audit
        .tools
        .iter()
        .flat_map(|t| {
            t.findings.iter().filter(|f| f.kind.starts_with("published-hash-")).map(|f| (t.name.clone(), f.clone()))
        })
        .collect()
}

/// One line per published-hash finding.
fn published_lines(published: &[(String, Finding)], out: &mut String) {
    for (tool, f) in published {
        let _ = writeln!(out, "  {:<5} {}: {} (at {}): {}", f.level, clean(tool), f.kind, f.pointer, clean(&f.message));
    }
}

impl Comparison {
    /// The pinned entry.
    pub(crate) fn pinned(&self) -> &LockedServer {
        self.lock.server(&self.source).expect("checked before connecting")
    }

    /// The worst level any difference reaches.
    pub(crate) fn worst(&self) -> Option<Level> {
        self.drift.iter().map(Drifted::level).chain(self.published.iter().map(|(_, f)| f.level)).max()
    }
}

/// `contract-audit pin`: lists the server, writes the lock, returns what to print.
pub(crate) async fn pin(args: &PinArgs) -> Result<String, String> {
    let file = args.lock.display().to_string();
    let mut lock = if args.lock.exists() { Lock::read(&args.lock).map_err(|e| e.to_string())? } else { Lock::new() };
    let source = args.target.source();
    let audit = listed(&args.target).await?;
    let info = pinned_info(&audit);
    let mut server = LockedServer::pin(source.clone(), info, &audit.listed);
    if args.target.name.is_some() {
        server.launched = Some(args.target.launch());
    }
    let before = lock.server(&source).cloned();
    let drift: Option<Vec<Drifted>> =
        before.as_ref().map(|b| drift_of_server(b, &audit.listed).iter().map(|d| Drifted::of(d, false)).collect());
    lock.upsert(server.clone());
    write_atomically(&args.lock, &lock.to_canonical_string())?;

    let mut out = String::new();
    let _ = writeln!(
        out,
        "pinned {} tools of {} ({}) into {file}",
        server.tools.len(),
        server_line(server.server_info.as_ref()),
        clean(&source.to_string()),
    );
    let width = server.tools.iter().map(|t| t.name.chars().count()).max().unwrap_or(0).max(4);
    let _ = writeln!(out, "{:<width$}  {:<19}  SHAPE DIGEST", "TOOL", "TEXT DIGEST");
    for tool in &server.tools {
        let _ = writeln!(
            out,
            "{:<width$}  {}  {}",
            clean(&tool.name),
            short(&tool.digests.text),
            short(&tool.digests.shape)
        );
    }
    match drift {
        None => out.push_str("\nnew entry: this server was not in the lock\n"),
        Some(drift) if drift.is_empty() => out.push_str("\nunchanged since the last pin\n"),
        Some(drift) => {
            out.push_str("\nchanged since the last pin:\n");
            details(&drift, &mut out);
        }
    }
    let published = published_findings(&audit);
    if !published.is_empty() {
        out.push_str("\nthe server's own contentHash (draft SEP-3140) does not verify; the lock keeps the hash of what was listed:\n");
        published_lines(&published, &mut out);
    }
    Ok(out)
}

/// `contract-audit --locked FILE`: reads the lock, lists the server, compares; with
/// `allow_lost`, a lost output property is a note.
pub(crate) async fn compare(target: &Target, path: &Path, allow_lost: bool) -> Result<Comparison, String> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{file}: {e}"))?;
    let lock = Lock::parse(&text, &file).map_err(|e| e.to_string())?;
    let mut source = target.source();
    let not_pinned = |source: &ServerSource| {
        let pinned: Vec<String> = lock.servers.iter().map(|s| format!("  {}", clean(&s.source.to_string()))).collect();
        format!(
            "{file} pins no server for {} (the URL or command line must be the one given to `contract-audit \
             pin`, or the --name it was pinned with); it pins:\n{}",
            clean(&source.to_string()),
            if pinned.is_empty() { "  (nothing)".to_owned() } else { pinned.join("\n") }
        )
    };
    // A server pinned by name is found by its serverInfo name once it answers, when its
    // entry is the only one pinned by name for that server name.
    let by_info = target.name.is_none() && lock.servers.iter().any(|s| matches!(s.source, ServerSource::Name(_)));
    if lock.server(&source).is_none() && !by_info {
        return Err(not_pinned(&source));
    }
    let audit = listed(target).await?;
    if lock.server(&source).is_none() {
        let named = audit.server.name.as_deref().and_then(|name| lock.named_by_info(name));
        source = named.map(|s| s.source.clone()).ok_or_else(|| not_pinned(&source))?;
    }
    let entry = lock.server(&source).expect("checked above");
    let drift = drift_of_server(entry, &audit.listed).iter().map(|d| Drifted::of(d, allow_lost)).collect();
    let published = published_findings(&audit);
    Ok(Comparison { file, text, lock, source, audit, drift, published })
}

/// Connects and lists every tool, without calls; a name listed twice cannot be pinned.
async fn listed(target: &Target) -> Result<Audit, String> {
    let audit = audit::run(target, Calls::default()).await?;
    if let Some(name) = audit.duplicates.first() {
        return Err(format!(
            "the server lists the tool `{}` more than once: a lock holds one definition per name",
            clean(name)
        ));
    }
    Ok(audit)
}

fn pinned_info(audit: &Audit) -> Option<PinnedServerInfo> {
    let s = &audit.server;
    s.name.as_ref().map(|name| PinnedServerInfo { name: name.clone(), version: s.version.clone().unwrap_or_default() })
}

fn server_line(info: Option<&PinnedServerInfo>) -> String {
    info.map_or_else(
        || "(unnamed server)".to_owned(),
        |i| clean(&format!("{} {}", i.name, i.version)).trim().to_owned(),
    )
}

/// Writes `text` to a temporary file beside `path`, then renames it over `path`: a
/// reader sees the old lock or the new one, never half of one.
fn write_atomically(path: &Path, text: &str) -> Result<(), String> {
    use std::io::Write as _;
    let shown = path.display();
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| format!("{shown}: not a file name"))?.to_string_lossy();
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut out = std::fs::File::create(&temp)?;
        out.write_all(text.as_bytes())?;
        out.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        format!("cannot write {shown}: {e}")
    })
}

/// `sha256:` and the first 12 hex digits.
pub(crate) fn short(digest: &str) -> String {
    match digest.strip_prefix("sha256:") {
        Some(hex) if hex.len() > 12 => format!("sha256:{}", &hex[..12]),
        _ => digest.to_owned(),
    }
}

fn digest_pair(old: Option<&Digests>, new: Option<&Digests>, pick: fn(&Digests) -> &String) -> String {
    let show = |d: Option<&Digests>| d.map_or_else(|| "-".to_owned(), |d| short(pick(d)));
    let (a, b) = (show(old), show(new));
    if a == b {
        a
    } else {
        format!("{a} → {b}")
    }
}

/// The detail lines of every difference.
fn details(drift: &[Drifted], out: &mut String) {
    for tool in drift {
        for change in &tool.changes {
            let at = if change.pointer.is_empty() { String::new() } else { format!(" at {}", clean(&change.pointer)) };
            let _ = writeln!(
                out,
                "  {:<5} {}: {} {} ({}{at}): {}",
                change.level(),
                clean(&tool.name),
                change.area,
                change.kind,
                change.verdict,
                clean(&change.detail)
            );
            if let Some(diff) = &change.word_diff {
                let _ = writeln!(out, "        {}", clean(diff));
            }
            for signal in &change.signals {
                let _ = writeln!(out, "        signal: {}", clean(signal));
            }
            if change.verdict == ToolVerdict::Lost && !change.accepted {
                let _ = writeln!(
                    out,
                    "        fix: make every client that reads it stop reading it, then accept the removal with \
                     {ALLOW_LOST} (or pin the server again)"
                );
            }
        }
    }
}

/// The human report of a comparison.
pub(crate) fn table(c: &Comparison) -> String {
    let mut out = String::new();
    let s = &c.audit.server;
    let pinned = c.pinned();
    let _ = writeln!(
        out,
        "server: {} {} over {} (protocol {}), {} tools; pinned in {} as {}, {} tools",
        clean(s.name.as_deref().unwrap_or("(unnamed)")),
        clean(s.version.as_deref().unwrap_or("")),
        s.transport,
        s.protocol.as_deref().unwrap_or("?"),
        c.audit.listed.len(),
        c.file,
        server_line(pinned.server_info.as_ref()),
        pinned.tools.len(),
    );
    if c.drift.is_empty() {
        out.push_str("every tool is as pinned\n");
        if !c.published.is_empty() {
            out.push_str("but the server's own contentHash (draft SEP-3140) does not verify:\n");
            published_lines(&c.published, &mut out);
        }
        return out;
    }
    let rows: Vec<[String; 5]> = c
        .drift
        .iter()
        .map(|d| {
            [
                clean(&d.name),
                d.status.to_owned(),
                d.worst().as_str().to_owned(),
                digest_pair(d.old.as_ref(), d.new.as_ref(), |x| &x.text),
                digest_pair(d.old.as_ref(), d.new.as_ref(), |x| &x.shape),
            ]
        })
        .collect();
    let header = ["TOOL", "STATUS", "WORST", "TEXT DIGEST", "SHAPE DIGEST"];
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 5]| {
        let mut text = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let pad = widths[i].saturating_sub(cell.chars().count());
            let _ = write!(text, "{cell}{}  ", " ".repeat(pad));
        }
        text.trim_end().to_owned() + "\n"
    };
    out.push_str(&line(header));
    for row in &rows {
        out.push_str(&line([&row[0], &row[1], &row[2], &row[3], &row[4]]));
    }
    out.push_str("\ndetails:\n");
    details(&c.drift, &mut out);
    if !c.published.is_empty() {
        out.push_str("\nthe server's own contentHash (draft SEP-3140) does not verify:\n");
        published_lines(&c.published, &mut out);
    }
    let summary = summary(c);
    let _ = writeln!(
        out,
        "\n{} tools differ from the pin ({} changed, {} added, {} removed), {} as pinned; {} errors, {} warnings, {} notes",
        c.drift.len(),
        summary["changed"],
        summary["added"],
        summary["removed"],
        summary["unchanged"],
        summary["errors"],
        summary["warnings"],
        summary["notes"],
    );
    out
}

fn summary(c: &Comparison) -> Value {
    let status = |s: &str| c.drift.iter().filter(|d| d.status == s).count();
    let level = |l: Level| {
        c.drift.iter().flat_map(|d| &d.changes).filter(|x| x.level() == l).count()
            + c.published.iter().filter(|(_, f)| f.level == l).count()
    };
    let changed = status("changed");
    json!({
        "changed": changed,
        "added": status("added"),
        "removed": status("removed"),
        "unchanged": c.audit.listed.len() - changed - status("added"),
        "errors": level(Level::Error),
        "warnings": level(Level::Warn),
        "notes": level(Level::Info),
    })
}

/// The CI report of a comparison (its shape is documented in the README).
pub(crate) fn json(c: &Comparison) -> String {
    let digests = |d: &Drifted| {
        let pick = |x: Option<&Digests>, f: fn(&Digests) -> &String| x.map(|x| f(x).clone());
        json!({
            "text": {"old": pick(d.old.as_ref(), |x| &x.text), "new": pick(d.new.as_ref(), |x| &x.text)},
            "shape": {"old": pick(d.old.as_ref(), |x| &x.shape), "new": pick(d.new.as_ref(), |x| &x.shape)},
        })
    };
    let drift: Vec<Value> = c
        .drift
        .iter()
        .map(|d| {
            json!({
                "tool": d.name,
                "status": d.status,
                "worst": d.worst().as_str(),
                "level": d.level(),
                "digests": digests(d),
                "changes": d.changes.iter().map(|x| json!({
                    "area": x.area,
                    "kind": x.kind,
                    "verdict": x.verdict.as_str(),
                    "level": x.level(),
                    "pointer": x.pointer,
                    "detail": x.detail,
                    "old_text": x.old_text,
                    "new_text": x.new_text,
                    "word_diff": x.word_diff,
                    "signals": x.signals,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let pinned = c.pinned();
    let document = json!({
        "lock": c.file,
        "source": c.source,
        "server": c.audit.server,
        "pinned_server": pinned.server_info,
        "tools": {"pinned": pinned.tools.len(), "listed": c.audit.listed.len()},
        "drift": drift,
        "published_hashes": c.published.iter().map(|(tool, f)| json!({
            "tool": tool, "kind": f.kind, "level": f.level, "pointer": f.pointer, "message": f.message,
        })).collect::<Vec<_>>(),
        "summary": summary(c),
    });
    serde_json::to_string_pretty(&document).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use contract_runtime::client::lock::ServerSource;

    /// Another spelling of a number moves the shape digest and is reported as a cosmetic note.
    #[test]
    fn another_spelling_of_a_number_is_a_cosmetic_note() {
        let listed = |minimum: Value| json!({"name": "page", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": minimum}}}});
        let pinned = LockedServer::pin(ServerSource::Url("http://127.0.0.1:1/mcp".into()), None, &[listed(json!(1))]);
        let drift = drift_of_server(&pinned, &[listed(json!(1.0))]);
        assert_eq!(drift.len(), 1, "{drift:?}");
        let reported = Drifted::of(&drift[0], false);
        let kinds: Vec<(&str, ToolVerdict, Level)> =
            reported.changes.iter().map(|c| (c.kind.as_str(), c.verdict, c.level())).collect();
        assert_eq!(kinds, [("text_only", ToolVerdict::Cosmetic, Level::Info)]);
        let (old, new) = (reported.old.as_ref().unwrap(), reported.new.as_ref().unwrap());
        assert_eq!(old.text, new.text);
        assert_ne!(old.shape, new.shape, "the shape digest says the bytes moved");
        // Control: the same spelling is no drift at all.
        assert!(drift_of_server(&pinned, &[listed(json!(1))]).is_empty());
    }

    #[test]
    fn verdicts_map_to_levels() {
        assert_eq!(level_of(ToolVerdict::Breaking), Level::Error);
        assert_eq!(level_of(ToolVerdict::Text), Level::Error);
        assert_eq!(level_of(ToolVerdict::Lost), Level::Error);
        assert_eq!(level_of(ToolVerdict::Additive), Level::Info);
        assert_eq!(level_of(ToolVerdict::Cosmetic), Level::Info);
    }
}
