//! Static findings about one listed tool: what its schemas declare and how portable
//! and strict they are.

use std::fmt;

use contract_runtime::client::ToolEntry;
use contract_runtime::schema::{escape_pointer_token, subschemas_of, Subschemas};
use serde_json::Value;

/// How much a finding matters; `--deny <level>` fails the run at this level or above.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Level {
    /// Worth knowing; not a defect.
    Info,
    /// A weakness a client or a model may trip over.
    Warn,
    /// The contract cannot be relied on.
    Error,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Info => "info",
            Self::Warn => "warn",
            Self::Error => "error",
        })
    }
}

/// One thing the audit found.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Finding {
    pub(crate) level: Level,
    /// A stable identifier, such as `no-output-schema`.
    pub(crate) kind: &'static str,
    /// `inputSchema`, `outputSchema`, `_meta` or `call`.
    pub(crate) site: &'static str,
    /// JSON pointer into the schema, `""` for the root.
    pub(crate) pointer: String,
    pub(crate) message: String,
}

impl Finding {
    fn new(level: Level, kind: &'static str, site: &'static str, pointer: &str, message: impl Into<String>) -> Self {
        Self { level, kind, site, pointer: pointer.to_owned(), message: message.into() }
    }
}

// The formats JSON Schema 2020-12 defines (the runtime's list); any other is a private
// agreement that a client validator either ignores or rejects.
use contract_runtime::schema::STANDARD_FORMATS;

/// Keywords a draft-07 validator (the TypeScript SDK 1.x's Ajv) does not know, so it
/// silently accepts what they would reject.
const DRAFT7_IGNORES: &[&str] = &[
    "prefixItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "dependentRequired",
    "dependentSchemas",
    "minContains",
    "maxContains",
    "$dynamicRef",
    "$dynamicAnchor",
];

/// Keywords that only annotate: a schema made of nothing else accepts anything.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$schema",
    "$id",
];

/// All static findings for one tool.
pub(crate) fn lint_tool(entry: &ToolEntry) -> Vec<Finding> {
    let mut findings = Vec::new();
    let exact = entry.contract().is_some_and(|c| c.qualified && c.compatibility.as_deref() == Some("exact"));
    match entry.contract() {
        None => findings.push(Finding::new(
            Level::Info,
            "uncontracted",
            "_meta",
            "",
            "no contract _meta: nothing says the server enforces its outputSchema",
        )),
        Some(c) if !c.qualified => findings.push(Finding::new(
            Level::Info,
            "uncontracted",
            "_meta",
            "",
            "the server lists this tool as `qualified: false` (uncontracted)",
        )),
        Some(_) => {}
    }

    match entry.input_schema() {
        None => findings.push(Finding::new(Level::Error, "no-input-schema", "inputSchema", "", "no inputSchema")),
        Some(schema) => {
            if schema.get("type").and_then(Value::as_str) != Some("object") {
                findings.push(Finding::new(
                    Level::Error,
                    "input-root-not-object",
                    "inputSchema",
                    "",
                    "the inputSchema root must be `type: object`",
                ));
            }
            let mut walk =
                Walk { root: schema, site: "inputSchema", exact: false, permissive: false, findings: &mut findings };
            walk.node(schema, "", false);
            if let Some(why) = entry.input_error() {
                findings.push(Finding::new(Level::Error, "schema-does-not-compile", "inputSchema", "", why));
            }
        }
    }

    match entry.output_schema() {
        None => findings.push(Finding::new(
            Level::Warn,
            "no-output-schema",
            "outputSchema",
            "",
            "no outputSchema: a client cannot validate structuredContent",
        )),
        Some(schema) => {
            let mut walk =
                Walk { root: schema, site: "outputSchema", exact, permissive: true, findings: &mut findings };
            walk.node(schema, "", false);
            if let Some(why) = entry.output_error() {
                findings.push(Finding::new(Level::Error, "schema-does-not-compile", "outputSchema", "", why));
            }
        }
    }
    findings
}

