//! Protocol eras: peers before 2026-07-28 get a non-object root wrapped as
//! `{"result": …}` (the advertised schema rewritten to match); newer peers get the natural root.

use std::borrow::Cow;

use serde_json::{json, Map, Value};

use super::NATURAL_ROOTS_SINCE;
use crate::contract::OutputContract;

/// The negotiated protocol version of a peer, such as `2025-11-25`.
///
/// The revisions this crate knows are held without an allocation: every call carries
/// one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProtocolVersion(Cow<'static, str>);

/// The revisions a peer commonly negotiates, kept as static strings.
const KNOWN: [&str; 5] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", NATURAL_ROOTS_SINCE];

impl ProtocolVersion {
    /// The latest revision this crate knows.
    #[must_use]
    pub fn latest() -> Self {
        Self(Cow::Borrowed(NATURAL_ROOTS_SINCE))
    }

    /// Wraps a negotiated version string.
    #[must_use]
    pub fn new(version: impl Into<String> + AsRef<str>) -> Self {
        match KNOWN.iter().find(|known| **known == version.as_ref()) {
            Some(known) => Self(Cow::Borrowed(known)),
            None => Self(Cow::Owned(version.into())),
        }
    }

    /// The version string.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this peer accepts only object roots in `structuredContent` and
    /// `outputSchema` (revisions before 2026-07-28). Versions are dates, so they
    /// compare as strings.
    #[must_use]
    pub fn needs_object_root(&self) -> bool {
        &*self.0 < NATURAL_ROOTS_SINCE
    }
}

impl Default for ProtocolVersion {
    fn default() -> Self {
        Self::latest()
    }
}

/// How a contract's root is sent to a peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootShape {
    /// Sent as is.
    Natural,
    /// The root is an object for every instance but the schema does not say
    /// `type: object` at the top (a `oneOf` of objects): old peers need the type added.
    /// A contract's own schema never takes this shape: its canonical form writes the
    /// type at such a root, so what is advertised is what is checked in.
    ObjectByComposition,
    /// Wrapped as `{"result": …}` for peers before 2026-07-28.
    Wrapped,
}

/// How `contract`'s results go to a peer on `protocol`.
#[must_use]
pub fn root_shape(contract: &OutputContract, protocol: &ProtocolVersion) -> RootShape {
    if !protocol.needs_object_root() {
        return RootShape::Natural;
    }
    let schema = contract.schema();
    if schema.get("type").and_then(Value::as_str) == Some("object") {
        RootShape::Natural
    } else if crate::contract::schema::always_object(schema, schema, 0) {
        RootShape::ObjectByComposition
    } else {
        RootShape::Wrapped
    }
}

/// The `outputSchema` to advertise to a peer on `protocol`: the contract's schema, or
/// for older peers and a non-object root, the `{"result": …}` wrapper with its `$ref`s
/// rewritten.
#[must_use]
pub fn advertised_output_schema(contract: &OutputContract, protocol: &ProtocolVersion) -> Value {
    let schema = contract.schema();
    match root_shape(contract, protocol) {
        RootShape::Natural => schema.clone(),
        RootShape::ObjectByComposition => {
            let mut out = schema.clone();
            if let Some(obj) = out.as_object_mut() {
                obj.insert("type".to_owned(), json!("object"));
            }
            out
        }
        RootShape::Wrapped => wrap_schema(schema),
    }
}

/// `{"type":"object","properties":{"result": <root>},"required":["result"],…}` with
/// `$schema` and `$defs` kept at the top and references to the old root rewritten.
fn wrap_schema(schema: &Value) -> Value {
    let mut inner = schema.clone();
    let mut outer = Map::new();
    if let Some(obj) = inner.as_object_mut() {
        for key in ["$schema", "$defs"] {
            if let Some(v) = obj.remove(key) {
                outer.insert(key.to_owned(), v);
            }
        }
    }
    rewrite_root_refs(&mut inner);
    if let Some(defs) = outer.get_mut("$defs") {
        rewrite_root_refs(defs);
    }
    outer.insert("type".to_owned(), json!("object"));
    outer.insert("properties".to_owned(), json!({ "result": inner }));
    outer.insert("required".to_owned(), json!(["result"]));
    outer.insert("additionalProperties".to_owned(), json!(false));
    Value::Object(outer)
}

fn rewrite_root_refs(node: &mut Value) {
    match node {
        Value::Object(obj) => {
            if let Some(Value::String(r)) = obj.get_mut("$ref")
                && (r == "#" || (r.starts_with("#/") && !r.starts_with("#/$defs/")))
            {
                *r = format!("#/properties/result{}", &r[1..]);
            }
            obj.values_mut().for_each(rewrite_root_refs);
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_root_refs),
        _ => {}
    }
}
