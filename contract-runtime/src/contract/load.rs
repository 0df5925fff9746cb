//! Contracts read from checked-in files, for tools whose result type is not a Rust type
//! known at build time (registry-backed, bridged or lazily registered tools).
//!
//! A run-time contract folder has the layout of `schemas/`: one canonical schema file per
//! contract and an `inventory.json` naming each contract's name, version, compatibility,
//! SHA-256, file, and the instance pointers of its sensitive and opaque values. Loading
//! checks what `cargo xtask schemas --check` checks for a derived contract: the file is
//! valid JSON in canonical form, its SHA-256 is the one the inventory declares, the
//! version is semver, the schema compiles as JSON Schema 2020-12, and no subschema
//! accepts any value unless the inventory declares it opaque (no silent `{}`). Every
//! problem names the file and the JSON pointer.
//!
//! A loaded contract is kept for the life of the process, as a derived one is, so it can
//! be bound wherever a derived contract is; loading the same contract again returns the
//! same one.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use serde_json::Value;

use crate::contract::schema::{accepts_any, canonical_string, escape_pointer_token, sha256_hex};
use crate::contract::{Compatibility, ContractId, ErrorShape, OutputContract};

/// The inventory file of a contract folder.
pub const INVENTORY_FILE: &str = "inventory.json";

/// The source manifest a contract folder may hold beside its canonical files: what
/// `tool-contracts schemas` reads (each contract's version, compatibility and source
/// schema) to write the folder. Loading ignores it.
pub const MANIFEST_FILE: &str = "contracts.json";

/// One problem of a checked-in file (a run-time contract, a tools lock): the file, the
/// JSON pointer into it (when the problem has one) and what is wrong, with the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadProblem {
    file: String,
    pointer: Option<String>,
    message: String,
}

impl LoadProblem {
    pub(crate) fn new(file: &str, pointer: Option<String>, message: impl Into<String>) -> Self {
        Self { file: file.to_owned(), pointer, message: message.into() }
    }

    /// The file, as given (a path, or `contract `name`` for a schema given as text).
    #[must_use]
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The JSON pointer into the file, when the problem sits at one (`""` is the root).
    #[must_use]
    pub fn pointer(&self) -> Option<&str> {
        self.pointer.as_deref()
    }

    /// What is wrong.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for LoadProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.pointer {
            Some(pointer) if pointer.is_empty() => write!(f, "{}: at the root: {}", self.file, self.message),
            Some(pointer) => write!(f, "{}: at `{pointer}`: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// Why run-time contracts could not be loaded: every problem found, one per line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    problems: Vec<LoadProblem>,
}

impl LoadError {
    fn one(problem: LoadProblem) -> Self {
        Self { problems: vec![problem] }
    }

    /// Every problem found.
    #[must_use]
    pub fn problems(&self) -> &[LoadProblem] {
        &self.problems
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, problem) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            problem.fmt(f)?;
        }
        Ok(())
    }
}

impl std::error::Error for LoadError {}

impl std::error::Error for LoadProblem {}

/// What a contract declares of itself beside its schema: an entry of `inventory.json`.
///
/// # Examples
///
/// ```
/// use contract_runtime::Declared;
/// use contract_runtime::{Compatibility, OutputContract};
///
/// let schema = "{\n  \"properties\": {\n    \"celsius\": {\n      \"type\": \"number\"\n    }\n  },\n  \"required\": [\n    \"celsius\"\n  ],\n  \"type\": \"object\"\n}\n";
/// let declared = Declared::new("weather", "1.0.0", Compatibility::Additive);
/// let contract = OutputContract::from_json(&declared, schema).unwrap();
/// assert!(contract.validate(&serde_json::json!({ "celsius": 21.5 })).is_ok());
/// assert!(contract.validate(&serde_json::json!({ "celsius": "warm" })).is_err());
///
/// // Not canonical (one line): refused, with where the canonical form differs.
/// let err = OutputContract::from_json(&declared, r#"{"type": "object"}"#).unwrap_err();
/// assert!(err.to_string().contains("not in canonical form"), "{err}");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declared {
    name: String,
    version: String,
    compatibility: Compatibility,
    sha256: Option<String>,
    type_name: Option<String>,
    sensitive: Vec<String>,
    opaque: Vec<String>,
}

