//! Sanitizing of everything an error result carries: no stack
//! traces, no absolute paths, no tokens or passwords, no value from a sensitive pointer.
//!
//! Two kinds of text leave the server in an error, and each is treated by what it is:
//!
//! - **Free text** (a handler's or a middleware's error message) goes through
//!   [`sanitize`]: stack-trace lines are dropped, recognisable secrets and absolute paths
//!   are masked by pattern, and the values of the result's sensitive fields are masked
//!   as whole words.
//! - **Structure** (a violation's JSON pointer and message) is never rewritten by text
//!   patterns: a pointer names fields, not files. Violation messages are written from the
//!   validator's structured error and never quote instance data; pointer tokens that lie
//!   below a sensitive location, or that equal a sensitive value, are replaced whole by
//!   [`REDACTED`] ([`Sensitive::pointer`]).

use std::collections::BTreeSet;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

/// What replaces a redacted fragment, a masked pointer token or a masked value.
pub const REDACTED: &str = "[redacted]";

/// The longest message an error result carries; longer ones are cut, so raw payload
/// fragments cannot ride along in a long message.
pub const MAX_MESSAGE_CHARS: usize = 400;

struct Patterns {
    secrets: Regex,
    paths: Regex,
    trace_line: Regex,
}

fn patterns() -> &'static Patterns {
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    PATTERNS.get_or_init(|| Patterns {
        secrets: Regex::new(concat!(
            r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]+",
            r"|\bbasic\s+[A-Za-z0-9+/=]{8,}",
            r"|\bsk-[A-Za-z0-9_-]{6,}",
            r"|\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{10,}",
            r"|\bgithub_pat_[A-Za-z0-9_]{10,}",
            r"|\bxox[abprs]-[A-Za-z0-9-]{8,}",
            r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
            r"|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
            r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
            r#"|\b(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|secret[_-]?key|aws_secret_access_key|client[_-]?secret|authorization)\b\s*[:=]\s*("[^"]*"|'[^']*'|[^\s,;&"']+)"#,
            r"|\b[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@",
        ))
        .expect("secret patterns compile"),
        // Group 1 is the path itself; group 2 is the part after a known top-level
        // directory, absent when the path is that directory alone.
        paths: Regex::new(concat!(
            r#"(?:^|[\s'"(=\[,])((?:/(?:home|Users|root|usr|var|etc|opt|tmp|srv|mnt|private|proc|workspace|work|app|build|nix)(/[^\s'"),\]]*)?)"#,
            r#"|[A-Za-z]:\\[^\s'"),\]]*"#,
            r#"|\\\\[^\s'"),\]]+)"#,
        ))
        .expect("path patterns compile"),
        trace_line: Regex::new(concat!(
            r"(?m)^\s*(?:at\s+\S.*|\d+:\s+\S.*|stack backtrace:.*|Traceback \(most recent call last\):.*",
            r#"|File "[^"]*", line \d+.*|note: run with `RUST_BACKTRACE.*)$"#,
        ))
        .expect("trace patterns compile"),
    })
}

/// Sanitizes one free-text message: drops stack-trace lines, masks every string in
/// `sensitive_values` where it stands as a whole word, masks recognisable secrets and
/// absolute paths, writes runs of whitespace, control characters and bidirectional
/// formatting marks as one space, and cuts it to [`MAX_MESSAGE_CHARS`].
///
/// A sensitive value is masked only where it is not glued to other letters or digits,
/// so a value such as `integer` masks the word `integer` but not `integers` or
/// `type "integerish"`. A path is masked only when it is a directory such as `/home` or
/// goes below one: `/options` and `/home_dir` are words, not paths.
///
/// Never use it on JSON pointers: they name fields, not files (see [`Sensitive::pointer`]).
///
/// # Examples
///
/// ```
/// use contract_runtime::redact::sanitize;
///
/// let msg = "login failed for token=abc123 at /home/ci/app/src/auth.rs:42";
/// let clean = sanitize(msg, &[]);
/// assert!(!clean.contains("abc123") && !clean.contains("/home/"));
///
/// // Whole values only: the sensitive word `integer` is masked, `integers` is not.
/// let clean = sanitize("integer overflow in integers", &["integer".to_owned()]);
/// assert_eq!(clean, "[redacted] overflow in integers");
/// ```
#[must_use]
pub fn sanitize(message: &str, sensitive_values: &[String]) -> String {
    let p = patterns();
    let mut out = p.trace_line.replace_all(message, "").into_owned();
    // Longest first, so a value that contains a shorter one is masked whole.
    let mut values: Vec<&str> = sensitive_values.iter().map(String::as_str).filter(|v| !v.is_empty()).collect();
    values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    values.dedup();
    for value in values {
        out = mask_whole(&out, value);
    }
    out = p.secrets.replace_all(&out, REDACTED).into_owned();
    out = mask_paths(&p.paths, &out);
    // Control characters (a terminal's escape sequences among them) and the marks that
    // reorder text on screen are spaces here: a message cannot rewrite what a reader sees.
    let out = out
        .split(|c: char| c.is_whitespace() || c.is_control() || is_reordering(c))
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    cut(out)
}

