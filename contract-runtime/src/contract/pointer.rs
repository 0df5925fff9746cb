//! JSON pointers (RFC 6901): the one place tokens are escaped, unescaped and split.

/// Escapes one pointer token: `~` as `~0`, `/` as `~1`.
///
/// # Examples
///
/// ```
/// assert_eq!(contract_runtime::pointer::escape("a/b~c"), "a~1b~0c");
/// ```
#[must_use]
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Unescapes one pointer token (the inverse of [`escape`]; `~1` first, so `~01` reads
/// as `~1`, as RFC 6901 requires).
///
/// # Examples
///
/// ```
/// assert_eq!(contract_runtime::pointer::unescape("a~1b~0c"), "a/b~c");
/// assert_eq!(contract_runtime::pointer::unescape("~01"), "~1");
/// ```
#[must_use]
pub fn unescape(token: &str) -> String {
    if !token.contains('~') {
        // Most tokens have no escape: one copy, no searches.
        return token.to_owned();
    }
    token.replace("~1", "/").replace("~0", "~")
}

/// The value `pointer` names in `value`, as `Value::pointer` finds it, without an
/// allocation for tokens that hold no escape (most do).
pub(crate) fn get<'v>(value: &'v serde_json::Value, pointer: &str) -> Option<&'v serde_json::Value> {
    if pointer.is_empty() {
        return Some(value);
    }
    let rest = pointer.strip_prefix('/')?;
    rest.split('/').try_fold(value, |target, token| {
        let token: std::borrow::Cow<'_, str> = if token.contains('~') { unescape(token).into() } else { token.into() };
        match target {
            serde_json::Value::Object(map) => map.get(token.as_ref()),
            serde_json::Value::Array(list) => array_index(&token).and_then(|i| list.get(i)),
            _ => None,
        }
    })
}

/// An array index token as RFC 6901 writes it: digits, no leading zero, no sign.
fn array_index(token: &str) -> Option<usize> {
    if token.starts_with('+') || (token.starts_with('0') && token.len() != 1) {
        return None;
    }
    token.parse().ok()
}

/// The unescaped tokens of a pointer; the root `""` has none.
///
/// # Examples
///
/// ```
/// assert_eq!(contract_runtime::pointer::tokens("/a~1b/0"), ["a/b", "0"]);
/// assert!(contract_runtime::pointer::tokens("").is_empty());
/// ```
#[must_use]
pub fn tokens(pointer: &str) -> Vec<String> {
    if pointer.is_empty() {
        return Vec::new();
    }
    pointer.split('/').skip(1).map(unescape).collect()
}

/// `pointer` with one more token, escaped.
///
/// # Examples
///
/// ```
/// assert_eq!(contract_runtime::pointer::push("/hosts", "db/1"), "/hosts/db~11");
/// ```
#[must_use]
pub fn push(pointer: &str, token: &str) -> String {
    format!("{pointer}/{}", escape(token))
}

/// Resolves a local `$ref` (`#`, `#/$defs/Agent` with percent-encoding undone, or
/// `#anchor`) inside `root`: the one `$ref` resolver every schema walker uses. A remote
/// reference, or one that leads nowhere, is `None` (callers fail closed on it).
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use contract_runtime::pointer::resolve_ref;
///
/// let root = json!({ "$defs": { "a b": { "type": "string", "$anchor": "text" } } });
/// assert_eq!(resolve_ref(&root, "#/$defs/a%20b"), root.pointer("/$defs/a b"));
/// assert_eq!(resolve_ref(&root, "#text"), root.pointer("/$defs/a b"));
/// assert_eq!(resolve_ref(&root, "#"), Some(&root));
/// assert_eq!(resolve_ref(&root, "https://example.com/s.json"), None);
/// assert_eq!(resolve_ref(&root, "#/$defs/missing"), None);
/// ```
#[must_use]
pub fn resolve_ref<'a>(root: &'a serde_json::Value, reference: &str) -> Option<&'a serde_json::Value> {
    let fragment = reference.strip_prefix('#')?;
    if fragment.is_empty() {
        return Some(root);
    }
    if !fragment.starts_with('/') {
        return find_anchor(root, fragment);
    }
    root.pointer(fragment).or_else(|| root.pointer(&percent_decode(fragment)?))
}

fn find_anchor<'a>(node: &'a serde_json::Value, anchor: &str) -> Option<&'a serde_json::Value> {
    match node {
        serde_json::Value::Object(object) => {
            if object.get("$anchor").and_then(serde_json::Value::as_str) == Some(anchor) {
                return Some(node);
            }
            object.values().find_map(|child| find_anchor(child, anchor))
        }
        serde_json::Value::Array(items) => items.iter().find_map(|child| find_anchor(child, anchor)),
        _ => None,
    }
}

/// Undoes URI percent-encoding; `None` when there is none to undo or it is malformed.
fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return None;
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::get;

    /// `get` finds what serde_json's `Value::pointer` finds, for every pointer made from
    /// the tokens below (escapes, index forms RFC 6901 refuses, empty keys), joined one
    /// to three deep: serde_json is the oracle.
    #[test]
    fn get_agrees_with_serde_json_pointer() {
        let value = json!({
            "a": { "b": [10, { "c": true }], "": "empty key", "x/y": 1, "m~n": 2, "~1": 3 },
            "list": [[0, 1], { "0": "key zero" }],
            "0": "top zero",
        });
        let tokens =
            ["a", "b", "c", "", "0", "1", "01", "+1", "-", "2", "x~1y", "m~0n", "~01", "~1", "list", "x/y", "missing"];
        let mut pointers = vec![String::new(), "a".to_owned(), "/".to_owned()];
        for first in tokens {
            pointers.push(format!("/{first}"));
            for second in tokens {
                pointers.push(format!("/{first}/{second}"));
                for third in tokens {
                    pointers.push(format!("/{first}/{second}/{third}"));
                }
            }
        }
        let mut found = 0;
        for pointer in &pointers {
            assert_eq!(get(&value, pointer), value.pointer(pointer), "pointer {pointer:?}");
            found += usize::from(value.pointer(pointer).is_some());
        }
        // Controls: the table reaches values at every depth, not only misses.
        assert!(found > 15, "only {found} pointers found something");
        assert_eq!(get(&value, "/a/b/1/c"), Some(&json!(true)));
        assert_eq!(get(&value, "/a/m~0n"), Some(&json!(2)));
    }
}
