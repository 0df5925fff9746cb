//! Declared instances: the subschemas that describe the values at instance pointers,
//! marked opaque or sensitive, for schemas written by hand or by another language's
//! library (what a derive declares with `#[tool_output(opaque)]` and
//! `#[tool_output(sensitive)]`).

use serde_json::{Map, Value};

use super::{escape_pointer_token, resolve, OPAQUE_MARK, SENSITIVE_MARK};

/// Marks the subschemas that describe the values at the instance pointers `pointers`
/// (`*` for any index or key) opaque, or sensitive when `sensitive`: how a schema written
/// by hand or by another language's library declares what a derive declares with
/// `#[tool_output(opaque)]`. A subschema is reached as [`collect_marks`](super::collect_marks) reaches it
/// (through properties, items, applicators and local `$ref`s) and marked where its
/// instance pointer is declared, the nodes below it left as they are. Returns the
/// pointers no subschema describes.
pub(crate) fn mark_instances(root: &mut Value, pointers: &[String], sensitive: bool) -> Vec<String> {
    fn walk(
        root: &Value,
        node: &Value,
        at: &str,
        instance: &str,
        pointers: &[String],
        visiting: &mut Vec<String>,
        found: &mut Vec<(String, String)>,
    ) {
        if pointers.iter().any(|p| p == instance) {
            found.push((at.to_owned(), instance.to_owned()));
            return;
        }
        let Some(obj) = node.as_object() else { return };
        if let Some(reference) = obj.get("$ref").and_then(Value::as_str) {
            let key = format!("{reference} {instance}");
            if !visiting.contains(&key)
                && let Some(target) = resolve(root, reference)
            {
                visiting.push(key);
                let target_at = reference.strip_prefix('#').unwrap_or(reference);
                walk(root, target, target_at, instance, pointers, visiting, found);
                visiting.pop();
            }
        }
        for (key, value) in obj {
            let here = format!("{at}/{}", escape_pointer_token(key));
            let next = |suffix: &str| format!("{instance}/{suffix}");
            match key.as_str() {
                "properties" | "patternProperties" => {
                    for (name, sub) in value.as_object().into_iter().flatten() {
                        let token = if key == "properties" { escape_pointer_token(name) } else { "*".to_owned() };
                        let sub_at = format!("{here}/{}", escape_pointer_token(name));
                        walk(root, sub, &sub_at, &next(&token), pointers, visiting, found);
                    }
                }
                "additionalProperties" | "items" | "unevaluatedProperties" | "unevaluatedItems" => {
                    walk(root, value, &here, &next("*"), pointers, visiting, found);
                }
                "prefixItems" => {
                    for (i, sub) in value.as_array().into_iter().flatten().enumerate() {
                        walk(root, sub, &format!("{here}/{i}"), &next(&i.to_string()), pointers, visiting, found);
                    }
                }
                "allOf" | "anyOf" | "oneOf" => {
                    for (i, sub) in value.as_array().into_iter().flatten().enumerate() {
                        walk(root, sub, &format!("{here}/{i}"), instance, pointers, visiting, found);
                    }
                }
                "if" | "then" | "else" => walk(root, value, &here, instance, pointers, visiting, found),
                _ => {}
            }
        }
    }
    let mut found = Vec::new();
    walk(root, root, "", "", pointers, &mut Vec::new(), &mut found);
    let mark = if sensitive { SENSITIVE_MARK } else { OPAQUE_MARK };
    for (at, _) in &found {
        if let Some(node) = root.pointer_mut(at) {
            if let Value::Bool(b) = node {
                *node = if *b { Value::Object(Map::new()) } else { serde_json::json!({ "not": {} }) };
            }
            if let Some(obj) = node.as_object_mut() {
                obj.insert(mark.to_owned(), Value::Bool(true));
            }
        }
    }
    pointers.iter().filter(|p| !found.iter().any(|(_, instance)| instance == *p)).cloned().collect()
}

/// The instance pointer of the value the subschema at `schema_pointer` describes, when
/// the path to it says (not through `$defs`, which any value may use).
pub(crate) fn instance_of(schema_pointer: &str) -> Option<String> {
    let tokens = crate::contract::pointer::tokens(schema_pointer);
    let mut instance = String::new();
    let mut i = 0;
    while i < tokens.len() {
        match tokens[i].as_str() {
            "properties" => {
                instance.push('/');
                instance.push_str(&escape_pointer_token(tokens.get(i + 1)?));
                i += 2;
            }
            "patternProperties" => {
                instance.push_str("/*");
                i += 2;
            }
            "prefixItems" => {
                instance.push('/');
                instance.push_str(tokens.get(i + 1)?);
                i += 2;
            }
            "additionalProperties" | "items" | "unevaluatedProperties" | "unevaluatedItems" => {
                instance.push_str("/*");
                i += 1;
            }
            "allOf" | "anyOf" | "oneOf" => i += 2,
            "if" | "then" | "else" => i += 1,
            _ => return None,
        }
    }
    Some(instance)
}

#[cfg(test)]
mod tests {
    use super::{instance_of, mark_instances, OPAQUE_MARK};
    use serde_json::json;

    #[test]
    fn a_schema_pointer_names_the_value_it_describes() {
        assert_eq!(instance_of("/properties/a~1b/items/properties/raw").as_deref(), Some("/a~1b/*/raw"));
        assert_eq!(instance_of("/properties/m/additionalProperties").as_deref(), Some("/m/*"));
        assert_eq!(instance_of("/anyOf/1/properties/x/prefixItems/2").as_deref(), Some("/x/2"));
        assert_eq!(instance_of("").as_deref(), Some(""));
        // Through `$defs` the value is wherever the definition is used.
        assert_eq!(instance_of("/$defs/Gap/properties/raw"), None);
    }

    #[test]
    fn declared_instances_are_marked_where_they_are_reached() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "items": { "type": "array", "items": { "$ref": "#/$defs/Item" } },
                "meta": true,
            },
            "$defs": { "Item": { "type": "object", "properties": { "raw": {} } } },
        });
        let missing = mark_instances(&mut schema, &["/items/*/raw".into(), "/meta".into(), "/nowhere".into()], false);
        assert_eq!(missing, ["/nowhere"]);
        assert_eq!(schema["$defs"]["Item"]["properties"]["raw"][OPAQUE_MARK], true);
        assert_eq!(schema["properties"]["meta"][OPAQUE_MARK], true, "`true` becomes a marked schema");
        assert!(schema["properties"]["items"]["items"].get(OPAQUE_MARK).is_none(), "only the declared value");
    }
}