struct Walk<'a> {
    root: &'a Value,
    site: &'static str,
    /// The server claims `exact`: every object it emits is closed.
    exact: bool,
    /// Whether to report subschemas that accept anything (output schemas only: an
    /// argument that takes any value is a legitimate design).
    permissive: bool,
    findings: &'a mut Vec<Finding>,
}

impl Walk<'_> {
    fn push(&mut self, level: Level, kind: &'static str, pointer: &str, message: impl Into<String>) {
        self.findings.push(Finding::new(level, kind, self.site, pointer, message));
    }

    /// Visits one subschema. `composed` is true below an object closed with
    /// `unevaluatedProperties: false`, whose branches stay open by design.
    fn node(&mut self, node: &Value, pointer: &str, composed: bool) {
        let object = match node {
            Value::Bool(true) => {
                if self.permissive {
                    self.push(Level::Warn, "permissive", pointer, "`true` accepts any value");
                }
                return;
            }
            Value::Object(object) => object,
            _ => return,
        };
        if self.permissive && object.keys().all(|k| ANNOTATIONS.contains(&k.as_str())) {
            self.push(Level::Warn, "permissive", pointer, "a schema without constraints accepts any value");
        }
        if let Some(format) = object.get("format").and_then(Value::as_str) {
            if !STANDARD_FORMATS.contains(&format) {
                self.push(
                    Level::Warn,
                    "non-standard-format",
                    pointer,
                    format!("format `{format}` is not a JSON Schema format: clients ignore it or reject the schema"),
                );
            }
        }
        for keyword in object.keys() {
            if DRAFT7_IGNORES.contains(&keyword.as_str()) {
                self.push(
                    Level::Warn,
                    "draft07-ignores",
                    pointer,
                    format!("`{keyword}` is unknown to draft-07 clients, which accept what it rejects"),
                );
            }
        }
        if object.contains_key("$defs") {
            self.push(
                Level::Info,
                "draft07-ignores",
                pointer,
                "`$defs` is 2020-12 (draft-07 says `definitions`); `$ref`s into it still resolve by pointer",
            );
        }
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            self.reference(reference, pointer);
        }
        let closed = |k: &str| object.get(k) == Some(&Value::Bool(false));
        let is_object =
            object.get("type").and_then(Value::as_str) == Some("object") || object.contains_key("properties");
        if self.exact && is_object && !composed && !closed("additionalProperties") && !closed("unevaluatedProperties") {
            self.push(
                Level::Warn,
                "open-object",
                pointer,
                "the contract claims `exact` but this object accepts undeclared keys",
            );
        }
        let composed = composed || closed("unevaluatedProperties");
        for (keyword, value) in object {
            let base = format!("{pointer}/{}", escape_pointer_token(keyword));
            // Closing keywords set to `true`/`false` are not subschemas worth judging.
            if matches!(keyword.as_str(), "additionalProperties" | "unevaluatedProperties" | "unevaluatedItems")
                && value.is_boolean()
            {
                continue;
            }
            match (subschemas_of(keyword), value) {
                (Some(Subschemas::Map), Value::Object(children)) => {
                    for (name, child) in children {
                        self.node(child, &format!("{base}/{}", escape_pointer_token(name)), composed);
                    }
                }
                (Some(Subschemas::List), Value::Array(children)) => {
                    for (i, child) in children.iter().enumerate() {
                        self.node(child, &format!("{base}/{i}"), composed);
                    }
                }
                (Some(Subschemas::One), child) => self.node(child, &base, composed),
                _ => {}
            }
        }
    }

    fn reference(&mut self, reference: &str, pointer: &str) {
        let Some(fragment) = reference.strip_prefix('#') else {
            self.push(
                Level::Warn,
                "remote-ref",
                pointer,
                format!("`$ref` to `{reference}` leaves the document: clients must fetch it, most do not"),
            );
            return;
        };
        if resolve(self.root, fragment).is_none() {
            self.push(Level::Error, "unresolvable-ref", pointer, format!("`$ref` `{reference}` resolves to nothing"));
        }
    }
}

