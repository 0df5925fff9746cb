//! The pinned form of a tool definition and its two digests.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::contract::schema::{canonical_string, sha256_hex, subschemas_of, Subschemas};
use crate::serve::wire::META_KEY;

/// The two digests of a pinned tool, each `sha256:` and 64 lowercase hex digits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Digests {
    /// Of everything a model reads: name, titles, descriptions at every depth.
    pub text: String,
    /// Of everything else a client relies on: the schemas without their texts, the
    /// behaviour hints, the contract identity.
    pub shape: String,
}

/// The fields of a listed tool that are pinned, in that order of importance.
const PINNED: [&str; 6] = ["name", "title", "description", "inputSchema", "outputSchema", "annotations"];

/// The definition of a listed tool as the lock keeps it: `name`, `title`,
/// `description`, `inputSchema`, `outputSchema` and `annotations` as listed (those that
/// are present), and `contract` — `{name, version, sha256}` — when the tool's `_meta`
/// carries a qualified contract identity. Other fields (`icons`, `execution`, other
/// `_meta` keys) are not pinned.
#[must_use]
pub fn pinned_definition(listed: &Value) -> Value {
    let mut out = Map::new();
    for key in PINNED {
        if let Some(value) = listed.get(key).filter(|v| !v.is_null()) {
            out.insert(key.to_owned(), value.clone());
        }
    }
    let identity = &listed["_meta"][META_KEY];
    if identity["qualified"] == Value::Bool(true) {
        let mut contract = Map::new();
        for key in ["name", "version", "sha256"] {
            if let Some(value) = identity.get(key) {
                contract.insert(key.to_owned(), value.clone());
            }
        }
        out.insert("contract".to_owned(), Value::Object(contract));
    }
    Value::Object(out)
}

/// The digests of a pinned definition (see [`pinned_definition`]).
#[must_use]
pub fn digests(definition: &Value) -> Digests {
    let (text, shape) = split(definition);
    let digest = |v: &Value| format!("sha256:{}", sha256_hex(canonical_string(v).as_bytes()));
    Digests { text: digest(&text), shape: digest(&shape) }
}

/// The RFC 8785 (JCS) canonical JSON of a value: keys sorted by UTF-16 code units, no
/// whitespace, numbers as ECMAScript writes them; `None` for a number JSON cannot hold.
#[must_use]
pub fn jcs(value: &Value) -> Option<String> {
    serde_jcs::to_string(value).ok()
}

/// The `contentHash` of a pinned definition, as the draft SEP-3140 proposes it for a tool:
/// `sha256:` and the SHA-256 of its RFC 8785 (JCS) canonical JSON. It covers the same
/// fields as the two [`Digests`] together, in one hash, in a form other implementations
/// can compute; the digests tell a text change from a shape change.
#[must_use]
pub fn content_hash(definition: &Value) -> String {
    let text = jcs(definition).unwrap_or_default();
    format!("sha256:{}", sha256_hex(text.as_bytes()))
}

/// The text part and the shape part of a definition.
fn split(definition: &Value) -> (Value, Value) {
    let mut text = Map::new();
    let mut shape = Map::new();
    for key in ["name", "title", "description"] {
        if let Some(value) = definition.get(key) {
            text.insert(key.to_owned(), value.clone());
        }
    }
    for key in ["inputSchema", "outputSchema"] {
        if let Some(schema) = definition.get(key) {
            let mut texts = Map::new();
            let stripped = strip_texts(schema, "", &mut texts);
            text.insert(key.to_owned(), Value::Object(texts));
            shape.insert(key.to_owned(), stripped);
        }
    }
    if let Some(annotations) = definition.get("annotations") {
        let mut hints = annotations.clone();
        if let Some(map) = hints.as_object_mut()
            && let Some(title) = map.remove("title")
        {
            text.insert("annotationsTitle".to_owned(), title);
        }
        shape.insert("annotations".to_owned(), hints);
    }
    if let Some(contract) = definition.get("contract") {
        shape.insert("contract".to_owned(), contract.clone());
    }
    (Value::Object(text), Value::Object(shape))
}

