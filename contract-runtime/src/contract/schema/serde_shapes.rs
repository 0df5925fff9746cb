//! What serde writes and the schemas schemars generates lose: map keys that are not
//! strings, flattened `Option<Struct>`s, flattened maps of opaque values, and the exact
//! form of integer keys. The public helpers declare them on nested types; the derive
//! hands the same facts over for the contract type's own fields.

use serde_json::{Map, Value};

use schemars::Schema;

use super::{escape_pointer_token, for_each_child, for_each_child_mut, may_be_object, settings, OPAQUE_MARK};
use crate::contract::ContractSpec;

/// The key pattern schemars writes for maps with unsigned integer keys, and the one for
/// signed keys.
const SCHEMARS_UNSIGNED_KEY: &str = r"^\d+$";
const SCHEMARS_SIGNED_KEY: &str = r"^-?\d+$";
/// What serde writes for such keys: decimal ASCII digits without leading zeros, and no
/// `-0`. `\d` is not that: Python's `re` and Rust's `regex` read it as any Unicode
/// decimal digit (`"١٢"` would pass), and it allows `"007"`, which serde never writes.
const UNSIGNED_KEY: &str = "^(0|[1-9][0-9]*)$";
const SIGNED_KEY: &str = "^(0|-?[1-9][0-9]*)$";

/// Replaces schemars' integer key patterns with patterns of exactly the keys serde writes
/// for integer map keys. The width of the integer is not in the schema, so a key past the
/// type's range (`"256"` for `u8`) still matches: the pattern bounds the form, not the value.
pub(super) fn exact_integer_key_patterns(node: &mut Value) {
    if let Some(Value::Object(patterns)) = node.get_mut("patternProperties") {
        for (from, to) in [(SCHEMARS_UNSIGNED_KEY, UNSIGNED_KEY), (SCHEMARS_SIGNED_KEY, SIGNED_KEY)] {
            if let Some(sub) = patterns.remove(from) {
                patterns.insert(to.to_owned(), sub);
            }
        }
    }
    for_each_child_mut(node, &mut exact_integer_key_patterns);
}

/// Private keyword a helper of this module leaves where it could not do its job (a
/// [`keys`] transform on a field that holds no map, an [`AllOrNone`] of a type without
/// fields): the contract then fails to build with that message instead of silently
/// accepting what the helper was meant to refuse.
const HELPER_ERROR_MARK: &str = "x-tool-contracts-helper-error";

/// The schema of a flattened map whose values the contract does not own, such as a
/// `#[serde(flatten)] extra: HashMap<String, serde_json::Value>` that carries whatever an
/// upstream API returned. schemars ignores `#[schemars(transform = …)]` on a flattened
/// field, so on a flattened field of a nested type or an enum variant write
/// `#[schemars(with = "contract_runtime::OpaqueMap")]`; on a field of the contract type
/// itself `#[tool_output(opaque)]` does the same (and `OpaqueMap` works there too). The
/// values are listed in the inventory as opaque (`/*` for the root object, `/pages/*/*`
/// below); they are never closed, while the fields beside the map stay checked. On a map
/// field that is not flattened it declares the map's values opaque (`/field/*`). See the
/// table of spellings in [`crate::schema`].
///
/// # Examples
///
/// ```
/// use std::collections::HashMap;
///
/// use contract_runtime::ToolOutput;
/// use schemars::JsonSchema;
/// use serde::Serialize;
///
/// #[derive(Serialize, JsonSchema)]
/// struct Page {
///     url: String,
///     #[serde(flatten)]
///     #[schemars(with = "contract_runtime::OpaqueMap")]
///     upstream: HashMap<String, serde_json::Value>,
/// }
///
/// #[derive(Serialize, JsonSchema, ToolOutput)]
/// #[tool_output(version = "1.0.0", compatibility = "exact")]
/// struct Scrape {
///     pages: Vec<Page>,
/// }
///
/// assert_eq!(Scrape::contract().opaque_pointers(), ["/pages/*/*"]);
/// let page = serde_json::json!({ "pages": [{ "url": "u", "anything": [1, { "a": null }] }] });
/// assert!(Scrape::contract().is_valid(&page));
/// assert!(!Scrape::contract().is_valid(&serde_json::json!({ "pages": [{ "anything": 1 }] })));
/// ```
#[derive(Debug)]
pub struct OpaqueMap;