impl Declared {
    /// A contract `name` at `version` (semver, checked on load).
    #[must_use]
    pub fn new(name: impl Into<String>, version: impl Into<String>, compatibility: Compatibility) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
            compatibility,
            sha256: None,
            type_name: None,
            sensitive: Vec::new(),
            opaque: Vec::new(),
        }
    }

    /// The SHA-256 the canonical schema must have (lowercase hex); checked on load.
    #[must_use]
    pub fn sha256(mut self, sha256: impl Into<String>) -> Self {
        self.sha256 = Some(sha256.into());
        self
    }

    /// What messages call the contract's type (default: where it was read from).
    #[must_use]
    pub fn type_name(mut self, type_name: impl Into<String>) -> Self {
        self.type_name = Some(type_name.into());
        self
    }

    /// Instance pointers of values never shown in errors (`*` for any index or key).
    #[must_use]
    pub fn sensitive(mut self, pointers: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.sensitive = pointers.into_iter().map(Into::into).collect();
        self
    }

    /// Instance pointers of values declared opaque: they may accept any JSON value.
    #[must_use]
    pub fn opaque(mut self, pointers: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.opaque = pointers.into_iter().map(Into::into).collect();
        self
    }
}

impl OutputContract {
    /// The contract of a canonical schema given as text, with the identity `declared`.
    ///
    /// # Errors
    ///
    /// Every problem of the schema: not JSON, not in canonical form, a SHA-256 other than
    /// the declared one, a version that is not semver, a schema that does not compile,
    /// a root or subschema that accepts any value without being declared opaque.
    pub fn from_json(declared: &Declared, text: &str) -> Result<&'static OutputContract, LoadError> {
        let source = format!("contract `{}`", declared.name);
        load(&source, &source, None, declared, text)
    }

    /// The contract of the canonical schema file at `path`, whose identity is its entry in
    /// the `inventory.json` beside it (the entry whose `file` is the file's name).
    ///
    /// # Errors
    ///
    /// An unreadable file or inventory, no entry for the file, and every problem
    /// [`OutputContract::from_json`] finds, each naming the file and the pointer.
    pub fn from_file(path: impl AsRef<Path>) -> Result<&'static OutputContract, LoadError> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let dir = path.parent().map_or_else(PathBuf::new, Path::to_path_buf);
        let file = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let inventory = Inventory::read(&dir)?;
        let Some((index, declared)) = inventory.entries.iter().enumerate().find(|(_, e)| e.file == file) else {
            return Err(LoadError::one(LoadProblem::new(
                &inventory.shown,
                Some("/contracts".to_owned()),
                format!("no entry has `\"file\": \"{file}\"`: list the contract of {shown} there"),
            )));
        };
        let declared = declared.declared.clone().map_err(LoadError::one)?;
        let text = read(path, &shown)?;
        load(&shown, &inventory.shown, Some(index), &declared, &text)
    }
}

