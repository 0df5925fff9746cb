//! What the proxy does to listings and calls: the advertised schemas as the contract,
//! contracts declared from a folder, the tools lock, per-tool modes and lifted text.
//! Pure and synchronous; the forwarding lives in `transparent.rs`.
//!
//! Two judges, one error envelope. A tool whose contract comes from `--contracts` is
//! judged by the server-side [`Pipeline`] (limits, NaN, masked sensitive pointers,
//! `output_contract_violation` with the contract identity in `_meta`). A tool that only
//! advertises an `outputSchema` is judged by the client harness's [`Catalog`], which
//! compiles any 2020-12 schema a server publishes (a server's schema need not be in the
//! canonical form a checked-in contract must be in); its failures are written in the
//! same envelope: one text block `{"error": {"code", "message", "retryable",
//! "violations"}}` and `isError: true`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use contract_runtime::client::lock::{drift_of_server, Action, DriftStatus, LockPolicy, LockedServer};
use contract_runtime::client::{Catalog, ContractFailure};
use contract_runtime::ErrorShape;

use crate::observe::Observer;
use contract_runtime::pipeline::{CallContext, Pipeline};
use contract_runtime::wire::{
    contract_meta, unqualified_meta, ErrorCode, ToolCallResult, ToolError, WireViolation, META_KEY,
};
use contract_runtime::{OutputContract, Violation};
use serde_json::{json, Map, Value};

/// What the proxy does to one tool's calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Arguments and results are checked; a failure replaces the result.
    Enforce,
    /// Checked; a failure is logged and counted, and the call and result pass unchanged.
    Warn,
    /// Nothing is checked (the lock still applies).
    Off,
}

impl Mode {
    /// Parses `enforce`, `warn` or `off`.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        match text {
            "enforce" => Some(Self::Enforce),
            "warn" => Some(Self::Warn),
            "off" => Some(Self::Off),
            _ => None,
        }
    }
}

/// The proxy's policy, fixed at start.
#[derive(Debug)]
pub(crate) struct Policy {
    /// Contracts from `--contracts`, by tool name.
    pub(crate) declared: BTreeMap<String, &'static OutputContract>,
    /// The error shapes their `contracts.json` declares, by tool name.
    pub(crate) error_shapes: BTreeMap<String, ErrorShape>,
    /// The lock's pin of this upstream, when `--lock` is given.
    pub(crate) lock: Option<LockedServer>,
    /// The mode of tools not named in `modes`.
    pub(crate) default_mode: Mode,
    /// Per-tool modes.
    pub(crate) modes: BTreeMap<String, Mode>,
    /// Tools with an advertised `outputSchema` whose JSON text block is parsed into
    /// `structuredContent` (a declared contract lifts without being named here).
    pub(crate) lift_text: BTreeSet<String>,
    pub(crate) pipeline: Pipeline,
    /// Failures let through in warn mode.
    pub(crate) warned: AtomicU64,
    /// Whether a listed tool without a contract is marked `qualified: false` (when
    /// contracts are declared; without them the listing passes as the server's).
    pub(crate) qualify: bool,
    /// `--observe`: every result's shape, recorded.
    pub(crate) observer: Option<Observer>,
    /// Whether the tools the options name were compared with a listing yet.
    pub(crate) names_checked: AtomicBool,
}

/// One upstream listing, as judged.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    /// The tools sent downstream: quarantined ones removed, declared contracts advertised.
    pub(crate) tools: Vec<Value>,
    /// Every listed tool that is not quarantined, with the schemas advertised downstream.
    pub(crate) catalog: Catalog,
    /// Quarantined tools and the kinds of their changes.
    pub(crate) quarantined: BTreeMap<String, Vec<String>>,
}

impl Listing {
    /// Whether `tool` was listed upstream (quarantined or not).
    pub(crate) fn knows(&self, tool: &str) -> bool {
        self.catalog.get(tool).is_some() || self.quarantined.contains_key(tool)
    }
}

/// How a judged result differs from the upstream's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Judged {
    /// It passes exactly as it came.
    Unchanged,
    /// It passes with additions: a lifted text (`structuredContent`), or the contract
    /// identity in `_meta`.
    Amended,
    /// A refusal stands in its place.
    Replaced,
}

/// What to do with a call before it is forwarded.
#[derive(Debug)]
pub(crate) enum Gate {
    /// Forward it.
    Forward,
    /// Answer with this `tools/call` result, and forward nothing.
    Refuse(Value),
}

