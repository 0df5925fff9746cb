//! The differential check of the fast path, shared by the suites that judge many values:
//! the serde corpus (`support/corpus.rs`, run by the `schema_*.rs` corpus files), the
//! mutation suites (`support/mutations.rs`: validate_mutations.rs,
//! validate_mutation_generator.rs) and the property tests (validate_properties/). Every
//! value one of them validates with `jsonschema` is also run through the fast path's
//! validating serializer; the two must agree, and on a value both accept the fast path's
//! bytes must be the bytes serde_json writes for it. The same serializer building the
//! tree of what it writes (`fused::write_value`) must give the same verdict and bytes,
//! and a tree equal to the value it was given.

use std::sync::atomic::{AtomicUsize, Ordering};

use contract_runtime::fused::{self, Coverage, Miss};
use contract_runtime::limits::Limits;
use contract_runtime::OutputContract;
use serde_json::Value;

/// Values judged by both paths in this test process.
pub(crate) static COMPARED: AtomicUsize = AtomicUsize::new(0);
/// Values of contracts the plan does not cover (only `jsonschema` judged them).
pub(crate) static NOT_COVERED: AtomicUsize = AtomicUsize::new(0);

/// `jsonschema`'s verdict on `value`, and the disagreement of the fast path if any.
pub(crate) fn compare(contract: &OutputContract, value: &Value) -> (bool, Option<String>) {
    let expected = contract.is_valid(value);
    if let Coverage::Fallback(_) = contract.fast_path() {
        NOT_COVERED.fetch_add(1, Ordering::Relaxed);
        return (expected, None);
    }
    COMPARED.fetch_add(1, Ordering::Relaxed);
    let name = contract.name();
    let disagreement = match (fused::write(contract, value, &Limits::default()), expected) {
        (Ok(bytes), true) => {
            let reference = serde_json::to_vec(value).expect("a Value serializes");
            (bytes != reference).then(|| format!("{name}: bytes differ from serde_json's for {value}"))
        }
        (Ok(_), false) => Some(format!("{name}: fast path accepts what jsonschema rejects: {value}")),
        (Err(Miss::Invalid(why)), true) => {
            Some(format!("{name}: fast path rejects ({why}) what jsonschema accepts: {value}"))
        }
        (Err(Miss::Invalid(_)), false) => None,
        (Err(other), _) => Some(format!("{name}: fast path could not judge a plain value ({other}): {value}")),
    };
    let disagreement = disagreement.or_else(|| tree_disagreement(contract, value));
    (expected, disagreement)
}

/// How `fused::write_value` disagrees with `fused::write` on `value`, or with `value`
/// itself: a tree built while writing a `Value` must be that `Value`.
fn tree_disagreement(contract: &OutputContract, value: &Value) -> Option<String> {
    let name = contract.name();
    match (fused::write(contract, value, &Limits::default()), fused::write_value(contract, value, &Limits::default())) {
        (Ok(bytes), Ok((built_bytes, tree))) => {
            if bytes != built_bytes {
                Some(format!("{name}: write_value writes other bytes than write for {value}"))
            } else if tree != *value {
                Some(format!("{name}: write_value built {tree} for {value}"))
            } else {
                None
            }
        }
        (Err(a), Err(b)) if std::mem::discriminant(&a) == std::mem::discriminant(&b) => None,
        (a, b) => Some(format!(
            "{name}: write and write_value disagree ({:?} / {:?}) on {value}",
            a.map(|_| "written"),
            b.map(|_| "written")
        )),
    }
}

/// The totals, for the suites' printed summaries.
pub(crate) fn totals() -> String {
    format!(
        "fast path: {} values compared with jsonschema, {} of uncovered contracts",
        COMPARED.load(Ordering::Relaxed),
        NOT_COVERED.load(Ordering::Relaxed)
    )
}
