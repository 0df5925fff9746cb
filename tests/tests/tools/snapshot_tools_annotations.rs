//! Tool annotations classified by safety: a hint that moves to its less safe value, or
//! is removed where its default is the less safe one, is breaking (a client that
//! auto-approved the tool must ask again); the other direction is additive; a default
//! spelled out changes nothing for clients; the annotation `title` is text. The expected
//! verdicts are written by hand from MCP's defaults (`readOnlyHint` false,
//! `destructiveHint` true, `idempotentHint` false, `openWorldHint` true).

use std::path::{Path, PathBuf};

use contract_runtime::{contracts, ContractSet, ToolOutput};
use contract_tools::evolution::tool::{classify_annotations, ToolVerdict};
use contract_tools::tool_list::{self, ToolListing};
use serde_json::{json, Map, Value};

#[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
#[tool_output(name = "wipe", version = "1.0.0", compatibility = "exact")]
struct Wipe {
    done: bool,
}

#[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
#[tool_output(name = "wipe", version = "2.0.0", compatibility = "exact")]
struct WipeBumped {
    done: bool,
}

fn map(value: &Value) -> Option<&Map<String, Value>> {
    value.as_object()
}

#[test]
fn every_hint_is_classified_by_the_direction_of_safety() {
    use ToolVerdict::{Additive, Breaking, Cosmetic, Text};
    let cases: &[(Value, Value, &str, ToolVerdict)] = &[
        (json!({ "readOnlyHint": true }), json!({ "readOnlyHint": false }), "hint_less_safe", Breaking),
        (json!({ "readOnlyHint": false }), json!({ "readOnlyHint": true }), "hint_safer", Additive),
        (json!({ "readOnlyHint": true }), json!({}), "hint_less_safe", Breaking),
        (json!({ "readOnlyHint": false }), json!({}), "hint_spelled_out", Cosmetic),
        (json!({ "destructiveHint": false }), json!({ "destructiveHint": true }), "hint_less_safe", Breaking),
        (json!({ "destructiveHint": true }), json!({ "destructiveHint": false }), "hint_safer", Additive),
        (json!({ "destructiveHint": false }), json!({}), "hint_less_safe", Breaking),
        (json!({}), json!({ "destructiveHint": true }), "hint_spelled_out", Cosmetic),
        (json!({ "idempotentHint": true }), json!({ "idempotentHint": false }), "hint_less_safe", Breaking),
        (json!({ "idempotentHint": false }), json!({ "idempotentHint": true }), "hint_safer", Additive),
        (json!({ "idempotentHint": true }), json!({}), "hint_less_safe", Breaking),
        (json!({ "openWorldHint": false }), json!({ "openWorldHint": true }), "hint_less_safe", Breaking),
        (json!({ "openWorldHint": true }), json!({ "openWorldHint": false }), "hint_safer", Additive),
        (json!({ "openWorldHint": false }), json!({}), "hint_less_safe", Breaking),
        (json!({}), json!({ "openWorldHint": false }), "hint_safer", Additive),
        (json!({ "readOnlyHint": true }), json!({ "readOnlyHint": "yes" }), "hint_unclassified", Breaking),
        (json!({ "title": "Wipe" }), json!({ "title": "Wipe all" }), "text_changed", Text),
        (json!({}), json!({ "x-vendor": 1 }), "annotation_unclassified", Breaking),
    ];
    for (old, new, kind, verdict) in cases {
        let changes = classify_annotations(map(old), map(new));
        assert_eq!(changes.len(), 1, "{old} → {new}: {changes:?}");
        assert_eq!((changes[0].kind(), changes[0].verdict()), (*kind, *verdict), "{old} → {new}");
    }
    // The control: the same hints, however absent, classify as nothing.
    assert!(
        classify_annotations(map(&json!({ "readOnlyHint": true })), map(&json!({ "readOnlyHint": true }))).is_empty()
    );
    assert!(classify_annotations(None, map(&json!({}))).is_empty());
}