impl Policy {
    /// The mode of `tool`.
    pub(crate) fn mode(&self, tool: &str) -> Mode {
        self.modes.get(tool).copied().unwrap_or(self.default_mode)
    }

    /// Judges an upstream listing (every page, in order).
    pub(crate) fn listing(&self, upstream: Vec<Value>) -> Listing {
        let mut quarantined = BTreeMap::new();
        if let Some(pinned) = &self.lock {
            let policy = LockPolicy::default();
            for drift in drift_of_server(pinned, &upstream) {
                if drift.status() == DriftStatus::Removed || policy.judge(&drift) != Action::Quarantine {
                    continue;
                }
                let mut kinds: Vec<String> = match drift.status() {
                    DriftStatus::Added => vec!["tool_added".to_owned()],
                    _ => drift.changes().iter().map(|c| c.kind().to_owned()).collect(),
                };
                kinds.sort();
                kinds.dedup();
                tracing::warn!(tool = drift.name(), changes = %kinds.join(", "), "quarantined by the tools lock");
                quarantined.insert(drift.name().to_owned(), kinds);
            }
        }
        if !self.names_checked.swap(true, Ordering::Relaxed) {
            self.warn_unlisted(&upstream);
        }
        let mut tools = Vec::with_capacity(upstream.len());
        for mut tool in upstream {
            let Some(name) = tool.get("name").and_then(Value::as_str).map(str::to_owned) else { continue };
            if quarantined.contains_key(&name) {
                continue;
            }
            // Report-only is invisible: a contract in warn mode is judged, never advertised,
            // and nothing is added to the tool.
            if self.mode(&name) != Mode::Warn {
                let advertised = self.declared.get(&name).is_some_and(|c| Self::advertise(&name, &mut tool, c));
                if !advertised && self.qualify {
                    mark_unqualified(&mut tool);
                }
            }
            tools.push(tool);
        }
        let mut catalog = Catalog::new();
        catalog.refresh(tools.iter().cloned());
        Listing { tools, catalog, quarantined }
    }

    /// Warns once, at the first listing, of every tool the options name that the server
    /// does not list (the proxy starts before its upstream session, which the client's own
    /// `initialize` opens, and a server may list a tool later, so this is no start error).
    fn warn_unlisted(&self, upstream: &[Value]) {
        let listed: BTreeSet<&str> = upstream.iter().filter_map(|t| t.get("name").and_then(Value::as_str)).collect();
        let named = [
            ("--contracts or --bind", self.declared.keys().collect::<Vec<_>>()),
            ("--mode", self.modes.keys().collect()),
            ("--lift-text", self.lift_text.iter().collect()),
        ];
        for (option, names) in named {
            for name in names.into_iter().filter(|name| !listed.contains(name.as_str())) {
                let lists = listed.iter().copied().collect::<Vec<_>>().join(", ");
                tracing::warn!(
                    tool = %name,
                    option,
                    "{option} names the tool `{name}`, which the server does not list; it lists: {lists}"
                );
            }
        }
    }

    /// Puts a declared contract in a listed tool that publishes no `outputSchema`;
    /// `true` when it did.
    fn advertise(name: &str, tool: &mut Value, contract: &OutputContract) -> bool {
        let Some(object) = tool.as_object_mut() else { return false };
        if object.get("outputSchema").is_some_and(|s| !s.is_null()) {
            tracing::warn!(
                tool = name,
                "the server publishes an outputSchema; the declared contract is not advertised and its own schema is enforced"
            );
            return false;
        }
        object.insert("outputSchema".to_owned(), contract.schema().clone());
        let meta = object.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
        if !meta.is_object() {
            *meta = Value::Object(Map::new());
        }
        meta[META_KEY] = contract_meta(contract);
        true
    }

