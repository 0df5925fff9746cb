//! What a refused result becomes: the checks a serialized value must pass (its
//! contract, its completeness invariants) and the sanitized error result of each
//! refusal, with the contract's identity in its `_meta`.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use crate::contract::completeness::Refusal;
use crate::contract::limits::NonFinite;
use crate::contract::redact::{sanitize, Sensitive};
use crate::contract::OutputContract;
use crate::serve::wire::{ErrorCode, ResultMeta, ToolCallResult, ToolError, WireViolation};

/// Validation and the completeness invariants; the error result on failure. The value
/// has been measured against the pipeline's limits.
pub(super) fn check(contract: &OutputContract, value: &Value) -> Result<(), Box<ToolCallResult>> {
    if let Err(report) = contract.validate_measured(value) {
        let violations: Vec<WireViolation> = report.violations().iter().map(WireViolation::from).collect();
        let total = report.total();
        let shown =
            if total > violations.len() { format!(", the first {} shown", violations.len()) } else { String::new() };
        let message = format!(
            "the result broke the output contract {}@{} ({total} violation{}{shown})",
            contract.name(),
            contract.version(),
            if total == 1 { "" } else { "s" }
        );
        let error = ToolError::new(ErrorCode::OutputContractViolation, message);
        return Err(Box::new(ToolCallResult::failure(error, violations, Some(meta(contract)))));
    }
    check_completeness(contract, value)
}

/// The completeness invariants of a value that satisfies its contract.
pub(super) fn check_completeness(contract: &OutputContract, value: &Value) -> Result<(), Box<ToolCallResult>> {
    // Pointers are masked by token under sensitive fields before any message names them;
    // the mask is collected only when a message needs one.
    let mask = || Sensitive::collect(value, contract.sensitive_pointers());
    let blocks = contract.completeness_pointers().iter().flat_map(|pointer| pointer_matches(value, pointer));
    let refused = blocks
        .map(|(at, block)| crate::contract::completeness::check_block(|| mask().pointer(&at, Some(value)), block))
        .find(Result::is_err)
        .unwrap_or_else(|| crate::contract::completeness::check_counts(contract, value));
    match refused {
        Ok(()) => Ok(()),
        Err(Refusal::False(why)) => {
            let error = ToolError::new(ErrorCode::FalseCompleteness, why);
            Err(Box::new(ToolCallResult::failure(error, Vec::new(), Some(meta(contract)))))
        }
        Err(Refusal::Unreadable(at)) => {
            let error = ToolError::new(
                ErrorCode::OutputContractViolation,
                format!(
                    "the result broke the output contract {}@{} (1 violation): its completeness metadata cannot be read",
                    contract.name(),
                    contract.version()
                ),
            );
            let violation = WireViolation {
                pointer: mask().pointer(&at, Some(value)),
                keyword: "completeness".to_owned(),
                message: "does not read as completeness metadata (a field of the wrong JSON type or out of range)"
                    .to_owned(),
            };
            Err(Box::new(ToolCallResult::failure(error, vec![violation], Some(meta(contract)))))
        }
    }
}

/// Every value matching a pointer with `*` wildcards, with its concrete pointer. A
/// pointer without a wildcard names at most one value, found without an allocation,
/// and is its own concrete pointer.
fn pointer_matches<'v, 'p>(value: &'v Value, pointer: &'p str) -> Vec<(Cow<'p, str>, &'v Value)> {
    if !pointer.split('/').any(|token| token == "*") {
        return crate::contract::pointer::get(value, pointer)
            .map(|v| (Cow::Borrowed(pointer), v))
            .into_iter()
            .collect();
    }
    let mut found = vec![(String::new(), value)];
    for token in pointer.split('/').skip(1) {
        let token = crate::contract::pointer::unescape(token);
        let mut next = Vec::new();
        for (at, v) in found {
            match (v, token.as_str()) {
                (Value::Array(items), "*") => {
                    next.extend(items.iter().enumerate().map(|(i, x)| (format!("{at}/{i}"), x)));
                }
                (Value::Object(map), "*") => next.extend(
                    map.iter().map(|(k, x)| (format!("{at}/{}", crate::contract::schema::escape_pointer_token(k)), x)),
                ),
                (Value::Object(map), key) => {
                    if let Some(x) = map.get(key) {
                        next.push((format!("{at}/{}", crate::contract::schema::escape_pointer_token(key)), x));
                    }
                }
                (Value::Array(items), index) => {
                    if let Some(x) = index.parse::<usize>().ok().and_then(|i| items.get(i)) {
                        next.push((format!("{at}/{index}"), x));
                    }
                }
                _ => {}
            }
        }
        found = next;
    }
    found.into_iter().map(|(at, v)| (Cow::Owned(at), v)).collect()
}

pub(super) fn meta(contract: &OutputContract) -> Arc<ResultMeta> {
    ResultMeta::of(contract)
}

pub(super) fn serialization_failure(contract: &OutputContract, message: &str) -> ToolCallResult {
    ToolCallResult::failure(serialization_error(message), Vec::new(), Some(meta(contract)))
}

/// The sanitized `serialization_error` for a result that could not be serialized
/// faithfully; shared with the rmcp adapter so both paths say the same.
pub(crate) fn serialization_error(message: &str) -> ToolError {
    ToolError::new(
        ErrorCode::SerializationError,
        sanitize(&format!("the result could not be serialized to JSON: {message}"), &[]),
    )
}

/// The error result for a result the pre-conversion walk refused: a limit passed
/// (`output_limit_exceeded`) or a value JSON cannot hold (`serialization_error`). The
/// pointer is masked below sensitive locations and never run through text patterns.
pub(super) fn unfit(contract: &OutputContract, err: &NonFinite) -> ToolCallResult {
    let pointer = Sensitive::locations(contract.sensitive_pointers()).pointer(&err.pointer(), None);
    if err.is_limit() {
        let error = ToolError::new(ErrorCode::OutputLimitExceeded, err.message_at(&pointer));
        return ToolCallResult::failure(error, Vec::new(), Some(meta(contract)));
    }
    if let Some(custom) = err.custom_error() {
        return serialization_failure(contract, custom);
    }
    let error = ToolError::new(
        ErrorCode::SerializationError,
        format!("the result could not be serialized to JSON: {}", err.message_at(&pointer)),
    );
    ToolCallResult::failure(error, Vec::new(), Some(meta(contract)))
}

pub(super) fn broken_contract(err: &crate::contract::ContractError) -> ToolCallResult {
    let error = ToolError::new(ErrorCode::OutputContractViolation, sanitize(&err.to_string(), &[]));
    ToolCallResult::failure(error, Vec::new(), None)
}
