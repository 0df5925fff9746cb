//! Helpers shared by the schema evolution tests (`evolution/evolution_*.rs`): the fixture
//! pairs of `tests/fixtures/evolution/<rule>/{old,new}.json`, the insta snapshots of
//! `tests/tests/evolution/snapshots-evolution/`, temp folders, and the untagged-enum
//! contracts that both the union tests and the file-location tests compare.

#![allow(dead_code, reason = "each test file that includes this module uses a part of it")]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use contract_tools::evolution::{Change, Verdict};
use serde_json::Value;

/// The verdicts as the rule and policy tables write them.
pub(crate) const B: Option<Verdict> = Some(Verdict::Breaking);
pub(crate) const A: Option<Verdict> = Some(Verdict::Additive);
pub(crate) const C: Option<Verdict> = Some(Verdict::Cosmetic);
pub(crate) const NONE: Option<Verdict> = None;

/// The folder of the fixture pairs, one subfolder per rule.
pub(crate) fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/evolution")
}

/// The `side` (`old` or `new`) schema of the fixture pair `rule`.
pub(crate) fn load(rule: &str, side: &str) -> Value {
    let path = fixtures().join(rule).join(format!("{side}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A verdict as the reports print it; `None` is no change.
pub(crate) fn show(verdict: Option<Verdict>) -> &'static str {
    verdict.map_or("no change", Verdict::as_str)
}

/// Asserts `text` against `snapshots-evolution/evolution__<name>.snap`. A macro, not a
/// function, so that insta resolves the folder from, and names in the snapshot header,
/// the test file that calls it.
#[allow(unused_macros, reason = "only the files with snapshots use it")]
macro_rules! assert_evolution_snapshot {
    ($name:expr, $text:expr) => {{
        let name: &str = $name;
        let text: &str = $text;
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path("snapshots-evolution");
        settings.set_prepend_module_to_snapshot(false);
        settings.bind(|| insta::assert_snapshot!(format!("evolution__{name}"), text));
    }};
}
#[allow(unused_imports, reason = "only the files with snapshots use it")]
pub(crate) use assert_evolution_snapshot;

/// A directory under the system temp dir, removed on drop.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new(label: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("tool-contracts-evolution-{label}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create temp dir");
        Self(path)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The files of `dir` and of its folders (path relative to `dir`, text), sorted by path.
pub(crate) fn read_all(dir: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("dir exists") {
        let path = entry.expect("entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            files.extend(read_all(&path).into_iter().map(|(inner, text)| (format!("{name}/{inner}"), text)));
        } else {
            files.push((name, std::fs::read_to_string(&path).expect("readable")));
        }
    }
    files.sort();
    files
}

/// One change's kind, verdict, pointer and detail; panics unless there is exactly one.
pub(crate) fn only_change(changes: &[Change]) -> (&str, Verdict, &str, &str) {
    assert_eq!(changes.len(), 1, "expected exactly one change: {changes:#?}");
    let c = &changes[0];
    (c.kind().as_str(), c.verdict(), c.pointer(), c.detail())
}

/// `node` with every local `$ref` replaced by its target (keywords beside the `$ref`
/// kept) and `$defs` dropped: the dereferenced schema logical pointers walk. For
/// schemas without recursion only.
pub(crate) fn dereferenced(root: &Value, node: &Value) -> Value {
    match node {
        Value::Object(map) => {
            let mut out = serde_json::Map::new();
            if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                let target = root.pointer(reference.strip_prefix('#').expect("a local $ref")).expect("resolves");
                if let Value::Object(target) = dereferenced(root, target) {
                    out.extend(target);
                }
            }
            for (key, value) in map.iter().filter(|(k, _)| *k != "$ref" && *k != "$defs") {
                out.insert(key.clone(), dereferenced(root, value));
            }
            Value::Object(out)
        }
        Value::Array(list) => Value::Array(list.iter().map(|v| dereferenced(root, v)).collect()),
        other => other.clone(),
    }
}

/// Successive versions of a generic wrapper whose `data` is an untagged enum of structs,
/// as a tool returns it. The union and file-location tests compare the contracts of these
/// types.
#[allow(dead_code)] // Only their schemas are used: the values are never built.
pub(crate) mod goals {
    use contract_runtime::ToolOutput;
    use schemars::JsonSchema;
    use serde::Serialize;

    /// The answer of the `goal` tool, with the data optional (`anyOf: [{$ref}, {type: null}]`).
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(name = "goal", version = "1.0.0", compatibility = "additive")]
    pub(crate) struct Envelope<T> {
        pub(crate) ok: bool,
        pub(crate) data: Option<T>,
    }

    /// The answer of the `goal` tool, with the data always there (a `$ref`).
    #[derive(Serialize, JsonSchema, ToolOutput)]
    #[tool_output(name = "goal", version = "1.0.0", compatibility = "additive")]
    pub(crate) struct Direct<T> {
        pub(crate) ok: bool,
        pub(crate) data: T,
    }

    #[derive(Serialize, JsonSchema)]
    pub(crate) struct Progress {
        pub(crate) done: u32,
        pub(crate) ratio: f32,
    }

    #[derive(Serialize, JsonSchema)]
    pub(crate) struct Score {
        pub(crate) value: f64,
        pub(crate) weight: f32,
    }

    #[derive(Serialize, JsonSchema)]
    pub(crate) struct Eta {
        pub(crate) seconds: f64,
        pub(crate) confidence: f32,
    }

    /// Two variants.
    pub(crate) mod two {
        use super::{JsonSchema, Progress, Score, Serialize};
        #[derive(Serialize, JsonSchema)]
        #[serde(untagged)]
        pub(crate) enum GoalData {
            Progress(Progress),
            Score(Score),
        }
    }

    /// A variant added between the two.
    pub(crate) mod three {
        use super::{Eta, JsonSchema, Progress, Score, Serialize};
        #[derive(Serialize, JsonSchema)]
        #[serde(untagged)]
        pub(crate) enum GoalData {
            Progress(Progress),
            Eta(Eta),
            Score(Score),
        }
    }

    /// The two variants in the other order.
    pub(crate) mod reordered {
        use super::{JsonSchema, Progress, Score, Serialize};
        #[derive(Serialize, JsonSchema)]
        #[serde(untagged)]
        pub(crate) enum GoalData {
            Score(Score),
            Progress(Progress),
        }
    }

    /// The two variants in the other order, `Progress` with a new required field.
    pub(crate) mod reordered_changed {
        use super::{changed, JsonSchema, Score, Serialize};
        #[derive(Serialize, JsonSchema)]
        #[serde(untagged)]
        pub(crate) enum GoalData {
            Score(Score),
            Progress(changed::Progress),
        }
    }

    /// A rating that shares `value` with `Score`.
    #[derive(Serialize, JsonSchema)]
    pub(crate) struct Rating {
        pub(crate) value: f64,
        pub(crate) stars: u8,
    }

    /// `Score` replaced by `Rating`: another variant, not `Score` edited.
    pub(crate) mod replaced {
        use super::{JsonSchema, Progress, Rating, Serialize};
        #[derive(Serialize, JsonSchema)]
        #[serde(untagged)]
        pub(crate) enum GoalData {
            Progress(Progress),
            Rating(Rating),
        }
    }

    /// The first of the three variants removed.
    pub(crate) mod without_progress {
        use super::{Eta, JsonSchema, Score, Serialize};
        #[derive(Serialize, JsonSchema)]
        #[serde(untagged)]
        pub(crate) enum GoalData {
            Eta(Eta),
            Score(Score),
        }
    }

    /// The same two variants, `Progress` with a new required field.
    pub(crate) mod changed {
        use super::{JsonSchema, Score, Serialize};
        #[derive(Serialize, JsonSchema)]
        pub(crate) struct Progress {
            pub(crate) done: u32,
            pub(crate) total: u32,
            pub(crate) ratio: f32,
        }
        #[derive(Serialize, JsonSchema)]
        #[serde(untagged)]
        pub(crate) enum GoalData {
            Progress(Progress),
            Score(Score),
        }
    }
}

/// How a review describes each branch of `goals::*::GoalData`.
pub(crate) const ETA: &str = "branch type \"object\" with properties confidence, seconds";
pub(crate) const PROGRESS: &str = "branch type \"object\" with properties done, ratio";
pub(crate) const SCORE: &str = "branch type \"object\" with properties value, weight";
pub(crate) const RATING: &str = "branch type \"object\" with properties stars, value";