/// The bidirectional formatting characters, which reorder the text after them on screen.
fn is_reordering(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Cuts `text` to [`MAX_MESSAGE_CHARS`] characters, marking the cut with `…`.
pub(crate) fn cut(text: String) -> String {
    if text.chars().count() > MAX_MESSAGE_CHARS {
        let cut: String = text.chars().take(MAX_MESSAGE_CHARS).collect();
        format!("{cut}…")
    } else {
        text
    }
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Replaces every occurrence of `value` in `text` that is not glued to a word character
/// on a side where `value` itself starts or ends with one.
fn mask_whole(text: &str, value: &str) -> String {
    let starts_word = value.chars().next().is_some_and(is_word);
    let ends_word = value.chars().next_back().is_some_and(is_word);
    let mut out = String::with_capacity(text.len());
    let mut kept = 0;
    for (at, _) in text.match_indices(value) {
        let before = text[..at].chars().next_back();
        let after = text[at + value.len()..].chars().next();
        if (starts_word && before.is_some_and(is_word)) || (ends_word && after.is_some_and(is_word)) {
            continue;
        }
        out.push_str(&text[kept..at]);
        out.push_str(REDACTED);
        kept = at + value.len();
    }
    out.push_str(&text[kept..]);
    out
}

/// Replaces absolute paths by `[path]`, keeping the delimiter before each. A bare
/// top-level directory name glued to more word characters (`/options`, `/home_dir`,
/// `/root-cause`) is a word, not a path, and stays.
fn mask_paths(paths: &Regex, text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut kept = 0;
    for caps in paths.captures_iter(text) {
        let Some(path) = caps.get(1) else { continue };
        let bare_dir = path.as_str().starts_with('/') && caps.get(2).is_none();
        let next = text[path.end()..].chars().next();
        if bare_dir && next.is_some_and(|c| is_word(c) || matches!(c, '-' | '.')) {
            continue;
        }
        out.push_str(&text[kept..path.start()]);
        out.push_str("[path]");
        kept = path.end();
    }
    out.push_str(&text[kept..]);
    out
}

/// What must not leave the server for one result: the tokens of the contract's sensitive
/// pointers, and every value and map key found at or below them.
///
/// # Examples
///
/// ```
/// use contract_runtime::redact::Sensitive;
/// use serde_json::json;
///
/// let result = json!({ "hosts": { "db-prod.internal:5432": [80, "x"] }, "items": [1, 2] });
/// let sensitive = Sensitive::collect(&result, &["/hosts".to_owned()]);
/// // Keys below the sensitive field are masked whole; array indices and the fields
/// // outside it stay, so the pointer still leads to the location.
/// assert_eq!(sensitive.pointer("/hosts/db-prod.internal:5432/1", Some(&result)), "/hosts/[redacted]/1");
/// assert_eq!(sensitive.pointer("/items/1", Some(&result)), "/items/1");
/// ```
#[derive(Clone, Debug, Default)]
pub struct Sensitive {
    patterns: Vec<Vec<String>>,
    secrets: BTreeSet<String>,
}

impl Sensitive {
    /// The sensitive locations `pointers` (`*` matches any index or key) and every value
    /// and key found in `value` at or below them.
    #[must_use]
    pub fn collect(value: &Value, pointers: &[String]) -> Self {
        let secrets = values_at(value, pointers).into_iter().filter(|s| !s.is_empty()).collect();
        Self { patterns: pointers.iter().map(|p| split_pointer(p)).collect(), secrets }
    }

    /// The sensitive locations only, for when there is no value to read (a result that
    /// failed to serialize): every token below a sensitive location is masked.
    #[must_use]
    pub fn locations(pointers: &[String]) -> Self {
        Self { patterns: pointers.iter().map(|p| split_pointer(p)).collect(), secrets: BTreeSet::new() }
    }

    /// The values and keys to mask, in no particular order.
    pub fn secrets(&self) -> impl Iterator<Item = &str> {
        self.secrets.iter().map(String::as_str)
    }

    /// `pointer` with every token masked that is a map key at or below a sensitive
    /// location, or that equals a sensitive value or key anywhere; other tokens, and
    /// array indices (read from `value` when given), are kept, so the pointer still
    /// leads to the real location. Text patterns are never applied: a pointer names
    /// fields, not files.
    #[must_use]
    pub fn pointer(&self, pointer: &str, value: Option<&Value>) -> String {
        if self.patterns.is_empty() && self.secrets.is_empty() {
            return pointer.to_owned();
        }
        let tokens = split_pointer(pointer);
        let mut at = value;
        let mut out = String::with_capacity(pointer.len());
        for (i, token) in tokens.iter().enumerate() {
            let index = match at {
                Some(Value::Array(items)) => token.parse::<usize>().ok().filter(|&n| n < items.len()),
                _ => None,
            };
            let below = self.patterns.iter().any(|p| p.len() <= i && matches_prefix(p, &tokens));
            let masked = index.is_none() && (below || self.secrets.contains(token.as_str()));
            out.push('/');
            if masked {
                out.push_str(REDACTED);
            } else {
                out.push_str(&crate::contract::schema::escape_pointer_token(token));
            }
            at = match (at, index) {
                (Some(Value::Array(items)), Some(n)) => items.get(n),
                (Some(Value::Object(map)), _) => map.get(token.as_str()),
                _ => None,
            };
        }
        out
    }

    /// [`sanitize`] with these secrets.
    #[must_use]
    pub fn message(&self, text: &str) -> String {
        let secrets: Vec<String> = self.secrets.iter().cloned().collect();
        sanitize(text, &secrets)
    }
}

fn split_pointer(pointer: &str) -> Vec<String> {
    crate::contract::pointer::tokens(pointer)
}

fn matches_prefix(pattern: &[String], tokens: &[String]) -> bool {
    pattern.len() <= tokens.len() && pattern.iter().zip(tokens).all(|(p, t)| p == "*" || p == t)
}

/// Every string (and number, as text) found at `pointers` in `value`; `*` in a pointer
/// matches any array index or object key. Nested values contribute all their leaves and
/// all their map keys (the keys of a sensitive map are as sensitive as its values).
#[must_use]
pub fn values_at(value: &Value, pointers: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for pointer in pointers {
        let tokens = split_pointer(pointer);
        collect_at(value, &tokens, &mut out);
    }
    out
}

fn collect_at(value: &Value, tokens: &[String], out: &mut Vec<String>) {
    let Some((first, rest)) = tokens.split_first() else {
        collect_leaves(value, out);
        return;
    };
    match value {
        Value::Object(map) if first == "*" => map.values().for_each(|v| collect_at(v, rest, out)),
        Value::Array(items) if first == "*" => items.iter().for_each(|v| collect_at(v, rest, out)),
        Value::Object(map) => {
            if let Some(v) = map.get(first) {
                collect_at(v, rest, out);
            }
        }
        Value::Array(items) => {
            if let Some(v) = first.parse::<usize>().ok().and_then(|i| items.get(i)) {
                collect_at(v, rest, out);
            }
        }
        _ => {}
    }
}

/// Walks with an explicit stack: the value may be as deep as the pipeline's depth limit
/// allows, and this runs on the error path, where a stack overflow would be the worst
/// outcome.
fn collect_leaves(value: &Value, out: &mut Vec<String>) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::String(s) => out.push(s.clone()),
            Value::Number(n) => out.push(n.to_string()),
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => {
                for (k, v) in map {
                    out.push(k.clone());
                    stack.push(v);
                }
            }
            Value::Bool(_) | Value::Null => {}
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_paths_and_traces_are_removed() {
        let cases = [
            ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "eyJhbGci"),
            ("key sk-live-4f9a8b7c6d5e", "sk-live"),
            ("push with ghp_abcdefghijklmnopqrstuvwx", "ghp_abc"),
            ("aws AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE"),
            ("password=hunter2; retry", "hunter2"),
            ("db postgres://admin:s3cr3t@db.internal/x", "s3cr3t"),
            ("open /home/ci/project/src/main.rs failed", "/home/ci"),
            (r"open C:\Users\ci\secret.txt failed", r"C:\Users"),
            ("boom\n   0: std::panicking::begin_panic\n   1: app::handler", "begin_panic"),
            ("Error\n    at Object.<anonymous> (file.js:1:1)", "Object.<anonymous>"),
        ];
        for (input, secret) in cases {
            let out = sanitize(input, &[]);
            assert!(!out.contains(secret), "{input:?} -> {out:?} still holds {secret:?}");
        }
    }

    #[test]
    fn control_characters_and_reordering_marks_become_spaces() {
        let out = sanitize("Task\u{1b}[2J not\u{7}\u{0} found:\u{202e}cod.exe\u{2066} x\u{9f}y", &[]);
        assert_eq!(out, "Task [2J not found: cod.exe x y");
        assert!(!out.chars().any(|c| c.is_control() || is_reordering(c)), "{out:?}");
        // Control: text without them, accented letters and emoji included, is unchanged.
        assert_eq!(sanitize("Tâche introuvable: t-1 ✓", &[]), "Tâche introuvable: t-1 ✓");
    }

    #[test]
    fn ordinary_messages_pass_unchanged() {
        for msg in [
            "upstream returned 503; try again later",
            "ticket T-42 not found",
            "rate limit: 10 requests per minute",
            "/properties/healthy: value is not of type \"integer\"",
            // Words that begin like a top-level directory are not paths.
            "bad /options/0, /variants/0/id, /workers/2, /home_dir and /root_cause; see /root-cause.md",
        ] {
            assert_eq!(sanitize(msg, &[]), msg);
        }
    }

    #[test]
    fn sensitive_values_are_removed_and_long_messages_cut() {
        let out = sanitize("endpoint 10.20.0.7:7400 refused", &["10.20.0.7:7400".to_owned()]);
        assert_eq!(out, "endpoint [redacted] refused");
        let long = "x".repeat(MAX_MESSAGE_CHARS * 2);
        assert_eq!(sanitize(&long, &[]).chars().count(), MAX_MESSAGE_CHARS + 1);
    }

    #[test]
    fn values_at_follows_wildcards() {
        let v = serde_json::json!({"agents": [{"token": "a1"}, {"token": "b2"}], "meta": {"k": {"x": 1}}});
        let mut got = values_at(&v, &["/agents/*/token".to_owned(), "/meta/*".to_owned()]);
        got.sort();
        assert_eq!(got, ["1", "a1", "b2", "x"]);
    }

    #[test]
    fn sensitive_values_are_masked_as_whole_words_only() {
        let secrets = ["integer".to_owned(), "10.0.0.1:80".to_owned()];
        let out = sanitize("type \"integer\" expected, integers and myinteger stay; 10.0.0.1:80 refused", &secrets);
        assert_eq!(out, "type \"[redacted]\" expected, integers and myinteger stay; [redacted] refused");
        // Clean control: no secrets, nothing changes.
        assert_eq!(sanitize("type \"integer\" expected", &[]), "type \"integer\" expected");
    }

    #[test]
    fn real_paths_are_still_masked() {
        for (input, kept) in
            [("open /etc/passwd", "open [path]"), ("cd /tmp", "cd [path]"), ("in (/opt/x)", "in ([path])")]
        {
            assert_eq!(sanitize(input, &[]), kept);
        }
    }

    #[test]
    fn pointers_mask_sensitive_keys_and_keep_the_rest() {
        let v = serde_json::json!({
            "hosts": {"db:5432": {"port": 1}, "a/b": [0, 1]},
            "agents": [{"token": "t0", "name": "n"}],
            "other": {"t0": 1}
        });
        let s = Sensitive::collect(&v, &["/hosts".to_owned(), "/agents/*/token".to_owned()]);
        assert_eq!(s.pointer("/hosts/db:5432/port", Some(&v)), "/hosts/[redacted]/[redacted]");
        assert_eq!(s.pointer("/hosts/a~1b/1", Some(&v)), "/hosts/[redacted]/1");
        assert_eq!(s.pointer("/agents/0/name", Some(&v)), "/agents/0/name");
        assert_eq!(s.pointer("/agents/0/token", Some(&v)), "/agents/0/token");
        // A key equal to a sensitive value is masked wherever it appears.
        assert_eq!(s.pointer("/other/t0", Some(&v)), "/other/[redacted]");
        // Without the value, every token below a sensitive location is masked.
        let l = Sensitive::locations(&["/hosts".to_owned()]);
        assert_eq!(l.pointer("/hosts/db:5432/0", None), "/hosts/[redacted]/[redacted]");
        assert_eq!(l.pointer("/options/0", None), "/options/0");
        assert_eq!(l.pointer("", None), "");
    }
}
