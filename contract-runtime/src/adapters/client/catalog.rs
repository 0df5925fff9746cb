//! The tool catalog: every listed tool with one compiled validator per schema.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use super::contract_meta::ContractInfo;
use super::lock::{
    drift_of_server, Action, DriftStatus, LockPolicy, LockedServer, LockedTool, ServerSource, ToolDrift,
};
use super::outcome::{CallOutcome, ContractFailure, DeclaredError, FailureKind, Success};
use super::signals::MAX_KEY_CHARS;
use crate::contract::schema::{canonical_string, sha256_hex};
use crate::contract::validate::{compile, Violation};

/// At most this many violations are kept per check: enough to repair a value, bounded so
/// that a hostile server cannot grow a report without limit.
const MAX_VIOLATIONS: usize = 32;

/// A schema as the catalog keeps it: its hash and its compiled validator, or why it does
/// not compile.
struct Compiled {
    sha256: String,
    validator: Result<jsonschema::Validator, String>,
    /// Every property name the schema mentions: pointer tokens outside this set are
    /// names the server chose, and are masked in reports.
    declared: BTreeSet<String>,
    /// The schema's fast-path plan, when the validator compiles (the plan may still say
    /// why it cannot judge the schema exactly).
    plan: Option<crate::contract::fused::Compiled>,
}

impl fmt::Debug for Compiled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Compiled")
            .field("sha256", &self.sha256)
            .field("compiles", &self.validator.is_ok())
            .field("declared", &self.declared)
            .field("plan", &self.plan.as_ref().map(|plan| plan.as_ref().map(|_| ()).map_err(String::as_str)))
            .finish()
    }
}

/// One listed tool.
#[derive(Debug)]
pub struct ToolEntry {
    name: String,
    definition: Value,
    input: Arc<Compiled>,
    output: Option<Arc<Compiled>>,
    contract: Option<ContractInfo>,
}

impl ToolEntry {
    /// The tool name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tool definition exactly as the server listed it.
    #[must_use]
    pub fn definition(&self) -> &Value {
        &self.definition
    }

    /// The declared `inputSchema`, if the definition has one.
    #[must_use]
    pub fn input_schema(&self) -> Option<&Value> {
        self.definition.get("inputSchema")
    }

    /// The declared `outputSchema`, if any.
    #[must_use]
    pub fn output_schema(&self) -> Option<&Value> {
        self.definition.get("outputSchema")
    }

    /// SHA-256 of the canonical `inputSchema`.
    #[must_use]
    pub fn input_sha256(&self) -> &str {
        &self.input.sha256
    }

    /// SHA-256 of the canonical `outputSchema`, if one is declared.
    #[must_use]
    pub fn output_sha256(&self) -> Option<&str> {
        self.output.as_deref().map(|c| c.sha256.as_str())
    }

    /// Why the `inputSchema` does not compile, if it does not.
    #[must_use]
    pub fn input_error(&self) -> Option<&str> {
        self.input.validator.as_ref().err().map(String::as_str)
    }

    /// Why the declared `outputSchema` does not compile, if it does not.
    #[must_use]
    pub fn output_error(&self) -> Option<&str> {
        self.output.as_deref().and_then(|c| c.validator.as_ref().err()).map(String::as_str)
    }

    /// Our contract `_meta`, when the server sent it.
    #[must_use]
    pub fn contract(&self) -> Option<&ContractInfo> {
        self.contract.as_ref()
    }
}

/// What a [`Catalog::refresh`] changed.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct RefreshReport {
    /// Tools that were not listed before.
    pub added: Vec<String>,
    /// Tools whose input or output schema changed: their validators were rebuilt.
    pub changed: Vec<String>,
    /// Tools no longer listed.
    pub removed: Vec<String>,
    /// Tools listed again with the same schemas: their validators were kept.
    pub unchanged: Vec<String>,
    /// Names listed more than once; the first definition is kept.
    pub duplicates: Vec<String>,
    /// Definitions that are not tools (not an object, or no string `name`), by their
    /// position in the listing.
    pub malformed: Vec<usize>,
    /// Whether this refresh pinned the listing: the first refresh of a catalog without a
    /// lock.
    pub pinned: bool,
    /// Tools held back by the lock policy, each with how it differs from its pin, by
    /// name. Their calls are refused and their definitions kept from the model until they
    /// are approved ([`Catalog::approve`]) or listed as pinned again. This is for the
    /// operator: a text change's new text is in it, and must not reach the model.
    #[serde(serialize_with = "serialize_drifts")]
    pub quarantined: Vec<ToolDrift>,
    /// Tools that differ from their pin but were let through by the policy (additive or
    /// cosmetic changes under the default), and pinned tools no longer listed.
    #[serde(serialize_with = "serialize_drifts")]
    pub passed: Vec<ToolDrift>,
}

