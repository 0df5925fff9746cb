//! The contract of one tool's successful result: identity, canonical schema, validator.

use std::any::Any;
use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::Serialize;
use serde_json::Value;

use crate::contract::schema::{self, Generated};
use crate::contract::validate::{Report, Violation};

/// A result type with a versioned output contract. Derive it with
/// `#[derive(ToolOutput)]` and `#[tool_output(version = "…", compatibility = "…")]`.
///
/// # Examples
///
/// ```
/// use contract_runtime::ToolOutput;
/// use schemars::JsonSchema;
/// use serde::Serialize;
///
/// #[derive(Serialize, JsonSchema, ToolOutput)]
/// #[tool_output(version = "1.0.0", compatibility = "exact")]
/// struct Health {
///     healthy: u32,
/// }
///
/// let contract = Health::contract();
/// assert_eq!(contract.name(), "health");
/// assert!(contract.validate(&serde_json::json!({ "healthy": 3 })).is_ok());
/// assert!(contract.validate(&serde_json::json!({ "healthy": "3" })).is_err());
/// ```
///
#[doc = include_str!("../../docs/writing.md")]
pub trait ToolOutput: Serialize + schemars::JsonSchema {
    /// The contract, built on first use and kept for the life of the process.
    ///
    /// # Errors
    ///
    /// A schema that cannot be a contract: one that accepts anything at its root, or
    /// a subschema that constrains nothing and was not declared opaque (see
    /// [`ContractError`]). The same error is returned on every call.
    fn try_contract() -> Result<&'static OutputContract, ContractError>;

    /// The contract of this type as bound to `tool`: what `ContractSet::bind` and
    /// `Type => "tool"` in `contracts![…]` bind, and what the pipeline checks a call of
    /// `tool` against.
    ///
    /// For a generic type each instantiation bound to a tool has its own contract,
    /// named after that tool (`schemas/<tool>.json`), with the version and compatibility
    /// the generic type declares. For any other type this is
    /// [`ToolOutput::try_contract`]: the tool serves the type's one contract, under the
    /// contract's own name.
    ///
    /// # Errors
    ///
    /// As for [`ToolOutput::try_contract`].
    fn try_contract_for(tool: &str) -> Result<&'static OutputContract, ContractError> {
        let _ = tool;
        Self::try_contract()
    }

    /// The contract, built on first use.
    ///
    /// # Panics
    ///
    /// When [`ToolOutput::try_contract`] fails. `cargo xtask schemas --check` and the
    /// snapshot test report such failures before a server ever starts.
    #[must_use]
    fn contract() -> &'static OutputContract {
        match Self::try_contract() {
            Ok(contract) => contract,
            Err(err) => panic!("{err}"),
        }
    }
}

/// How strictly objects in the contract are closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Compatibility {
    /// Every object is closed: a key the contract does not name is a violation.
    Exact,
    /// Objects are open: unknown keys pass, required fields and types stay strict.
    Additive,
}

impl Compatibility {
    /// `"exact"` or `"additive"`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Compatibility::Exact => "exact",
            Compatibility::Additive => "additive",
        }
    }
}

impl fmt::Display for Compatibility {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The identity of a contract: name, version and the SHA-256 of its canonical schema.
/// Two contracts are the same only when all three agree, so a schema change under an
/// unchanged version string still yields a different identity.
///
/// Displays as `fleet_status@1.2.0+sha256:<64 hex digits>`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ContractId {
    name: String,
    version: semver::Version,
    sha256: String,
}

impl ContractId {
    /// Builds an identity from its parts; `sha256` is 64 lowercase hex digits.
    #[must_use]
    pub fn new(name: impl Into<String>, version: semver::Version, sha256: impl Into<String>) -> Self {
        Self { name: name.into(), version, sha256: sha256.into() }
    }

    /// The tool name, such as `fleet_status` or `qe/coverage_gaps`.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The declared semantic version.
    #[must_use]
    pub fn version(&self) -> &semver::Version {
        &self.version
    }

    /// Lowercase hex SHA-256 of the canonical schema bytes.
    #[must_use]
    pub fn sha256(&self) -> &str {
        &self.sha256
    }
}

impl fmt::Display for ContractId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}+sha256:{}", self.name, self.version, self.sha256)
    }
}