    /// The contract `tool` is judged by the pipeline with: declared, and advertised (the
    /// server published no schema of its own), or in warn mode declared for a tool that
    /// publishes none (judged, never shown).
    fn declared_for<'a>(&'a self, listing: &Listing, tool: &str) -> Option<&'a OutputContract> {
        let contract = self.declared.get(tool)?;
        match listing.catalog.get(tool)?.output_schema() {
            Some(advertised) => (advertised == contract.schema()).then_some(*contract),
            None => (self.mode(tool) == Mode::Warn).then_some(*contract),
        }
    }

    /// Whether a result of `tool` without `structuredContent` has its one JSON text block
    /// lifted into it: always for a declared contract, and for an advertised schema when
    /// `--lift-text` names the tool.
    pub(crate) fn lifts(&self, listing: &Listing, tool: &str) -> bool {
        self.lift_text.contains(tool) || self.declared_for(listing, tool).is_some()
    }

    /// Whether the judge reads a result's content blocks: when it lifts one, or when
    /// `--observe` records the JSON a text block holds.
    pub(crate) fn reads_content(&self, listing: &Listing, tool: &str) -> bool {
        self.observer.is_some() || self.lifts(listing, tool)
    }

    /// The check a result of `tool` passes unchanged when its `structuredContent`, read as
    /// text, passes it (and its `isError` is absent, `null` or `false`; a result with
    /// `isError: true` passes as it is): `Some` only where that is the whole verdict, a
    /// tool in enforce mode judged by its advertised `outputSchema` alone (no declared
    /// contract, no lifted text, no `--observe`), whose schema the fast path judges
    /// exactly. Anything it does not pass takes [`judge_in_place`](Self::judge_in_place).
    pub(crate) fn quick_check<'l>(
        &self,
        listing: &'l Listing,
        tool: &str,
    ) -> Option<contract_runtime::fused::TextCheck<'l>> {
        if self.mode(tool) != Mode::Enforce
            || self.observer.is_some()
            || self.lift_text.contains(tool)
            || self.declared.contains_key(tool)
        {
            return None;
        }
        listing.catalog.structured_check(tool)
    }

    /// Whether a result of `tool` is judged at all: its mode checks, and it has a
    /// contract (declared, or an advertised `outputSchema`).
    pub(crate) fn judges_output(&self, listing: &Listing, tool: &str) -> bool {
        self.mode(tool) != Mode::Off
            && (self.declared_for(listing, tool).is_some()
                || listing.catalog.get(tool).and_then(|t| t.output_schema()).is_some())
    }

    /// Whether `arguments`, as written, pass [`gate`](Self::gate) with nothing to say:
    /// the tool is not quarantined, its mode checks arguments, and its `inputSchema`'s
    /// compiled plan passes the object. `false` says nothing: ask `gate`.
    pub(crate) fn passes_arguments(&self, listing: &Listing, tool: &str, arguments: &str) -> bool {
        !listing.quarantined.contains_key(tool)
            && self.mode(tool) != Mode::Off
            && arguments.starts_with('{')
            && listing.catalog.arguments_check(tool).is_some_and(|check| check.check(arguments).is_ok())
    }

    /// The quarantine and argument checks, before anything is forwarded.
    pub(crate) fn gate(&self, listing: &Listing, tool: &str, arguments: &Value) -> Gate {
        if let Some(kinds) = listing.quarantined.get(tool) {
            let message = format!(
                "tool `{tool}` is quarantined by the tools lock: its listing changed since it was pinned ({}); \
                 review the change and pin the tool again",
                kinds.join(", ")
            );
            return Gate::Refuse(error_result(ErrorCode::ToolQuarantined, &message, &[], None));
        }
        let mode = self.mode(tool);
        if mode == Mode::Off {
            return Gate::Forward;
        }
        match listing.catalog.check_arguments(tool, arguments) {
            Ok(()) => Gate::Forward,
            Err(failure) if mode == Mode::Warn => {
                self.warn(tool, failure.kind.code().as_str(), &failure.to_string());
                Gate::Forward
            }
            Err(failure) => {
                let meta = self.declared_for(listing, tool).map(|c| json!({ META_KEY: contract_meta(c) }));
                Gate::Refuse(ToolCallResult::invalid_arguments(&failure.to_string(), meta).to_json())
            }
        }
    }

    /// Judges a complete `tools/call` result (its JSON) and returns what goes downstream.
    pub(crate) fn judge(&self, listing: &Listing, tool: &str, arguments: &Value, mut result: Value) -> Value {
        self.judge_in_place(listing, tool, arguments, &mut result);
        result
    }

    /// Judges a complete `tools/call` result in place, and says how what goes downstream
    /// differs from what the upstream sent.
    pub(crate) fn judge_in_place(
        &self,
        listing: &Listing,
        tool: &str,
        arguments: &Value,
        result: &mut Value,
    ) -> Judged {
        let mode = self.mode(tool);
        if mode == Mode::Off || result.get("isError").and_then(Value::as_bool) == Some(true) {
            return Judged::Unchanged;
        }
        let declared = self.declared_for(listing, tool);
        if let Some(observer) = &self.observer {
            let advertised = listing.catalog.get(tool).and_then(|t| t.output_schema());
            observer.record(tool, result, declared.map(OutputContract::schema).or(advertised));
        }
        let has_contract = declared.is_some() || listing.catalog.get(tool).and_then(|t| t.output_schema()).is_some();
        if mode == Mode::Warn {
            // What a client reading only `structuredContent` would miss, by pointer.
            if let Some(mismatch) = contract_runtime::client::structured_text_mismatch(result) {
                tracing::warn!(
                    tool,
                    only_in_text = %mismatch.only_in_text.join(", "),
                    only_in_structured = %mismatch.only_in_structured.join(", "),
                    more = mismatch.more,
                    "the result's JSON text block and its structuredContent hold different keys (warn mode)"
                );
            }
            // Report-only is invisible: the verdict is made on a copy and only logged.
            if has_contract {
                let mut copy = result.clone();
                if self.lifts(listing, tool) {
                    lift_text(&mut copy);
                }
                let refusal = match declared {
                    Some(contract) => judge_declared(&self.pipeline, contract, tool, arguments, &copy).0,
                    None => judge_advertised(&listing.catalog, tool, &copy),
                };
                if let Some(refusal) = refusal {
                    if self.server_error(tool, declared, &copy).is_some() {
                        tracing::info!(tool, "the server answered with its declared error shape (warn mode)");
                    } else {
                        let text = refusal["content"][0]["text"].as_str().unwrap_or_default().to_owned();
                        self.warn(tool, ErrorCode::OutputContractViolation.as_str(), &text);
                    }
                }
            }
            return Judged::Unchanged;
        }
        let mut changed = false;
        if has_contract && self.lifts(listing, tool) {
            changed = lift_text(result);
        }
        let (refusal, extra_meta) = match declared {
            Some(contract) => judge_declared(&self.pipeline, contract, tool, arguments, result),
            None => (judge_advertised(&listing.catalog, tool, result), None),
        };
        match refusal {
            None => {
                if let (Some(extra), Some(object)) = (extra_meta, result.as_object_mut()) {
                    let meta = object.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
                    if let (Some(meta), Some(extra)) = (meta.as_object_mut(), extra.as_object()) {
                        for (key, value) in extra {
                            changed |= meta.get(key) != Some(value);
                            meta.insert(key.clone(), value.clone());
                        }
                    }
                }
                if changed {
                    Judged::Amended
                } else {
                    Judged::Unchanged
                }
            }
            Some(refusal) => {
                if let Some(error) = self.server_error(tool, declared, result) {
                    tracing::info!(tool, "the server's error answer made an error result: tool_execution_error");
                    *result = error;
                } else {
                    tracing::info!(tool, "result refused: output_contract_violation");
                    *result = refusal;
                }
                Judged::Replaced
            }
        }
    }

    /// The error result for a result of `tool` that matches the error shape declared
    /// beside its contract: `isError`, code `tool_execution_error`, the server's message
    /// (read at the shape's pointer) sanitized and bounded as every message is; `None`
    /// when the tool has no declared contract or error shape, or the result does not
    /// match it.
    fn server_error(&self, tool: &str, contract: Option<&OutputContract>, result: &Value) -> Option<Value> {
        let contract = contract?;
        let shape = self.error_shapes.get(tool)?;
        let structured = result.get("structuredContent")?;
        if !shape.matches(structured) {
            return None;
        }
        let message = shape.message(structured).filter(|m| !m.trim().is_empty()).unwrap_or_else(|| {
            format!(
                "tool `{tool}` answered with its declared error shape, with no message at `{}`",
                shape.message_pointer()
            )
        });
        Some(ToolCallResult::from_error(&ToolError::execution(message), Some(contract)).to_json())
    }

    fn warn(&self, tool: &str, code: &str, detail: &str) {
        let count = self.warned.fetch_add(1, Ordering::Relaxed) + 1;
        tracing::warn!(tool, code, count, detail, "contract failure let through (warn mode)");
    }
}