impl schemars::JsonSchema for OpaqueMap {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "OpaqueMap".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> Schema {
        schemars::json_schema!({ "type": "object", "additionalProperties": { OPAQUE_MARK: true } })
    }
}

/// What serde writes for a map key of a type whose key schema is `key`, as a schema for a
/// string, or why the key type is not supported. `None` when any string is a key.
fn key_string_schema(key: &Value) -> Result<Option<Value>, String> {
    let string = |v: &Value| v.get("type").and_then(Value::as_str) == Some("string");
    let schema = match key.get("type").and_then(Value::as_str) {
        // serde_json writes `true` and `false` as those words.
        Some("boolean") => serde_json::json!({ "enum": ["false", "true"] }),
        Some("integer") => {
            let unsigned = key.get("minimum").and_then(Value::as_i64).is_some_and(|m| m >= 0);
            serde_json::json!({ "pattern": if unsigned { UNSIGNED_KEY } else { SIGNED_KEY } })
        }
        // `uuid::Uuid` writes the lowercase hyphenated form.
        _ if string(key) && key.get("format").and_then(Value::as_str) == Some("uuid") => {
            serde_json::json!({ "pattern": UUID_KEY })
        }
        // `char`: one Unicode scalar value. `minLength` and `maxLength` count code points
        // in every validator we target (Ajv counts a surrogate pair as one).
        _ if string(key) && (key.get("minLength").is_some() || key.get("maxLength").is_some()) => {
            let mut out = Map::new();
            for k in ["minLength", "maxLength", "pattern"] {
                if let Some(v) = key.get(k) {
                    out.insert(k.to_owned(), v.clone());
                }
            }
            Value::Object(out)
        }
        _ if string(key) && key.get("enum").is_some() => serde_json::json!({ "enum": key["enum"] }),
        _ if string(key) && key.get("pattern").is_some() => serde_json::json!({ "pattern": key["pattern"] }),
        _ if string(key) => return Ok(None),
        _ => {
            return Err(format!(
                "a map key with the schema {key} is not a type serde_json writes as a key we can describe"
            ))
        }
    };
    Ok(Some(schema))
}

/// Puts `names` as `propertyNames` on the map objects of `node`, looking through
/// `Option` (`anyOf`), `Vec` and tuples (`items`, `prefixItems`). Returns whether it found one.
fn apply_key_names(node: &mut Value, names: &Value) -> bool {
    let Some(obj) = node.as_object_mut() else { return false };
    if may_be_object(obj) && (obj.contains_key("additionalProperties") || obj.contains_key("patternProperties")) {
        obj.insert("propertyNames".to_owned(), names.clone());
        return true;
    }
    let mut found = false;
    for key in ["items", "anyOf", "oneOf", "prefixItems"] {
        match obj.get_mut(key) {
            Some(Value::Array(list)) => list.iter_mut().for_each(|sub| found |= apply_key_names(sub, names)),
            Some(sub) => found |= apply_key_names(sub, names),
            None => {}
        }
    }
    found
}

/// A key schema from [`key_string_schema`] as one regular expression, for
/// `patternProperties`.
fn key_pattern(names: &Value) -> Option<String> {
    match (names.get("pattern"), names.get("enum"), names.get("maxLength")) {
        (Some(Value::String(p)), _, _) => Some(p.clone()),
        (_, Some(Value::Array(words)), _) => {
            let words: Vec<String> = words.iter().filter_map(Value::as_str).map(escape_regex).collect();
            Some(format!("^({})$", words.join("|")))
        }
        // One character of any kind, new lines included.
        (_, _, Some(max)) if max == 1 => Some(r"^[\s\S]$".to_owned()),
        _ => None,
    }
}

