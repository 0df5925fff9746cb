//! `tool-contracts schemas --suggest FILE`: contracts suggested from what `tool-contracts
//! proxy --observe FILE` recorded, for a person to review, never applied by themselves.
//!
//! For each observed tool it lists the properties present in every observed result that
//! the tool's schema leaves optional (candidates for `required`) and the properties the
//! schema does not name (candidates to declare), and writes a contract folder source
//! beside the contract folder: `DIR/suggested/contracts.json` (each contract `additive`,
//! version `0.1.0`) and `DIR/suggested/src/<tool>.json`, a JSON Schema built from the
//! observed types whose `$comment` says it is a suggestion and from how many results.
//! `tool-contracts schemas DIR/suggested` makes it a folder the proxy loads; review each
//! schema first (a type seen once is a guess, a property seen in every result may still
//! be optional).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use contract_runtime::observed::{Named, Observed, ToolObserved};
use serde_json::{json, Map, Value};

/// The folder under the contract folder the suggestion is written to.
pub const SUGGESTED_DIR: &str = "suggested";

/// The suggestion made from one observation file.
#[derive(Debug, Default)]
pub struct Suggestion {
    /// `contracts.json` of the suggested folder.
    pub manifest: Value,
    /// Each suggested schema, by its path relative to the suggested folder.
    pub schemas: BTreeMap<String, Value>,
    /// What to review, one line each (tool names and pointers escaped).
    pub report: String,
}

/// Reads an observation file.
///
/// # Errors
///
/// An unreadable file, or one that is not what `--observe` writes.
pub fn read(path: &Path) -> Result<Observed, String> {
    let text = std::fs::read_to_string(path).map_err(|err| format!("{}: {err}", path.display()))?;
    serde_json::from_str(&text)
        .map_err(|err| format!("{}: not a file `tool-contracts proxy --observe` writes ({err})", path.display()))
}

/// The suggestion for `observed`.
#[must_use]
pub fn suggest(observed: &Observed) -> Suggestion {
    let mut suggestion = Suggestion { manifest: json!({}), ..Suggestion::default() };
    let mut taken: Vec<String> = Vec::new();
    for (tool, seen) in &observed.tools {
        let shown = escaped(tool);
        let _ = writeln!(suggestion.report, "{shown}: {} results observed", seen.results);
        if seen.dropped > 0 {
            let _ = writeln!(
                suggestion.report,
                "  {} values past the observation's bounds were not recorded",
                seen.dropped
            );
        }
        let always: Vec<&str> = seen
            .pointers
            .iter()
            .filter(|(pointer, p)| p.schema == Some(Named::Optional) && p.count == objects_of(seen, parent(pointer)))
            .map(|(pointer, _)| pointer.as_str())
            .collect();
        if !always.is_empty() {
            let list = always.iter().map(|p| escaped(p)).collect::<Vec<_>>().join(", ");
            let _ = writeln!(suggestion.report, "  optional in the schema, present in every result: {list}");
        }
        let unnamed: Vec<String> = seen
            .pointers
            .iter()
            .filter(|(_, p)| p.schema == Some(Named::Undeclared))
            .map(|(pointer, p)| format!("{} ({} of {})", escaped(pointer), p.count, objects_of(seen, parent(pointer))))
            .collect();
        if !unnamed.is_empty() {
            let _ = writeln!(suggestion.report, "  not named by the schema: {}", unnamed.join(", "));
        }
        for (counts, side) in [
            (
                &seen.only_in_text,
                "in the text block and not in structuredContent (a client reading structuredContent never sees them)",
            ),
            (&seen.only_in_structured, "in structuredContent and not in the text block"),
        ] {
            if !counts.is_empty() {
                let list = counts.iter().map(|(p, n)| format!("{} ({n} results)", escaped(p))).collect::<Vec<_>>();
                let _ = writeln!(suggestion.report, "  {side}: {}", list.join(", "));
            }
        }
        let Some(schema) = schema_at(seen, "") else { continue };
        let mut schema = schema;
        if let Some(object) = schema.as_object_mut() {
            object.insert(
                "$comment".to_owned(),
                Value::String(format!(
                    "Suggested by `tool-contracts schemas --suggest` from {} observed results of `{tool}`: a \
                     suggestion to review (each type, each `required`) before it becomes a contract",
                    seen.results
                )),
            );
        }
        let file = unique(&file_stem(tool), &mut taken);
        let source = format!("src/{file}.json");
        suggestion.manifest[tool.as_str()] =
            json!({ "version": "0.1.0", "compatibility": "additive", "schema": source });
        suggestion.schemas.insert(source, schema);
    }
    if observed.tools_dropped > 0 {
        let _ = writeln!(
            suggestion.report,
            "{} results of tools past the observation's bound were not recorded",
            observed.tools_dropped
        );
    }
    suggestion
}

