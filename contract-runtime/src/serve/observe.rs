//! What an operator can watch: how each contract is enforced ([`Enforcement`], the
//! report-only rollout), the counters of a pipeline ([`Stats`]) and the `tracing`
//! events it emits, none of which names an instance value.
//!
#![doc = include_str!("../../docs/operating.md")]

use std::collections::BTreeSet;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::contract::OutputContract;
use crate::serve::wire::{ErrorCode, ToolCallResult, ToolError, WireViolation, CODE_COUNT};

/// The `tracing` target of every event this crate emits, whatever module emits it.
pub const TARGET: &str = "contract_runtime";

/// What happens to a result that breaks its contract.
///
/// Only the judgement of the contract changes: a schema violation or a broken
/// completeness invariant (`output_contract_violation`, `false_completeness`). Under
/// [`Enforcement::Report`] such a result is sent unchanged, with `"enforced": false`
/// beside the contract identity in its `_meta`, reported as a `warn` event and counted
/// ([`Stats::report_only`]); it is never cached. Everything else holds in both modes:
/// a result that cannot be serialized faithfully (NaN, a failing `Serialize`), one past
/// the size or depth limits, a failing middleware, a handler error and refused
/// arguments are errors, as they are when enforced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Enforcement {
    /// A result that breaks its contract is refused with an error result (the default).
    #[default]
    Enforce,
    /// A result that breaks its contract is sent unchanged, reported and counted.
    Report,
}

impl Enforcement {
    /// `"enforce"` or `"report"`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Enforce => "enforce",
            Self::Report => "report",
        }
    }
}

/// Which tools are enforced and which only reported: the whole server, or tools by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Rollout {
    /// Every tool is report-only.
    all: bool,
    /// These tools are report-only.
    tools: BTreeSet<String>,
}

impl Rollout {
    pub(crate) fn report_all(&mut self) {
        self.all = true;
    }

    pub(crate) fn report_tool(&mut self, tool: impl Into<String>) {
        self.tools.insert(tool.into());
    }

    /// Both settings together: a tool report-only in either is report-only.
    #[cfg(feature = "rmcp")]
    pub(crate) fn merge(&mut self, other: &Rollout) {
        self.all |= other.all;
        self.tools.extend(other.tools.iter().cloned());
    }

    /// How results of `tool` are enforced.
    pub(crate) fn of(&self, tool: &str) -> Enforcement {
        if self.all || (!self.tools.is_empty() && self.tools.contains(tool)) {
            Enforcement::Report
        } else {
            Enforcement::Enforce
        }
    }
}

/// The live counters of a pipeline, shared by its clones.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    calls: AtomicU64,
    errors: [AtomicU64; CODE_COUNT],
    report_only: AtomicU64,
    cache_hits: AtomicU64,
    cache_misses: AtomicU64,
}

fn bump(counter: &AtomicU64) {
    // One relaxed add: readers want totals, not order, and a u64 counting a billion
    // calls a second lasts five centuries.
    counter.fetch_add(1, Ordering::Relaxed);
}

impl Counters {
    pub(crate) fn cache_hit(&self) {
        bump(&self.cache_hits);
    }

    pub(crate) fn cache_miss(&self) {
        bump(&self.cache_misses);
    }

    pub(crate) fn snapshot(&self) -> Stats {
        let mut errors = [0; CODE_COUNT];
        for (slot, counter) in errors.iter_mut().zip(&self.errors) {
            *slot = counter.load(Ordering::Relaxed);
        }
        Stats {
            calls: self.calls.load(Ordering::Relaxed),
            errors,
            report_only: self.report_only.load(Ordering::Relaxed),
            cache_hits: self.cache_hits.load(Ordering::Relaxed),
            cache_misses: self.cache_misses.load(Ordering::Relaxed),
        }
    }

    /// Counts a result leaving the pipeline or the adapter and emits its event:
    /// nothing for a success, one event per error result (per violation for a
    /// contract violation).
    #[inline]
    pub(crate) fn served(&self, tool: &str, contract: Option<&OutputContract>, result: &ToolCallResult) {
        bump(&self.calls);
        if let Some(error) = result.error() {
            self.refused(tool, contract, error, result.violations());
        }
    }

    /// The error half of [`Counters::served`], kept out of line.
    #[cold]
    fn refused(&self, tool: &str, contract: Option<&OutputContract>, error: &ToolError, found: &[WireViolation]) {
        let code = error.code();
        if let Some(counter) = self.errors.get(code.index()) {
            bump(counter);
        }
        refused(tool, contract, code, error.retryable(), found);
    }