/// Parses the display form back, for identities stored outside the process (a shared
/// cache entry, a client's validator cache).
///
/// # Examples
///
/// ```
/// use contract_runtime::ContractId;
///
/// let text = format!("qe/coverage_gaps@1.2.0-rc.1+build.5+sha256:{}", "ab".repeat(32));
/// let id: ContractId = text.parse().unwrap();
/// assert_eq!(id.name(), "qe/coverage_gaps");
/// assert_eq!(id.version().to_string(), "1.2.0-rc.1+build.5");
/// assert_eq!(id.to_string(), text);
/// assert!("fleet_status@1.2.0".parse::<ContractId>().is_err());
/// ```
impl std::str::FromStr for ContractId {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let expected = "expected `name@version+sha256:<64 lowercase hex digits>`";
        // The version may carry `+build` metadata, so the hash is split off from the right.
        let (head, sha256) = s.rsplit_once("+sha256:").ok_or_else(|| format!("`{s}`: {expected}"))?;
        let (name, version) = head.split_once('@').ok_or_else(|| format!("`{s}`: {expected}"))?;
        let hex = sha256.len() == 64 && sha256.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if name.is_empty() || !hex {
            return Err(format!("`{s}`: {expected}"));
        }
        let version = semver::Version::parse(version).map_err(|e| format!("`{s}`: bad version: {e}"))?;
        Ok(Self::new(name, version, sha256))
    }
}

impl Serialize for ContractId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for ContractId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A compiled output contract. Obtain one with [`ToolOutput::contract`].
pub struct OutputContract {
    id: ContractId,
    compatibility: Compatibility,
    type_name: &'static str,
    schema: Value,
    canonical: String,
    sensitive: Vec<String>,
    opaque: Vec<String>,
    completeness: Vec<String>,
    counts: Vec<(String, String)>,
    validator: jsonschema::Validator,
    /// One value an outer layer derives from the contract and keeps for its life (the
    /// wire keeps the result `_meta` here); the core never looks inside.
    memo: OnceLock<Arc<dyn Any + Send + Sync>>,
    /// The fast path's plan, compiled on first use (see [`crate::fused`]).
    fast: OnceLock<crate::contract::fused::Compiled>,
}

impl fmt::Debug for OutputContract {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutputContract")
            .field("id", &self.id.to_string())
            .field("compatibility", &self.compatibility)
            .field("type_name", &self.type_name)
            .field("sensitive", &self.sensitive)
            .field("opaque", &self.opaque)
            .finish_non_exhaustive()
    }
}

impl OutputContract {
    /// Builds the contract of `T` from its spec. The derive calls this once per type.
    pub(crate) fn build<T: schemars::JsonSchema + ?Sized>(spec: &ContractSpec) -> Result<Self, ContractError> {
        let generated = schema::generate::<T>(spec)?;
        Self::from_generated(spec, generated)
    }

    fn from_generated(spec: &ContractSpec, generated: Generated) -> Result<Self, ContractError> {
        let version = semver::Version::parse(spec.version).map_err(|err| ContractError {
            type_name: spec.type_name.to_owned(),
            contract: spec.name.to_owned(),
            kind: ErrorKind::BadVersion(err.to_string()),
        })?;
        let validator = crate::contract::validate::compile(&generated.schema).map_err(|msg| ContractError {
            type_name: spec.type_name.to_owned(),
            contract: spec.name.to_owned(),
            kind: ErrorKind::Invalid(msg),
        })?;
        let counts = counted_arrays(spec, &generated)?;
        let mut canonical = schema::canonical_string(&generated.schema);
        // Kept for the life of the process: not the spare capacity the writer grew.
        canonical.shrink_to_fit();
        let sha256 = schema::sha256_hex(canonical.as_bytes());
        // The value in the canonical key order, as `tools/list` advertises it. Without
        // serde_json's `preserve_order` its maps are always sorted and this does nothing;
        // parsing the canonical text back (what this replaces) cost as much as writing it.
        let mut schema = generated.schema;
        schema.sort_all_objects();
        Ok(Self {
            id: ContractId::new(spec.name, version, sha256),
            compatibility: spec.compatibility,
            type_name: spec.type_name,
            schema,
            canonical,
            sensitive: generated.sensitive,
            opaque: generated.opaque,
            completeness: generated.completeness,
            counts,
            validator,
            memo: OnceLock::new(),
            fast: OnceLock::new(),
        })
    }

