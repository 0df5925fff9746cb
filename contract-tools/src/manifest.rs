//! Contracts of a server written in any language: a source manifest, `contracts.json`,
//! and plain JSON Schema files, made into the same canonical folder the Rust xtask
//! writes. This is what `tool-contracts schemas` runs.
//!
//! The folder (`contracts/` unless told otherwise) holds `contracts.json`:
//!
//! ```json
//! {
//!   "coverage_gaps": {
//!     "version": "1.2.0",
//!     "compatibility": "exact",
//!     "schema": "src/coverage_gaps.json",
//!     "opaque": ["/raw"],
//!     "sensitive": ["/token"]
//!   }
//! }
//! ```
//!
//! Each key is a contract (tool) name; `schema` is the path of its source schema,
//! relative to the folder: JSON Schema 2020-12 written by hand or by zod 4's
//! `z.toJSONSchema()` or pydantic's `model_json_schema()`. `opaque` and `sensitive`
//! (optional) list instance pointers (`*` for any index or key) of values that may be
//! anything on purpose, and of values never shown in errors. `error` (optional),
//! `{"schema": "src/coverage_gaps.error.json", "message": "/error"}`, declares the shape of
//! the server's error answers when it answers a failure as an ordinary result (such as
//! `{"success": false, "error": "…"}` without `isError`): its schema is written beside the
//! contract's as `<name>.error.json` (objects left open) and recorded in the inventory
//! with its SHA-256 and the message's JSON pointer; the proxy turns a result that breaks
//! the contract and matches the shape into a `tool_execution_error` carrying that
//! message. A source may not sit in the
//! folder itself (put it in a subfolder such as `src/`): that is where each contract's
//! canonical schema is written, `<name>.json` with every `/` written as `__`, beside
//! `inventory.json`. The folder is then exactly what `ContractSet::load_dir` and
//! `contract-proxy --contracts` read; `contracts.json` is ignored there.
//!
//! Each source is made into a contract by [`OutputContract::from_source`], the steps a
//! derived schema goes through (no silent `{}` unless declared opaque, objects closed
//! under `exact`, the canonical form), and the folder is written and checked by
//! [`crate::schemas`], with the same classification, version policy and review.

use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;

use contract_runtime::{Compatibility, ContractSet, OutputContract};
use contract_runtime::{Declared, ErrorShape};
use serde_json::Value;

use crate::cli::{self, Format, Job};
use crate::schemas::{self, line_of, strip_position, SnapshotError, INVENTORY, MANIFEST};

/// The folder `tool-contracts schemas` reads and writes when none is given.
pub const DEFAULT_DIR: &str = "contracts";

/// The keys an entry of `contracts.json` may have.
const KEYS: &[&str] = &["version", "compatibility", "schema", "opaque", "sensitive", "error"];

/// The keys of an entry's `error`.
const ERROR_KEYS: &[&str] = &["schema", "message"];

