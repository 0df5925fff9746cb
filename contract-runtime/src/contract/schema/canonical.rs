//! The canonical form of a schema (and of call arguments, for cache keys): sorted keys,
//! two-space indentation, a trailing newline, the same bytes with or without serde_json's
//! `preserve_order`; and the SHA-256 that names it.

use std::fmt::Write as _;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The canonical text of a schema: object keys sorted at every level, two-space
/// indentation, a trailing newline. Independent of serde_json's `preserve_order`.
#[must_use]
pub fn canonical_string(value: &Value) -> String {
    // Every contract is written once per `cargo xtask schemas --check`, in a dev-profile
    // build of the user's xtask where this crate is unoptimised: the writer appends to one
    // buffer and leaves the formatting machinery to numbers and escaped strings.
    let mut out = String::with_capacity(4096);
    write_canonical(value, 0, &mut out);
    out.push('\n');
    out
}

fn write_canonical(value: &Value, depth: usize, out: &mut String) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            // Without `preserve_order` the map iterates sorted already, and the entries
            // are taken as they come rather than looked up again by key.
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            if !entries.is_sorted_by(|a, b| a.0 <= b.0) {
                entries.sort_by(|a, b| a.0.cmp(b.0));
            }
            out.push_str("{\n");
            for (i, (key, item)) in entries.iter().enumerate() {
                indent(depth + 1, out);
                write_str(key, out);
                out.push_str(": ");
                write_canonical(item, depth + 1, out);
                if i + 1 < entries.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            indent(depth, out);
            out.push('}');
        }
        Value::Array(items) if !items.is_empty() => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                indent(depth + 1, out);
                write_canonical(item, depth + 1, out);
                if i + 1 < items.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            indent(depth, out);
            out.push(']');
        }
        Value::Object(_) => out.push_str("{}"),
        Value::Array(_) => out.push_str("[]"),
        Value::String(s) => write_str(s, out),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Null => out.push_str("null"),
        // Numbers have one serialization whatever the features (itoa, ryu).
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
    }
}

/// Two spaces per level.
fn indent(depth: usize, out: &mut String) {
    const SPACES: &str = "                                                                ";
    let mut width = depth * 2;
    while width > SPACES.len() {
        out.push_str(SPACES);
        width -= SPACES.len();
    }
    out.push_str(&SPACES[..width]);
}

/// A JSON string as serde_json writes it. Schema text rarely needs escapes, so a string
/// without any is copied as it is; one with escapes is left to serde_json.
fn write_str(s: &str, out: &mut String) {
    if crate::contract::escape::needs_escape(s) {
        let _ = write!(out, "{}", Value::String(s.to_owned()));
    } else {
        out.push('"');
        out.push_str(s);
        out.push('"');
    }
}

/// Lowercase hex SHA-256.
#[must_use]
pub fn sha256_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    out
}