impl OutputContract {
    /// The contract of a source schema: plain JSON Schema 2020-12, written by hand or by
    /// another language's library (zod's `z.toJSONSchema()`, pydantic's
    /// `model_json_schema()`), made into a contract the way a derived schema is: the
    /// instance pointers `declared` lists as opaque or sensitive are marked, no subschema
    /// may accept any value unless declared opaque, objects are closed under `exact`
    /// (nothing inside an opaque value), and the result is written in canonical form.
    /// `shown` names the source in messages. `declared`'s SHA-256 is not checked (the
    /// canonical text is made here); its type name is what the inventory records.
    ///
    /// # Errors
    ///
    /// Every problem, naming `shown` and the JSON pointer: a root or subschema that
    /// accepts any value (with the instance pointer to declare opaque), an opaque or
    /// sensitive pointer no subschema describes, a version that is not semver, a schema
    /// that does not compile.
    ///
    /// # Examples
    ///
    /// ```
    /// use contract_runtime::Declared;
    /// use contract_runtime::{Compatibility, OutputContract};
    ///
    /// let schema = serde_json::json!({
    ///     "type": "object",
    ///     "properties": { "celsius": { "type": "number" }, "raw": {} },
    ///     "required": ["celsius"],
    /// });
    /// let declared = Declared::new("weather", "1.0.0", Compatibility::Exact);
    /// let err = OutputContract::from_source(&declared, "weather.json", schema.clone()).unwrap_err();
    /// assert!(err.to_string().contains("weather.json: at `/properties/raw`: accepts any JSON value"), "{err}");
    ///
    /// let contract = OutputContract::from_source(&declared.opaque(["/raw"]), "weather.json", schema).unwrap();
    /// assert!(contract.is_valid(&serde_json::json!({ "celsius": 21.5, "raw": [1, { "a": 2 }] })));
    /// // Closed under `exact`: a key the schema does not name is a violation.
    /// assert!(!contract.is_valid(&serde_json::json!({ "celsius": 21.5, "wind": 3 })));
    /// ```
    pub fn from_source(
        declared: &Declared,
        shown: &str,
        mut schema: Value,
    ) -> Result<&'static OutputContract, LoadError> {
        let mut problems = Vec::new();
        for (pointers, sensitive, what) in
            [(&declared.opaque, false, "opaque"), (&declared.sensitive, true, "sensitive")]
        {
            for missing in crate::contract::schema::mark_instances(&mut schema, pointers, sensitive) {
                problems.push(LoadProblem::new(
                    shown,
                    None,
                    format!("declares `{missing}` {what}, but no subschema describes a value at that instance pointer"),
                ));
            }
        }
        if !problems.is_empty() {
            return Err(LoadError { problems });
        }
        let leak = |text: &str| -> &'static str { Box::leak(text.to_owned().into_boxed_str()) };
        let spec = crate::contract::ContractSpec {
            name: leak(&declared.name),
            version: leak(&declared.version),
            compatibility: declared.compatibility,
            type_name: leak(declared.type_name.as_deref().unwrap_or(shown)),
            sensitive_fields: &[],
            opaque_fields: &[],
            completeness_counts: &[],
            opaque_flattened: false,
            keyed_fields: &[],
            flattened_keys: &[],
            flattened_options: &[],
        };
        let generated = crate::contract::schema::finish(&spec, schema).map_err(|err| {
            use crate::contract::ContractErrorKind;
            let message = match err.kind() {
                ContractErrorKind::PermissiveRoot => {
                    "the root schema accepts any JSON value, so the contract would check nothing".to_owned()
                }
                ContractErrorKind::Unconstrained => {
                    let instance = err
                        .pointer()
                        .and_then(crate::contract::schema::instance_of)
                        .map_or_else(|| "its instance pointer".to_owned(), |p| format!("`{p}`"));
                    format!(
                        "accepts any JSON value (a silent `{{}}`): give it a type, or declare {instance} opaque (the \
                         contract's `opaque` list)"
                    )
                }
                _ => err.to_string(),
            };
            LoadError::one(LoadProblem::new(shown, err.pointer().map(str::to_owned), message))
        })?;
        let canonical = canonical_string(&generated.schema);
        let mut made = Declared::new(declared.name.clone(), declared.version.clone(), declared.compatibility)
            .sensitive(generated.sensitive)
            .opaque(generated.opaque);
        made.type_name = Some(declared.type_name.clone().unwrap_or_else(|| shown.to_owned()));
        load(shown, shown, None, &made, &canonical)
    }
}

/// Every contract of the run-time folder `dir`, in the inventory's order.
///
/// # Errors
///
/// Every problem of the folder at once: a missing or broken `inventory.json`, a schema
/// file no entry claims, and every problem of each contract.
pub(crate) fn load_dir(dir: impl AsRef<Path>) -> Result<Vec<(&'static OutputContract, Option<ErrorShape>)>, LoadError> {
    let dir = dir.as_ref();
    let inventory = Inventory::read(dir)?;
    let mut problems = Vec::new();
    let mut contracts = Vec::new();
    for (index, entry) in inventory.entries.iter().enumerate() {
        let declared = match &entry.declared {
            Ok(declared) => declared,
            Err(problem) => {
                problems.push(problem.clone());
                continue;
            }
        };
        let path = dir.join(&entry.file);
        let shown = path.display().to_string();
        let loaded = read(&path, &shown).and_then(|text| load(&shown, &inventory.shown, Some(index), declared, &text));
        let error = match &entry.error {
            None => Ok(None),
            Some(Err(problem)) => Err(LoadError::one(problem.clone())),
            Some(Ok(error)) => {
                let path = dir.join(&error.file);
                let shown = path.display().to_string();
                read(&path, &shown)
                    .and_then(|text| load(&shown, &inventory.shown, Some(index), &error.declared, &text))
                    .and_then(|schema| {
                        ErrorShape::new(schema, &error.message).map(Some).map_err(|message| {
                            LoadError::one(LoadProblem::new(
                                &inventory.shown,
                                Some(format!("/contracts/{index}/error/message")),
                                message,
                            ))
                        })
                    })
            }
        };
        match (loaded, error) {
            (Ok(contract), Ok(error)) => contracts.push((contract, error)),
            (loaded, error) => {
                problems.extend(loaded.err().into_iter().chain(error.err()).flat_map(|err| err.problems));
            }
        }
    }
    match std::fs::read_dir(dir) {
        Ok(entries) => {
            let mut orphans: Vec<String> = entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| {
                    Path::new(n).extension().is_some_and(|e| e == "json")
                        && n != INVENTORY_FILE
                        && n != MANIFEST_FILE
                        && !inventory.entries.iter().any(|e| e.file == *n || e.error_file() == Some(n.as_str()))
                })
                .collect();
            orphans.sort();
            for name in orphans {
                let shown = dir.join(&name).display().to_string();
                problems.push(LoadProblem::new(
                    &shown,
                    None,
                    format!("no entry of {} claims this file: list its contract there or remove it", inventory.shown),
                ));
            }
        }
        Err(err) => problems.push(LoadProblem::new(&dir.display().to_string(), None, err.to_string())),
    }
    if problems.is_empty() {
        Ok(contracts)
    } else {
        Err(LoadError { problems })
    }
}