/// Reads `dir/contracts.json` and every source schema it names, and makes each a
/// contract.
///
/// # Errors
///
/// Every problem at once, each naming the file and the JSON pointer (and the line, where
/// the file has one): a missing or unreadable file, text that is not JSON, a manifest or
/// schema that is not an object, an unknown key, compatibility or `$schema`, a version
/// that is not semver, a source placed where a generated file goes, a contract name that
/// would overwrite the inventory or another contract's file, a `$ref` that does not
/// resolve, a silent `{}`, an opaque or sensitive pointer that describes nothing.
///
/// # Examples
///
/// ```
/// let dir = std::env::temp_dir().join(format!("manifest-doc-{}", std::process::id()));
/// std::fs::create_dir_all(dir.join("src")).unwrap();
/// std::fs::write(
///     dir.join("contracts.json"),
///     r#"{"weather": {"version": "1.0.0", "compatibility": "exact", "schema": "src/weather.json"}}"#,
/// )
/// .unwrap();
/// std::fs::write(
///     dir.join("src/weather.json"),
///     r#"{"type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]}"#,
/// )
/// .unwrap();
/// let contracts = contract_tools::manifest::read(&dir).unwrap();
/// contract_tools::schemas::write(&dir, &contracts).unwrap();
/// // What the proxy and `ContractSet::load_dir` read.
/// let loaded = contract_runtime::ContractSet::load_dir(&dir).unwrap();
/// assert!(loaded.get("weather").unwrap().is_valid(&serde_json::json!({ "celsius": 21.5 })));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn read(dir: &Path) -> Result<ContractSet, SnapshotError> {
    let shown_dir = schemas::display_dir(dir);
    let manifest = format!("{shown_dir}/{MANIFEST}");
    let text = std::fs::read_to_string(dir.join(MANIFEST)).map_err(|err| {
        let why = if err.kind() == std::io::ErrorKind::NotFound {
            "not found: list each contract there, such as {\"my_tool\": {\"version\": \"1.0.0\", \
             \"compatibility\": \"exact\", \"schema\": \"src/my_tool.json\"}}"
                .to_owned()
        } else {
            err.to_string()
        };
        one(format!("{manifest}: {why}"))
    })?;
    let value: Value = serde_json::from_str(&text).map_err(|err| one(not_json(&manifest, &err)))?;
    let at = |pointer: &str, what: String| {
        let line = line_of(&text, pointer).map_or_else(String::new, |l| format!(" (line {l})"));
        if pointer.is_empty() {
            format!("{manifest}: at the root: {what}")
        } else {
            format!("{manifest}: at `{pointer}`{line}: {what}")
        }
    };
    let Some(entries) = value.as_object() else {
        return Err(one(at(
            "",
            format!(
                "expected an object mapping each contract name to {{\"version\", \"compatibility\", \"schema\"}}, found {}",
                kind_of(&value)
            ),
        )));
    };
    let canonical_dir = dir.canonicalize().ok();
    let mut problems = Vec::new();
    let mut set = ContractSet::new();
    let mut files: Vec<(String, &str)> = Vec::new();
    for (name, entry) in entries {
        let here = format!("/{}", contract_runtime::schema::escape_pointer_token(name));
        let file = schemas::file_name(name);
        if file == INVENTORY || file == MANIFEST {
            problems.push(at(
                &here,
                format!(
                    "a contract named `{name}` would be written over {shown_dir}/{file}: give the tool another name"
                ),
            ));
            continue;
        }
        if let Some((_, other)) = files.iter().find(|(f, _)| *f == file) {
            problems.push(at(
                &here,
                format!("contracts `{other}` and `{name}` would both be written to {shown_dir}/{file}: rename one"),
            ));
            continue;
        }
        files.push((file, name));
        if entry.get("error").is_some() {
            let error_file = schemas::error_file_name(name);
            if let Some((_, other)) = files.iter().find(|(f, _)| *f == error_file) {
                problems.push(at(
                    &format!("{here}/error"),
                    format!(
                        "the error shape of `{name}` and contract `{other}` would both be written to \
                         {shown_dir}/{error_file}: rename one"
                    ),
                ));
                continue;
            }
            files.push((error_file, name));
        }
        let Some(entry) = entry.as_object() else {
            problems.push(at(
                &here,
                format!(
                    "expected an object with \"version\", \"compatibility\" and \"schema\", found {}",
                    kind_of(entry)
                ),
            ));
            continue;
        };
        let before = problems.len();
        for key in entry.keys().filter(|k| !KEYS.contains(&k.as_str())) {
            problems.push(at(
                &format!("{here}/{}", contract_runtime::schema::escape_pointer_token(key)),
                format!("unknown key `{key}`: an entry has {}", KEYS.join(", ")),
            ));
        }
        let text_of = |key: &str, problems: &mut Vec<String>, hint: &str| match entry.get(key) {
            Some(Value::String(text)) => Some(text.clone()),
            Some(other) => {
                problems.push(at(&format!("{here}/{key}"), format!("expected {hint}, found {}", kind_of(other))));
                None
            }
            None => {
                problems.push(at(&here, format!("`\"{key}\"` is missing: expected {hint}")));
                None
            }
        };
        let version = text_of("version", &mut problems, "a semver version such as \"1.0.0\"");
        if let Some(version) = &version {
            if let Err(err) = semver::Version::parse(version) {
                problems.push(at(
                    &format!("{here}/version"),
                    format!("`{version}` is not a semver version ({err}): write three numbers, such as \"1.0.0\""),
                ));
            }
        }
        let compatibility =
            text_of("compatibility", &mut problems, "\"exact\" or \"additive\"").and_then(|c| match c.as_str() {
                "exact" => Some(Compatibility::Exact),
                "additive" => Some(Compatibility::Additive),
                other => {
                    problems.push(at(
                        &format!("{here}/compatibility"),
                        format!(
                            "unknown compatibility `{other}`: \"exact\" (every object closed) or \"additive\" (objects \
                             open, new fields allowed)"
                        ),
                    ));
                    None
                }
            });
        let pointers = |key: &str, problems: &mut Vec<String>| -> Vec<String> {
            match entry.get(key) {
                None => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .enumerate()
                    .filter_map(|(i, item)| match item.as_str() {
                        Some(p) if p.is_empty() || p.starts_with('/') => Some(p.to_owned()),
                        _ => {
                            problems.push(at(
                                &format!("{here}/{key}/{i}"),
                                "expected an instance pointer such as \"/items/*/raw\"".to_owned(),
                            ));
                            None
                        }
                    })
                    .collect(),
                Some(other) => {
                    problems.push(at(
                        &format!("{here}/{key}"),
                        format!("expected an array of instance pointers, found {}", kind_of(other)),
                    ));
                    Vec::new()
                }
            }
        };
        let opaque = pointers("opaque", &mut problems);
        let sensitive = pointers("sensitive", &mut problems);
        let source = text_of("schema", &mut problems, "the path of the source schema, relative to the folder");
        let schema = source.as_deref().and_then(|source| {
            read_source(dir, &shown_dir, canonical_dir.as_deref(), source, &format!("{here}/schema"), &at)
                .map_err(|problem| problems.push(problem))
                .ok()
        });
        let error = entry.get("error").and_then(|error| {
            read_error(dir, &shown_dir, canonical_dir.as_deref(), name, version.as_deref(), error, &here, &at)
                .map_err(|found| problems.extend(found))
                .ok()
        });
        let (Some(version), Some(compatibility), Some(source), Some((shown, schema))) =
            (version, compatibility, source, schema)
        else {
            continue;
        };
        if problems.len() > before {
            continue;
        }
        let declared =
            Declared::new(name.clone(), version, compatibility).type_name(source).opaque(opaque).sensitive(sensitive);
        match OutputContract::from_source(&declared, &shown, schema) {
            Ok(contract) => {
                set.push(Ok(contract), None);
                if let Some(error) = error {
                    set.set_error_shape(contract.name(), error);
                }
            }
            Err(err) => problems.extend(err.problems().iter().map(ToString::to_string)),
        }
    }
    if problems.is_empty() {
        Ok(set)
    } else {
        Err(SnapshotError::new(problems))
    }
}