    /// Counts and reports a result sent unchanged although it broke its contract.
    pub(crate) fn reported(&self, tool: &str, contract: &OutputContract, finding: &ToolCallResult) {
        bump(&self.report_only);
        let code = finding.error_code().unwrap_or(ErrorCode::OutputContractViolation);
        violations(tool, Some(contract), code, false, finding.violations());
    }
}

/// The contract identity as events carry it, empty for an uncontracted tool; written
/// only when a subscriber records the event.
struct IdOf<'a>(Option<&'a OutputContract>);

impl fmt::Display for IdOf<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(contract) => contract.id().fmt(f),
            None => Ok(()),
        }
    }
}

/// The `error` event of a handler that panicked; the refusal's own event follows. The
/// panic's message is not in it (it may quote anything): Rust's panic hook reports it.
pub(crate) fn panicked(tool: &str, contract: Option<&OutputContract>) {
    tracing::error!(target: TARGET, tool, contract = %IdOf(contract), "tool panicked");
}

/// The event of an error result, by code.
fn refused(tool: &str, contract: Option<&OutputContract>, code: ErrorCode, retryable: bool, found: &[WireViolation]) {
    let id = IdOf(contract);
    let code_name = code.as_str();
    match code {
        ErrorCode::OutputContractViolation | ErrorCode::FalseCompleteness => {
            violations(tool, contract, code, true, found);
        }
        ErrorCode::OutputLimitExceeded => {
            tracing::warn!(target: TARGET, tool, contract = %id, code = code_name, "output limit exceeded; result refused");
        }
        ErrorCode::SerializationError | ErrorCode::MiddlewareError => {
            tracing::warn!(target: TARGET, tool, contract = %id, code = code_name, "result could not be served");
        }
        ErrorCode::InvalidArguments => {
            tracing::info!(target: TARGET, tool, contract = %id, code = code_name, "arguments refused");
        }
        // The pipeline never quarantines: a proxy or a harness holding a tools lock does.
        ErrorCode::ToolQuarantined => {
            tracing::info!(target: TARGET, tool, contract = %id, code = code_name, "call refused: tool quarantined");
        }
        // A client's verdicts on what a server sent; the pipeline never writes them.
        ErrorCode::UnknownTool | ErrorCode::UnusableSchema | ErrorCode::MalformedResult => {
            tracing::info!(target: TARGET, tool, contract = %id, code = code_name, "call refused");
        }
        ErrorCode::ToolExecutionError | ErrorCode::Unavailable => {
            tracing::info!(target: TARGET, tool, contract = %id, code = code_name, retryable, "tool failed");
        }
    }
}

/// One `output contract violation` event per violation (one with keyword
/// `completeness` and the root pointer when the refusal lists none).
fn violations(tool: &str, contract: Option<&OutputContract>, code: ErrorCode, enforced: bool, found: &[WireViolation]) {
    let id = IdOf(contract);
    let code_name = code.as_str();
    if found.is_empty() {
        tracing::warn!(
            target: TARGET,
            tool,
            contract = %id,
            code = code_name,
            pointer = "",
            keyword = "completeness",
            enforced,
            "output contract violation"
        );
    }
    for violation in found {
        tracing::warn!(
            target: TARGET,
            tool,
            contract = %id,
            code = code_name,
            pointer = violation.pointer.as_str(),
            keyword = violation.keyword.as_str(),
            enforced,
            "output contract violation"
        );
    }
}

/// What a pipeline (and the rmcp adapter serving through it) has counted since it was
/// built: a snapshot, read with [`Pipeline::stats`](crate::pipeline::Pipeline::stats)
/// or `ContractedServer::stats`. Clones of a pipeline share one set of counters. Each
/// counter only grows; reading costs a few relaxed atomic loads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Results served for contracted tools, successes and errors alike (a task's
    /// result once, a cache hit once), and every refusal of arguments.
    pub calls: u64,
    errors: [u64; CODE_COUNT],
    /// Results sent unchanged under [`Enforcement::Report`] although they broke their
    /// contract.
    pub report_only: u64,
    /// Calls answered from the cache.
    pub cache_hits: u64,
    /// Calls that asked the cache and ran the handler.
    pub cache_misses: u64,
}

impl Stats {
    /// Error results with `code`.
    #[must_use]
    pub fn errors(&self, code: ErrorCode) -> u64 {
        self.errors.get(code.index()).copied().unwrap_or(0)
    }

    /// Error results of every code together.
    #[must_use]
    pub fn total_errors(&self) -> u64 {
        self.errors.iter().sum()
    }

    /// Each code with its count, codes with none left out.
    pub fn errors_by_code(&self) -> impl Iterator<Item = (ErrorCode, u64)> + '_ {
        ErrorCode::all().iter().map(|code| (*code, self.errors(*code))).filter(|(_, n)| *n > 0)
    }
}
