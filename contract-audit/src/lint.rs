//! Static findings about one listed tool: what its schemas declare and how portable
//! and strict they are.

use std::collections::BTreeMap;
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
        f.pad(match self {
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
    /// `inputSchema`, `outputSchema`, `_meta`, `declaration` (the tool's own fields) or
    /// `call`.
    pub(crate) site: &'static str,
    /// JSON pointer into the schema (for a call finding, into the result's value), `""` for
    /// the root.
    pub(crate) pointer: String,
    pub(crate) message: String,
}

impl Finding {
    pub(crate) fn new(
        level: Level,
        kind: &'static str,
        site: &'static str,
        pointer: &str,
        message: impl Into<String>,
    ) -> Self {
        debug_assert!(KINDS.iter().any(|k| k.0 == kind && k.1 == level), "{kind} ({level}) is not in KINDS");
        Self { level, kind, site, pointer: pointer.to_owned(), message: message.into() }
    }
}

/// Every finding the audit emits: its kind, its level, and what it does to a client (the
/// pinned TypeScript SDK's Ajv, or Python's `jsonschema`). `--help` lists them.
pub(crate) const KINDS: &[(&str, Level, &str)] = &[
    ("input-root-not-object", Level::Error, "the TypeScript SDK rejects the whole tools/list result"),
    ("schema-does-not-compile", Level::Error, "clients cannot compile it; the TypeScript SDK's listTools throws"),
    ("unresolvable-ref", Level::Error, "neither client resolves it; their validators cannot be built"),
    ("remote-ref", Level::Warn, "neither client fetches it; their validators cannot be built"),
    ("permissive", Level::Warn, "a client validator accepts any value there"),
    ("opaque", Level::Info, "declared opaque by the contract: any value there, by design"),
    ("open-object", Level::Warn, "under an `exact` claim, a client validator still accepts undeclared keys"),
    ("non-standard-format", Level::Warn, "Ajv ignores the format (and logs a warning) and accepts any value"),
    ("draft07-ignores", Level::Warn, "Ajv (draft-07) ignores the keyword and accepts what it rejects"),
    ("no-output-schema", Level::Warn, "the TypeScript SDK client accepts any structuredContent"),
    (
        "output-accepts-empty-object",
        Level::Warn,
        "the outputSchema requires no property: `{}` passes, so a client cannot tell a result from nothing",
    ),
    ("call-contract-failure", Level::Error, "the result breaks the outputSchema; the TypeScript SDK's callTool throws"),
    (
        "call-server-reported-violation",
        Level::Error,
        "the server refused its own result; clients get an error, no data",
    ),
    ("call-arguments-invalid", Level::Warn, "the given arguments break the inputSchema; they were not sent"),
    ("call-timeout", Level::Warn, "no answer within --timeout; a client's call times out too"),
    ("call-transport-error", Level::Warn, "the connection failed during the call; a client's call fails too"),
    (
        "call-structured-text-mismatch",
        Level::Warn,
        "structuredContent and its JSON text block differ in a key; a client reading structuredContent misses it",
    ),
    ("call-false-success", Level::Warn, "the result says it failed but isError is unset; clients take it as success"),
    (
        "published-hash-mismatch",
        Level::Error,
        "the tool's own contentHash (draft SEP-3140) is not its declaration's: a client that verifies it refuses the tool",
    ),
    (
        "published-hash-unreadable",
        Level::Warn,
        "the tool's own contentHash is not `sha256-<base64url>` (or `sha256:<hex>`): it cannot be verified",
    ),
];

// The formats JSON Schema 2020-12 defines (the runtime's list); any other is a private
// agreement that a client validator either ignores or rejects.
use contract_runtime::schema::STANDARD_FORMATS;

/// Keywords a draft-07 validator (the TypeScript SDK 1.x's Ajv) does not know, so it
/// silently accepts what they would reject. `$defs` is not one of them: Ajv resolves
/// `$ref`s into it by pointer; nor is `$dynamicAnchor`, which constrains nothing itself.
const DRAFT7_IGNORES: &[&str] = &[
    "prefixItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "dependentRequired",
    "dependentSchemas",
    "minContains",
    "maxContains",
    "$dynamicRef",
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

/// All static findings for one tool. `declared_open` lists instance pointers of values the
/// user declares opaque for this tool (`--contracts`), beside those of its `_meta`.
pub(crate) fn lint_tool(entry: &ToolEntry, declared_open: &[String]) -> Vec<Finding> {
    let mut findings = Vec::new();
    let exact = entry.contract().is_some_and(|c| c.qualified && c.compatibility.as_deref() == Some("exact"));
    // Whether the server says it enforces a contract is the CONTRACT column (`contract` in
    // JSON), not a finding: no client validates differently because of it.
    // A tool without an `inputSchema` never gets here: rmcp, like the TypeScript SDK,
    // refuses the whole listing that holds one.
    if let Some(schema) = entry.input_schema() {
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            findings.push(Finding::new(
                Level::Error,
                "input-root-not-object",
                "inputSchema",
                "",
                "the inputSchema root must be `type: object`",
            ));
        }
        let mut walk = Walk {
            root: schema,
            site: "inputSchema",
            exact: false,
            permissive: false,
            opaque: &BTreeMap::new(),
            findings: &mut findings,
        };
        walk.node(schema, "", false);
        if let Some(why) = entry.input_error() {
            findings.push(Finding::new(Level::Error, "schema-does-not-compile", "inputSchema", "", why));
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
            let mut pointers: Vec<String> = entry.contract().map(|c| c.opaque.clone()).unwrap_or_default();
            pointers.extend(declared_open.iter().cloned());
            let opaque = opaque_nodes(schema, &pointers);
            let mut walk = Walk {
                root: schema,
                site: "outputSchema",
                exact,
                permissive: true,
                opaque: &opaque,
                findings: &mut findings,
            };
            walk.node(schema, "", false);
            if accepts_empty_object(schema) {
                findings.push(Finding::new(
                    Level::Warn,
                    "output-accepts-empty-object",
                    "outputSchema",
                    "",
                    "an object that requires no property: `{}` is a valid result",
                ));
            }
            if let Some(why) = entry.output_error() {
                findings.push(Finding::new(Level::Error, "schema-does-not-compile", "outputSchema", "", why));
            }
        }
    }
    findings
}

/// Whether an output schema's root is an object schema that `{}` satisfies: typed (or
/// shaped) as an object, with no required property and no `minProperties`. A root that
/// composes (`allOf`, `anyOf`, `oneOf`, `$ref`, `not`, `if`) is not judged here, nor one
/// that accepts anything (that is `permissive`).
fn accepts_empty_object(schema: &Value) -> bool {
    let Some(root) = schema.as_object() else { return false };
    let is_object = root.get("type").and_then(Value::as_str) == Some("object") || root.contains_key("properties");
    let composes =
        ["allOf", "anyOf", "oneOf", "$ref", "$dynamicRef", "not", "if"].iter().any(|k| root.contains_key(*k));
    let requires = root.get("required").and_then(Value::as_array).is_some_and(|r| !r.is_empty())
        || root.get("minProperties").and_then(Value::as_u64).is_some_and(|n| n > 0);
    is_object && !composes && !requires
}

struct Walk<'a> {
    root: &'a Value,
    site: &'static str,
    /// The server claims `exact`: every object it emits is closed.
    exact: bool,
    /// Whether to report subschemas that accept anything (output schemas only: an
    /// argument that takes any value is a legitimate design).
    permissive: bool,
    /// Schema pointer → instance pointer of the values the listing declares opaque.
    opaque: &'a BTreeMap<String, String>,
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
                self.accepts_anything(pointer, "`true` accepts any value");
                return;
            }
            Value::Object(object) => object,
            _ => return,
        };
        if object.keys().all(|k| ANNOTATIONS.contains(&k.as_str())) {
            self.accepts_anything(pointer, "a schema without constraints accepts any value");
        } else if let Some(instance) =
            self.opaque.get(pointer).filter(|_| self.permissive && !self.branch_of_declared(pointer))
        {
            // Declared opaque and typed (an object map of any values, say): still a hole
            // by design, noted as such.
            let message =
                format!("opaque declared at {instance}: its contents are not checked, by the contract's design");
            self.push(Level::Info, "opaque", pointer, message);
        }
        if let Some(format) = object.get("format").and_then(Value::as_str) {
            if !STANDARD_FORMATS.contains(&format) {
                self.push(
                    Level::Warn,
                    "non-standard-format",
                    pointer,
                    format!("format `{format}` is not a JSON Schema format: clients ignore it (the TypeScript SDK's Ajv accepts any value and logs a warning) or reject the schema"),
                );
            }
        }
        for keyword in object.keys() {
            if DRAFT7_IGNORES.contains(&keyword.as_str()) {
                self.push(
                    Level::Warn,
                    "draft07-ignores",
                    pointer,
                    format!("`{keyword}` is unknown to draft-07 clients (the TypeScript SDK's Ajv), which accept what it rejects"),
                );
            }
        }
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            self.reference(reference, pointer);
        }
        let closed = |k: &str| object.get(k) == Some(&Value::Bool(false));
        let is_object =
            object.get("type").and_then(Value::as_str) == Some("object") || object.contains_key("properties");
        let declared = self.opaque.contains_key(pointer) || self.branch_of_declared(pointer);
        if self.exact
            && is_object
            && !composed
            && !declared
            && !closed("additionalProperties")
            && !closed("unevaluatedProperties")
        {
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

    /// Whether `pointer` is a branch (`…/anyOf/1`) of a subschema that is itself declared
    /// opaque: the note is made once, at the declared subschema.
    fn branch_of_declared(&self, pointer: &str) -> bool {
        let Some((rest, index)) = pointer.rsplit_once('/') else { return false };
        let Some((parent, keyword)) = rest.rsplit_once('/') else { return false };
        matches!(keyword, "anyOf" | "oneOf" | "allOf")
            && index.bytes().all(|b| b.is_ascii_digit())
            && self.opaque.contains_key(parent)
    }

    /// A subschema that accepts any value: declared when the listing says it is opaque,
    /// a weakness otherwise.
    fn accepts_anything(&mut self, pointer: &str, why: &str) {
        if !self.permissive {
            return;
        }
        if let Some(instance) = self.opaque.get(pointer) {
            let message = format!("opaque declared at {instance}: any JSON value, by the contract's design");
            self.push(Level::Info, "opaque", pointer, message);
        } else {
            self.push(Level::Warn, "permissive", pointer, why);
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

/// The schema pointers of the subschemas that describe the values at the listed opaque
/// instance pointers (`*` for any key or index), following local `$ref`s and
/// compositions, each with the instance pointer it was reached by. An advertised schema
/// that wraps the contract's root as `{"result": …}` is read below `/properties/result`.
fn opaque_nodes(schema: &Value, instances: &[String]) -> BTreeMap<String, String> {
    let mut nodes = BTreeMap::new();
    let wrapped = schema.get("required") == Some(&serde_json::json!(["result"]))
        && schema
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| p.len() == 1 && p.contains_key("result"));
    for instance in instances {
        let tokens: Vec<&str> = instance.split('/').skip(1).collect();
        let mut found = Vec::new();
        descend(schema, String::new(), &tokens, 0, &mut found);
        if wrapped {
            descend(schema, "/properties/result".to_owned(), &tokens, 0, &mut found);
        }
        for pointer in found {
            nodes.entry(pointer).or_insert_with(|| instance.clone());
        }
    }
    nodes
}

fn descend(root: &Value, at: String, tokens: &[&str], depth: usize, found: &mut Vec<String>) {
    const MAX_DEPTH: usize = 64;
    let Some(node) = root.pointer(&at).and_then(Value::as_object) else {
        if tokens.is_empty() && root.pointer(&at).is_some() {
            found.push(at);
        }
        return;
    };
    if depth > MAX_DEPTH {
        return;
    }
    if let Some(fragment) = node.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#')) {
        descend(root, fragment.to_owned(), tokens, depth + 1, found);
    }
    for keyword in ["allOf", "anyOf", "oneOf"] {
        for i in 0..node.get(keyword).and_then(Value::as_array).map_or(0, Vec::len) {
            descend(root, format!("{at}/{keyword}/{i}"), tokens, depth + 1, found);
        }
    }
    let Some((token, rest)) = tokens.split_first() else {
        found.push(at);
        return;
    };
    let mut next = Vec::new();
    if *token == "*" {
        next.extend(["additionalProperties", "items", "unevaluatedProperties", "unevaluatedItems"].map(str::to_owned));
        for keyword in ["patternProperties", "prefixItems"] {
            match node.get(keyword) {
                Some(Value::Object(map)) => {
                    next.extend(map.keys().map(|k| format!("{keyword}/{}", escape_pointer_token(k))));
                }
                Some(Value::Array(list)) => next.extend((0..list.len()).map(|i| format!("{keyword}/{i}"))),
                _ => {}
            }
        }
    } else {
        next.push(format!("properties/{token}"));
        if let Ok(i) = token.parse::<usize>() {
            next.push(format!("prefixItems/{i}"));
        }
    }
    for step in next {
        let child = format!("{at}/{step}");
        if root.pointer(&child).is_some() {
            descend(root, child, rest, depth + 1, found);
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
        lint_tool(entry, &[]).into_iter().map(|f| (f.kind, f.pointer)).filter(|f| f.0 != EMPTY).collect()
    }

    /// The root finding about `{}` has its own test; the others look inside the schema.
    const EMPTY: &str = "output-accepts-empty-object";

    #[allow(clippy::needless_pass_by_value)] // Called with `json!` literals.
    fn accepts_empty(output: Value) -> bool {
        let mut catalog = Catalog::new();
        catalog.refresh([json!({"name": "t", "inputSchema": {"type": "object"}, "outputSchema": output})]);
        let found = lint_tool(catalog.tools().next().expect("one tool"), &[]).iter().any(|f| f.kind == EMPTY);
        found
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
        assert_eq!(kinds(t), vec![("no-output-schema", String::new())]);
        // An uncontracted tool is said in the CONTRACT column, not as a finding.
        let unqualified = json!({"name": "t", "inputSchema": {"type": "object"}, "outputSchema": {"type": "integer"},
            "_meta": {"tool-contracts.dev/contract": {"qualified": false}}});
        assert_eq!(kinds(unqualified), vec![]);
    }

    #[test]
    fn defs_and_dynamic_anchors_alone_are_not_findings() {
        let output = json!({"$defs": {"n": {"$dynamicAnchor": "n", "type": "integer"}}, "type": "object",
            "properties": {"x": {"$ref": "#/$defs/n"}}, "additionalProperties": false});
        assert_eq!(kinds(tool(output, exact())), vec![]);
        // Control: a `$dynamicRef` is one.
        let output = json!({"$defs": {"n": {"$dynamicAnchor": "n", "type": "integer"}}, "type": "object",
            "properties": {"x": {"$dynamicRef": "#n"}}, "additionalProperties": false});
        assert_eq!(kinds(tool(output, exact())), vec![("draft07-ignores", "/properties/x".to_owned())]);
    }

    #[test]
    fn declared_opaque_values_are_notes_where_the_schema_has_them() {
        let output = json!({"type": "object", "additionalProperties": false, "properties": {
            "metadata": {"description": "passed through"},
            "actions": {"type": "array", "items": {"$ref": "#/$defs/Action"}},
            "stray": {}
        }, "$defs": {"Action": {"type": "object", "additionalProperties": false,
            "properties": {"output": true, "kind": {"type": "string"}}}}});
        let meta = json!({"tool-contracts.dev/contract": {"qualified": true, "compatibility": "exact",
            "opaque": ["/actions/*/output", "/metadata"]}});
        let found = kinds(tool(output.clone(), meta));
        assert_eq!(
            found,
            vec![
                ("opaque", "/$defs/Action/properties/output".to_owned()),
                ("opaque", "/properties/metadata".to_owned()),
                ("permissive", "/properties/stray".to_owned()),
            ]
        );
        // Control: without the listing's opaque pointers the same holes are permissive.
        let found = kinds(tool(output, exact()));
        assert_eq!(found.iter().filter(|(k, _)| *k == "permissive").count(), 3, "{found:?}");
    }

    #[test]
    fn declared_opaque_objects_are_noted_once_at_the_declared_subschema() {
        let output = json!({"type": "object", "additionalProperties": false, "properties": {
            "metadata": {"type": "object", "additionalProperties": true},
            "output": {"anyOf": [{"type": "object", "additionalProperties": true}, {"type": "null"}]}
        }});
        let meta = json!({"tool-contracts.dev/contract": {"qualified": true, "compatibility": "exact",
            "opaque": ["/metadata", "/output"]}});
        assert_eq!(
            kinds(tool(output.clone(), meta)),
            vec![("opaque", "/properties/metadata".to_owned()), ("opaque", "/properties/output".to_owned())]
        );
        // Control: undeclared, a typed object map is not any value (no `permissive`), but
        // under `exact` it is an open object.
        assert_eq!(
            kinds(tool(output, exact())),
            vec![
                ("open-object", "/properties/metadata".to_owned()),
                ("open-object", "/properties/output/anyOf/0".to_owned())
            ]
        );
    }

    #[test]
    fn opaque_pointers_are_read_below_a_wrapped_root() {
        let output = json!({"type": "object", "required": ["result"], "additionalProperties": false,
            "properties": {"result": {"type": "array", "items": {"type": "object", "additionalProperties": false,
                "properties": {"raw": {}}}}}});
        let meta = json!({"tool-contracts.dev/contract": {"qualified": true, "opaque": ["/*/raw"]}});
        assert_eq!(kinds(tool(output, meta)), vec![("opaque", "/properties/result/items/properties/raw".to_owned())]);
    }

    #[test]
    fn an_output_object_that_requires_nothing_accepts_the_empty_object() {
        let found = accepts_empty;
        assert!(found(json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}}})));
        assert!(found(json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": []})));
        // Clean controls: a required property, minProperties, a composed root, not an object.
        assert!(!found(json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})));
        assert!(!found(json!({"type": "object", "minProperties": 1})));
        assert!(!found(json!({"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]})));
        assert!(!found(json!({"type": "array"})));
    }

    #[test]
    fn every_emitted_kind_is_listed_once() {
        let mut names: Vec<&str> = KINDS.iter().map(|k| k.0).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), KINDS.len());
    }
}