/// Marks a listed tool that has no contract: `{"qualified": false}` under the contract
/// key of its `_meta`, so a client tells a tool without a contract from one whose
/// contract was lost. A tool that carries the key already (a server of ours behind the
/// proxy) keeps its own.
fn mark_unqualified(tool: &mut Value) {
    let Some(object) = tool.as_object_mut() else { return };
    let meta = object.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
    if let Some(meta) = meta.as_object_mut() {
        meta.entry(META_KEY).or_insert_with(unqualified_meta);
    }
}

/// A declared contract's verdict: `Some(error result)` when the result breaks it; on a
/// pass, the `_meta` keys the pipeline adds (the contract identity).
fn judge_declared(
    pipeline: &Pipeline,
    contract: &OutputContract,
    tool: &str,
    arguments: &Value,
    result: &Value,
) -> (Option<Value>, Option<Value>) {
    let Some(structured) = result.get("structuredContent") else {
        let error = ToolError::new(ErrorCode::OutputContractViolation, missing_structured(tool, result));
        return (Some(ToolCallResult::from_error(&error, Some(contract)).to_json()), None);
    };
    let ctx = CallContext::new(tool, arguments.clone()).with_cacheable(false);
    let judged = pipeline.process_value(&ctx, contract, structured.clone());
    if judged.is_error() {
        (Some(judged.to_json()), None)
    } else {
        (None, judged.meta().cloned())
    }
}

