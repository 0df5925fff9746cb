//! The error envelope is a contract: its JSON Schema is generated from
//! [`ErrorEnvelope`] and checked in as `contract-runtime/schemas/error_envelope.json`, and
//! every error result the runtime builds, for every code, is an instance of that checked-in
//! schema, judged by the `jsonschema` crate on the file as it is. Regenerate the file after
//! changing the type with
//!
//! ```text
//! CONTRACT_RUNTIME_WRITE=1 cargo test -p contract-runtime --test error_envelope
//! ```

use std::path::PathBuf;

use contract_runtime::wire::{ErrorCode, ErrorEnvelope, ToolCallResult, ToolError, WireViolation};
use contract_runtime::ToolOutput;
use serde_json::{json, Value};

fn checked_in() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schemas/error_envelope.json")
}

fn generated() -> String {
    String::from_utf8(ErrorEnvelope::contract().canonical_bytes().to_vec()).expect("canonical bytes are UTF-8")
}

#[test]
fn the_checked_in_schema_is_the_types() {
    let path = checked_in();
    if std::env::var_os("CONTRACT_RUNTIME_WRITE").is_some() {
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("creates schemas/");
        std::fs::write(&path, generated()).expect("writes the schema");
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == generated(),
        "{} is not the schema of ErrorEnvelope; regenerate it with\n\
         CONTRACT_RUNTIME_WRITE=1 cargo test -p contract-runtime --test error_envelope",
        path.display()
    );
}

/// The checked-in file, compiled by the `jsonschema` crate on its own.
fn judge() -> jsonschema::Validator {
    let text = std::fs::read_to_string(checked_in()).expect("the checked-in schema");
    let schema: Value = serde_json::from_str(&text).expect("the checked-in schema is JSON");
    jsonschema::validator_for(&schema).expect("the checked-in schema compiles")
}

/// The envelope an error result carries: its one text block, parsed.
fn envelope_of(result: &Value) -> Value {
    assert_eq!(result["isError"], true, "{result}");
    let blocks = result["content"].as_array().expect("content");
    assert_eq!(blocks.len(), 1, "one text block: {result}");
    serde_json::from_str(blocks[0]["text"].as_str().expect("a text block")).expect("the text is JSON")
}

fn violation() -> WireViolation {
    WireViolation {
        pointer: "/healthy".to_owned(),
        keyword: "type".to_owned(),
        message: "is not an integer".to_owned(),
    }
}

#[test]
fn every_code_makes_an_envelope_the_checked_in_schema_accepts() {
    let judge = judge();
    assert!(ErrorCode::all().len() >= 12, "every code is listed: {:?}", ErrorCode::all());
    for &code in ErrorCode::all() {
        let error =
            ToolError::new(code, "failed at /home/ci/secret.txt").with_retryable(code == ErrorCode::Unavailable);
        let results = [
            ToolCallResult::from_error(&error, None).to_json(),
            ToolCallResult::refusal(&error, vec![violation()], Some(json!({"x": 1}))).to_json(),
            ToolCallResult::refusal(&error, Vec::new(), None).to_json(),
        ];
        for result in &results {
            let envelope = envelope_of(result);
            assert_eq!(envelope["error"]["code"], code.as_str(), "{envelope}");
            let errors: Vec<String> =
                judge.iter_errors(&envelope).map(|e| format!("{} at {}", e, e.instance_path())).collect();
            assert!(errors.is_empty(), "{code}: {envelope} breaks the checked-in schema: {errors:?}");
            assert!(!envelope.to_string().contains("/home/ci"), "the message is sanitized: {envelope}");
        }
    }
}

/// The clean control's twin: what is not an envelope is refused by the same file, so the
/// acceptance above means something.
#[test]
fn the_checked_in_schema_refuses_what_is_not_an_envelope() {
    let judge = judge();
    let good = json!({"error": {"code": "tool_quarantined", "message": "held back", "retryable": false}});
    assert!(judge.is_valid(&good), "the control passes");
    for bad in [
        json!({"error": {"code": "no_such_code", "message": "m", "retryable": false}}),
        json!({"error": {"code": "unavailable", "message": "m"}}),
        json!({"error": {"code": "unavailable", "message": "m", "retryable": "yes"}}),
        json!({"error": {"code": "unavailable", "message": "m", "retryable": true, "extra": 1}}),
        json!({"error": {"code": "output_contract_violation", "message": "m", "retryable": false, "violations": [{"pointer": "/a"}]}}),
        json!({"code": "unavailable", "message": "m", "retryable": true}),
    ] {
        assert!(!judge.is_valid(&bad), "refused: {bad}");
    }
}

#[cfg(feature = "client")]
mod client {
    use contract_runtime::client::{CallOutcome, ContractFailure, DeclaredError, FailureKind};
    use contract_runtime::wire::{ErrorCode, ErrorEnvelope};
    use contract_runtime::ToolOutput;
    use serde_json::json;

    /// The harness's view of a failed call, for a model, is the same envelope.
    #[test]
    fn the_harness_writes_the_same_envelope_for_every_failure() {
        let judge = super::judge();
        let violations = ErrorEnvelope::contract()
            .validate(&json!({"error": {"code": 7}}))
            .expect_err("not an envelope")
            .violations()
            .to_vec();
        let kinds = [
            FailureKind::UnknownTool,
            FailureKind::InvalidArguments,
            FailureKind::UnusableSchema,
            FailureKind::MalformedResult,
            FailureKind::MissingStructuredContent,
            FailureKind::OutputViolation,
            FailureKind::Quarantined,
        ];
        for kind in kinds {
            let outcome = CallOutcome::ContractFailure(ContractFailure::new("scan", kind, violations.clone()));
            let view = outcome.model_view();
            assert_eq!(view["error"]["code"], kind.code().as_str(), "{view}");
            assert!(judge.is_valid(&view), "{kind:?}: {view}");
        }
        for code in [Some("unavailable"), Some("a_code_of_the_servers_own"), None] {
            let outcome = CallOutcome::DeclaredError(DeclaredError {
                tool: "scan".to_owned(),
                code: code.map(str::to_owned),
                message: "the index is rebuilding".to_owned(),
                retryable: Some(true),
                refused_by: None,
            });
            let view = outcome.model_view();
            let expected =
                if code == Some("unavailable") { ErrorCode::Unavailable } else { ErrorCode::ToolExecutionError };
            assert_eq!(view["error"]["code"], expected.as_str(), "{view}");
            assert!(judge.is_valid(&view), "{code:?}: {view}");
        }
    }
}