fn read(path: &Path, shown: &str) -> Result<String, LoadError> {
    std::fs::read_to_string(path).map_err(|err| LoadError::one(LoadProblem::new(shown, None, err.to_string())))
}

/// One entry of an inventory: its file, and its declaration or why it has none; its
/// declared error shape, if it has one.
struct Entry {
    file: String,
    declared: Result<Declared, LoadProblem>,
    error: Option<Result<ErrorEntry, LoadProblem>>,
}

/// The `error` of an inventory entry: the canonical file of the error shape's schema,
/// its declaration (the contract's name with `.error`, its version, objects open, the
/// file's SHA-256) and the JSON pointer of the message.
struct ErrorEntry {
    file: String,
    declared: Declared,
    message: String,
}

impl Entry {
    fn error_file(&self) -> Option<&str> {
        match &self.error {
            Some(Ok(error)) => Some(&error.file),
            _ => None,
        }
    }
}

struct Inventory {
    shown: String,
    entries: Vec<Entry>,
}

impl Inventory {
    fn read(dir: &Path) -> Result<Self, LoadError> {
        let path = dir.join(INVENTORY_FILE);
        let shown = path.display().to_string();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) => {
                return Err(LoadError::one(LoadProblem::new(
                    &shown,
                    None,
                    format!("{err}: a run-time contract folder lists its contracts in {INVENTORY_FILE}"),
                )))
            }
        };
        let value: Value = serde_json::from_str(&text).map_err(|err| LoadError::one(not_json(&shown, &err)))?;
        let Some(list) = value.get("contracts").and_then(Value::as_array) else {
            return Err(LoadError::one(LoadProblem::new(
                &shown,
                Some("/contracts".to_owned()),
                "expected an array of contract entries",
            )));
        };
        let entries = list.iter().enumerate().map(|(index, entry)| Self::entry(&shown, index, entry)).collect();
        Ok(Self { shown, entries })
    }

    fn entry(shown: &str, index: usize, entry: &Value) -> Entry {
        let at = |field: &str| Some(format!("/contracts/{index}/{field}"));
        let text = |field: &str| entry.get(field).and_then(Value::as_str);
        let pointers = |field: &str| -> Result<Vec<String>, LoadProblem> {
            match entry.get(field) {
                None => Ok(Vec::new()),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|item| match item.as_str() {
                        Some(p) if p.is_empty() || p.starts_with('/') => Ok(p.to_owned()),
                        _ => Err(LoadProblem::new(shown, at(field), "expected JSON pointers such as \"/items/*/id\"")),
                    })
                    .collect(),
                Some(_) => Err(LoadProblem::new(shown, at(field), "expected an array of JSON pointers")),
            }
        };
        let name = text("name");
        let file = text("file").map(str::to_owned).or_else(|| name.map(|n| format!("{}.json", n.replace('/', "__"))));
        let declared = (|| {
            let name = name.ok_or_else(|| LoadProblem::new(shown, at("name"), "expected the contract name"))?;
            let version =
                text("version").ok_or_else(|| LoadProblem::new(shown, at("version"), "expected a semver version"))?;
            let compatibility = match text("compatibility") {
                Some("exact") => Compatibility::Exact,
                Some("additive") => Compatibility::Additive,
                _ => return Err(LoadProblem::new(shown, at("compatibility"), "expected \"exact\" or \"additive\"")),
            };
            let sha256 = text("sha256").ok_or_else(|| {
                LoadProblem::new(shown, at("sha256"), "expected the SHA-256 of the canonical schema file")
            })?;
            let mut declared = Declared::new(name, version, compatibility)
                .sha256(sha256)
                .sensitive(pointers("sensitive")?)
                .opaque(pointers("opaque")?);
            if let Some(type_name) = text("type") {
                declared = declared.type_name(type_name);
            }
            Ok(declared)
        })();
        let error = entry.get("error").map(|error| {
            let name = name.unwrap_or_default();
            let field = |key: &str| {
                error.get(key).and_then(Value::as_str).map(str::to_owned).ok_or_else(|| {
                    LoadProblem::new(shown, at(&format!("error/{key}")), format!("expected the error shape's {key}"))
                })
            };
            let version = text("version").unwrap_or_default();
            Ok(ErrorEntry {
                file: field("file")?,
                declared: Declared::new(format!("{name}.error"), version, Compatibility::Additive)
                    .sha256(field("sha256")?),
                message: field("message")?,
            })
        });
        Entry { file: file.unwrap_or_default(), declared, error }
    }
}