/// Why a result without `structuredContent` cannot be judged: the text a lift needs
/// (exactly one text block holding JSON) is not there.
fn missing_structured(tool: &str, result: &Value) -> String {
    let blocks = result.get("content").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let why = match blocks {
        [] => "and no content block".to_owned(),
        [block] if block.get("type").and_then(Value::as_str) == Some("text") => {
            "and its one text block is not JSON".to_owned()
        }
        [_] => "and its one content block is not text".to_owned(),
        more => format!("and {} content blocks, where a lift needs exactly one JSON text block", more.len()),
    };
    format!("tool `{tool}` declares an outputSchema but the result has no structuredContent {why}")
}

/// An advertised `outputSchema`'s verdict: `Some(error result)` when the result breaks it.
fn judge_advertised(catalog: &Catalog, tool: &str, result: &Value) -> Option<Value> {
    catalog.result_failure(tool, result).map(|failure| failure_result(&failure))
}

/// A harness failure in the pipeline's error envelope: a result that breaks the
/// advertised schema, or is no result at all, is an `output_contract_violation`.
fn failure_result(failure: &ContractFailure) -> Value {
    let code = match failure.kind.code() {
        ErrorCode::UnknownTool | ErrorCode::UnusableSchema | ErrorCode::MalformedResult => {
            ErrorCode::OutputContractViolation
        }
        code => code,
    };
    error_result(code, &failure.to_string(), &failure.violations, None)
}

/// An `isError` result in the runtime's envelope ([`ToolCallResult::refusal`]): one text
/// block holding `{"error": {"code", "message", "retryable": false, "violations"?}}`.
pub(crate) fn error_result(code: ErrorCode, message: &str, violations: &[Violation], meta: Option<Value>) -> Value {
    let violations = violations.iter().map(WireViolation::from).collect();
    ToolCallResult::refusal(&ToolError::new(code, message), violations, meta).to_json()
}

