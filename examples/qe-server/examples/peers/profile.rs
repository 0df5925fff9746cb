//! Running a program under callgrind and reading what it counted, shared by the peers
//! command and the stages command.

use std::path::Path;

/// Whether `valgrind` can run here: its version, or why not.
pub(crate) fn valgrind() -> Result<String, String> {
    match std::process::Command::new("valgrind").arg("--version").output() {
        Ok(out) if out.status.success() => Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned()),
        Ok(out) => Err(format!("`valgrind --version` failed ({})", out.status)),
        Err(err) => Err(format!("`valgrind` is not on PATH ({err}); install it (apt-get install valgrind)")),
    }
}

/// valgrind's arguments for a callgrind run that writes its profile to `out`; the program
/// and its own arguments follow them.
pub(crate) fn callgrind_args(out: &Path) -> Vec<String> {
    vec!["--tool=callgrind".to_owned(), format!("--callgrind-out-file={}", out.display())]
}

/// The instruction total of a callgrind profile (its `summary:` or `totals:` line).
pub(crate) fn total(profile: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(profile).ok()?;
    text.lines()
        .find_map(|line| line.strip_prefix("summary:").or_else(|| line.strip_prefix("totals:")))
        .and_then(|n| n.split_whitespace().next()?.parse().ok())
}

/// Thousands separated by commas.
pub(crate) fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