/// For the derive: the `propertyNames` schema of map keys of type `K` (see [`keys`]), or
/// `None` when schemars already says what the keys are (integers, enums and patterns
/// become `patternProperties` or `properties`), when any string is such a key, or when
/// serde_json cannot write it as one.
#[doc(hidden)]
#[must_use]
pub fn key_names_of<K: schemars::JsonSchema + ?Sized>() -> Option<Value> {
    let key = K::json_schema(&mut settings().into_generator()).to_value();
    let described = key.get("type").and_then(Value::as_str) == Some("integer")
        || key.get("enum").is_some()
        || key.get("pattern").is_some();
    if described {
        return None;
    }
    key_string_schema(&key).ok().flatten()
}

/// For the derive: the all-or-none branches of a flattened `Option<T>` (see
/// [`AllOrNone`]), or `None` when `T` is not a struct with fields it always writes.
#[doc(hidden)]
#[must_use]
pub fn all_or_none_of<T: schemars::JsonSchema + ?Sized>() -> Option<Value> {
    all_or_none_branches(&T::json_schema(&mut settings().into_generator()).to_value())
}

/// `[{required: <always written>}, {not: {anyOf: [{required: [<each field>]}…]}}]` for
/// the struct schema `schema`, or `None` when it has no fields it always writes.
fn all_or_none_branches(schema: &Value) -> Option<Value> {
    let fields = schema.get("required")?.as_array().filter(|r| !r.is_empty())?;
    // `None` writes no field at all, not even those `T` writes only sometimes.
    let any_field: Vec<Value> =
        schema.get("properties")?.as_object()?.keys().map(|f| serde_json::json!({ "required": [f] })).collect();
    Some(serde_json::json!([{ "required": fields }, { "not": { "anyOf": any_field } }]))
}

/// Applies what the derive found on the contract type's own fields and schemars cannot
/// say: typed map keys, flattened typed-key maps and flattened `Option<Struct>`s.
pub(super) fn apply_derived_facts(spec: &ContractSpec, schema: &mut Value) {
    for (name, names) in spec.keyed_fields {
        let pointer = format!("/properties/{}", escape_pointer_token(name));
        if let (Some(names), Some(slot)) = (names(), schema.pointer_mut(&pointer)) {
            apply_key_names(slot, &names);
        }
    }
    let Some(root) = schema.as_object_mut() else { return };
    for names in spec.flattened_keys {
        let Some(pattern) = names().as_ref().and_then(key_pattern) else { continue };
        // The map's values are the catch-all of the root; they become the values of the keys
        // serde writes, and `exact` closes the rest.
        for slot in ["additionalProperties", "unevaluatedProperties"] {
            if let Some(values) = root.get(slot).filter(|v| **v != Value::Bool(false)).cloned() {
                root.remove(slot);
                let patterns = root.entry("patternProperties").or_insert_with(|| Value::Object(Map::new()));
                if let Some(patterns) = patterns.as_object_mut() {
                    patterns.insert(pattern, values);
                }
                break;
            }
        }
    }
    for branches in spec.flattened_options {
        let Some(branches) = branches() else { continue };
        if root.contains_key("anyOf") {
            let all = root.entry("allOf").or_insert_with(|| Value::Array(Vec::new()));
            if let Some(all) = all.as_array_mut() {
                all.push(serde_json::json!({ "anyOf": branches }));
            }
        } else {
            root.insert("anyOf".to_owned(), branches);
        }
    }
}

/// The lowercase hyphenated form `uuid::Uuid` serializes to.
const UUID_KEY: &str = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$";