    /// A contract read from a checked-in file rather than derived from a type: `schema`
    /// is already the final, canonical schema (`canonical` its text), and the pointers
    /// come from the file's inventory entry. It has no completeness checks: those are
    /// markers of a derived type, not part of the schema.
    pub(crate) fn from_checked_in(
        id: ContractId,
        compatibility: Compatibility,
        type_name: &'static str,
        mut schema: Value,
        canonical: String,
        sensitive: Vec<String>,
        opaque: Vec<String>,
    ) -> Result<Self, String> {
        let validator = crate::contract::validate::compile(&schema)?;
        schema.sort_all_objects();
        Ok(Self {
            id,
            compatibility,
            type_name,
            schema,
            canonical,
            sensitive,
            opaque,
            completeness: Vec::new(),
            counts: Vec::new(),
            validator,
            memo: OnceLock::new(),
            fast: OnceLock::new(),
        })
    }

    /// The contract identity.
    #[must_use]
    pub fn id(&self) -> &ContractId {
        &self.id
    }

    /// The tool name.
    #[must_use]
    pub fn name(&self) -> &str {
        self.id.name()
    }

    /// The declared version.
    #[must_use]
    pub fn version(&self) -> &semver::Version {
        self.id.version()
    }

    /// Whether objects are closed (`exact`) or open (`additive`).
    #[must_use]
    pub fn compatibility(&self) -> Compatibility {
        self.compatibility
    }

    /// The Rust type the contract was derived from, for messages.
    #[must_use]
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// The canonical schema as a JSON value (what `tools/list` advertises).
    #[must_use]
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// The canonical schema bytes: keys sorted, two-space indent, trailing newline.
    /// This is what `schemas/<name>.json` holds and what the hash covers.
    #[must_use]
    pub fn canonical_bytes(&self) -> &[u8] {
        self.canonical.as_bytes()
    }

    /// Lowercase hex SHA-256 of [`OutputContract::canonical_bytes`].
    #[must_use]
    pub fn sha256(&self) -> &str {
        self.id.sha256()
    }

    /// JSON pointers (into the instance; `*` stands for any array index or map key) of
    /// values that must never appear in errors or logs.
    #[must_use]
    pub fn sensitive_pointers(&self) -> &[String] {
        &self.sensitive
    }

    /// JSON pointers of pass-through values whose shape the contract does not own.
    #[must_use]
    pub fn opaque_pointers(&self) -> &[String] {
        &self.opaque
    }

    /// JSON pointers of the [`crate::completeness::Completeness`] values the result embeds; the
    /// pipeline checks their invariants beyond what JSON Schema can say.
    #[must_use]
    pub fn completeness_pointers(&self) -> &[String] {
        &self.completeness
    }

    /// `(completeness pointer, array pointer)` for each [`crate::completeness::Completeness`] field
    /// marked `#[tool_output(counts = "…")]`: the pipeline requires its `returned_count`
    /// to equal the number of items the array carries.
    #[must_use]
    pub fn completeness_counts(&self) -> &[(String, String)] {
        &self.counts
    }

    /// A value derived from this contract once and kept with it, such as the `_meta`
    /// every result of it carries. The slot holds one type; a caller asking for another
    /// gets a fresh value each time (correct, only slower).
    pub(crate) fn memo<T: Any + Send + Sync>(&self, init: impl Fn(&Self) -> T) -> Arc<T> {
        let slot = self.memo.get_or_init(|| Arc::new(init(self)));
        Arc::clone(slot).downcast::<T>().unwrap_or_else(|_| Arc::new(init(self)))
    }

    /// Whether results of this contract are judged on the fast path ([`crate::fused`]),
    /// and if not, why.
    #[must_use]
    pub fn fast_path(&self) -> crate::contract::fused::Coverage {
        crate::contract::fused::coverage(self)
    }

    pub(crate) fn fast_plan(&self) -> &crate::contract::fused::Compiled {
        self.fast.get_or_init(|| crate::contract::fused::compile(self))
    }

    /// The compiled validator, for callers that need the raw `jsonschema` API.
    #[must_use]
    pub fn validator(&self) -> &jsonschema::Validator {
        &self.validator
    }

    /// Whether `value` satisfies the contract; the fast check with no report. A value
    /// beyond the default [`crate::limits::Limits`] is not valid (fail closed): the
    /// validator recurses, and a deeper value could overflow the stack.
    #[must_use]
    pub fn is_valid(&self, value: &Value) -> bool {
        crate::contract::limits::measure_value(value, &crate::contract::limits::Limits::default()).is_ok()
            && self.validator.is_valid(value)
    }