/// Parses a result's one JSON text block into `structuredContent`, when it has no
/// `structuredContent` and exactly one content block, a text that is JSON; `true` when
/// it did.
fn lift_text(result: &mut Value) -> bool {
    let Some(object) = result.as_object_mut() else { return false };
    if object.contains_key("structuredContent") {
        return false;
    }
    let parsed = match object.get("content").and_then(Value::as_array).map(Vec::as_slice) {
        Some([block]) if block.get("type").and_then(Value::as_str) == Some("text") => {
            block.get("text").and_then(Value::as_str).and_then(|text| serde_json::from_str::<Value>(text).ok())
        }
        _ => None,
    };
    match parsed {
        Some(value) => {
            object.insert("structuredContent".to_owned(), value);
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{lift_text, Mode};
    use serde_json::json;

    #[test]
    fn a_single_json_text_block_is_lifted_and_nothing_else_is() {
        let mut one = json!({ "content": [{ "type": "text", "text": "{\"a\":1}" }] });
        assert!(lift_text(&mut one), "the lift is reported");
        assert_eq!(one["structuredContent"], json!({ "a": 1 }));
        // Controls: prose, two blocks, or a result that has structuredContent stay as they are.
        for original in [
            json!({ "content": [{ "type": "text", "text": "not json" }] }),
            json!({ "content": [{ "type": "text", "text": "1" }, { "type": "text", "text": "2" }] }),
            json!({ "content": [{ "type": "text", "text": "{}" }], "structuredContent": { "b": 2 } }),
        ] {
            let mut result = original.clone();
            assert!(!lift_text(&mut result), "no lift is reported: {original}");
            assert_eq!(result, original);
        }
    }

    fn policy(default_mode: Mode) -> super::Policy {
        super::Policy {
            declared: std::collections::BTreeMap::new(),
            error_shapes: std::collections::BTreeMap::new(),
            lock: None,
            default_mode,
            modes: std::collections::BTreeMap::new(),
            lift_text: std::collections::BTreeSet::new(),
            qualify: false,
            observer: None,
            names_checked: std::sync::atomic::AtomicBool::new(false),
            pipeline: contract_runtime::pipeline::Pipeline::builder().build(),
            warned: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Arguments the input schema's plan passes as written are ones the gate forwards
    /// (the validator, on the decoded value, is the oracle); the rest are left to it.
    #[test]
    fn arguments_the_plan_passes_are_the_ones_the_gate_forwards() {
        let listing = policy(Mode::Enforce).listing(vec![json!({
            "name": "search",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": { "type": "string", "minLength": 1 },
                    "limit": { "type": "integer", "minimum": 1, "maximum": 100 },
                    "tags": { "type": "array", "items": { "enum": ["a", "b"] } }
                },
                "required": ["query"],
                "additionalProperties": false
            }
        })]);
        let cases = [
            (r#"{"query":"t-","limit":1}"#, true),
            (r#"{ "query" : "t-" , "tags" : ["a","b"] }"#, true),
            (r#"{"query":"t-","limit":100}"#, true),
            (r#"{"query":""}"#, false),
            (r#"{"query":"t-","limit":0}"#, false),
            (r#"{"query":"t-","limit":1.5}"#, false),
            (r#"{"query":"t-","tags":["c"]}"#, false),
            (r#"{"query":"t-","extra":1}"#, false),
            (r#"{"limit":1}"#, false),
            (r#"["query"]"#, false),
            ("null", false),
        ];
        for mode in [Mode::Enforce, Mode::Warn] {
            let policy = policy(mode);
            for (text, valid) in cases {
                let passes = policy.passes_arguments(&listing, "search", text);
                assert_eq!(passes, valid, "{mode:?} {text}");
                let decoded: serde_json::Value = serde_json::from_str(text).unwrap();
                let forwards = matches!(policy.gate(&listing, "search", &decoded), super::Gate::Forward);
                // A pass is always forwarded; in enforce mode a miss is always refused.
                assert!(!passes || forwards, "{mode:?} {text}");
                assert_eq!(forwards, valid || mode == Mode::Warn, "{mode:?} {text}");
            }
        }
        // A schema that takes any value: arguments must still be an object.
        let loose = policy(Mode::Enforce).listing(vec![json!({ "name": "loose", "inputSchema": {} })]);
        for (text, valid) in [(r#"{"a":[1]}"#, true), ("[1]", false), ("3", false), (r#""{}""#, false)] {
            let policy = policy(Mode::Enforce);
            assert_eq!(policy.passes_arguments(&loose, "loose", text), valid, "{text}");
            let decoded: serde_json::Value = serde_json::from_str(text).unwrap();
            assert_eq!(matches!(policy.gate(&loose, "loose", &decoded), super::Gate::Forward), valid, "{text}");
        }
        // Off: nothing is checked, so nothing passes unread; an unknown tool neither.
        assert!(!policy(Mode::Off).passes_arguments(&listing, "search", r#"{"query":"t-"}"#));
        assert!(!policy(Mode::Enforce).passes_arguments(&listing, "other", r#"{"query":"t-"}"#));
    }

    #[test]
    fn modes_parse_by_name() {
        assert_eq!(Mode::parse("warn"), Some(Mode::Warn));
        assert_eq!(Mode::parse("enforce"), Some(Mode::Enforce));
        assert_eq!(Mode::parse("off"), Some(Mode::Off));
        assert_eq!(Mode::parse("strict"), None);
    }
}
