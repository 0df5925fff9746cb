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
        if let Some(map) = hints.as_object_mut() {
            if let Some(title) = map.remove("title") {
                text.insert("annotationsTitle".to_owned(), title);
            }
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