/// Resolves a local `$ref` fragment (without its `#`), with the runtime's one resolver.
pub(crate) fn resolve<'a>(root: &'a Value, fragment: &str) -> Option<&'a Value> {
    contract_runtime::pointer::resolve_ref(root, &format!("#{fragment}"))
}

#[cfg(test)]
mod tests {
    use contract_runtime::client::Catalog;
    use serde_json::json;

    use super::*;

    fn kinds(tool: Value) -> Vec<(&'static str, String)> {
        let mut catalog = Catalog::new();
        catalog.refresh([tool]);
        let entry = catalog.tools().next().expect("one tool");
        lint_tool(entry).into_iter().map(|f| (f.kind, f.pointer)).collect()
    }

    const INPUT: &str = r#"{"type": "object"}"#;

    fn tool(output: Value, meta: Value) -> Value {
        let input: Value = serde_json::from_str(INPUT).unwrap();
        let mut tool = json!({"name": "t", "inputSchema": input});
        tool["outputSchema"] = output;
        tool["_meta"] = meta;
        tool
    }

    fn exact() -> Value {
        json!({"tool-contracts.dev/contract": {"qualified": true, "compatibility": "exact"}})
    }

    #[test]
    fn a_closed_strict_schema_has_no_findings() {
        let output = json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}},
            "required": ["n"], "additionalProperties": false});
        assert_eq!(kinds(tool(output, exact())), vec![]);
    }

    #[test]
    fn permissive_subschemas_are_reported_where_they_are() {
        let output = json!({"type": "object", "properties": {"any": {}, "also": true, "n": {"type": "integer"}},
            "additionalProperties": false});
        let found = kinds(tool(output, exact()));
        assert_eq!(
            found,
            vec![("permissive", "/properties/also".to_owned()), ("permissive", "/properties/any".to_owned())]
        );
    }

    #[test]
    fn an_open_object_is_reported_only_under_an_exact_claim() {
        let output = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        assert_eq!(kinds(tool(output.clone(), exact())), vec![("open-object", String::new())]);
        let additive = json!({"tool-contracts.dev/contract": {"qualified": true, "compatibility": "additive"}});
        assert_eq!(kinds(tool(output, additive)), vec![]);
    }

    #[test]
    fn non_portable_keywords_formats_and_refs() {
        let output = json!({"type": "array", "prefixItems": [{"type": "integer", "format": "uint8"}],
            "items": {"$ref": "https://example.com/s.json"}});
        let found = kinds(tool(output, exact()));
        assert!(found.contains(&("draft07-ignores", String::new())), "{found:?}");
        assert!(found.contains(&("non-standard-format", "/prefixItems/0".to_owned())), "{found:?}");
        assert!(found.contains(&("remote-ref", "/items".to_owned())), "{found:?}");
        // The remote reference also keeps the schema from compiling: the harness fails closed.
        assert!(found.contains(&("schema-does-not-compile", String::new())), "{found:?}");
    }

    #[test]
    fn unresolvable_refs_are_errors_and_resolvable_ones_are_not() {
        let good = json!({"$defs": {"a b": {"type": "integer"}}, "$ref": "#/$defs/a%20b"});
        let found = kinds(tool(good, exact()));
        assert!(!found.iter().any(|(k, _)| *k == "unresolvable-ref"), "{found:?}");
        let bad = json!({"$defs": {"a": {"type": "integer"}}, "$ref": "#/$defs/b"});
        assert!(kinds(tool(bad, exact())).contains(&("unresolvable-ref", String::new())));
    }

    #[test]
    fn missing_output_schema_and_missing_meta() {
        let t = json!({"name": "t", "inputSchema": {"type": "object"}});
        let found = kinds(t);
        assert_eq!(found, vec![("uncontracted", String::new()), ("no-output-schema", String::new())]);
        let unqualified = json!({"name": "t", "inputSchema": {"type": "object"}, "outputSchema": {"type": "integer"},
            "_meta": {"tool-contracts.dev/contract": {"qualified": false}}});
        assert_eq!(kinds(unqualified), vec![("uncontracted", String::new())]);
    }
}
