//! `search_tickets` against a worked example of an array-root `outputSchema` (allowed
//! since MCP 2026-07-28): the example's schema, four payloads and their verdicts, copied
//! verbatim. The one valid payload must pass; the extra key, the object envelope around
//! the array and the unknown `status` must each fail with exactly one violation of the
//! right keyword at the right pointer. The example's schema, compiled on its own, must
//! give the same verdicts, and our schema must mean the same once `$ref`s are resolved.

use std::collections::{BTreeMap, BTreeSet};

use contract_runtime::ToolOutput;
use serde_json::{json, Map, Value};

use crate::support::lenient;

use lenient::{resolve, ANNOTATIONS};

/// The array-root `outputSchema` of the worked `search_tickets` example, verbatim.
const EXAMPLE_OUTPUT_SCHEMA: &str = r#"{
  "type": "array",
  "items": {
    "type": "object",
    "properties": {
      "id": { "type": "string" },
      "title": { "type": "string" },
      "status": { "type": "string", "enum": ["open", "closed"] }
    },
    "required": ["id", "title", "status"],
    "additionalProperties": false
  }
}"#;

/// The example's four payloads, verbatim.
const EXAMPLE_PAYLOADS: &str = r#"{
  "structured_ok": [
    { "id": "T-1", "title": "Login bug", "status": "open" }
  ],
  "structured_bad_extra_key": [
    { "id": "T-1", "title": "Login bug", "status": "open", "run_shell": "rm -rf /" }
  ],
  "structured_bad_wrong_root": {
    "items": [{ "id": "T-1", "title": "Login bug", "status": "open" }]
  },
  "structured_bad_enum": [
    { "id": "T-1", "title": "Login bug", "status": "done" }
  ]
}"#;

/// The example's verdicts, verbatim.
const EXAMPLE_VERDICTS: &str = r#"{
  "structured_ok": "pass",
  "structured_bad_extra_key": "fail",
  "structured_bad_wrong_root": "fail",
  "structured_bad_enum": "fail"
}"#;

#[test]
fn example_payloads_against_search_tickets() {
    let contract = qe_server::contracts::SearchTickets::contract();
    let samples: Map<String, Value> = serde_json::from_str(EXAMPLE_PAYLOADS).expect("the payloads are JSON");
    let verdicts: Map<String, Value> = serde_json::from_str(EXAMPLE_VERDICTS).expect("the verdicts are JSON");
    // The keyword and instance pointer each failure must be reported with, as the
    // example explains them: extra key → additionalProperties, object envelope → type at
    // the root, unknown status → enum.
    let expected_failures = BTreeMap::from([
        ("structured_bad_extra_key", ("additionalProperties", "/0")),
        ("structured_bad_wrong_root", ("type", "")),
        ("structured_bad_enum", ("enum", "/0/status")),
    ]);
    assert_eq!(samples.len(), 4);
    assert_eq!(
        samples.keys().collect::<BTreeSet<_>>(),
        verdicts.keys().collect::<BTreeSet<_>>(),
        "every payload has a verdict"
    );

    // The example's own schema, compiled as it stands, must give the same verdicts too:
    // our contract and the example's schema agree on every payload.
    let example_schema: Value = serde_json::from_str(EXAMPLE_OUTPUT_SCHEMA).expect("the example schema is JSON");
    let example_validator = jsonschema::draft202012::new(&example_schema).expect("the example schema compiles");

    for (name, sample) in &samples {
        let verdict = verdicts[name].as_str().expect("a verdict is a string");
        assert_eq!(example_validator.is_valid(sample), verdict == "pass", "{name} against the example's own schema");
        let result = contract.validate(sample);
        println!("{name}: expected {verdict}, got {}", if result.is_ok() { "pass" } else { "fail" });
        match verdict {
            "pass" => {
                assert!(!expected_failures.contains_key(name.as_str()));
                if let Err(report) = result {
                    panic!("{name} must pass: {report}");
                }
            }
            "fail" => {
                let Err(report) = result else { panic!("{name} must fail") };
                let (keyword, at) = expected_failures[name.as_str()];
                let found: Vec<(&str, &str)> = report.violations().iter().map(|v| (v.keyword(), v.pointer())).collect();
                println!("    violations: {found:?}");
                assert_eq!(found, [(keyword, at)], "{name}: expected exactly one `{keyword}` violation at `{at}`");
            }
            other => panic!("unknown verdict {other}"),
        }
    }
}

/// `schema` with every local `$ref` replaced by its target (sibling keywords kept),
/// annotations dropped and `required` sorted, so two schemas can be compared by meaning.
fn semantic(root: &Value, schema: &Value, depth: usize) -> Value {
    assert!(depth < 32, "recursive schema");
    match schema {
        Value::Object(obj) => {
            let mut out = Map::new();
            if let Some(reference) = obj.get("$ref").and_then(Value::as_str) {
                if let Value::Object(target) = semantic(root, resolve(root, reference), depth + 1) {
                    out.extend(target);
                }
            }
            for (key, value) in obj {
                if key == "$ref" || ANNOTATIONS.contains(&key.as_str()) {
                    continue;
                }
                let value = match key.as_str() {
                    "required" => {
                        let mut names: Vec<Value> = value.as_array().cloned().unwrap_or_default();
                        names.sort_by_key(Value::to_string);
                        Value::Array(names)
                    }
                    "properties" | "$defs" | "patternProperties" => Value::Object(
                        value
                            .as_object()
                            .into_iter()
                            .flatten()
                            .map(|(k, v)| (k.clone(), semantic(root, v, depth + 1)))
                            .collect(),
                    ),
                    "enum" | "const" => value.clone(),
                    _ => semantic(root, value, depth + 1),
                };
                out.insert(key.clone(), value);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| semantic(root, v, depth + 1)).collect()),
        other => other.clone(),
    }
}

#[test]
fn search_tickets_schema_means_what_the_example_schema_says() {
    let example: Value = serde_json::from_str(EXAMPLE_OUTPUT_SCHEMA).expect("the example schema is JSON");
    let ours = qe_server::contracts::SearchTickets::contract().schema();
    let ours = semantic(ours, ours, 0);
    let example = semantic(&example, &example, 0);
    assert_eq!(
        ours,
        example,
        "search_tickets after resolving $refs:\n{}\nthe example:\n{}",
        serde_json::to_string_pretty(&ours).unwrap_or_default(),
        serde_json::to_string_pretty(&example).unwrap_or_default()
    );
    // The parts the example insists on, spelled out so a failure reads plainly.
    assert_eq!(ours["type"], "array");
    assert_eq!(ours["items"]["type"], "object");
    assert_eq!(ours["items"]["additionalProperties"], false);
    assert_eq!(ours["items"]["required"], json!(["id", "status", "title"]));
    assert_eq!(ours["items"]["properties"]["status"]["enum"], json!(["open", "closed"]));
}