    /// Validates `value`, returning its violations. Messages never contain instance
    /// values or the names of unexpected keys; pointers are the real locations, except
    /// that tokens below a [sensitive](OutputContract::sensitive_pointers) location, or
    /// equal to a sensitive value, are masked whole (see [`crate::redact::Sensitive`]).
    ///
    /// A value nested deeper than [`crate::limits::DEFAULT_MAX_DEPTH`] is a violation
    /// (keyword `maxDepth`) and is not walked further: the validator recurses, and a
    /// deeper value could overflow the stack.
    ///
    /// # Errors
    ///
    /// A [`Report`] with one [`Violation`] per failed keyword, the first
    /// [`crate::validate::MAX_REPORTED_VIOLATIONS`] of them listed.
    pub fn validate(&self, value: &Value) -> Result<(), Report> {
        let limits = crate::contract::limits::Limits::default();
        if let Err(err) = crate::contract::limits::measure_value(value, &limits) {
            let pointer = crate::contract::redact::Sensitive::locations(&self.sensitive).pointer(&err.pointer(), None);
            return Err(Report::new(self.id.clone(), vec![Violation::limit(&err, &pointer)]));
        }
        self.validate_measured(value)
    }

    /// [`OutputContract::validate`] for a value the caller has already measured against
    /// its own limits.
    pub(crate) fn validate_measured(&self, value: &Value) -> Result<(), Report> {
        if self.validator.is_valid(value) {
            return Ok(());
        }
        let sensitive =
            (!self.sensitive.is_empty()).then(|| crate::contract::redact::Sensitive::collect(value, &self.sensitive));
        let mut total = 0;
        let mut violations = Vec::new();
        for err in self.validator.iter_errors(value) {
            total += 1;
            if violations.len() < crate::contract::validate::MAX_REPORTED_VIOLATIONS {
                let mut violation = Violation::from_error(&err);
                if let Some(sensitive) = &sensitive {
                    violation.pointer = sensitive.pointer(&violation.pointer, Some(value));
                }
                violations.push(violation);
            }
        }
        Err(Report::with_total(self.id.clone(), violations, total))
    }

    /// Serializes `output` and validates the result.
    ///
    /// # Errors
    ///
    /// A [`Report`] when serialization fails (reported as one violation at the root with
    /// keyword `serialize`), when the value passes the default [`crate::limits::Limits`]
    /// (keyword `maxDepth` or `maxBytes`), or when the serialized value breaks the
    /// contract.
    pub fn validate_output<T: Serialize + ?Sized>(&self, output: &T) -> Result<Value, Report> {
        // Measured first: converting a value nested deeper than the limit would overflow
        // the stack before the validator ever saw it.
        if let Err(err) = crate::contract::limits::measure(output, &crate::contract::limits::Limits::default())
            && err.is_limit()
        {
            let pointer = crate::contract::redact::Sensitive::locations(&self.sensitive).pointer(&err.pointer(), None);
            return Err(Report::new(self.id.clone(), vec![Violation::limit(&err, &pointer)]));
        }
        let value = serde_json::to_value(output)
            .map_err(|err| Report::new(self.id.clone(), vec![Violation::serialization(&err)]))?;
        self.validate(&value)?;
        Ok(value)
    }
}

/// What the derive knows about a contract at compile time. Not meant to be written by hand.
#[doc(hidden)]
#[derive(Debug)]
pub struct ContractSpec {
    pub name: &'static str,
    pub version: &'static str,
    pub compatibility: Compatibility,
    pub type_name: &'static str,
    /// Serialized names of root fields marked `#[tool_output(sensitive)]`.
    pub sensitive_fields: &'static [&'static str],
    /// Serialized names of root fields marked `#[tool_output(opaque)]`.
    pub opaque_fields: &'static [&'static str],
    /// `(completeness field, counted array field)` for each root `Completeness` field
    /// marked `#[tool_output(counts = "…")]`, by serialized names.
    pub completeness_counts: &'static [(&'static str, &'static str)],
    /// Whether a flattened map field of the root is marked `#[tool_output(opaque)]`: the
    /// values it adds to the root object are opaque.
    pub opaque_flattened: bool,
    /// Root map fields whose keys are not strings: serialized name and the
    /// `propertyNames` of the key type (`schema::key_names_of`).
    pub keyed_fields: &'static [(&'static str, SchemaFact)],
    /// Flattened root maps whose keys are not strings: the key schema of each.
    pub flattened_keys: &'static [SchemaFact],
    /// Flattened root `Option<Struct>` fields: the all-or-none branches of each
    /// (`schema::all_or_none_of`).
    pub flattened_options: &'static [SchemaFact],
}