/// A drift as JSON for an operator's log: status, digests old → new, and each change's
/// area, kind, verdict, pointer, detail and instruction signals.
fn serialize_drifts<S: serde::Serializer>(drifts: &[ToolDrift], serializer: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = serializer.serialize_seq(Some(drifts.len()))?;
    for drift in drifts {
        let digests =
            |d: Option<&super::lock::Digests>| d.map(|d| serde_json::json!({"text": d.text, "shape": d.shape}));
        let changes: Vec<Value> = drift
            .changes()
            .iter()
            .map(|c| {
                serde_json::json!({
                    "area": c.area().as_str(),
                    "kind": c.kind(),
                    "verdict": c.verdict().as_str(),
                    "pointer": c.pointer(),
                    "detail": c.detail(),
                    "signals": c.signals(),
                })
            })
            .collect();
        seq.serialize_element(&serde_json::json!({
            "name": drift.name(),
            "status": drift.status().as_str(),
            "old": digests(drift.old_digests()),
            "new": digests(drift.new_digests()),
            "changes": changes,
        }))?;
    }
    seq.end()
}

/// Every tool a server lists, with one compiled validator per (tool, schema hash), held
/// to a pin of the server's tools.
///
/// Build it from the tools of ALL `tools/list` pages with [`refresh`](Self::refresh).
/// Call [`invalidate`](Self::invalidate) on `notifications/tools/list_changed` and on a
/// reconnect; a harness then refreshes before its next call.
///
/// Every refresh compares the listing with the pin — a [`LockedServer`] given up front
/// ([`with_lock`](Self::with_lock)), or else the first complete listing, pinned for the
/// life of the catalog — and the [`LockPolicy`] judges each tool's drift. A quarantined
/// tool is refused before anything is sent ([`FailureKind::Quarantined`]) and is not in
/// [`model_tools`](Self::model_tools) until it is [approved](Self::approve) or listed as
/// pinned again.
#[derive(Debug)]
pub struct Catalog {
    tools: BTreeMap<String, ToolEntry>,
    stale: bool,
    generation: u64,
    pin: Option<LockedServer>,
    policy: LockPolicy,
    quarantined: BTreeMap<String, ToolDrift>,
}

impl Default for Catalog {
    fn default() -> Self {
        Self::new()
    }
}

impl Catalog {
    /// An empty catalog, stale until the first refresh, which pins every listed tool;
    /// the default [`LockPolicy`] judges later listings.
    #[must_use]
    pub fn new() -> Self {
        Self::with_policy(LockPolicy::default())
    }

    /// An empty catalog that pins on first use, judged by `policy`.
    #[must_use]
    pub fn with_policy(policy: LockPolicy) -> Self {
        Self { tools: BTreeMap::new(), stale: true, generation: 0, pin: None, policy, quarantined: BTreeMap::new() }
    }

    /// An empty catalog held to `pinned` (a server of a lock file, [`Lock::server`]) from
    /// its first refresh, judged by `policy`: a tool that changed since it was pinned,
    /// even before this process started, is caught by the first listing.
    ///
    /// [`Lock::server`]: super::lock::Lock::server
    #[must_use]
    pub fn with_lock(pinned: LockedServer, policy: LockPolicy) -> Self {
        Self { pin: Some(pinned), ..Self::with_policy(policy) }
    }

    /// The pin the catalog holds the server to: the lock it was given, or the first
    /// complete listing (with the source `ServerSource::Command([])` and no server info,
    /// to be set before it is written to a lock file); `None` before the first refresh of
    /// a catalog without a lock.
    #[must_use]
    pub fn pinned(&self) -> Option<&LockedServer> {
        self.pin.as_ref()
    }

