//! Whether a checked-in document is a JSON Schema the diff can read, with the pointer of the first problem.

#[allow(clippy::wildcard_imports)] // One unit split by concern: the parent holds the shared vocabulary.
use super::*;

/// A structural problem in a document that should be a JSON Schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaProblem {
    pointer: String,
    message: String,
}

impl SchemaProblem {
    /// JSON pointer into the document where the problem is.
    #[must_use]
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// What is wrong there.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for SchemaProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() { "(root)" } else { &self.pointer };
        write!(f, "at {pointer}: {}", self.message)
    }
}

impl std::error::Error for SchemaProblem {}

/// Checks that `schema` is shaped like a JSON Schema [`diff`] can read: every subschema
/// an object or a boolean, keywords of the right JSON types, every `$ref` local and
/// resolvable.
///
/// # Errors
///
/// The first problem found, with its JSON pointer.
///
/// # Examples
///
/// ```
/// use contract_runtime::evolution::check_schema;
/// use serde_json::json;
/// assert!(check_schema(&json!({ "type": "object" })).is_ok());
/// let err = check_schema(&json!({ "properties": { "a": { "type": 3 } } })).unwrap_err();
/// assert_eq!(err.pointer(), "/properties/a/type");
/// ```
pub fn check_schema(schema: &Value) -> Result<(), SchemaProblem> {
    check_node(schema, schema, "", 0)
}

pub(super) fn check_node(root: &Value, node: &Value, pointer: &str, depth: usize) -> Result<(), SchemaProblem> {
    let problem = |at: &str, message: String| Err(SchemaProblem { pointer: at.to_owned(), message });
    if depth > MAX_DEPTH {
        // Deeper than the diff walks: refused here rather than judged in part.
        return problem(pointer, format!("nested deeper than {MAX_DEPTH} levels, more than the diff can judge"));
    }
    let obj = match node {
        Value::Bool(_) => return Ok(()),
        Value::Object(obj) => obj,
        other => {
            return problem(pointer, format!("expected a schema (an object or a boolean), found {}", kind_of(other)))
        }
    };
    let mut keys: Vec<&String> = obj.keys().collect();
    keys.sort();
    for key in keys {
        let value = &obj[key.as_str()];
        let at = format!("{pointer}/{}", escape(key));
        match key.as_str() {
            "type" => {
                const TYPES: &[&str] = &["null", "boolean", "object", "array", "number", "integer", "string"];
                let ok = |t: &Value| t.as_str().is_some_and(|t| TYPES.contains(&t));
                let fine = match value {
                    Value::Array(list) => !list.is_empty() && list.iter().all(ok),
                    single => ok(single),
                };
                if !fine {
                    return problem(&at, "expected a type name or a non-empty list of type names".to_owned());
                }
            }
            "required" if !value.as_array().is_some_and(|l| l.iter().all(Value::is_string)) => {
                return problem(&at, "expected a list of property names".to_owned());
            }
            "enum" if !value.is_array() => return problem(&at, "expected a list of values".to_owned()),
            "$ref" => {
                let Some(reference) = value.as_str() else {
                    return problem(&at, "expected a string".to_owned());
                };
                if lookup(root, reference).is_none() {
                    return problem(&at, format!("`{reference}` does not resolve to a definition in this file"));
                }
            }
            "pattern" | "format" if !value.is_string() => return problem(&at, "expected a string".to_owned()),
            "multipleOf" if !value.as_f64().is_some_and(|m| m > 0.0) => {
                return problem(&at, "expected a number greater than 0".to_owned());
            }
            "uniqueItems" if !value.is_boolean() => return problem(&at, "expected a boolean".to_owned()),
            k if (UPPER_BOUNDS.contains(&k) || LOWER_BOUNDS.contains(&k)) && !value.is_number() => {
                return problem(&at, "expected a number".to_owned());
            }
            keyword => match crate::contract::schema::subschemas_of(keyword) {
                Some(Subschemas::Map) => {
                    let Some(map) = value.as_object() else {
                        return problem(&at, "expected an object of schemas".to_owned());
                    };
                    let mut names: Vec<&String> = map.keys().collect();
                    names.sort();
                    for name in names {
                        check_node(root, &map[name.as_str()], &format!("{at}/{}", escape(name)), depth + 1)?;
                    }
                }
                Some(Subschemas::List) => {
                    let Some(list) = value.as_array().filter(|l| !l.is_empty()) else {
                        return problem(&at, "expected a non-empty list of schemas".to_owned());
                    };
                    for (i, sub) in list.iter().enumerate() {
                        check_node(root, sub, &format!("{at}/{i}"), depth + 1)?;
                    }
                }
                Some(Subschemas::One) => check_node(root, value, &at, depth + 1)?,
                None => {}
            },
        }
    }
    Ok(())
}

pub(super) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
