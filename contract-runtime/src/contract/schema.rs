//! Schema generation, markers, lints, closing and the canonical form.
//!
//! Every step is a plain function over `serde_json::Value` so that the xtask, the
//! runtime and the tests share one implementation.
//!
//! # Opaque values: which spelling where
//!
//! A value whose shape the contract does not own (what an upstream API returned, a
//! `serde_json::Value`) is declared opaque. Where it sits decides the spelling:
//!
//! | The value is… | Write |
//! |---|---|
//! | a field of the contract type | `#[tool_output(opaque)]` on the field |
//! | a field of a nested type or of an enum variant | `#[schemars(transform = contract_runtime::opaque)]` on the field |
//! | every use of a type (a `#[serde(transparent)]` newtype with an "any JSON value" schema) | `#[schemars(transform = contract_runtime::opaque)]` on the type |
//! | the values of a flattened map of the contract type | `#[tool_output(opaque)]` on the flattened field |
//! | the values of a flattened map of a nested type or a variant | `#[schemars(with = "contract_runtime::OpaqueMap")]` on the flattened field (schemars ignores `transform` there) |
//!
//! An opaque subtree is listed in the inventory ([`crate::contract::OutputContract::opaque_pointers`])
//! and is never closed, anywhere inside it, under either compatibility; what is around it
//! stays checked. Without a declaration, a subschema that accepts any value is refused
//! ("no silent `{}`"), whether it is written `{}`, `true`, a `type` list of every JSON
//! type, or an `anyOf`/`oneOf` of every type; the message names the spelling to add.
//!
//! ```
//! use contract_runtime::ToolOutput;
//! use schemars::JsonSchema;
//! use serde::Serialize;
//!
//! fn any_json(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
//!     schemars::json_schema!({ "type": ["object", "array", "string", "number", "boolean", "null"] })
//! }
//!
//! /// Not declared: the lint refuses it and says what to write.
//! #[derive(Serialize, JsonSchema)]
//! #[serde(transparent)]
//! struct Loose(#[schemars(schema_with = "any_json")] serde_json::Value);
//!
//! #[derive(Serialize, JsonSchema, ToolOutput)]
//! #[tool_output(version = "1.0.0", compatibility = "exact")]
//! struct Refused {
//!     data: Loose,
//! }
//!
//! let err = Refused::try_contract().unwrap_err().to_string();
//! assert!(err.contains("`#[schemars(transform = contract_runtime::opaque)]` on the type `Loose`"), "{err}");
//!
//! /// Declared on the type: every use is opaque, and objects in it are never closed.
//! #[derive(Serialize, JsonSchema)]
//! #[serde(transparent)]
//! #[schemars(transform = contract_runtime::opaque)]
//! struct AnyJson(#[schemars(schema_with = "any_json")] serde_json::Value);
//!
//! #[derive(Serialize, JsonSchema, ToolOutput)]
//! #[tool_output(version = "1.0.0", compatibility = "exact")]
//! struct Record {
//!     id: u32,
//!     data: AnyJson,
//! }
//!
//! let contract = Record::contract();
//! assert_eq!(contract.opaque_pointers(), ["/data"]);
//! let value = Record { id: 1, data: AnyJson(serde_json::json!({ "any": { "keys": [1] } })) };
//! assert!(contract.validate_output(&value).is_ok());
//! // What is around it stays closed under `exact`.
//! assert!(!contract.is_valid(&serde_json::json!({ "id": 1, "data": 2, "extra": 3 })));
//! ```

use std::collections::BTreeSet;

use schemars::generate::SchemaSettings;
use schemars::Schema;
use serde_json::{Map, Value};

use crate::contract::{Compatibility, ContractError, ContractSpec, ErrorKind};

mod canonical;
mod close;
mod instances;
mod opaque;
mod serde_shapes;
mod type_lists;

pub use canonical::{canonical_string, sha256_hex};

use close::close_objects;
pub(crate) use close::may_be_object;
pub(crate) use instances::{instance_of, mark_instances};
#[doc(hidden)]
pub use serde_shapes::{all_or_none_of, key_names_of};
use serde_shapes::{apply_derived_facts, exact_integer_key_patterns, find_helper_error, mark_flattened_rest};
pub use serde_shapes::{keys, AllOrNone, FlatMap, OpaqueMap};
pub(crate) use type_lists::keywords_of_type;
pub use type_lists::split_type_list;
use type_lists::split_type_lists;