/// A schemars transform for a map field whose keys are not strings: it constrains the
/// keys to what serde writes for the key type `K` (`"true"`/`"false"` for `bool`, one
/// character for `char`, the hyphenated form for `uuid::Uuid`, decimal digits for
/// integers) with `propertyNames`. schemars writes every such map as one with string
/// keys, so without it any key passes. It finds the map inside `Option`, `Vec` and arrays.
/// For a flattened map, where schemars ignores transforms, use [`FlatMap`] instead.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
///
/// use contract_runtime::ToolOutput;
/// use schemars::JsonSchema;
/// use serde::Serialize;
///
/// #[derive(Serialize, JsonSchema, ToolOutput)]
/// #[tool_output(version = "1.0.0", compatibility = "exact")]
/// struct Flags {
///     #[schemars(transform = contract_runtime::keys::<bool>)]
///     seen: BTreeMap<bool, u32>,
/// }
///
/// let contract = Flags::contract();
/// assert!(contract.validate_output(&Flags { seen: [(true, 1), (false, 2)].into() }).is_ok());
/// assert!(!contract.is_valid(&serde_json::json!({ "seen": { "maybe": 3 } })));
/// ```
pub fn keys<K: schemars::JsonSchema + ?Sized>(schema: &mut Schema) {
    let key = K::json_schema(&mut settings().into_generator()).to_value();
    let names = match key_string_schema(&key) {
        Ok(Some(names)) => names,
        // Any string is a key of this type: nothing to constrain.
        Ok(None) => return,
        Err(why) => {
            schema
                .insert(HELPER_ERROR_MARK.to_owned(), Value::String(format!("`keys::<{}>`: {why}", K::schema_name())));
            return;
        }
    };
    let mut value = std::mem::take(schema).to_value();
    if !apply_key_names(&mut value, &names)
        && let Some(obj) = value.as_object_mut()
    {
        obj.insert(
                HELPER_ERROR_MARK.to_owned(),
                Value::String(format!(
                    "`keys::<{}>` is on a field that holds no map (no object with `additionalProperties` or `patternProperties` under it)",
                    K::schema_name()
                )),
            );
    }
    *schema = Schema::try_from(value).unwrap_or_default();
}

/// The schema of a flattened `BTreeMap<K, V>` or `HashMap<K, V>` whose keys are not
/// strings, for `#[schemars(with = "contract_runtime::FlatMap<K, V>")]` on the flattened
/// field. schemars writes such a map as one with string keys and ignores transforms on
/// flattened fields, so without it any key passes. The keys become a `patternProperties`
/// pattern (a `propertyNames` would also apply to the fields around the map), and the
/// enclosing object is closed under `exact`.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
///
/// use contract_runtime::ToolOutput;
/// use schemars::JsonSchema;
/// use serde::Serialize;
///
/// #[derive(Serialize, JsonSchema, ToolOutput)]
/// #[tool_output(version = "1.0.0", compatibility = "exact")]
/// struct Votes {
///     id: u32,
///     #[serde(flatten)]
///     #[schemars(with = "contract_runtime::FlatMap<bool, u32>")]
///     by_answer: BTreeMap<bool, u32>,
/// }
///
/// let contract = Votes::contract();
/// assert!(contract.validate_output(&Votes { id: 1, by_answer: [(true, 3)].into() }).is_ok());
/// assert!(!contract.is_valid(&serde_json::json!({ "id": 1, "maybe": 3 })));
/// ```
#[derive(Debug)]
pub struct FlatMap<K: ?Sized, V: ?Sized>(std::marker::PhantomData<K>, std::marker::PhantomData<V>);

impl<K: schemars::JsonSchema + ?Sized, V: schemars::JsonSchema + ?Sized> schemars::JsonSchema for FlatMap<K, V> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("FlatMap_from_{}_to_{}", K::schema_name(), V::schema_name()).into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> Schema {
        let values = generator.subschema_for::<V>().to_value();
        let key = K::json_schema(generator).to_value();
        let pattern = match key_string_schema(&key) {
            Ok(Some(names)) => key_pattern(&names).ok_or_else(|| format!("the key schema {key} has no pattern form")),
            Ok(None) => return schemars::json_schema!({ "type": "object", "additionalProperties": values }),
            Err(why) => Err(why),
        };
        match pattern {
            Ok(pattern) => schemars::json_schema!({ "type": "object", "patternProperties": { pattern: values } }),
            Err(why) => schemars::json_schema!({
                "type": "object",
                HELPER_ERROR_MARK: format!("`FlatMap<{}, {}>`: {why}", K::schema_name(), V::schema_name()),
            }),
        }
    }
}