fn listing(version: &str, annotations: &Value) -> ToolListing {
    let mut tool = json!({ "name": "wipe", "description": "Wipes.", "inputSchema": { "type": "object" } });
    tool["annotations"] = annotations.clone();
    ToolListing::from_json(version, &Value::Array(vec![tool])).unwrap()
}

fn fresh(name: &str, first: &ToolListing, set: &ContractSet) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("snapshot-tools-annotations").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    tool_list::review(&dir, first, set).unwrap().write(&dir).unwrap();
    tool_list::check(&dir, first, set).expect("clean control");
    dir
}

fn write(dir: &Path, listing: &ToolListing, set: &ContractSet) -> Result<(), String> {
    tool_list::review(dir, listing, set).map_err(|e| e.to_string())?.write(dir).map(drop).map_err(|e| e.to_string())
}

#[test]
fn a_read_only_tool_that_stops_being_read_only_needs_the_contract_major_bump() {
    let set = contracts![Wipe];
    let dir = fresh("read-only", &listing("1.0.0", &json!({ "readOnlyHint": true })), &set);
    let flipped = listing("1.0.0", &json!({ "readOnlyHint": false }));
    let err = tool_list::check(&dir, &flipped, &set).expect_err("stale").to_string();
    assert!(
        err.contains("~ /annotations/readOnlyHint (true → false, less safe: a client that auto-approved the tool must ask again): BREAKING, needs 2.0.0"),
        "{err}"
    );
    assert!(err.contains("fix: set `#[tool_output(version = \"2.0.0\")]` (or later) on `Wipe`"), "{err}");
    assert!(write(&dir, &flipped, &set).is_err(), "refused without the bump");
    write(&dir, &flipped, &contracts![WipeBumped]).expect("the fix applied");
    tool_list::check(&dir, &flipped, &contracts![WipeBumped]).expect("passes after the fix");
    // The other direction is additive: a minor bump, not a major one.
    let back = listing("2.0.0", &json!({ "readOnlyHint": true }));
    let err = tool_list::check(&dir, &back, &contracts![WipeBumped]).expect_err("stale").to_string();
    assert!(err.contains("(false → true, safer: clients may ask less): additive, needs 2.1.0"), "{err}");
}

#[test]
fn the_annotations_manifest_is_opt_in_and_checked_against_the_live_hints() {
    let set = contracts![];
    let first = listing("1.0.0", &json!({ "readOnlyHint": true, "openWorldHint": false }));
    let dir = fresh("manifest", &first, &set);
    let manifest = dir.join("tools/annotations.json");
    assert!(!manifest.exists(), "not written unless the project opts in");
    std::fs::write(&manifest, "{}\n").unwrap();
    let err = tool_list::check(&dir, &first, &set).expect_err("the opted-in manifest is empty").to_string();
    assert!(err.contains("tools/annotations.json: tool wipe is listed but not in the manifest"), "{err}");
    write(&dir, &first, &set).expect("fills the manifest");
    tool_list::check(&dir, &first, &set).expect("up to date");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    assert_eq!(
        written,
        json!({ "tools": { "wipe": {
            "readOnlyHint": true, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false
        } } }),
        "every hint as clients read it"
    );
    // The server stops promising a closed world: the manifest no longer holds.
    let open = listing("2.0.0", &json!({ "readOnlyHint": true }));
    let err = tool_list::check(&dir, &open, &set).expect_err("stale manifest").to_string();
    assert!(err.contains("tools/annotations.json is not up to date with the live tool list"), "{err}");
    assert!(err.contains("tool wipe: ~ /annotations/openWorldHint (false → true, less safe"), "{err}");
    write(&dir, &open, &set).expect("a major server bump covers it");
    tool_list::check(&dir, &open, &set).expect("up to date again");
}
