//! Text changes: titles and descriptions a model reads. They need no version bump, but
//! they are never silent: each is shown as a word diff for review.

use std::fmt::Write as _;
use std::time::Duration;

use similar::{Algorithm, ChangeTag, TextDiff};

/// Texts longer than this (in bytes, either side) are not diffed word by word: the
/// review names their sizes and where they first differ.
pub const MAX_WORD_DIFF_INPUT: usize = 64 * 1024;
/// The longest word diff shown, in characters; the rest is cut with a note.
pub const MAX_WORD_DIFF_OUTPUT: usize = 2000;
/// Unchanged words kept on each side of a change; longer unchanged runs are elided.
const CONTEXT_WORDS: usize = 8;

/// A word diff from `old` to `new`, `[-removed-]{+added+}`, with long unchanged runs
/// elided and the whole bounded by [`MAX_WORD_DIFF_OUTPUT`] characters.
///
/// # Examples
///
/// ```
/// use contract_tools::tool_list::text::word_diff;
/// assert_eq!(word_diff("Health of the fleet.", "State of the fleet."), "[-Health-]{+State+} of the fleet.");
/// assert!(word_diff(&"a ".repeat(1 << 20), "b").contains("too long to diff word by word"));
/// ```
#[must_use]
pub fn word_diff(old: &str, new: &str) -> String {
    if old.len() > MAX_WORD_DIFF_INPUT || new.len() > MAX_WORD_DIFF_INPUT {
        let common = old.bytes().zip(new.bytes()).take_while(|(a, b)| a == b).count();
        return format!(
            "({} → {} bytes, too long to diff word by word; they first differ at byte {common})",
            old.len(),
            new.len()
        );
    }
    let diff =
        TextDiff::configure().algorithm(Algorithm::Patience).timeout(Duration::from_millis(500)).diff_words(old, new);
    // Runs of (tag, text), merged.
    let mut runs: Vec<(ChangeTag, Vec<&str>)> = Vec::new();
    for change in diff.iter_all_changes() {
        match runs.last_mut() {
            Some((tag, words)) if *tag == change.tag() => words.push(change.value()),
            _ => runs.push((change.tag(), vec![change.value()])),
        }
    }
    // A change is one `[-…-]{+…+}` pair: the whitespace between changed words joins them.
    let joins = |i: usize| {
        let (tag, words) = &runs[i];
        *tag == ChangeTag::Equal
            && i > 0
            && i + 1 < runs.len()
            && words.iter().all(|w| w.trim().is_empty())
            && runs[i + 1].0 != ChangeTag::Equal
    };
    let mut out = String::new();
    let (mut removed, mut added) = (String::new(), String::new());
    let flush = |out: &mut String, removed: &mut String, added: &mut String| {
        if !removed.is_empty() {
            let _ = write!(out, "[-{removed}-]");
        }
        if !added.is_empty() {
            let _ = write!(out, "{{+{added}+}}");
        }
        removed.clear();
        added.clear();
    };
    let last = runs.len().saturating_sub(1);
    for (i, (tag, words)) in runs.iter().enumerate() {
        match tag {
            ChangeTag::Equal if joins(i) => {
                removed.push_str(&words.concat());
                added.push_str(&words.concat());
            }
            ChangeTag::Equal => {
                flush(&mut out, &mut removed, &mut added);
                // Words alternate with the whitespace between them.
                let keep = CONTEXT_WORDS * 2;
                if words.len() > keep * 2 {
                    let head = if i == 0 { &[][..] } else { &words[..keep] };
                    let tail = if i == last { &[][..] } else { &words[words.len() - keep..] };
                    out.push_str(&head.concat());
                    out.push('…');
                    out.push_str(&tail.concat());
                } else {
                    out.push_str(&words.concat());
                }
            }
            ChangeTag::Delete => removed.push_str(&words.concat()),
            ChangeTag::Insert => added.push_str(&words.concat()),
        }
    }
    flush(&mut out, &mut removed, &mut added);
    bounded(out)
}

fn bounded(text: String) -> String {
    if text.chars().count() <= MAX_WORD_DIFF_OUTPUT {
        return text;
    }
    let cut: String = text.chars().take(MAX_WORD_DIFF_OUTPUT).collect();
    format!("{cut}… (cut at {MAX_WORD_DIFF_OUTPUT} characters)")
}

/// Signals that a changed text reads like instructions to the model rather than a
/// description of the tool, so a reviewer looks closer: what
/// [`crate::evolution::text::instruction_signals`] finds in `new` and not in `old`, each
/// written `kind: phrase`. `other_tools` are the other tools' names. A heuristic: it
/// flags, it never decides a verdict.
#[must_use]
pub fn instruction_signals(old: Option<&str>, new: Option<&str>, other_tools: &[&str]) -> Vec<String> {
    let Some(new) = new else { return Vec::new() };
    crate::evolution::text::instruction_signals(old.unwrap_or(""), new, other_tools)
        .iter()
        .map(ToString::to_string)
        .collect()
}