    /// The policy that judges drift.
    #[must_use]
    pub fn policy(&self) -> LockPolicy {
        self.policy
    }

    /// Why `tool` is quarantined — how it differs from its pin — or `None` when it is
    /// served.
    #[must_use]
    pub fn quarantine(&self, tool: &str) -> Option<&ToolDrift> {
        self.quarantined.get(tool)
    }

    /// Every quarantined tool's drift, by name.
    pub fn quarantined(&self) -> impl Iterator<Item = &ToolDrift> {
        self.quarantined.values()
    }

    /// The tools to show a model: every listed tool but the quarantined ones, by name.
    /// An agent builds the model's tool list from these definitions, never from
    /// [`tools`](Self::tools).
    pub fn model_tools(&self) -> impl Iterator<Item = &ToolEntry> {
        self.tools.values().filter(|entry| !self.quarantined.contains_key(&entry.name))
    }

    /// Accepts `tool` as it is listed now: its current definition replaces its pin (or is
    /// added to it), and it is served from now on. Returns `false`, and changes nothing,
    /// when no such tool is listed.
    pub fn approve(&mut self, tool: &str) -> bool {
        let Some(entry) = self.tools.get(tool) else { return false };
        let locked = LockedTool::pin(&entry.definition);
        let pin = self.pin.get_or_insert_with(|| LockedServer::pin(first_use_source(), None, &[]));
        match pin.tools.binary_search_by(|t| t.name.as_str().cmp(tool)) {
            Ok(at) => pin.tools[at] = locked,
            Err(at) => pin.tools.insert(at, locked),
        }
        self.quarantined.remove(tool);
        true
    }

    /// Accepts every tool as listed now: the pin becomes the current listing (keeping its
    /// source and server info) and nothing is quarantined.
    pub fn approve_all(&mut self) {
        let listed: Vec<Value> = self.tools.values().map(|entry| entry.definition.clone()).collect();
        let (source, info) = match self.pin.take() {
            Some(pin) => (pin.source, pin.server_info),
            None => (first_use_source(), None),
        };
        self.pin = Some(LockedServer::pin(source, info, &listed));
        self.quarantined.clear();
    }

    /// Replaces the catalog with the tools of a complete listing (all pages, in order).
    /// Validators of tools whose schemas did not change are reused; changed schemas are
    /// compiled again. The catalog is fresh afterwards.
    ///
    /// The listing is then held to the pin: the first refresh of a catalog without a lock
    /// pins it ([`RefreshReport::pinned`]); every other one computes each tool's drift from
    /// its pin and quarantines the tools the policy holds back
    /// ([`RefreshReport::quarantined`]). Quarantine is judged afresh each time, so a tool
    /// listed as pinned again is served again.
    pub fn refresh(&mut self, tools: impl IntoIterator<Item = Value>) -> RefreshReport {
        let mut report = RefreshReport::default();
        // Validators by (tool, schema hash), so an unchanged schema is never compiled twice.
        let mut known: HashMap<(String, String), Arc<Compiled>> = HashMap::new();
        for entry in self.tools.values() {
            known.insert((entry.name.clone(), entry.input.sha256.clone()), Arc::clone(&entry.input));
            if let Some(output) = &entry.output {
                known.insert((entry.name.clone(), output.sha256.clone()), Arc::clone(output));
            }
        }
        let mut next = BTreeMap::new();
        for (position, definition) in tools.into_iter().enumerate() {
            let Some(name) = definition.get("name").and_then(Value::as_str).map(str::to_owned) else {
                report.malformed.push(position);
                continue;
            };
            if next.contains_key(&name) {
                report.duplicates.push(name);
                continue;
            }
            let mut obtain = |schema: Option<&Value>, what: &str| {
                let sha256 = schema.map_or_else(String::new, |s| sha256_hex(canonical_string(s).as_bytes()));
                let key = (name.clone(), sha256.clone());
                Arc::clone(known.entry(key).or_insert_with(|| {
                    let validator = match schema {
                        None => Err(format!("the tool declares no {what}")),
                        Some(s) if !(s.is_object() || s.is_boolean()) => Err(format!("the {what} is not a schema")),
                        Some(s) => compile(s),
                    };
                    let mut declared = BTreeSet::new();
                    if let Some(schema) = schema {
                        declared_names(schema, &mut declared);
                    }
                    let plan = match schema {
                        Some(s) if validator.is_ok() => Some(crate::contract::fused::compile_schema(s)),
                        _ => None,
                    };
                    Arc::new(Compiled { sha256, validator, declared, plan })
                }))
            };
            let input = obtain(definition.get("inputSchema"), "inputSchema");
            let output = definition.get("outputSchema").map(|s| obtain(Some(s), "outputSchema"));
            let contract = ContractInfo::from_meta(definition.get("_meta"));
            match self.tools.get(&name) {
                None => report.added.push(name.clone()),
                Some(old)
                    if old.input.sha256 == input.sha256
                        && old.output_sha256() == output.as_deref().map(|c| c.sha256.as_str()) =>
                {
                    report.unchanged.push(name.clone());
                }
                Some(_) => report.changed.push(name.clone()),
            }
            next.insert(name.clone(), ToolEntry { name, definition, input, output, contract });
        }
        report.removed = self.tools.keys().filter(|name| !next.contains_key(*name)).cloned().collect();
        self.tools = next;
        self.stale = false;
        self.generation += 1;
        self.judge(&mut report);
        report
    }

