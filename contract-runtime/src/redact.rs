//! Sanitizing of everything an error result carries (DESIGN.md decision 10): no stack
//! traces, no absolute paths, no tokens or passwords, no value from a sensitive pointer.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

/// What replaces a redacted fragment.
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
        paths: Regex::new(concat!(
            r#"(?:^|[\s'"(=\[,])(?:/(?:home|Users|root|usr|var|etc|opt|tmp|srv|mnt|private|proc|workspace|work|app|build|nix)(?:/[^\s'"),\]]*)?"#,
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

/// Sanitizes one message: drops stack-trace lines, redacts secrets, absolute paths and
/// every string in `sensitive_values`, and cuts it to [`MAX_MESSAGE_CHARS`].
///
/// # Examples
///
/// ```
/// let msg = "login failed for token=abc123 at /home/ci/app/src/auth.rs:42";
/// let clean = contract_runtime::redact::sanitize(msg, &[]);
/// assert!(!clean.contains("abc123") && !clean.contains("/home/"));
/// ```
#[must_use]
pub fn sanitize(message: &str, sensitive_values: &[String]) -> String {
    let p = patterns();
    let mut out = p.trace_line.replace_all(message, "").into_owned();
    for value in sensitive_values.iter().filter(|v| v.len() >= 3) {
        out = out.replace(value.as_str(), REDACTED);
    }
    out = p.secrets.replace_all(&out, REDACTED).into_owned();
    out = p
        .paths
        .replace_all(&out, |caps: &regex::Captures<'_>| {
            // Keep the delimiter the path followed.
            let whole = &caps[0];
            let lead: String =
                whole.chars().take_while(|c| !matches!(c, '/' | '\\') && !c.is_ascii_alphabetic()).collect();
            format!("{lead}[path]")
        })
        .into_owned();
    let out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    if out.chars().count() > MAX_MESSAGE_CHARS {
        let cut: String = out.chars().take(MAX_MESSAGE_CHARS).collect();
        format!("{cut}…")
    } else {
        out
    }
}

/// Every string (and number, as text) found at `pointers` in `value`; `*` in a pointer
/// matches any array index or object key. Nested values contribute all their leaves.
#[must_use]
pub fn values_at(value: &Value, pointers: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for pointer in pointers {
        let tokens: Vec<String> = pointer.split('/').skip(1).map(|t| t.replace("~1", "/").replace("~0", "~")).collect();
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

fn collect_leaves(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Number(n) => out.push(n.to_string()),
        Value::Array(items) => items.iter().for_each(|v| collect_leaves(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_leaves(v, out)),
        Value::Bool(_) | Value::Null => {}
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
    fn ordinary_messages_pass_unchanged() {
        for msg in [
            "upstream returned 503; try again later",
            "ticket T-42 not found",
            "rate limit: 10 requests per minute",
            "/properties/healthy: value is not of type \"integer\"",
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
        assert_eq!(got, ["1", "a1", "b2"]);
    }
}