/// Writes `suggestion` into `dir` (the suggested folder): `contracts.json` and each schema.
///
/// # Errors
///
/// An I/O error, naming the file.
pub fn write(dir: &Path, suggestion: &Suggestion) -> Result<Vec<PathBuf>, String> {
    let mut written = Vec::new();
    let mut put = |relative: &str, value: &Value| -> Result<(), String> {
        let path = dir.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|err| format!("{}: {err}", parent.display()))?;
        }
        let mut text = serde_json::to_string_pretty(value).map_err(|err| err.to_string())?;
        text.push('\n');
        std::fs::write(&path, text).map_err(|err| format!("{}: {err}", path.display()))?;
        written.push(path);
        Ok(())
    };
    put(contract_runtime::MANIFEST_FILE, &suggestion.manifest)?;
    for (relative, schema) in &suggestion.schemas {
        put(relative, schema)?;
    }
    Ok(written)
}

/// Runs `tool-contracts schemas --suggest FILE DIR`.
#[must_use]
pub fn run(file: &Path, dir: &Path) -> ExitCode {
    let observed = match read(file) {
        Ok(observed) => observed,
        Err(err) => {
            eprintln!("{err}");
            return ExitCode::from(2);
        }
    };
    let suggestion = suggest(&observed);
    let target = dir.join(SUGGESTED_DIR);
    match write(&target, &suggestion) {
        Ok(_) => {
            print!("{}", suggestion.report);
            println!(
                "suggested contracts written to {shown}/ from {file}: SUGGESTIONS TO REVIEW, not contracts yet. \
                 Review each schema in {shown}/src/, then run `tool-contracts schemas {shown}` (or move the \
                 entries you keep into {dir}/contracts.json)",
                shown = crate::cli::shown(&target),
                file = crate::cli::shown(file),
                dir = crate::cli::shown(dir),
            );
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("{err}");
            ExitCode::from(2)
        }
    }
}

/// The pointer of the value that holds `pointer`'s.
fn parent(pointer: &str) -> &str {
    pointer.rfind('/').map_or("", |at| &pointer[..at])
}

/// How many objects stood at `pointer`.
fn objects_of(seen: &ToolObserved, pointer: &str) -> u64 {
    seen.pointers.get(pointer).and_then(|p| p.types.get("object")).copied().unwrap_or(0)
}

/// The schema built from what was observed at `pointer` and below.
fn schema_at(seen: &ToolObserved, pointer: &str) -> Option<Value> {
    let here = seen.pointers.get(pointer)?;
    let mut types: Vec<&str> = here.types.keys().map(String::as_str).collect();
    if types.contains(&"integer") && types.contains(&"number") {
        types.retain(|t| *t != "integer");
    }
    let mut schema = Map::new();
    schema.insert(
        "type".to_owned(),
        match types.as_slice() {
            [one] => json!(one),
            many => json!(many),
        },
    );
    if types.contains(&"object") {
        let objects = here.types.get("object").copied().unwrap_or(0);
        let mut properties = Map::new();
        let mut required = Vec::new();
        for (child, observed) in children(seen, pointer) {
            let key = contract_runtime::pointer::unescape(child.rsplit('/').next().unwrap_or_default());
            if let Some(sub) = schema_at(seen, &child) {
                properties.insert(key.clone(), sub);
                if observed.count == objects {
                    required.push(Value::String(key));
                }
            }
        }
        if !properties.is_empty() {
            schema.insert("properties".to_owned(), Value::Object(properties));
        }
        if !required.is_empty() {
            schema.insert("required".to_owned(), Value::Array(required));
        }
    }
    if types.contains(&"array") {
        if let Some(items) = schema_at(seen, &format!("{pointer}/*")) {
            schema.insert("items".to_owned(), items);
        }
    }
    Some(Value::Object(schema))
}

