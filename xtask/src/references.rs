//! `cargo xtask references`: the repository speaks only of itself. A line that cites a
//! planning document, a numbered source document or an issue number points a reader at
//! something nobody who clones the repository has; the fact it stood for (the
//! requirement, the measurement, the reason) belongs there instead.

use std::process::{Command, ExitCode};

use crate::project_root;

/// Files whose size rules out hand-written prose; lock files are generated.
const MAX_BYTES: u64 = 4 << 20;

pub(crate) fn main() -> ExitCode {
    match run() {
        Ok(0) => ExitCode::SUCCESS,
        Ok(found) => {
            eprintln!("references: {found} line(s) cite documents outside the repository; write the fact instead");
            ExitCode::FAILURE
        }
        Err(message) => {
            eprintln!("references: {message}");
            ExitCode::from(2)
        }
    }
}

/// Checks every file git tracks; returns how many lines were reported.
pub(crate) fn run() -> Result<usize, String> {
    let root = project_root();
    let listed = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(&root)
        .output()
        .map_err(|e| format!("cannot run `git ls-files`: {e}"))?;
    if !listed.status.success() {
        return Err(format!("`git ls-files` failed: {}", String::from_utf8_lossy(&listed.stderr).trim()));
    }
    let mut found = 0;
    for name in listed.stdout.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let name = String::from_utf8_lossy(name);
        if name.ends_with(".lock") || name.ends_with("package-lock.json") {
            continue;
        }
        let path = root.join(name.as_ref());
        // A tracked file deleted in the work tree, a link or a large file has no prose to read.
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        if !meta.is_file() || meta.len() > MAX_BYTES {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        for (number, line) in text.lines().enumerate() {
            if let Some(what) = citation(line) {
                eprintln!("{name}:{}: cites {what}: {}", number + 1, line.trim());
                found += 1;
            }
        }
    }
    Ok(found)
}

/// What the line cites, if it cites a document outside the repository.
fn citation(line: &str) -> Option<&'static str> {
    let lower = line.to_ascii_lowercase();
    // The names are joined at run time so that this file does not match itself.
    for doc in ["design", "research", "style"] {
        if lower.contains(&format!("{doc}.md")) {
            return Some("a planning document");
        }
    }
    if lower.contains(&format!("{}/", "seeds"))
        || word_then_number(&lower, "seed ", 3)
        || word_then_number(&lower, "seed-", 3)
        || lower.contains(&format!("{} documents", "seed"))
    {
        return Some("a numbered source document");
    }
    if word_then_number(&lower, "issue #", 1) || word_then_number(&lower, "issue ", 1) {
        return Some("an issue number");
    }
    if word_then_number(&lower, "decision ", 1) || word_then_number(&lower, "experiment ", 1) {
        return Some("a numbered decision or experiment of a planning document");
    }
    None
}

/// Whether `word` stands in `text` as a whole word followed by at least `digits` digits.
fn word_then_number(text: &str, word: &str, digits: usize) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let starts_word = text[..at].chars().next_back().is_none_or(|c| !c.is_ascii_alphanumeric());
        let after = &text[at + word.len()..];
        starts_word && after.chars().take(digits).filter(char::is_ascii_digit).count() == digits
    })
}

#[cfg(test)]
mod tests {
    use super::citation;

    #[test]
    fn citations_are_found_and_plain_prose_passes() {
        // The cited forms are built at run time so that this file does not cite them itself.
        let cited = [
            format!("//! {} 000, {} 9: the cache", "Seed", "experiment"),
            format!("see {}", ["DESIGN", "md"].join(".")),
            format!("(issue #{}, item 4)", 12),
            format!("the {} 8 order", "decision"),
            format!("../shared/{}/001.txt", "seeds"),
            format!("as {} 21 says", "Issue"),
            format!("the {}-001 payload", "seed"),
            format!("the demo ({} documents 000, 001)", "seed"),
        ];
        for line in &cited {
            assert!(citation(line).is_some(), "not found: {line}");
        }
        // Controls: words that only look alike.
        for line in [
            "a proptest seed of 0xdead; reseed 123",
            "the decision is the caller's",
            "no issues here, 3 items",
            "tissue 12",
            "the style of the code (rustfmt.toml)",
        ] {
            assert_eq!(citation(line), None, "{line}");
        }
    }
}