/// Private keyword that marks a sensitive subschema while the schema is being built.
/// It never reaches an advertised schema.
const SENSITIVE_MARK: &str = "x-tool-contracts-sensitive";
/// Private keyword that marks an opaque (pass-through) subschema while building.
pub(crate) const OPAQUE_MARK: &str = "x-tool-contracts-opaque";
/// Private keyword on the schema of [`crate::completeness::Completeness`], so that the
/// pipeline knows where a result carries completeness metadata to check.
pub(crate) const COMPLETENESS_MARK: &str = "x-tool-contracts-completeness";

/// A schemars transform that marks a field as sensitive: its value never appears in
/// errors, logs or violation reports. Use it on fields of nested types, where
/// `#[tool_output(sensitive)]` is not available.
///
/// # Examples
///
/// ```
/// use contract_runtime::ToolOutput;
/// use schemars::JsonSchema;
/// use serde::Serialize;
///
/// #[derive(Serialize, JsonSchema)]
/// struct Agent {
///     id: String,
///     #[schemars(transform = contract_runtime::sensitive)]
///     token: String,
/// }
///
/// #[derive(Serialize, JsonSchema, ToolOutput)]
/// #[tool_output(version = "1.0.0", compatibility = "exact")]
/// struct Fleet {
///     agents: Vec<Agent>,
/// }
///
/// assert_eq!(Fleet::contract().sensitive_pointers(), ["/agents/*/token"]);
/// ```
pub fn sensitive(schema: &mut Schema) {
    schema.insert(SENSITIVE_MARK.to_owned(), Value::Bool(true));
}

/// A schemars transform that declares a field or a type opaque: a pass-through value
/// whose shape the contract does not own. It may accept any JSON value, it is listed in
/// the inventory, and nothing inside it is closed under `exact`. Use it on fields of
/// nested types and enum variants, where `#[tool_output(opaque)]` is not available, and
/// on a type to make every use of it opaque (the [module documentation](self) has the
/// table of spellings). schemars ignores it on a `#[serde(flatten)]` field: use
/// [`OpaqueMap`] there.
///
/// # Examples
///
/// On a type, such as a newtype around `serde_json::Value` that an API client's models
/// describe as "any JSON value":
///
/// ```
/// use contract_runtime::ToolOutput;
/// use schemars::JsonSchema;
/// use serde::Serialize;
///
/// #[derive(Serialize, JsonSchema)]
/// #[serde(transparent)]
/// #[schemars(transform = contract_runtime::opaque)]
/// struct Extra(serde_json::Value);
///
/// #[derive(Serialize, JsonSchema, ToolOutput)]
/// #[tool_output(version = "1.0.0", compatibility = "exact")]
/// struct Items {
///     items: Vec<Extra>,
///     next: Option<Extra>,
/// }
///
/// let contract = Items::contract();
/// assert_eq!(contract.opaque_pointers(), ["/items/*", "/next"]);
/// let object = serde_json::json!({ "nested": { "unknown": true } });
/// assert!(contract.validate_output(&Items { items: vec![Extra(object.clone())], next: None }).is_ok());
/// assert!(contract.validate_output(&Items { items: vec![], next: Some(Extra(object)) }).is_ok());
/// ```
///
/// On a field of a nested type:
///
/// ```
/// use contract_runtime::ToolOutput;
/// use schemars::JsonSchema;
/// use serde::Serialize;
///
/// #[derive(Serialize, JsonSchema)]
/// struct Page {
///     url: String,
///     #[schemars(transform = contract_runtime::opaque)]
///     metadata: serde_json::Value,
/// }
///
/// #[derive(Serialize, JsonSchema, ToolOutput)]
/// #[tool_output(version = "1.0.0", compatibility = "additive")]
/// struct Scrape {
///     pages: Vec<Page>,
/// }
///
/// assert_eq!(Scrape::contract().opaque_pointers(), ["/pages/*/metadata"]);
/// ```
pub fn opaque(schema: &mut Schema) {
    schema.insert(OPAQUE_MARK.to_owned(), Value::Bool(true));
}