fn not_json(shown: &str, err: &serde_json::Error) -> LoadProblem {
    let message = err.to_string();
    let message = message.split(" at line ").next().unwrap_or(&message);
    LoadProblem::new(shown, None, format!("line {} column {}: not valid JSON ({message})", err.line(), err.column()))
}

/// Checks and builds one contract. `shown` is the schema's file, `inventory` the file that
/// declares it and `index` its entry there (for pointers into the inventory).
fn load(
    shown: &str,
    inventory: &str,
    index: Option<usize>,
    declared: &Declared,
    text: &str,
) -> Result<&'static OutputContract, LoadError> {
    let in_inventory = |field: &str| index.map(|i| format!("/contracts/{i}/{field}"));
    let value: Value = serde_json::from_str(text).map_err(|err| LoadError::one(not_json(shown, &err)))?;
    let mut problems = Vec::new();
    let canonical = canonical_string(&value);
    let normalized = text.replace("\r\n", "\n");
    if normalized != canonical {
        let line = first_difference(&normalized, &canonical);
        problems.push(LoadProblem::new(
            shown,
            Some(pointer_at_line(&value, line)),
            format!(
                "not in canonical form (keys sorted, two-space indent, a trailing newline): line {line} of the \
                 canonical text differs; write the file as `contract_runtime::schema::canonical_string` does"
            ),
        ));
    }
    let sha256 = sha256_hex(canonical.as_bytes());
    if let Some(expected) = &declared.sha256
        && *expected != sha256
    {
        problems.push(LoadProblem::new(
            inventory,
            in_inventory("sha256").or_else(|| Some(String::new())),
            format!(
                "declares SHA-256 {expected}, but {shown} has {sha256}: the schema changed without its \
                     declaration; restore the file, or declare the new hash (and the version its change needs)"
            ),
        ));
    }
    let version = match semver::Version::parse(&declared.version) {
        Ok(version) => Some(version),
        Err(err) => {
            problems.push(LoadProblem::new(
                inventory,
                in_inventory("version"),
                format!("`{}` is not a semver version: {err}", declared.version),
            ));
            None
        }
    };
    if accepts_any(&value) {
        problems.push(LoadProblem::new(
            shown,
            Some(String::new()),
            "the root schema accepts any JSON value, so the contract would check nothing",
        ));
    } else if let Some(pointer) = silent_any(&value, &declared.opaque) {
        problems.push(LoadProblem::new(
            shown,
            Some(pointer),
            "accepts any JSON value (a silent `{}`): give it a type, or declare its instance pointer opaque in the \
             inventory entry's `opaque`",
        ));
    }
    if !problems.is_empty() {
        return Err(LoadError { problems });
    }
    let Some(version) = version else { return Err(LoadError { problems }) };
    let id = ContractId::new(declared.name.clone(), version, sha256);
    let key = format!(
        "{id}|{}|{:?}|{:?}|{:?}",
        declared.compatibility, declared.sensitive, declared.opaque, declared.type_name
    );
    let mut loaded = LOADED.get_or_init(Mutex::default).lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(contract) = loaded.get(&key) {
        return Ok(contract);
    }
    // Kept for the life of the process, as a derived contract is; one per identity.
    let type_name: &'static str = Box::leak(declared.type_name.clone().unwrap_or_else(|| shown.to_owned()).into());
    let contract = OutputContract::from_checked_in(
        id,
        declared.compatibility,
        type_name,
        value,
        canonical,
        declared.sensitive.clone(),
        declared.opaque.clone(),
    )
    .map_err(|message| {
        LoadError::one(LoadProblem::new(shown, Some(String::new()), format!("not a JSON Schema 2020-12: {message}")))
    })?;
    let contract: &'static OutputContract = Box::leak(Box::new(contract));
    loaded.insert(key, contract);
    Ok(contract)
}

