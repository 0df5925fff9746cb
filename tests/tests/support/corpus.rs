//! The serde corpus runner, shared by the `schema_*.rs` files that hold the corpus: each
//! writes its shapes once in a local `shapes!` macro and emits them twice, into `mod exact`
//! and `mod additive` (the derive needs the compatibility as a literal), through `emit!`.
//!
//! For every shape several real instances are serialized with `serde_json::to_value` and
//! validated against `T::contract()`: every one must pass (false rejects). Under `exact`
//! an unknown key is then injected into the root object and into every nested object of
//! every instance, one at a time, and each such probe must be rejected (false accepts),
//! except where serde's own shape allows any key (listed per shape as `open` pointers).
//! Shapes whose keys or field sets serde fixes in ways an unknown-key probe cannot reach
//! (typed map keys, flattened `Option<Struct>`) also carry hand-written payloads that
//! serde can never write for the Rust type, each of which must be rejected, and
//! hand-written clean controls those payloads were bent from, which must pass. Every value
//! judged is also run through the fast path (`support/fast_path.rs`), which must agree.

use contract_runtime::{Compatibility, ContractError, OutputContract, ToolOutput};
use serde_json::{json, Value};

use super::fast_path;

/// One shape under one compatibility.
#[derive(Debug)]
pub(crate) struct Case {
    name: &'static str,
    contract: Result<&'static OutputContract, ContractError>,
    instances: Vec<Value>,
    /// Instance pointers (RFC 6901, `*` for any one token) of objects whose keys serde
    /// does not fix: maps, and structs with a flattened map. An unknown key there is
    /// valid output, so a probe at these places is not a false accept.
    open: &'static [&'static str],
    /// Payloads serde can never write for the shape, written by hand from what the Rust
    /// type can and cannot serialize (never from the generated schema): a key outside a
    /// map's key type, a flattened `Option<Struct>` with some of its fields, …. Each one
    /// must be rejected under `exact` and, when `additive` is true, under `additive` too
    /// (bad keys and missing fields are type errors there; unknown keys are not).
    rejects: Vec<Reject>,
    /// Where the fast path, run on the typed values, disagreed with `jsonschema` or wrote
    /// other bytes than serde_json.
    typed_disagreements: Vec<String>,
    /// Typed values the fast path handed back to the `Value` path (a shape it does not write).
    typed_handed_back: usize,
}

/// One hand-written payload that must be rejected.
#[derive(Debug)]
pub(crate) struct Reject {
    why: &'static str,
    payload: Value,
    additive: bool,
}

impl Case {
    /// Adds hand-written payloads that serde writes for the shape: clean controls for the
    /// probes built from them, validated and probed like the serialized instances.
    pub(crate) fn accepts(mut self, payloads: Vec<Value>) -> Self {
        self.instances.extend(payloads);
        self
    }