/// Reads an entry's `error`: `{"schema": "<file>", "message": "<JSON pointer>"}`, the
/// shape of the server's error answers, made into a schema the way a contract's source
/// is (no silent `{}`, the canonical form; objects left open, as an error answer may
/// carry more than the shape names).
#[allow(clippy::too_many_arguments)] // The context of the entry it reads, as `read` holds it.
fn read_error(
    dir: &Path,
    shown_dir: &str,
    canonical_dir: Option<&Path>,
    name: &str,
    version: Option<&str>,
    error: &Value,
    here: &str,
    at: &dyn Fn(&str, String) -> String,
) -> Result<ErrorShape, Vec<String>> {
    let here = format!("{here}/error");
    let Some(error) = error.as_object() else {
        return Err(vec![at(
            &here,
            format!(
                "expected an object such as {{\"schema\": \"src/{name}.error.json\", \"message\": \"/error\"}}, found {}",
                kind_of(error)
            ),
        )]);
    };
    let mut problems = Vec::new();
    for key in error.keys().filter(|k| !ERROR_KEYS.contains(&k.as_str())) {
        problems.push(at(
            &format!("{here}/{}", contract_runtime::schema::escape_pointer_token(key)),
            format!("unknown key `{key}`: an error shape has {}", ERROR_KEYS.join(", ")),
        ));
    }
    let mut text = |key: &str, hint: &str| match error.get(key) {
        Some(Value::String(text)) => Some(text.clone()),
        Some(other) => {
            problems.push(at(&format!("{here}/{key}"), format!("expected {hint}, found {}", kind_of(other))));
            None
        }
        None => {
            problems.push(at(&here, format!("`\"{key}\"` is missing: expected {hint}")));
            None
        }
    };
    let source = text("schema", "the path of the error shape's schema, relative to the folder");
    let message = text("message", "the JSON pointer of the message in an error answer, such as \"/error\"");
    let schema = source.as_deref().and_then(|source| {
        read_source(dir, shown_dir, canonical_dir, source, &format!("{here}/schema"), at)
            .map_err(|problem| problems.push(problem))
            .ok()
    });
    let (Some(source), Some(message), Some((shown, schema)), Some(version)) = (source, message, schema, version) else {
        return Err(problems);
    };
    if !problems.is_empty() {
        return Err(problems);
    }
    let declared =
        Declared::new(format!("{name}.error"), version.to_owned(), Compatibility::Additive).type_name(source);
    let schema = OutputContract::from_source(&declared, &shown, schema)
        .map_err(|err| err.problems().iter().map(ToString::to_string).collect::<Vec<_>>())?;
    ErrorShape::new(schema, &message).map_err(|why| vec![at(&format!("{here}/message"), why)])
}