/// Every contract loaded so far, by identity and declaration.
static LOADED: OnceLock<Mutex<HashMap<String, &'static OutputContract>>> = OnceLock::new();

/// The 1-based number of the first line where `a` and `b` differ.
fn first_difference(a: &str, b: &str) -> usize {
    let mut left = a.split('\n');
    let mut right = b.split('\n');
    let mut line = 1;
    loop {
        match (left.next(), right.next()) {
            (Some(x), Some(y)) if x == y => line += 1,
            _ => return line,
        }
    }
}

/// The JSON pointer of what line `target` of `value`'s canonical text writes (the value
/// that starts there, or whose closing bracket it is); the root past the end.
fn pointer_at_line(value: &Value, target: usize) -> String {
    fn walk(value: &Value, pointer: &str, line: &mut usize, target: usize) -> Option<String> {
        if *line == target {
            return Some(pointer.to_owned());
        }
        let children: Vec<(String, &Value)> = match value {
            Value::Object(map) if !map.is_empty() => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                entries.into_iter().map(|(k, v)| (escape_pointer_token(k), v)).collect()
            }
            Value::Array(items) if !items.is_empty() => {
                items.iter().enumerate().map(|(i, v)| (i.to_string(), v)).collect()
            }
            _ => return None,
        };
        for (token, child) in children {
            *line += 1;
            if let Some(found) = walk(child, &format!("{pointer}/{token}"), line, target) {
                return Some(found);
            }
        }
        *line += 1;
        (*line == target).then(|| pointer.to_owned())
    }
    walk(value, "", &mut 1, target).unwrap_or_default()
}

/// The schema pointer of the first subschema reachable from the root that accepts any
/// value while its instance pointer is not declared opaque.
fn silent_any(root: &Value, opaque: &[String]) -> Option<String> {
    fn walk(
        root: &Value,
        node: &Value,
        at: &str,
        instance: &str,
        opaque: &[String],
        visiting: &mut Vec<String>,
    ) -> Option<String> {
        if opaque.iter().any(|o| o == instance) {
            return None;
        }
        if !at.is_empty() && accepts_any(node) {
            return Some(at.to_owned());
        }
        let obj = node.as_object()?;
        if let Some(reference) = obj.get("$ref").and_then(Value::as_str) {
            let key = format!("{reference} {instance}");
            if !visiting.contains(&key)
                && let Some(target) = crate::contract::pointer::resolve_ref(root, reference)
            {
                visiting.push(key);
                let target_at = reference.strip_prefix('#').unwrap_or(reference);
                let found = walk(root, target, target_at, instance, opaque, visiting);
                visiting.pop();
                if found.is_some() {
                    return found;
                }
            }
        }
        for (key, value) in obj {
            let here = format!("{at}/{}", escape_pointer_token(key));
            let found = match key.as_str() {
                "properties" | "patternProperties" => value.as_object().and_then(|map| {
                    map.iter().find_map(|(name, sub)| {
                        let token = if key == "properties" { escape_pointer_token(name) } else { "*".to_owned() };
                        let sub_at = format!("{here}/{}", escape_pointer_token(name));
                        walk(root, sub, &sub_at, &format!("{instance}/{token}"), opaque, visiting)
                    })
                }),
                "additionalProperties" | "items" | "unevaluatedProperties" | "unevaluatedItems" => {
                    walk(root, value, &here, &format!("{instance}/*"), opaque, visiting)
                }
                "prefixItems" => value.as_array().and_then(|items| {
                    items.iter().enumerate().find_map(|(i, sub)| {
                        walk(root, sub, &format!("{here}/{i}"), &format!("{instance}/{i}"), opaque, visiting)
                    })
                }),
                "allOf" | "anyOf" | "oneOf" => value.as_array().and_then(|items| {
                    items
                        .iter()
                        .enumerate()
                        .find_map(|(i, sub)| walk(root, sub, &format!("{here}/{i}"), instance, opaque, visiting))
                }),
                "if" | "then" | "else" => walk(root, value, &here, instance, opaque, visiting),
                _ => None,
            };
            if found.is_some() {
                return found;
            }
        }
        None
    }
    walk(root, root, "", "", opaque, &mut Vec::new())
}