/// The result of generation: the final schema and the marker inventory.
pub(crate) struct Generated {
    pub(crate) schema: Value,
    pub(crate) sensitive: Vec<String>,
    pub(crate) opaque: Vec<String>,
    pub(crate) completeness: Vec<String>,
}

/// Instance pointers of marked subschemas, collected while walking from the root.
#[derive(Default)]
struct Marks {
    sensitive: BTreeSet<String>,
    opaque: BTreeSet<String>,
    completeness: BTreeSet<String>,
}

/// The settings every contract is generated with: JSON Schema 2020-12, the serialize
/// contract (outputs are serialized), `$schema` kept, local `$defs` refs only.
#[must_use]
pub fn settings() -> SchemaSettings {
    SchemaSettings::draft2020_12().for_serialize()
}

pub(crate) fn generate<T: schemars::JsonSchema + ?Sized>(spec: &ContractSpec) -> Result<Generated, ContractError> {
    let raw = settings().into_generator().into_root_schema_for::<T>().to_value();
    finish(spec, raw)
}

/// Turns a raw schemars schema into a contract schema: applies root field markers,
/// collects and strips all markers, drops non-standard formats, refuses unconstrained
/// subschemas and closes objects under `exact`.
pub(crate) fn finish(spec: &ContractSpec, mut schema: Value) -> Result<Generated, ContractError> {
    let err = |kind| ContractError { type_name: spec.type_name.to_owned(), contract: spec.name.to_owned(), kind };
    for (fields, mark) in [(spec.sensitive_fields, SENSITIVE_MARK), (spec.opaque_fields, OPAQUE_MARK)] {
        for field in fields {
            let slot = schema
                .get_mut("properties")
                .and_then(|p| p.get_mut(*field))
                .ok_or_else(|| err(ErrorKind::UnknownMarkedField((*field).to_owned())))?;
            if let Value::Bool(b) = slot {
                *slot = if *b { Value::Object(Map::new()) } else { serde_json::json!({ "not": {} }) };
            }
            if let Some(obj) = slot.as_object_mut() {
                obj.insert(mark.to_owned(), Value::Bool(true));
            }
        }
    }

    apply_derived_facts(spec, &mut schema);
    if spec.opaque_flattened {
        mark_flattened_rest(&mut schema).map_err(|()| err(ErrorKind::NoFlattenedMap))?;
    }
    if let Some((pointer, message)) = find_helper_error(&schema, "") {
        return Err(err(ErrorKind::Helper { pointer, message }));
    }

    strip_nonstandard_formats(&mut schema);
    exact_integer_key_patterns(&mut schema);
    type_none_branches_of_flattened_options(&mut schema);
    opaque::overlapping_one_of_as_any_of(&mut schema);
    let exact = spec.compatibility == Compatibility::Exact;
    // Definitions only opaque subtrees reach: neither linted nor closed.
    let opaque_defs = opaque::own_defs_for_opaque_subtrees(&mut schema, exact);
    if opaque::accepts_any(&schema) {
        return Err(err(ErrorKind::PermissiveRoot));
    }
    if let Some((pointer, field)) = find_unconstrained(&schema, &opaque_defs) {
        let kind = if let Some(owner) = flattened_map_owner(&schema, &pointer, spec.type_name) {
            let fix = opaque::flattened_map_fix(&pointer);
            ErrorKind::UnconstrainedFlattenedMap { pointer, owner, fix }
        } else {
            let fix = opaque::unconstrained_fix(&schema, &pointer, field.as_deref(), spec.type_name).into();
            ErrorKind::Unconstrained { pointer, field, fix }
        };
        return Err(err(kind));
    }

    let mut marks = Marks::default();
    collect_marks(&schema, &schema, "", &mut Vec::new(), &mut marks);
    if exact {
        // Marks stay until here: closing leaves every opaque subtree open.
        close_objects(&mut schema, &opaque_defs);
    }
    strip_marks(&mut schema);
    // After closing, which reads `type` arrays as they were written: the object keywords
    // (`additionalProperties: false` included) move into the object branch, and an
    // `unevaluatedProperties` stays where it sees the branches' properties.
    split_type_lists(&mut schema);
    members_of_any_value_as_true(&mut schema);
    // After closing: `type` beside a bare `$ref` would otherwise read as an object of
    // its own and be closed empty.
    type_object_root(&mut schema);
    Ok(Generated {
        schema,
        sensitive: marks.sensitive.into_iter().collect(),
        opaque: marks.opaque.into_iter().collect(),
        completeness: marks.completeness.into_iter().collect(),
    })
}