/// Reads one source schema: `source` as `contracts.json` names it at `pointer`. Returns
/// the file as messages show it and its JSON.
fn read_source(
    dir: &Path,
    shown_dir: &str,
    canonical_dir: Option<&Path>,
    source: &str,
    pointer: &str,
    at: &dyn Fn(&str, String) -> String,
) -> Result<(String, Value), String> {
    let relative = Path::new(source);
    if relative.is_absolute() || relative.components().any(|c| matches!(c, Component::Prefix(_))) {
        return Err(at(pointer, format!("`{source}` is absolute: give the path relative to {shown_dir}")));
    }
    let path = dir.join(relative);
    let shown = format!("{shown_dir}/{}", normalized(relative).display());
    let text = std::fs::read_to_string(&path).map_err(|err| {
        if err.kind() == std::io::ErrorKind::NotFound {
            at(pointer, format!("{shown} does not exist"))
        } else {
            format!("{shown}: {err}")
        }
    })?;
    // Beside the generated files, a source would be taken for a contract of its own.
    let parent = path.canonicalize().ok().and_then(|p| p.parent().map(Path::to_path_buf));
    if parent.is_some() && parent.as_deref() == canonical_dir {
        return Err(at(
            pointer,
            format!(
                "{shown} sits in {shown_dir} itself, where the canonical files are written: move it to a subfolder \
                 such as {shown_dir}/src/ and name it there"
            ),
        ));
    }
    let value: Value = serde_json::from_str(&text).map_err(|err| not_json(&shown, &err))?;
    if !value.is_object() {
        return Err(format!("{shown}: at the root: expected a JSON Schema object, found {}", kind_of(&value)));
    }
    if let Some(dialect) = value.get("$schema") {
        if dialect.as_str().is_none_or(|d| !d.trim_end_matches('#').ends_with("/draft/2020-12/schema")) {
            return Err(format!(
                "{shown}: at `/$schema`: {dialect} is not JSON Schema 2020-12: emit 2020-12 (zod 4's \
                 `z.toJSONSchema()` and pydantic do by default) or remove `$schema`"
            ));
        }
    }
    if let Err(problem) = crate::evolution::check_schema(&value) {
        let line = line_of(&text, problem.pointer()).map_or_else(String::new, |l| format!(" (line {l})"));
        return Err(format!("{shown}: at `{}`{line}: {}", problem.pointer(), problem.message()));
    }
    Ok((shown, value))
}

/// `path` without `.` components, as messages show it.
fn normalized(path: &Path) -> PathBuf {
    path.components().filter(|c| !matches!(c, Component::CurDir)).collect()
}

fn one(problem: String) -> SnapshotError {
    SnapshotError::new(vec![problem])
}