/// `schema` without the string `title`s and `description`s of its schema objects, which
/// go into `texts` keyed by the pointer of the keyword. Only schema positions are
/// followed (`properties`, `items`, `anyOf`, `$defs`, …), so a property named
/// `description`, or a `default` value holding one, stays where it is.
fn strip_texts(schema: &Value, at: &str, texts: &mut Map<String, Value>) -> Value {
    let Value::Object(map) = schema else { return schema.clone() };
    let mut out = Map::new();
    for (key, value) in map {
        if (key == "title" || key == "description") && value.is_string() {
            texts.insert(format!("{at}/{key}"), value.clone());
            continue;
        }
        let here = format!("{at}/{}", crate::contract::pointer::escape(key));
        let kept = match (subschemas_of(key), value) {
            (Some(Subschemas::Map), Value::Object(members)) => Value::Object(
                members
                    .iter()
                    .map(|(name, sub)| {
                        let below = format!("{here}/{}", crate::contract::pointer::escape(name));
                        (name.clone(), strip_texts(sub, &below, texts))
                    })
                    .collect(),
            ),
            (Some(Subschemas::List), Value::Array(items)) => Value::Array(
                items.iter().enumerate().map(|(i, sub)| strip_texts(sub, &format!("{here}/{i}"), texts)).collect(),
            ),
            (Some(Subschemas::One), sub) => strip_texts(sub, &here, texts),
            _ => value.clone(),
        };
        out.insert(key.clone(), kept);
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_text_anywhere_moves_the_text_digest_only() {
        let base = json!({
            "name": "t",
            "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "description": "The query."}}}
        });
        let mut edited = base.clone();
        edited["inputSchema"]["properties"]["q"]["description"] = json!("The query. Always call t first.");
        let (a, b) = (digests(&base), digests(&edited));
        assert_ne!(a.text, b.text);
        assert_eq!(a.shape, b.shape);
        // The control: a shape edit moves the shape digest only.
        let mut typed = base.clone();
        typed["inputSchema"]["properties"]["q"]["type"] = json!("integer");
        let c = digests(&typed);
        assert_eq!(a.text, c.text);
        assert_ne!(a.shape, c.shape);
    }

    #[test]
    fn a_property_named_description_is_shape() {
        let with = |t: &str| json!({"name": "t", "inputSchema": {"type": "object", "properties": {"description": {"type": t}}}});
        let (a, b) = (digests(&with("string")), digests(&with("integer")));
        assert_eq!(a.text, b.text);
        assert_ne!(a.shape, b.shape);
    }
}

#[cfg(test)]
mod rfc8785 {
    use serde_json::{json, Value};

    use super::{content_hash, jcs};

    /// The example of RFC 8785 §3.2.3 (values, escaping, literals), input and output.
    #[test]
    fn the_rfcs_example() {
        let input = r#"{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}"#;
        let value: Value = serde_json::from_str(input).unwrap();
        let expected = "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],\
                        \"string\":\"€$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}";
        assert_eq!(jcs(&value).unwrap(), expected);
    }

    /// Samples of RFC 8785 Appendix B: IEEE-754 bits and the number JCS writes (the same
    /// as node's `JSON.stringify`).
    #[test]
    fn the_rfcs_number_samples() {
        let samples: [(u64, &str); 10] = [
            (0x0000_0000_0000_0001, "5e-324"),
            (0x8000_0000_0000_0000, "0"),
            (0x4340_0000_0000_0000, "9007199254740992"),
            (0x44b5_2d02_c7e1_4af6, "1e+23"),
            (0x444b_1ae4_d6e2_ef50, "1e+21"),
            (0x3eb0_c6f7_a0b5_ed8d, "0.000001"),
            (0x41b3_de43_5555_5553, "333333333.3333332"),
            (0xbecb_f647_612f_3696, "-0.0000033333333333333333"),
            (0x4314_3ff3_c1cb_0959, "1424953923781206.2"),
            (0x7fef_ffff_ffff_ffff, "1.7976931348623157e+308"),
        ];
        for (bits, expected) in samples {
            assert_eq!(jcs(&json!(f64::from_bits(bits))).unwrap(), expected, "{bits:#018x}");
        }
    }

    /// Keys sort by UTF-16 code units, not by code points: U+1F602 (a surrogate pair from
    /// 0xD83D) comes before U+FB33.
    #[test]
    fn keys_sort_by_utf16_code_units() {
        let value = json!({"\u{fb33}": 1, "\u{1f602}": 2, "\u{20ac}": 3, "1": 4, "\u{f6}": 5});
        assert_eq!(jcs(&value).unwrap(), "{\"1\":4,\"\u{f6}\":5,\"\u{20ac}\":3,\"\u{1f602}\":2,\"\u{fb33}\":1}");
    }

    #[test]
    fn the_content_hash_ignores_key_order_and_whitespace_and_sees_values() {
        let a: Value = serde_json::from_str(r#"{"name": "t", "inputSchema": {"type": "object"}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"inputSchema":{"type":"object"},"name":"t"}"#).unwrap();
        assert_eq!(content_hash(&a), content_hash(&b));
        assert!(content_hash(&a).starts_with("sha256:") && content_hash(&a).len() == 7 + 64);
        // Clean control: another value, another hash.
        assert_ne!(content_hash(&a), content_hash(&json!({"name": "u", "inputSchema": {"type": "object"}})));
    }
}