/// Escapes one JSON pointer token (RFC 6901); the same as [`crate::pointer::escape`].
#[must_use]
pub fn escape_pointer_token(token: &str) -> String {
    crate::contract::pointer::escape(token)
}

/// How a keyword holds subschemas: the one table the schema walkers (here and in the
/// build-time tooling) share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subschemas {
    /// An object of named subschemas (`properties`, `$defs`, …).
    Map,
    /// A list of subschemas (`allOf`, `prefixItems`, …).
    List,
    /// One subschema (`items`, `not`, …).
    One,
}

/// Where `keyword` holds subschemas, if it does.
#[must_use]
pub fn subschemas_of(keyword: &str) -> Option<Subschemas> {
    match keyword {
        "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => Some(Subschemas::Map),
        "allOf" | "anyOf" | "oneOf" | "prefixItems" => Some(Subschemas::List),
        "items"
        | "additionalProperties"
        | "unevaluatedProperties"
        | "unevaluatedItems"
        | "contains"
        | "propertyNames"
        | "not"
        | "if"
        | "then"
        | "else" => Some(Subschemas::One),
        _ => None,
    }
}

/// Calls `f` on every subschema directly below `node` that is a schema position, with the
/// pointer suffix to reach it. `$defs` entries are included.
fn for_each_child<'a>(node: &'a Value, mut f: impl FnMut(String, &'a Value)) {
    let Some(obj) = node.as_object() else { return };
    for (key, value) in obj {
        match (subschemas_of(key), value) {
            (Some(Subschemas::Map), Value::Object(map)) => {
                for (name, sub) in map {
                    f(format!("/{key}/{}", escape_pointer_token(name)), sub);
                }
            }
            (Some(Subschemas::List), Value::Array(list)) => {
                for (i, sub) in list.iter().enumerate() {
                    f(format!("/{key}/{i}"), sub);
                }
            }
            (Some(Subschemas::One), _) => f(format!("/{key}"), value),
            _ => {}
        }
    }
}

fn for_each_child_mut(node: &mut Value, f: &mut impl FnMut(&mut Value)) {
    let Some(obj) = node.as_object_mut() else { return };
    for (key, value) in obj.iter_mut() {
        match (subschemas_of(key), value) {
            (Some(Subschemas::Map), Value::Object(map)) => map.values_mut().for_each(&mut *f),
            (Some(Subschemas::List), Value::Array(list)) => list.iter_mut().for_each(&mut *f),
            (Some(Subschemas::One), value) => f(value),
            _ => {}
        }
    }
}

/// Formats defined by JSON Schema 2020-12 (and understood by Ajv's `ajv-formats` and
/// Python's `jsonschema`). Anything else schemars emits (`uint8`, `int64`, `double`, …)
/// is dropped: the numeric bounds carry its meaning. The one list the schema code, the
/// client harness and contract-audit share.
pub const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Makes any schema portable the way contract schemas are: drops
/// `format` values outside the 2020-12 vocabulary (`uint32`, `double`, …), writing the
/// integer width they named as `minimum`/`maximum`, and writes every `type` array as
/// `anyOf` with one single-`type` branch per type ([`split_type_list`]). The rmcp
/// adapter applies it to the `inputSchema`s it advertises.
///
/// # Examples
///
/// ```
/// let mut schema = serde_json::json!({ "type": "integer", "format": "uint32" });
/// contract_runtime::schema::make_portable(&mut schema);
/// assert_eq!(schema, serde_json::json!({ "type": "integer", "minimum": 0, "maximum": u32::MAX }));
///
/// let mut nullable = serde_json::json!({ "type": ["integer", "null"], "format": "uint32" });
/// contract_runtime::schema::make_portable(&mut nullable);
/// assert_eq!(
///     nullable,
///     serde_json::json!({ "anyOf": [{ "type": "integer", "minimum": 0, "maximum": u32::MAX }, { "type": "null" }] })
/// );
/// ```
pub fn make_portable(schema: &mut Value) {
    strip_nonstandard_formats(schema);
    split_type_lists(schema);
}

