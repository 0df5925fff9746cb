//! The differential check of the fast path, shared by the suites that judge many values:
//! the serde corpus (`support/corpus.rs`, run by the `schema_*.rs` corpus files), the
//! mutation suites (`support/mutations.rs`: validate_mutations.rs,
//! validate_mutation_generator.rs) and the property tests (validate_properties/). Every
//! value one of them validates with `jsonschema` is also run through the fast path's
//! validating serializer; the two must agree, and on a value both accept the fast path's
//! bytes must be the bytes serde_json writes for it.

use std::sync::atomic::{AtomicUsize, Ordering};

use contract_runtime::fast::{self, Coverage, Miss};
use contract_runtime::finite::Limits;
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
    let disagreement = match (fast::write(contract, value, &Limits::default()), expected) {
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
    (expected, disagreement)
}

/// The totals, for the suites' printed summaries.
pub(crate) fn totals() -> String {
    format!(
        "fast path: {} values compared with jsonschema, {} of uncovered contracts",
        COMPARED.load(Ordering::Relaxed),
        NOT_COVERED.load(Ordering::Relaxed)
    )
}
