//! Server text as the terminal shows it: a server's names and lines must not be able to
//! drive the terminal, so their control characters are replaced or escaped.

/// Server-chosen text with control characters replaced: a tool name or an error message
/// must not be able to drive the terminal (ANSI escapes, carriage returns).
pub(crate) fn clean(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { '\u{fffd}' } else { c }).collect()
}

/// `line` with every control character written as an escape (`\u{1b}`): server text
/// must not be able to drive the terminal.
pub(crate) fn escape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}