/// A piece of schema the derive knows how to compute from a Rust type schemars loses.
#[doc(hidden)]
pub type SchemaFact = fn() -> Option<Value>;

/// Why a type cannot be a contract. The message names the type, the contract, the field
/// and the JSON pointer into the schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContractError {
    pub(crate) type_name: String,
    pub(crate) contract: String,
    pub(crate) kind: ErrorKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    /// The root schema accepts any JSON value.
    PermissiveRoot,
    /// A subschema constrains nothing and was not declared opaque.
    Unconstrained { pointer: String, field: Option<String>, fix: Box<str> },
    /// A field marker names a property the root schema does not have.
    UnknownMarkedField(String),
    /// A flattened field is marked opaque, but the root object has no map values.
    NoFlattenedMap,
    /// A flattened map whose values accept anything and which was not declared opaque.
    UnconstrainedFlattenedMap { pointer: String, owner: String, fix: &'static str },
    /// A helper of `contract_runtime::schema` (`keys`, `FlatMap`, `AllOrNone`) could not
    /// describe what it was put on.
    Helper { pointer: String, message: String },
    /// The declared version does not parse (the derive normally prevents this).
    BadVersion(String),
    /// The generated schema is not a valid 2020-12 schema.
    Invalid(String),
    /// A `#[tool_output(counts = "…")]` that links no `Completeness` to an array.
    BadCounts { field: String, items: String, why: &'static str },
}

/// What kind of problem a [`ContractError`] is, for callers that handle some of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ContractErrorKind {
    /// The root schema accepts any JSON value.
    PermissiveRoot,
    /// A subschema (or a flattened map's values) accepts any value and was not declared
    /// opaque; see [`ContractError::pointer`].
    Unconstrained,
    /// A field marker names a property the root schema does not have, or a marker sits
    /// where it cannot apply.
    MisplacedMarker,
    /// A schema helper (`keys`, `FlatMap`, `AllOrNone`) could not describe its field.
    Helper,
    /// The declared version is not semver.
    BadVersion,
    /// The generated schema does not compile as JSON Schema 2020-12.
    InvalidSchema,
    /// A `#[tool_output(counts = "…")]` links no `Completeness` to an array.
    BadCounts,
}

impl ContractError {
    /// What kind of problem this is.
    ///
    /// # Examples
    ///
    /// ```
    /// use contract_runtime::{ContractErrorKind, ToolOutput};
    ///
    /// /// Anything at all: the contract would check nothing.
    /// #[derive(serde::Serialize, schemars::JsonSchema, ToolOutput)]
    /// #[serde(transparent)]
    /// #[tool_output(version = "1.0.0", compatibility = "exact")]
    /// struct Anything(serde_json::Value);
    ///
    /// let err = Anything::try_contract().unwrap_err();
    /// assert_eq!(err.kind(), ContractErrorKind::PermissiveRoot);
    /// ```
    #[must_use]
    pub fn kind(&self) -> ContractErrorKind {
        match &self.kind {
            ErrorKind::PermissiveRoot => ContractErrorKind::PermissiveRoot,
            ErrorKind::Unconstrained { .. } | ErrorKind::UnconstrainedFlattenedMap { .. } => {
                ContractErrorKind::Unconstrained
            }
            ErrorKind::UnknownMarkedField(_) | ErrorKind::NoFlattenedMap => ContractErrorKind::MisplacedMarker,
            ErrorKind::Helper { .. } => ContractErrorKind::Helper,
            ErrorKind::BadVersion(_) => ContractErrorKind::BadVersion,
            ErrorKind::Invalid(_) => ContractErrorKind::InvalidSchema,
            ErrorKind::BadCounts { .. } => ContractErrorKind::BadCounts,
        }
    }

    /// The Rust type the contract was derived from.
    #[must_use]
    pub fn type_name(&self) -> &str {
        &self.type_name
    }

    /// The contract (tool) name.
    #[must_use]
    pub fn contract(&self) -> &str {
        &self.contract
    }