/// Escapes the regular expression syntax characters of `text`.
fn escape_regex(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\^$.|?*+()[]{}".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The schema of a flattened `Option<T>` of a struct `T`, for
/// `#[schemars(with = "contract_runtime::AllOrNone<T>")]` on the flattened field. serde
/// writes either every field of `T` (`Some`) or none of them (`None`), but schemars makes
/// each field optional on its own, so a payload with half of `T` passes. This one says
/// "all of the fields `T` always writes, or none of its fields" with `anyOf` and `required`,
/// which draft-07 Ajv reads too (it ignores `dependentRequired`).
///
/// # Examples
///
/// ```
/// use contract_runtime::ToolOutput;
/// use schemars::JsonSchema;
/// use serde::Serialize;
///
/// #[derive(Serialize, JsonSchema)]
/// struct Audit {
///     created_by: String,
///     created_at: u64,
/// }
///
/// #[derive(Serialize, JsonSchema, ToolOutput)]
/// #[tool_output(version = "1.0.0", compatibility = "exact")]
/// struct Record {
///     id: u32,
///     #[serde(flatten)]
///     #[schemars(with = "contract_runtime::AllOrNone<Audit>")]
///     audit: Option<Audit>,
/// }
///
/// let contract = Record::contract();
/// assert!(contract.validate_output(&Record { id: 1, audit: None }).is_ok());
/// let audit = Audit { created_by: "alice".into(), created_at: 7 };
/// assert!(contract.validate_output(&Record { id: 1, audit: Some(audit) }).is_ok());
/// assert!(!contract.is_valid(&serde_json::json!({ "id": 1, "created_by": "alice" })));
/// ```
#[derive(Debug)]
pub struct AllOrNone<T: ?Sized>(std::marker::PhantomData<T>);

impl<T: schemars::JsonSchema + ?Sized> schemars::JsonSchema for AllOrNone<T> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("AllOrNone_{}", T::schema_name()).into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> Schema {
        let mut schema = T::json_schema(generator).to_value();
        let (Some(all_or_none), Some(obj)) = (all_or_none_branches(&schema), schema.as_object_mut()) else {
            return schemars::json_schema!({
                "type": "object",
                HELPER_ERROR_MARK: format!("`AllOrNone<{}>` needs a struct with fields it always writes", T::schema_name()),
            });
        };
        obj.remove("required");
        match obj.remove("anyOf") {
            // Keep a choice the struct makes itself (an `Option<…>` of an untagged enum).
            Some(own) => {
                obj.insert("allOf".to_owned(), serde_json::json!([{ "anyOf": own }, { "anyOf": all_or_none }]));
            }
            None => {
                obj.insert("anyOf".to_owned(), all_or_none);
            }
        }
        Schema::try_from(schema).unwrap_or_default()
    }
}

/// Marks the values a flattened map adds to the root object as opaque, for
/// `#[tool_output(opaque)]` on a flattened field. Fails when the root has no such values
/// (the flattened field is a struct or an enum, not a map).
pub(super) fn mark_flattened_rest(schema: &mut Value) -> Result<(), ()> {
    let obj = schema.as_object_mut().ok_or(())?;
    let slot = ["additionalProperties", "unevaluatedProperties"]
        .into_iter()
        .find(|k| obj.get(*k).is_some_and(|v| v != &Value::Bool(false)))
        .ok_or(())?;
    let rest = obj.get_mut(slot).ok_or(())?;
    if let Value::Bool(true) = rest {
        *rest = Value::Object(Map::new());
    }
    rest.as_object_mut().ok_or(())?.insert(OPAQUE_MARK.to_owned(), Value::Bool(true));
    Ok(())
}

/// The first helper error left in the schema, as (schema pointer, message).
pub(super) fn find_helper_error(node: &Value, pointer: &str) -> Option<(String, String)> {
    if let Some(message) = node.get(HELPER_ERROR_MARK).and_then(Value::as_str) {
        return Some((pointer.to_owned(), message.to_owned()));
    }
    let mut found = None;
    for_each_child(node, |suffix, child| {
        if found.is_none() {
            found = find_helper_error(child, &format!("{pointer}{suffix}"));
        }
    });
    found
}