    /// Adds payloads that must be rejected under both compatibilities.
    pub(crate) fn rejects(mut self, probes: Vec<(&'static str, Value)>) -> Self {
        self.rejects.extend(probes.into_iter().map(|(why, payload)| Reject { why, payload, additive: true }));
        self
    }

    /// Adds payloads that must be rejected under `exact` (where objects are closed).
    pub(crate) fn rejects_exact(mut self, probes: Vec<(&'static str, Value)>) -> Self {
        self.rejects.extend(probes.into_iter().map(|(why, payload)| Reject { why, payload, additive: false }));
        self
    }
}

/// Builds a case from real Rust values.
#[allow(
    clippy::needless_pass_by_value,
    reason = "the corpus writes `vec![…]` literals; taking them by value reads better"
)]
pub(crate) fn case<T: ToolOutput>(name: &'static str, values: Vec<T>, open: &'static [&'static str]) -> Case {
    let instances = values
        .iter()
        .map(|v| serde_json::to_value(v).unwrap_or_else(|err| panic!("{name}: instance does not serialize: {err}")))
        .collect();
    let mut typed_disagreements = Vec::new();
    let mut typed_handed_back = 0;
    if let Ok(contract) = T::try_contract() {
        for (value, instance) in values.iter().zip(&instances) {
            let (valid, _) = fast_path::compare(contract, instance);
            let written = contract_runtime::fused::write(contract, value, &contract_runtime::limits::Limits::default());
            match written {
                Ok(bytes) if !valid || bytes != serde_json::to_vec(value).expect("serializes") => {
                    typed_disagreements
                        .push(format!("{name}: typed value written as {}", String::from_utf8_lossy(&bytes)));
                }
                Err(contract_runtime::fused::Miss::Invalid(why)) if valid => {
                    typed_disagreements.push(format!("{name}: typed value {instance} rejected ({why})"));
                }
                Ok(_) | Err(contract_runtime::fused::Miss::Invalid(_)) => {}
                Err(_) if contract.fast_path() == contract_runtime::fused::Coverage::Covered => typed_handed_back += 1,
                Err(_) => {}
            }
        }
    }
    Case {
        name,
        contract: T::try_contract(),
        instances,
        open,
        rejects: Vec::new(),
        typed_disagreements,
        typed_handed_back,
    }
}

#[allow(unused_imports, reason = "each corpus file uses a part of the prelude")]
pub(crate) mod prelude {
    pub(crate) use super::{case, Case};
    pub use chrono::{DateTime, FixedOffset, NaiveDate, NaiveTime, TimeZone as _, Utc};
    pub use contract_runtime::ToolOutput;
    pub use schemars::JsonSchema;
    pub use serde::Serialize;
    pub use serde_json::{json, Value};
    pub use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
    pub use uuid::Uuid;

    /// `base` with `key: value` inserted into the object at `at`, for hand-written probes.
    pub fn put(mut base: serde_json::Value, at: &str, key: &str, value: serde_json::Value) -> serde_json::Value {
        let slot = base.pointer_mut(at).and_then(serde_json::Value::as_object_mut).expect("an object at the pointer");
        slot.insert(key.to_owned(), value);
        base
    }
}

/// Emits one module per shape plus `all()`, which lists every case of the shapes.
macro_rules! emit {
    ($( $m:ident { $($body:tt)* } )*) => {
        $(
            pub mod $m {
                #[allow(unused_imports)]
                use crate::support::corpus::prelude::*;
                $($body)*
            }
        )*
        pub fn all() -> Vec<crate::support::corpus::Case> {
            let mut all = Vec::new();
            $( all.extend($m::cases()); )*
            all
        }
    };
}
pub(crate) use emit;

/// The key injected by the false-accept probes.
const PROBE_KEY: &str = "__corpus_probe__";

/// JSON pointers of every object in `value`, the root first.
fn object_pointers(value: &Value, at: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            out.push(at.to_owned());
            for (k, v) in map {
                object_pointers(v, &format!("{at}/{}", contract_runtime::schema::escape_pointer_token(k)), out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                object_pointers(v, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// Whether `pointer` matches one of the `open` patterns, `*` standing for one token.
fn is_open(open: &[&str], pointer: &str) -> bool {
    open.iter().any(|pattern| {
        let (p, q): (Vec<&str>, Vec<&str>) = (pattern.split('/').collect(), pointer.split('/').collect());
        p.len() == q.len() && p.iter().zip(&q).all(|(a, b)| *a == "*" || a == b)
    })
}

#[derive(Default)]
struct Counts {
    shapes: usize,
    instances: usize,
    false_rejects: Vec<String>,
    probes: usize,
    open_probes: usize,
    false_accepts: Vec<String>,
    additive_probes_accepted: usize,
    additive_probes: usize,
    rejects: usize,
    broken: Vec<String>,
    /// Values on which the fast path and `jsonschema` disagree.
    disagreements: Vec<String>,
    typed_handed_back: usize,
    fast_covered: usize,
}

/// Floors one corpus file must reach, so that a shape or probe lost by accident fails.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Floor {
    /// Shapes per compatibility: the number of cases the file's `shapes!` emits.
    pub(crate) shapes: usize,
    /// Unknown-key probes under `exact` that must be rejected.
    pub(crate) probes: usize,
    /// Shape cases (both compatibilities) whose contract the fast path covers, each of
    /// whose values is then judged by both paths.
    pub(crate) fast_covered: usize,
}

/// Runs the corpus of one file: `exact` and `additive` are the `all()` of its two
/// emitted modules. Prints the counts and fails on any false reject, false accept,
/// contract that does not build, non-standard format or fast-path disagreement.
pub(crate) fn check(exact: Vec<Case>, additive: Vec<Case>, floor: Floor) {
    let mut counts = Counts::default();
    for (compatibility, cases) in [(Compatibility::Exact, exact), (Compatibility::Additive, additive)] {
        for case in cases {
            counts.shapes += 1;
            let contract = match case.contract {
                Ok(contract) => contract,
                Err(err) => {
                    counts.broken.push(format!("{} ({compatibility}): {err}", case.name));
                    continue;
                }
            };
            assert_eq!(contract.compatibility(), compatibility, "{}", case.name);
            counts.disagreements.extend(case.typed_disagreements.iter().cloned());
            counts.typed_handed_back += case.typed_handed_back;
            counts.fast_covered += usize::from(contract.fast_path() == contract_runtime::fused::Coverage::Covered);
            if let contract_runtime::fused::Coverage::Fallback(why) = contract.fast_path() {
                if std::env::var_os("FAST_VERBOSE").is_some() {
                    println!("  not covered: {} ({compatibility}): {why}", case.name);
                }
            }
            assert!(case.instances.len() >= 2, "{}: every shape needs several instances", case.name);
            for instance in &case.instances {
                counts.instances += 1;
                counts.disagreements.extend(fast_path::compare(contract, instance).1);
                if let Err(report) = contract.validate(instance) {
                    counts.false_rejects.push(format!("{} ({compatibility}): {instance}\n{report}", case.name));
                }
                let mut pointers = Vec::new();
                object_pointers(instance, "", &mut pointers);
                for pointer in pointers {
                    let mut probe = instance.clone();
                    let slot =
                        probe.pointer_mut(&pointer).and_then(Value::as_object_mut).expect("pointer to an object");
                    slot.insert(PROBE_KEY.to_owned(), json!("probe"));
                    let (accepted, disagreement) = fast_path::compare(contract, &probe);
                    counts.disagreements.extend(disagreement);
                    match compatibility {
                        Compatibility::Additive => {
                            counts.additive_probes += 1;
                            counts.additive_probes_accepted += usize::from(accepted);
                        }
                        Compatibility::Exact if is_open(case.open, &pointer) => counts.open_probes += 1,
                        Compatibility::Exact => {
                            counts.probes += 1;
                            if accepted {
                                counts.false_accepts.push(format!("{}: key at `{pointer}` of {instance}", case.name));
                            }
                        }
                    }
                }
            }
            for reject in &case.rejects {
                if compatibility == Compatibility::Exact || reject.additive {
                    counts.rejects += 1;
                    let (accepted, disagreement) = fast_path::compare(contract, &reject.payload);
                    counts.disagreements.extend(disagreement);
                    if accepted {
                        counts
                            .false_accepts
                            .push(format!("{} ({compatibility}): {}: {}", case.name, reject.why, reject.payload));
                    }
                }
            }
            for format in contract_tests::formats(contract.schema()) {
                assert!(
                    ["date-time", "date", "time", "uuid", "uri", "email"].contains(&format.as_str()),
                    "{}: non-standard format `{format}` advertised",
                    case.name
                );
            }
        }
    }
    println!(
        "corpus: {} shape cases ({} per compatibility), {} instances, {} false rejects; exact: {} unknown-key probes, {} hand-written reject probes (both modes), {} false accepts ({} probes at map/flattened-map objects, accepted by design); additive: {}/{} unknown-key probes accepted",
        counts.shapes,
        counts.shapes / 2,
        counts.instances,
        counts.false_rejects.len(),
        counts.probes,
        counts.rejects,
        counts.false_accepts.len(),
        counts.open_probes,
        counts.additive_probes_accepted,
        counts.additive_probes,
    );
    println!(
        "{}; {} of {} shape cases covered; {} disagreements; {} typed instances handed back to the Value path",
        fast_path::totals(),
        counts.fast_covered,
        counts.shapes,
        counts.disagreements.len(),
        counts.typed_handed_back
    );
    for line in
        counts.broken.iter().chain(&counts.false_rejects).chain(&counts.false_accepts).chain(&counts.disagreements)
    {
        println!("  {line}");
    }
    assert_eq!(counts.disagreements.len(), 0, "fast path disagreements");
    assert!(
        counts.fast_covered >= floor.fast_covered,
        "{} shape cases covered by the fast path, fewer than {}",
        counts.fast_covered,
        floor.fast_covered
    );
    assert!(counts.broken.is_empty(), "contracts that did not build: {:#?}", counts.broken);
    assert!(counts.shapes / 2 >= floor.shapes, "{} shapes here, fewer than {}", counts.shapes / 2, floor.shapes);
    assert!(
        counts.probes >= floor.probes,
        "too few probes ({}, fewer than {}) to mean anything",
        counts.probes,
        floor.probes
    );
    assert_eq!(counts.false_rejects.len(), 0, "false rejects");
    assert_eq!(counts.false_accepts.len(), 0, "false accepts");
}
