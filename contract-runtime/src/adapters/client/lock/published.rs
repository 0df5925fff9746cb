//! A tool's own `contentHash`, as the draft SEP-3140 ("Signed Capability Declarations &
//! Trust Labels") has a server publish it, checked against the hash this crate computes.
//!
//! What the draft says, and what is assumed from it: the field is `contentHash` at the top
//! level of the tool's declaration (beside `name`, next to a `version`); it is SHA-256
//! over the RFC 8785 (JCS) serialization of the declaration *excluding* `contentHash`
//! itself — every other field, `version`, `title`, `icons`, `_meta` included; it is
//! written `<alg>-<base64url>`, such as `sha256-n7k…`. Base64url is read with or without
//! `=` padding, and the lock's own form (`sha256:` and 64 hex digits) is accepted too.
//! Another algorithm is reported as unreadable, not guessed.

use std::fmt::Write as _;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::digest::jcs;

/// The member of a tool's declaration that carries its published hash.
pub const PUBLISHED_HASH_KEY: &str = "contentHash";

/// The longest published value a report quotes, in characters.
pub const MAX_SHOWN_HASH_CHARS: usize = 80;

/// A published `contentHash` checked against the declaration it sits in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PublishedHash {
    /// It is the SHA-256 of the declaration's canonical JSON.
    Matches,
    /// It is not: the declaration is not the one the server hashed (or the server hashes
    /// something else).
    Mismatch {
        /// The published value, cut to [`MAX_SHOWN_HASH_CHARS`], control characters
        /// escaped.
        published: String,
        /// The hash of the declaration as listed, `sha256-` and unpadded base64url.
        computed: String,
    },
    /// It cannot be compared: not a string, another algorithm, or not base64url or hex.
    Unreadable {
        /// The published value, shown as in [`PublishedHash::Mismatch`].
        published: String,
        /// Why, in a few words.
        reason: &'static str,
    },
}

/// The check of the `contentHash` a listed tool publishes; `None` when it publishes none.
///
/// # Examples
///
/// ```
/// use contract_runtime::client::lock::{published_hash, sep3140_hash, PublishedHash};
/// use serde_json::json;
///
/// let mut tool = json!({"name": "t", "version": "3", "inputSchema": {"type": "object"}});
/// assert_eq!(published_hash(&tool), None);
/// tool["contentHash"] = json!(sep3140_hash(&tool).unwrap());
/// assert_eq!(published_hash(&tool), Some(PublishedHash::Matches));
/// tool["description"] = json!("Changed after hashing.");
/// assert!(matches!(published_hash(&tool), Some(PublishedHash::Mismatch { .. })));
/// ```
#[must_use]
pub fn published_hash(declaration: &Value) -> Option<PublishedHash> {
    let published = declaration.get(PUBLISHED_HASH_KEY)?;
    let shown = show(published);
    let unreadable = |reason| Some(PublishedHash::Unreadable { published: shown.clone(), reason });
    let Some(text) = published.as_str() else { return unreadable("not a string") };
    let Some(digest) = digest_of(declaration) else { return unreadable("the declaration has no canonical JSON") };
    let matches = if let Some(b64) = text.strip_prefix("sha256-") {
        match decode_base64url(b64.trim_end_matches('=')) {
            Some(bytes) if bytes.len() == 32 => bytes == digest,
            _ => return unreadable("not 32 bytes of base64url after `sha256-`"),
        }
    } else if let Some(hex) = text.strip_prefix("sha256:") {
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return unreadable("not 64 hex digits after `sha256:`");
        }
        hex.eq_ignore_ascii_case(&to_hex(&digest))
    } else {
        return unreadable("not `sha256-<base64url>`: another algorithm, or no algorithm named");
    };
    Some(if matches {
        PublishedHash::Matches
    } else {
        PublishedHash::Mismatch { published: shown, computed: format!("sha256-{}", encode_base64url(&digest)) }
    })
}

/// The hash the draft SEP-3140 has a server publish for `declaration`: `sha256-` and the
/// unpadded base64url SHA-256 of its JCS canonical JSON without `contentHash`; `None` for
/// a value with no canonical JSON.
#[must_use]
pub fn sep3140_hash(declaration: &Value) -> Option<String> {
    digest_of(declaration).map(|d| format!("sha256-{}", encode_base64url(&d)))
}

fn digest_of(declaration: &Value) -> Option<Vec<u8>> {
    let mut declaration = declaration.clone();
    if let Some(map) = declaration.as_object_mut() {
        map.remove(PUBLISHED_HASH_KEY);
    }
    let canonical = jcs(&declaration)?;
    Some(Sha256::digest(canonical.as_bytes()).to_vec())
}

fn show(value: &Value) -> String {
    let text = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
    let mut out: String = text.chars().take(MAX_SHOWN_HASH_CHARS).flat_map(char::escape_default).collect();
    if text.chars().count() > MAX_SHOWN_HASH_CHARS {
        out.push('…');
    }
    out
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn encode_base64url(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}

fn decode_base64url(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes() {
        let v = u32::try_from(ALPHABET.iter().position(|a| *a == c)?).ok()?;
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(u8::try_from(acc >> bits & 0xff).ok()?);
        }
    }
    Some(out)
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// RFC 4648 §10's test vectors, in the URL alphabet without padding.
    #[test]
    fn base64url_matches_rfc_4648() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg"),
            ("fo", "Zm8"),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg"),
            ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(encode_base64url(plain.as_bytes()), encoded);
            assert_eq!(decode_base64url(encoded).unwrap(), plain.as_bytes());
        }
        assert_eq!(encode_base64url(&[0xfb, 0xff]), "-_8");
        assert_eq!(decode_base64url("a+b"), None);
    }

    /// The digest of a known declaration, computed independently: `printf %s
    /// '{"inputSchema":{"type":"object"},"name":"t"}' | sha256sum`.
    #[test]
    fn the_hash_is_sha256_over_the_jcs_text_without_content_hash() {
        let tool = json!({"name": "t", "inputSchema": {"type": "object"}, "contentHash": "anything"});
        let hex = "sha256:".to_owned() + &to_hex(&digest_of(&tool).unwrap());
        assert_eq!(hex, "sha256:c6005ee7854db532c5afa7ec72ecc502c63014ac9fe51e0b422daf578ebd3e0a");
        let mut published = tool.clone();
        published["contentHash"] = json!(hex);
        assert_eq!(published_hash(&published), Some(PublishedHash::Matches), "the lock's hex form");
        published["contentHash"] = json!(sep3140_hash(&tool).unwrap() + "=");
        assert_eq!(published_hash(&published), Some(PublishedHash::Matches), "padded base64url");
    }

    #[test]
    fn unreadable_values_say_why_and_are_bounded() {
        let long = format!("sha512-{}\n", "A".repeat(500));
        let tool = json!({"name": "t", "contentHash": long});
        let Some(PublishedHash::Unreadable { published, reason }) = published_hash(&tool) else { panic!() };
        assert!(reason.contains("another algorithm"));
        assert!(published.chars().count() <= MAX_SHOWN_HASH_CHARS * 2 + 1 && !published.contains('\n'));
        assert!(matches!(published_hash(&json!({"contentHash": 7})), Some(PublishedHash::Unreadable { .. })));
        assert!(matches!(
            published_hash(&json!({"contentHash": "sha256-abc"})),
            Some(PublishedHash::Unreadable { .. })
        ));
    }
}