    /// Pins the listing on first use, or compares it with the pin and quarantines what the
    /// policy holds back.
    fn judge(&mut self, report: &mut RefreshReport) {
        let listed: Vec<Value> = self.tools.values().map(|entry| entry.definition.clone()).collect();
        self.quarantined.clear();
        let Some(pin) = &self.pin else {
            self.pin = Some(LockedServer::pin(first_use_source(), None, &listed));
            report.pinned = true;
            return;
        };
        for drift in drift_of_server(pin, &listed) {
            let held = drift.status() != DriftStatus::Removed && self.policy.judge(&drift) == Action::Quarantine;
            if held {
                self.quarantined.insert(drift.name().to_owned(), drift.clone());
                report.quarantined.push(drift);
            } else {
                report.passed.push(drift);
            }
        }
    }

    /// Marks the catalog stale: the server said its tools changed
    /// (`notifications/tools/list_changed`) or the connection was re-established.
    pub fn invalidate(&mut self) {
        self.stale = true;
    }

    /// Whether the catalog must be refreshed before it is trusted again.
    #[must_use]
    pub fn is_stale(&self) -> bool {
        self.stale
    }

    /// How many refreshes the catalog has seen.
    #[must_use]
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// One tool.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&ToolEntry> {
        self.tools.get(name)
    }

    /// All tools, by name.
    pub fn tools(&self) -> impl Iterator<Item = &ToolEntry> {
        self.tools.values()
    }

    /// How many tools are listed.
    #[must_use]
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is listed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Validates the model's arguments against the tool's `inputSchema` before
    /// `tools/call`. The arguments must be a JSON object; an unknown tool, an
    /// `inputSchema` that does not compile, and any violation are refused.
    ///
    /// A quarantined tool is refused first ([`FailureKind::Quarantined`], with its drift),
    /// whatever the arguments.
    pub fn check_arguments(&self, tool: &str, arguments: &Value) -> Result<(), ContractFailure> {
        if let Some(drift) = self.quarantined.get(tool) {
            return Err(ContractFailure::quarantined(drift));
        }
        let Some(entry) = self.tools.get(tool) else {
            return Err(ContractFailure::new(tool, FailureKind::UnknownTool, Vec::new()));
        };
        let validator = match &entry.input.validator {
            Ok(validator) => validator,
            Err(why) => {
                let violation = Violation::new("", "$schema", format!("the inputSchema cannot be used: {why}"));
                return Err(ContractFailure::new(tool, FailureKind::UnusableSchema, vec![violation]));
            }
        };
        if !arguments.is_object() {
            let violation = Violation::new("", "type", "tool arguments must be a JSON object");
            return Err(ContractFailure::new(tool, FailureKind::InvalidArguments, vec![violation]));
        }
        let violations = violations(validator, &entry.input.declared, arguments);
        if violations.is_empty() {
            Ok(())
        } else {
            Err(ContractFailure::new(tool, FailureKind::InvalidArguments, violations))
        }
    }

    /// Judges a `tools/call` result (the JSON of the result object) for `tool`.
    ///
    /// - `isError: true` is a [`DeclaredError`]; its `structuredContent`, if any, is not
    ///   validated (an error is not an instance of the output schema).
    /// - Otherwise, when the tool declared an `outputSchema`, `structuredContent` must be
    ///   present and valid (any JSON root is legal); the text block never stands in for it.
    /// - A tool without an `outputSchema` gives an unvalidated [`Success`].
    /// - A [`Success`] also carries the keys `structuredContent` and its one JSON text
    ///   block do not share ([`Success::mismatch`]) and a value that says it failed
    ///   ([`Success::false_success`]); a [`DeclaredError`] says whether the server's SDK
    ///   refused the tool's own output ([`DeclaredError::refused_by`]).
    /// - A tool quarantined since the call was sent gives a [`FailureKind::Quarantined`]
    ///   failure: nothing of its result reaches the model.
    #[must_use]
    pub fn check_result(&self, tool: &str, result: &Value) -> CallOutcome {
        let passed = match self.judge_result(tool, result) {
            Ok(passed) => passed,
            Err(failure) => return CallOutcome::ContractFailure(failure),
        };
        let text = text_blocks(passed.object.get("content"));
        let meta = match ContractInfo::from_meta(passed.object.get("_meta")) {
            Some(info) => Some(info.or_listed(passed.entry.contract.as_ref())),
            None => passed.entry.contract.clone(),
        };
        if passed.is_error {
            return CallOutcome::DeclaredError(DeclaredError::from_text(tool, &text));
        }
        CallOutcome::Success(Success {
            tool: tool.to_owned(),
            structured: passed.structured.cloned(),
            validated: passed.validated,
            text,
            contract: meta,
            mismatch: super::signals::structured_text_mismatch(result).map(Box::new),
            false_success: super::signals::false_success(result).map(Box::new),
        })
    }

    /// The [`ContractFailure`] [`check_result`](Self::check_result) would give `result`, if
    /// any, without copying anything of a result that passes (for a proxy that sends the
    /// result on as it came).
    ///
    /// # Examples
    ///
    /// ```
    /// use contract_runtime::client::Catalog;
    /// use serde_json::json;
    ///
    /// let mut catalog = Catalog::new();
    /// catalog.refresh([json!({
    ///     "name": "count",
    ///     "inputSchema": {"type": "object"},
    ///     "outputSchema": {"type": "integer", "minimum": 0},
    /// })]);
    /// assert!(catalog.result_failure("count", &json!({"content": [], "structuredContent": 3})).is_none());
    /// assert!(catalog.result_failure("count", &json!({"content": [], "structuredContent": -1})).is_some());
    /// ```
    #[must_use]
    pub fn result_failure(&self, tool: &str, result: &Value) -> Option<ContractFailure> {
        self.judge_result(tool, result).err()
    }

    /// The fast path's check of `tool`'s `structuredContent`, read as JSON text, when
    /// the tool is served, declares an `outputSchema` whose validator compiles, and the
    /// plan judges that schema exactly. A result object whose `isError` is absent, `null`
    /// or `false` and whose `structuredContent` passes it is one
    /// [`result_failure`](Self::result_failure) lets through; for anything else (no
    /// check, a miss) ask `result_failure`, which writes the report.
    ///
    /// # Examples
    ///
    /// ```
    /// use contract_runtime::client::Catalog;
    /// use serde_json::json;
    ///
    /// let mut catalog = Catalog::new();
    /// catalog.refresh([json!({
    ///     "name": "count",
    ///     "inputSchema": {"type": "object"},
    ///     "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    /// })]);
    /// let check = catalog.structured_check("count").unwrap();
    /// assert!(check.check(r#"{"n": 3}"#).is_ok());
    /// assert!(check.check(r#"{"n": "3"}"#).is_err());
    /// assert!(catalog.structured_check("other").is_none());
    /// ```
    #[must_use]
    pub fn structured_check(&self, tool: &str) -> Option<crate::contract::fused::TextCheck<'_>> {
        if self.quarantined.contains_key(tool) {
            return None;
        }
        let output = self.tools.get(tool)?.output.as_deref()?;
        let plan = output.plan.as_ref()?.as_ref().ok()?;
        // The `Value` path judges any size and depth serde_json reads; past the plan's
        // depth limit the check misses and that path decides.
        let limits = crate::contract::limits::Limits::default().with_max_bytes(usize::MAX);
        Some(crate::contract::fused::TextCheck::new(plan, limits))
    }

    /// The fast path's check of `tool`'s arguments, read as JSON text, when the tool is
    /// served, its `inputSchema` compiles, and the plan judges that schema exactly. An
    /// object (text starting with `{`) that passes it is one
    /// [`check_arguments`](Self::check_arguments) lets through; for anything else (no
    /// check, a miss, another type) ask `check_arguments`, which writes the report.
    ///
    /// # Examples
    ///
    /// ```
    /// use contract_runtime::client::Catalog;
    /// use serde_json::json;
    ///
    /// let mut catalog = Catalog::new();
    /// catalog.refresh([json!({
    ///     "name": "search",
    ///     "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    /// })]);
    /// let check = catalog.arguments_check("search").unwrap();
    /// assert!(check.check(r#"{"q": "t-"}"#).is_ok());
    /// assert!(check.check(r#"{"q": 3}"#).is_err());
    /// assert!(catalog.check_arguments("search", &json!({"q": 3})).is_err());
    /// assert!(catalog.arguments_check("other").is_none());
    /// ```
    #[must_use]
    pub fn arguments_check(&self, tool: &str) -> Option<crate::contract::fused::TextCheck<'_>> {
        if self.quarantined.contains_key(tool) {
            return None;
        }
        let plan = self.tools.get(tool)?.input.plan.as_ref()?.as_ref().ok()?;
        // As for `structured_check`: past the plan's depth limit the check misses.
        let limits = crate::contract::limits::Limits::default().with_max_bytes(usize::MAX);
        Some(crate::contract::fused::TextCheck::new(plan, limits))
    }

    /// What [`check_result`](Self::check_result) decides, borrowed from `result`.
    fn judge_result<'a>(&'a self, tool: &str, result: &'a Value) -> Result<Passed<'a>, ContractFailure> {
        if let Some(drift) = self.quarantined.get(tool) {
            return Err(ContractFailure::quarantined(drift));
        }
        let Some(entry) = self.tools.get(tool) else {
            return Err(ContractFailure::new(tool, FailureKind::UnknownTool, Vec::new()));
        };
        let Some(object) = result.as_object() else {
            let violation = Violation::new("", "type", "a tools/call result must be a JSON object");
            return Err(ContractFailure::new(tool, FailureKind::MalformedResult, vec![violation]));
        };
        let is_error = match object.get("isError") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(flag)) => *flag,
            Some(_) => {
                let violation = Violation::new("/isError", "type", "isError must be a boolean");
                return Err(ContractFailure::new(tool, FailureKind::MalformedResult, vec![violation]));
            }
        };
        let structured = object.get("structuredContent");
        let passed = |validated| Passed { entry, object, is_error, structured, validated };
        if is_error {
            return Ok(passed(false));
        }
        let Some(output) = &entry.output else { return Ok(passed(false)) };
        let validator = match &output.validator {
            Ok(validator) => validator,
            Err(why) => {
                let violation = Violation::new("", "$schema", format!("the outputSchema cannot be used: {why}"));
                return Err(ContractFailure::new(tool, FailureKind::UnusableSchema, vec![violation]));
            }
        };
        let Some(value) = structured else {
            let violation = Violation::new(
                "",
                "structuredContent",
                "the tool declares an outputSchema but the result has no structuredContent",
            );
            return Err(ContractFailure::new(tool, FailureKind::MissingStructuredContent, vec![violation]));
        };
        let violations = violations(validator, &output.declared, value);
        if violations.is_empty() {
            Ok(passed(true))
        } else {
            Err(ContractFailure::new(tool, FailureKind::OutputViolation, violations))
        }
    }
}