fn strip_nonstandard_formats(node: &mut Value) {
    if let Some(obj) = node.as_object_mut()
        && let Some(format) = obj.get("format").and_then(Value::as_str).map(str::to_owned)
        && !STANDARD_FORMATS.contains(&format.as_str())
    {
        obj.remove("format");
        // The width the format named becomes bounds, which every validator
        // understands; schemars writes them itself only for 8- and 16-bit types.
        if let Some((min, max)) = integer_bounds(&format) {
            obj.entry("minimum").or_insert(min);
            obj.entry("maximum").or_insert(max);
        }
    }
    for_each_child_mut(node, &mut strip_nonstandard_formats);
}

/// The range of the integer formats schemars writes for 32- and 64-bit types (`uint`
/// and `int` are `usize` and `isize`, 64-bit on every target we build for).
fn integer_bounds(format: &str) -> Option<(Value, Value)> {
    Some(match format {
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "uint32" => (0.into(), u32::MAX.into()),
        "int64" | "int" => (i64::MIN.into(), i64::MAX.into()),
        "uint64" | "uint" => (0.into(), u64::MAX.into()),
        _ => return None,
    })
}

/// serde writes nothing for a flattened `Option<T>` that is `None`, and schemars says so
/// with `anyOf: [<T>, {}]` on the enclosing object, or on one of its `allOf` members when
/// several fields are flattened (seen for flattened `Option<enum>`). That `{}` is not a
/// value that may be anything: it applies to the enclosing object itself, which already
/// has a type and properties of its own, and under `exact` the keys it lets through are
/// still caught by `unevaluatedProperties` on that object. Written as `{"type": "object"}`
/// it says exactly that and accepts the same instances, so the "no silent `{}`" lint does
/// not refuse a shape serde writes. An `anyOf` whose branches all constrain nothing is
/// left alone: the lint must still refuse it.
fn type_none_branches_of_flattened_options(node: &mut Value) {
    fn walk(node: &mut Value, applies_to_object: bool) {
        if let Some(obj) = node.as_object_mut()
            && (applies_to_object || (obj.contains_key("properties") && may_be_object(obj)))
        {
            if let Some(Value::Array(branches)) = obj.get_mut("anyOf")
                && branches.iter().any(|b| !constrains_nothing(b))
            {
                for branch in branches.iter_mut().filter(|b| constrains_nothing(b)) {
                    *branch = serde_json::json!({ "type": "object" });
                }
            }
            // Each flattened field becomes one `allOf` member applied to the same object.
            for member in obj.get_mut("allOf").and_then(Value::as_array_mut).into_iter().flatten() {
                walk(member, true);
            }
        }
        for_each_child_mut(node, &mut |child| walk(child, false));
    }
    walk(node, false);
}

/// The annotation keywords of JSON Schema 2020-12: they describe but never constrain, so
/// a change to one is cosmetic. The one list the schema lints and the evolution
/// classifier share.
pub const ANNOTATIONS: &[&str] =
    &["title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment"];

/// Keywords besides the annotations that constrain nothing at the node they sit on.
const NOT_CONSTRAINING: &[&str] = &["$schema", "$id", "$defs", "definitions", SENSITIVE_MARK];

/// Whether a subschema accepts every JSON value.
fn constrains_nothing(node: &Value) -> bool {
    match node {
        Value::Bool(b) => *b,
        Value::Object(obj) => {
            obj.keys().all(|k| ANNOTATIONS.contains(&k.as_str()) || NOT_CONSTRAINING.contains(&k.as_str()))
        }
        _ => false,
    }
}

/// Whether a subschema accepts every JSON value, in every spelling the lint knows (`{}`,
/// `true`, annotations only, a type list of every type, …).
pub(crate) fn accepts_any(node: &Value) -> bool {
    opaque::accepts_any(node)
}