    /// The JSON pointer into the schema where the problem is, when there is one.
    #[must_use]
    pub fn pointer(&self) -> Option<&str> {
        match &self.kind {
            ErrorKind::Unconstrained { pointer, .. }
            | ErrorKind::UnconstrainedFlattenedMap { pointer, .. }
            | ErrorKind::Helper { pointer, .. } => Some(pointer),
            ErrorKind::PermissiveRoot => Some(""),
            _ => None,
        }
    }
}

impl fmt::Display for ContractError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (ty, name) = (&self.type_name, &self.contract);
        match &self.kind {
            ErrorKind::PermissiveRoot => write!(
                f,
                "contract `{name}` (type `{ty}`): the root schema accepts any JSON value, so the contract would check nothing; give the result a concrete type"
            ),
            ErrorKind::Unconstrained { pointer, field, fix } => {
                let field = field.as_deref().map_or_else(String::new, |f| format!(" field `{f}`"));
                write!(
                    f,
                    "contract `{name}` (type `{ty}`):{field} at schema pointer `{pointer}` accepts any JSON value; give it a concrete type, or declare it opaque with {fix}"
                )
            }
            ErrorKind::UnconstrainedFlattenedMap { pointer, owner, fix } => write!(
                f,
                "contract `{name}` (type `{ty}`): a `#[serde(flatten)]` map in `{owner}` (schema pointer `{pointer}`) accepts any key with any JSON value; give its values a concrete type, or declare the flattened field opaque with {fix}"
            ),
            ErrorKind::NoFlattenedMap => write!(
                f,
                "contract `{name}` (type `{ty}`): `#[tool_output(opaque)]` is on a flattened field, but that field adds no map to the object (it is a struct or an enum): mark the fields inside it with `#[schemars(transform = contract_runtime::opaque)]` instead"
            ),
            ErrorKind::Helper { pointer, message } => {
                write!(f, "contract `{name}` (type `{ty}`): at schema pointer `{pointer}`: {message}")
            }
            ErrorKind::UnknownMarkedField(field) => write!(
                f,
                "contract `{name}` (type `{ty}`): marked field `{field}` is not a property of the root schema"
            ),
            ErrorKind::BadVersion(err) => write!(f, "contract `{name}` (type `{ty}`): bad version: {err}"),
            ErrorKind::Invalid(err) => write!(f, "contract `{name}` (type `{ty}`): the generated schema does not compile: {err}"),
            ErrorKind::BadCounts { field, items, why } => write!(
                f,
                "contract `{name}` (type `{ty}`): `#[tool_output(counts = \"{items}\")]` on field `{field}`: {why}"
            ),
        }
    }
}

impl std::error::Error for ContractError {}

/// An array, or an optional one: a `type` list with `array`, or the canonical
/// spelling of `Option<Vec<_>>`, an `anyOf` with an array branch.
fn is_array(root: &Value, node: &Value) -> bool {
    let node = node
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|p| root.pointer(p))
        .unwrap_or(node);
    let branches = node.get("anyOf").or_else(|| node.get("oneOf")).and_then(Value::as_array);
    match node.get("type") {
        Some(Value::String(t)) => t == "array",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "array"),
        _ => branches.is_some_and(|bs| bs.iter().any(|b| is_array(root, b))),
    }
}

/// Resolves each `counts` link of the spec to JSON pointers, checking that it links a
/// `Completeness` field to an array field of the root schema.
fn counted_arrays(spec: &ContractSpec, generated: &Generated) -> Result<Vec<(String, String)>, ContractError> {
    let root = &generated.schema;
    let is_array = |node: &Value| is_array(root, node);
    let mut out = Vec::new();
    for (field, items) in spec.completeness_counts {
        let bad = |why| ContractError {
            type_name: spec.type_name.to_owned(),
            contract: spec.name.to_owned(),
            kind: ErrorKind::BadCounts { field: (*field).to_owned(), items: (*items).to_owned(), why },
        };
        let at = format!("/{}", schema::escape_pointer_token(field));
        if !generated.completeness.contains(&at) {
            return Err(bad("the field is not a `contract_runtime::Completeness`"));
        }
        let property = root.get("properties").and_then(|p| p.get(*items));
        if !property.is_some_and(is_array) {
            return Err(bad("the counted field is not an array (a `Vec`, slice or set) of the root"));
        }
        out.push((at, format!("/{}", schema::escape_pointer_token(items))));
    }
    Ok(out)
}