/// A result [`Catalog::check_result`] lets through, as borrowed from it.
struct Passed<'a> {
    entry: &'a ToolEntry,
    object: &'a serde_json::Map<String, Value>,
    is_error: bool,
    structured: Option<&'a Value>,
    validated: bool,
}

/// The source of a pin made on first use: unknown to the catalog, set by whoever writes it
/// to a lock file.
fn first_use_source() -> ServerSource {
    ServerSource::Command(Vec::new())
}

/// The violations of `instance`, masked: keywords, messages written from the keyword
/// alone, and pointers whose tokens are array indices or names the schema declares.
/// Undeclared keys are text the server chose (`"run_shell"`, or an instruction aimed at
/// the model), so they are `*` in pointers; the message of an `additionalProperties` (or
/// `unevaluatedProperties`) violation names them, so that an operator can tell which keys
/// a server added, as JSON strings (escaped), each cut to [`MAX_KEY_CHARS`] characters, at
/// most [`MAX_UNDECLARED_NAMED`] of them. Values are never quoted.
fn violations(validator: &jsonschema::Validator, declared: &BTreeSet<String>, instance: &Value) -> Vec<Violation> {
    // The common case first: deciding validity is cheaper than collecting errors.
    if validator.is_valid(instance) {
        return Vec::new();
    }
    validator
        .iter_errors(instance)
        .take(MAX_VIOLATIONS)
        .map(|err| {
            let mut pointer = String::new();
            for token in err.instance_path() {
                pointer.push('/');
                match token {
                    jsonschema::paths::LocationSegment::Property(name) if declared.contains(name.as_ref()) => {
                        pointer.push_str(&crate::contract::schema::escape_pointer_token(name.as_ref()));
                    }
                    jsonschema::paths::LocationSegment::Property(_) => pointer.push('*'),
                    jsonschema::paths::LocationSegment::Index(index) => pointer.push_str(&index.to_string()),
                }
            }
            let keyword = err.kind().keyword();
            let message = match err.kind() {
                jsonschema::error::ValidationErrorKind::Required { property } => match property.as_str() {
                    Some(name) => format!("required property `{name}` is missing"),
                    None => "a required property is missing".to_owned(),
                },
                jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected }
                | jsonschema::error::ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                    undeclared(unexpected)
                }
                _ => describe(keyword),
            };
            Violation::new(pointer, keyword, message)
        })
        .collect()
}