fn is_opaque(node: &Value) -> bool {
    node.get(OPAQUE_MARK).is_some()
}

/// The first subschema that accepts any value and is not declared opaque, as (schema
/// pointer, field name). The definitions in `opaque_defs` (reached only from opaque
/// subtrees) are not looked into.
fn find_unconstrained(root: &Value, opaque_defs: &BTreeSet<String>) -> Option<(String, Option<String>)> {
    /// One token of the schema pointer. The walk visits every subschema of every
    /// contract and almost never finds one, so the pointer is only written on a find.
    #[derive(Clone, Copy)]
    enum Token<'a> {
        Key(&'a str),
        Index(usize),
    }
    fn walk<'a>(
        node: &'a Value,
        path: &mut Vec<Token<'a>>,
        field: Option<&'a str>,
        opaque_defs: &BTreeSet<String>,
    ) -> Option<(String, Option<String>)> {
        if is_opaque(node) {
            return None;
        }
        if !path.is_empty() && opaque::accepts_any(node) {
            let mut pointer = String::new();
            for token in path.iter() {
                pointer.push('/');
                match token {
                    Token::Key(key) => pointer.push_str(&escape_pointer_token(key)),
                    Token::Index(i) => pointer.push_str(&i.to_string()),
                }
            }
            return Some((pointer, field.map(str::to_owned)));
        }
        let obj = node.as_object()?;
        for (key, value) in obj {
            let at = path.len();
            let found = match (subschemas_of(key), value) {
                (Some(Subschemas::Map), Value::Object(map)) => map.iter().find_map(|(name, sub)| {
                    if at == 0
                        && key == "$defs"
                        && opaque_defs.contains(&format!("#/$defs/{}", escape_pointer_token(name)))
                    {
                        return None;
                    }
                    path.extend([Token::Key(key), Token::Key(name)]);
                    let field = if key == "properties" { Some(name.as_str()) } else { field };
                    let found = walk(sub, path, field, opaque_defs);
                    path.truncate(at);
                    found
                }),
                (Some(Subschemas::List), Value::Array(list)) => list.iter().enumerate().find_map(|(i, sub)| {
                    path.extend([Token::Key(key), Token::Index(i)]);
                    let found = walk(sub, path, field, opaque_defs);
                    path.truncate(at);
                    found
                }),
                // `not: {}` is the schema that rejects everything, not a permissive one.
                (Some(Subschemas::One), _) if key != "not" => {
                    path.push(Token::Key(key));
                    let found = walk(value, path, field, opaque_defs);
                    path.truncate(at);
                    found
                }
                _ => None,
            };
            if found.is_some() {
                return found;
            }
        }
        None
    }
    walk(root, &mut Vec::new(), None, opaque_defs)
}

/// When the unconstrained subschema at `pointer` holds the values of a flattened map (the
/// catch-all of an object that also has fields of its own), the type that flattens it:
/// the `$defs` entry it sits in, or the contract type `root_type`.
fn flattened_map_owner(schema: &Value, pointer: &str, root_type: &str) -> Option<String> {
    let (parent, last) = pointer.rsplit_once('/')?;
    if !matches!(last, "additionalProperties" | "unevaluatedProperties") {
        return None;
    }
    schema.pointer(parent)?.get("properties")?;
    let owner = match parent.strip_prefix("/$defs/") {
        Some(rest) => crate::contract::pointer::unescape(rest.split('/').next().unwrap_or(rest)),
        None => root_type.to_owned(),
    };
    Some(owner)
}

/// Writes `"type": "object"` at the root when every instance is an object but the root
/// says so only through `$ref`, `oneOf` or `anyOf` (a transparent newtype of a struct,
/// an internally tagged enum, a root hoisted into `$defs`). The checked-in schema is then
/// the one every peer is shown: peers before 2026-07-28 accept only an `outputSchema`
/// whose root has `type: object`, and a schema that has it needs no rewriting for them.
fn type_object_root(schema: &mut Value) {
    if schema.get("type").is_none()
        && always_object(schema, schema, 0)
        && let Some(obj) = schema.as_object_mut()
    {
        obj.insert("type".to_owned(), Value::String("object".to_owned()));
    }
}