/// The properties observed directly below the object at `pointer` (not array items).
fn children<'a>(
    seen: &'a ToolObserved,
    pointer: &'a str,
) -> impl Iterator<Item = (String, &'a contract_runtime::observed::PointerObserved)> + 'a {
    seen.pointers.iter().filter_map(move |(child, observed)| {
        let rest = child.strip_prefix(pointer)?.strip_prefix('/')?;
        (!rest.contains('/') && rest != "*").then(|| (child.clone(), observed))
    })
}

/// A file stem for `tool`: `/` written as `__` (as the contract folder writes it), every
/// other character that is not a letter, digit, `.`, `_` or `-` as `_`, a leading `.` as
/// `_`, at most 100 characters.
fn file_stem(tool: &str) -> String {
    let mut stem: String = tool
        .replace('/', "__")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
        .take(100)
        .collect();
    if stem.is_empty() || stem.starts_with('.') {
        stem.insert(0, '_');
    }
    stem
}

/// `stem`, or `stem-2`, `stem-3`, … when taken.
fn unique(stem: &str, taken: &mut Vec<String>) -> String {
    let mut name = stem.to_owned();
    let mut n = 1;
    while taken.contains(&name) {
        n += 1;
        name = format!("{stem}-{n}");
    }
    taken.push(name.clone());
    name
}

/// `text` with control characters written as escapes, at most 200 characters.
fn escaped(text: &str) -> String {
    let mut out: String = text.chars().take(200).flat_map(char::escape_debug).collect();
    if text.chars().count() > 200 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_are_not_file_names_become_file_names() {
        let mut taken = Vec::new();
        assert_eq!(unique(&file_stem("qe/coverage/gaps"), &mut taken), "qe__coverage__gaps");
        assert_eq!(unique(&file_stem("../../etc/passwd"), &mut taken), "_..__..__etc__passwd");
        assert_eq!(unique(&file_stem("a b\u{0}c"), &mut taken), "a_b_c");
        assert_eq!(unique(&file_stem("a?b:c"), &mut taken), "a_b_c-2");
        assert_eq!(file_stem(&"x".repeat(500)).len(), 100);
        assert_eq!(file_stem(""), "_");
    }

    #[test]
    fn a_suggestion_requires_what_every_result_had_and_lists_what_the_schema_does_not_name() {
        let schema = json!({
            "type": "object",
            "properties": { "id": { "type": "string" }, "note": { "type": ["string", "null"] } },
            "required": ["id"],
        });
        let mut observed = Observed::default();
        for value in [
            json!({ "id": "a", "note": "x", "extra": 1, "items": [{ "n": 1 }, { "n": 2.5, "m": true }] }),
            json!({ "id": "b", "note": null, "items": [] }),
        ] {
            observed.record("t/x", &value, Some(&schema));
        }
        let suggestion = suggest(&observed);
        let source = &suggestion.manifest["t/x"]["schema"];
        assert_eq!(source, "src/t__x.json");
        let made = &suggestion.schemas["src/t__x.json"];
        assert_eq!(made["required"], json!(["id", "items", "note"]));
        assert_eq!(made["properties"]["note"]["type"], json!(["null", "string"]));
        assert_eq!(made["properties"]["extra"]["type"], "integer");
        assert_eq!(made["properties"]["items"]["items"]["properties"]["n"]["type"], "number");
        assert_eq!(made["properties"]["items"]["items"]["required"], json!(["n"]));
        assert!(made["$comment"].as_str().unwrap().contains("a suggestion to review"));
        assert!(
            suggestion.report.contains("optional in the schema, present in every result: /note"),
            "{}",
            suggestion.report
        );
        assert!(
            suggestion.report.contains("not named by the schema: /extra (1 of 2), /items (2 of 2)"),
            "{}",
            suggestion.report
        );
        // No value observed is in the suggestion.
        let all = format!("{}{:?}{}", suggestion.manifest, suggestion.schemas, suggestion.report);
        assert!(!all.contains("\"a\"") && !all.contains("2.5"), "{all}");
    }
}