/// The most undeclared key names one violation message lists.
pub const MAX_UNDECLARED_NAMED: usize = 8;

/// The message of an `additionalProperties` violation: how many undeclared keys, and their
/// names, escaped and bounded.
fn undeclared(unexpected: &[String]) -> String {
    let mut names: Vec<String> = unexpected
        .iter()
        .take(MAX_UNDECLARED_NAMED)
        .map(|name| {
            let cut: String = name.chars().take(MAX_KEY_CHARS).collect();
            let quoted = serde_json::to_string(&cut).unwrap_or_default();
            if cut.len() < name.len() {
                format!("{quoted}…")
            } else {
                quoted
            }
        })
        .collect();
    if unexpected.len() > MAX_UNDECLARED_NAMED {
        names.push(format!("and {} more", unexpected.len() - MAX_UNDECLARED_NAMED));
    }
    let count =
        if unexpected.len() == 1 { "a property".to_owned() } else { format!("{} properties", unexpected.len()) };
    format!("the object has {count} the schema does not declare: {}", names.join(", "))
}

/// A message for a failed keyword that says nothing about the value.
fn describe(keyword: &str) -> String {
    match keyword {
        "additionalProperties" | "unevaluatedProperties" => {
            "the object has properties the schema does not declare".into()
        }
        "type" => "the value has the wrong type".into(),
        "enum" => "the value is not one of the allowed values".into(),
        "const" => "the value is not the required constant".into(),
        "oneOf" => "the value does not match exactly one alternative".into(),
        "anyOf" => "the value matches none of the alternatives".into(),
        "false" | "falseSchema" => "no value is allowed here".into(),
        other => format!("the value breaks `{other}`"),
    }
}

/// Collects the property names a schema mentions (`properties` keys, `required` entries).
fn declared_names(node: &Value, out: &mut BTreeSet<String>) {
    match node {
        Value::Object(object) => {
            if let Some(Value::Object(properties)) = object.get("properties") {
                out.extend(properties.keys().cloned());
            }
            if let Some(Value::Array(required)) = object.get("required") {
                out.extend(required.iter().filter_map(Value::as_str).map(str::to_owned));
            }
            object.values().for_each(|child| declared_names(child, out));
        }
        Value::Array(items) => items.iter().for_each(|child| declared_names(child, out)),
        _ => {}
    }
}

/// The text of every `text` content block, in order.
fn text_blocks(content: Option<&Value>) -> Vec<String> {
    content
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|block| block.get("text").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}