fn not_json(shown: &str, err: &serde_json::Error) -> String {
    format!(
        "{shown}: line {} column {}: not valid JSON ({})",
        err.line(),
        err.column(),
        strip_position(&err.to_string())
    )
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The options of `tool-contracts schemas`.
#[derive(Debug, clap::Args)]
pub struct SchemasArgs {
    /// The contract folder: contracts.json and the canonical files written beside it
    /// (relative to the current directory).
    #[arg(value_name = "DIR", default_value = DEFAULT_DIR)]
    dir: PathBuf,

    /// Compare instead of writing; fail on drift or an insufficient version bump.
    #[arg(long)]
    check: bool,

    /// Also judge every change since this git revision (for example origin/main), so a
    /// regenerated or hand-edited folder cannot hide a change.
    #[arg(long, value_name = "REV", requires = "check")]
    against: Option<String>,

    /// How to print the review.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,

    /// Instead of writing DIR, suggest contracts from FILE (what `tool-contracts proxy
    /// --observe FILE` recorded): list the optional properties present in every observed
    /// result and the properties the schema does not name, and write DIR/suggested/
    /// (contracts.json and src/), suggestions to review before they become contracts.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["check", "against"])]
    suggest: Option<PathBuf>,
}

/// What `tool-contracts schemas --help` adds.
pub const SCHEMAS_HELP: &str = "DIR/contracts.json maps each contract (tool) name to its declaration:
  {\"coverage_gaps\": {\"version\": \"1.2.0\", \"compatibility\": \"exact\",
                     \"schema\": \"src/coverage_gaps.json\", \"opaque\": [\"/raw\"]}}
`schema` is a JSON Schema 2020-12 file relative to DIR, in a subfolder (written by hand,
by zod 4's z.toJSONSchema() or by pydantic's model_json_schema()); `opaque` and
`sensitive` (optional) list instance pointers. `error` (optional) declares how the
server answers a failure as an ordinary result:
  \"error\": {\"schema\": \"src/task_status.error.json\", \"message\": \"/error\"}
written as DIR/<name>.error.json; the proxy answers a result that breaks the contract and
matches it with isError, code tool_execution_error and the message at that pointer. DIR/<name>.json (`/` in a name written as
`__`) and DIR/inventory.json are written: the folder `tool-contracts proxy --contracts DIR`
and ContractSet::load_dir read. A changed schema needs the version bump its change
needs (breaking: major, additive: minor); otherwise nothing is written and the fix
line says which \"version\" to set.

Exit status:
  0  DIR was written, or is up to date (--check)
  1  the check failed (drift, a version bump too small, a change since --against not
     covered), or a write was refused for a version bump too small
  2  usage error, or the contracts could not be read (contracts.json or a source schema:
     each problem names the file and the JSON pointer)

--suggest FILE reads what `tool-contracts proxy --observe FILE` recorded and writes
DIR/suggested/ (contracts.json and src/): suggestions to review, never contracts by
themselves; it lists the optional properties present in every observed result and the
properties a schema does not name.

Examples:
  tool-contracts schemas                                   write contracts/
  tool-contracts schemas --suggest observed.json           suggest contracts/suggested/
  tool-contracts schemas --check --against origin/main     in CI
  tool-contracts schemas --check --format json schemas-ts  the review as JSON";

/// Runs `tool-contracts schemas` with parsed options; `command` is how messages name the
/// command that writes the folder (`tool-contracts schemas`).
#[must_use]
pub fn run(args: &SchemasArgs, command: &str) -> ExitCode {
    if let Some(file) = &args.suggest {
        return crate::suggest::run(file, &args.dir);
    }
    let contracts = match read(&args.dir) {
        Ok(contracts) => contracts,
        Err(err) => {
            eprintln!("{err}");
            eprintln!("{}: nothing was written", cli::shown(&args.dir));
            return ExitCode::from(2);
        }
    };
    let dir_arg = if args.dir == Path::new(DEFAULT_DIR) { String::new() } else { format!(" {}", args.dir.display()) };
    // The base revision is read with git from the folder itself, wherever it is run from
    // (the folder exists: its contracts.json was read).
    let dir = args.dir.canonicalize().unwrap_or_else(|_| args.dir.clone());
    let job = Job {
        root: dir.clone(),
        dir,
        check: args.check,
        against: args.against.as_deref(),
        json: args.format == Format::Json,
        runtime_dirs: &[],
        manifest: Some((format!("{}/{MANIFEST}", cli::shown(&args.dir)), format!("{command}{dir_arg}"))),
    };
    match cli::schemas(&job, &contracts, None) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder with `manifest` and the sources `(path, schema)`.
    fn folder(name: &str, manifest: &Value, sources: &[(&str, Value)]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("manifest-unit-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join(MANIFEST), manifest.to_string()).unwrap();
        for (path, schema) in sources {
            std::fs::write(dir.join(path), schema.to_string()).unwrap();
        }
        dir
    }

    fn object() -> Value {
        serde_json::json!({ "type": "object", "properties": { "id": { "type": "string" }, "token": { "type": "string" } } })
    }

    #[test]
    fn names_that_write_one_file_are_refused_and_distinct_names_are_not() {
        let entry = serde_json::json!({ "version": "1.0.0", "compatibility": "exact", "schema": "src/a.json" });
        let clash = folder("clash", &serde_json::json!({ "a/b": entry, "a__b": entry }), &[("src/a.json", object())]);
        let err = read(&clash).unwrap_err().to_string();
        assert!(err.contains("contracts `a/b` and `a__b` would both be written to"), "{err}");
        assert!(err.contains("a__b.json: rename one"), "{err}");
        let fine = folder("distinct", &serde_json::json!({ "a/b": entry, "a_b": entry }), &[("src/a.json", object())]);
        assert_eq!(read(&fine).unwrap().len(), 2);
    }

    #[test]
    fn sensitive_and_opaque_pointers_reach_the_contract() {
        let manifest = serde_json::json!({ "agent": {
            "version": "1.0.0", "compatibility": "additive", "schema": "./src/a.json",
            "sensitive": ["/token"], "opaque": [],
        } });
        let dir = folder("sensitive", &manifest, &[("src/a.json", object())]);
        let set = read(&dir).unwrap();
        let contract = set.get("agent").unwrap();
        assert_eq!(contract.sensitive_pointers(), ["/token"]);
        assert_eq!(contract.type_name(), "./src/a.json", "the inventory records the source as written");
        // A pointer that is not one is refused with where it is written.
        let manifest = serde_json::json!({ "agent": {
            "version": "1.0.0", "compatibility": "additive", "schema": "src/a.json", "sensitive": ["token"],
        } });
        let dir = folder("not-a-pointer", &manifest, &[("src/a.json", object())]);
        let err = read(&dir).unwrap_err().to_string();
        assert!(err.contains("at `/agent/sensitive/0`"), "{err}");
        assert!(err.contains("expected an instance pointer such as \"/items/*/raw\""), "{err}");
    }

    #[test]
    fn an_error_shape_is_read_beside_its_contract_and_misdeclared_ones_are_refused() {
        let shape = serde_json::json!({
            "type": "object",
            "properties": { "success": { "const": false }, "error": { "type": "string" } },
            "required": ["success", "error"],
        });
        let with = |error: Value| {
            serde_json::json!({ "task": {
                "version": "1.0.0", "compatibility": "exact", "schema": "src/a.json", "error": error,
            } })
        };
        let sources = [("src/a.json", object()), ("src/e.json", shape.clone())];
        let dir =
            folder("error-shape", &with(serde_json::json!({ "schema": "src/e.json", "message": "/error" })), &sources);
        let set = read(&dir).unwrap();
        let read_shape = set.error_shape("task").expect("the error shape is read");
        assert_eq!(read_shape.message_pointer(), "/error");
        assert_eq!(read_shape.schema().name(), "task.error");
        // Objects stay open: an error answer may carry more than the shape names.
        assert!(read_shape.matches(&serde_json::json!({ "success": false, "error": "x", "code": 4 })));
        let files = schemas::render(&set).unwrap();
        assert!(files.contains_key("task.error.json"), "{:?}", files.keys());

        for (error, expected) in [
            (serde_json::json!({ "schema": "src/e.json", "message": "error" }), "at `/task/error/message`"),
            (serde_json::json!({ "schema": "src/e.json", "message": "/error", "code": 1 }), "unknown key `code`"),
            (serde_json::json!({ "message": "/error" }), "`\"schema\"` is missing"),
            (serde_json::json!({ "schema": "src/none.json", "message": "/error" }), "src/none.json does not exist"),
            (serde_json::json!("src/e.json"), "expected an object such as"),
        ] {
            let dir = folder("error-shape-bad", &with(error.clone()), &sources);
            let err = read(&dir).unwrap_err().to_string();
            assert!(err.contains(expected), "{error}: {err}");
        }
        // A silent `{}` in the shape is refused as in a contract.
        let loose = serde_json::json!({ "type": "object", "properties": { "error": {} } });
        let dir = folder(
            "error-shape-loose",
            &with(serde_json::json!({ "schema": "src/e.json", "message": "/error" })),
            &[("src/a.json", object()), ("src/e.json", loose)],
        );
        let err = read(&dir).unwrap_err().to_string();
        assert!(err.contains("accepts any JSON value"), "{err}");
    }

    #[test]
    fn a_source_outside_the_folder_by_absolute_path_is_refused() {
        let absolute = std::env::temp_dir().join("elsewhere.json");
        let manifest = serde_json::json!({ "t": {
            "version": "1.0.0", "compatibility": "exact", "schema": absolute.display().to_string(),
        } });
        let dir = folder("absolute", &manifest, &[]);
        let err = read(&dir).unwrap_err().to_string();
        assert!(err.contains("is absolute: give the path relative to"), "{err}");
    }
}