/// Whether every instance `node` (a part of `root`) accepts is an object: it says
/// `type: object`, or refers to a schema that does, or each of its `oneOf`/`anyOf`
/// branches does.
pub(crate) fn always_object(root: &Value, node: &Value, depth: usize) -> bool {
    if depth > 32 {
        return false;
    }
    if node.get("type").and_then(Value::as_str) == Some("object") {
        return true;
    }
    if let Some(target) = node.get("$ref").and_then(Value::as_str).and_then(|r| resolve(root, r)) {
        return always_object(root, target, depth + 1);
    }
    ["oneOf", "anyOf"].iter().any(|k| {
        node.get(*k)
            .and_then(Value::as_array)
            .is_some_and(|branches| !branches.is_empty() && branches.iter().all(|b| always_object(root, b, depth + 1)))
    })
}

/// Follows a local `$ref` such as `#/$defs/Agent`.
fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    crate::contract::pointer::resolve_ref(root, reference)
}

/// Records the instance pointer of every marked subschema reachable from `node`.
fn collect_marks(root: &Value, node: &Value, instance: &str, visiting: &mut Vec<String>, marks: &mut Marks) {
    let Some(obj) = node.as_object() else { return };
    if obj.contains_key(SENSITIVE_MARK) {
        marks.sensitive.insert(instance.to_owned());
    }
    if obj.contains_key(OPAQUE_MARK) {
        marks.opaque.insert(instance.to_owned());
    }
    if obj.contains_key(COMPLETENESS_MARK) {
        marks.completeness.insert(instance.to_owned());
    }
    if let Some(reference) = obj.get("$ref").and_then(Value::as_str)
        && !visiting.iter().any(|r| r == reference)
        && let Some(target) = resolve(root, reference)
    {
        visiting.push(reference.to_owned());
        collect_marks(root, target, instance, visiting, marks);
        visiting.pop();
    }
    for (key, value) in obj {
        let next = |suffix: &str| format!("{instance}/{suffix}");
        match key.as_str() {
            "properties" => {
                for (name, sub) in value.as_object().into_iter().flatten() {
                    collect_marks(root, sub, &next(&escape_pointer_token(name)), visiting, marks);
                }
            }
            "patternProperties" => {
                for sub in value.as_object().into_iter().flat_map(Map::values) {
                    collect_marks(root, sub, &next("*"), visiting, marks);
                }
            }
            "additionalProperties" | "items" | "unevaluatedProperties" | "unevaluatedItems" => {
                collect_marks(root, value, &next("*"), visiting, marks);
            }
            "prefixItems" => {
                for (i, sub) in value.as_array().into_iter().flatten().enumerate() {
                    collect_marks(root, sub, &next(&i.to_string()), visiting, marks);
                }
            }
            "allOf" | "anyOf" | "oneOf" => {
                for sub in value.as_array().into_iter().flatten() {
                    collect_marks(root, sub, instance, visiting, marks);
                }
            }
            "if" | "then" | "else" => collect_marks(root, value, instance, visiting, marks),
            _ => {}
        }
    }
}

/// Writes `true` for the members of an object whose values may be anything: an
/// `additionalProperties` or `unevaluatedProperties` that is `{}` once the marks are gone
/// (the values of an [`OpaqueMap`] or of a flattened map declared opaque). The two accept
/// the same values, and `true` is the spelling portability linters (the MCP Inspector's)
/// read as a deliberate "any value" where they flag `{}` as a schema that constrains
/// nothing.
fn members_of_any_value_as_true(node: &mut Value) {
    if let Some(obj) = node.as_object_mut() {
        for key in ["additionalProperties", "unevaluatedProperties"] {
            if let Some(members) = obj.get_mut(key)
                && members.as_object().is_some_and(Map::is_empty)
            {
                *members = Value::Bool(true);
            }
        }
    }
    for_each_child_mut(node, &mut members_of_any_value_as_true);
}

fn strip_marks(node: &mut Value) {
    if let Some(obj) = node.as_object_mut() {
        obj.remove(SENSITIVE_MARK);
        obj.remove(OPAQUE_MARK);
        obj.remove(COMPLETENESS_MARK);
    }
    for_each_child_mut(node, &mut strip_marks);
}
