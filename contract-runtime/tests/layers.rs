//! The runtime's folders are its layers — `contract` (1), `serve` (2), `adapters` (3) —
//! and imports run downward only. This test reads every source file and fails on a path
//! that runs up a layer, and on a path through a crate-root alias (`crate::schema`,
//! `crate::Pipeline`), which would hide the layer it reaches. Doc comments link the public
//! paths, the crate-root ones, and are not imports.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The layer folders, lowest first.
const LAYERS: [&str; 3] = ["contract", "serve", "adapters"];

fn layer_of_folder(folder: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| *layer == folder)
}

/// What each crate-root name leads to: the root aliases of modules
/// (`pub use contract::{schema, …}`) and of items (`pub use schema::{keys, …}`), read from
/// `lib.rs` itself so that the test follows the crate as it is.
fn root_aliases(lib: &str) -> BTreeMap<String, usize> {
    let mut modules: BTreeMap<String, usize> = BTreeMap::new();
    let mut aliases = BTreeMap::new();
    // One statement at a time, wherever rustfmt broke its lines; comments left out.
    let code: String = lib
        .lines()
        .map(str::trim)
        .filter(|line| !line.starts_with("//") && !line.starts_with('#'))
        .collect::<Vec<_>>()
        .join(" ");
    for statement in code.split(';').map(str::trim) {
        let Some(rest) = statement.strip_prefix("pub use ") else { continue };
        let Some((head, names)) = rest.split_once("::") else { continue };
        let names: Vec<&str> = names
            .trim_start_matches('{')
            .trim_end_matches('}')
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .collect();
        let layer = layer_of_folder(head).or_else(|| modules.get(head).copied());
        let Some(layer) = layer else { continue };
        for name in names {
            if layer_of_folder(head).is_some() {
                modules.insert(name.to_owned(), layer);
            }
            aliases.insert(name.to_owned(), layer);
        }
    }
    aliases
}

/// The `crate::…` paths of one source file that break the rules, as messages.
fn violations(file: &str, layer: usize, text: &str, aliases: &BTreeMap<String, usize>) -> Vec<String> {
    let mut found = Vec::new();
    for (number, line) in text.lines().enumerate() {
        // A doc comment's link names the public path (the layer folders are private);
        // it is not an import.
        if line.trim_start().starts_with("///") || line.trim_start().starts_with("//!") {
            continue;
        }
        if let Some(at) = extern_name_path(line) {
            found.push(format!(
                "{file}:{}: `{}` reaches the crate through its own name (`extern crate self`); write the layer path",
                number + 1,
                line[at..].split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).next().unwrap_or_default()
            ));
        }
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            // `$crate::` in a macro body is the user's path to the crate root: not an import.
            let is_macro_path = rest[..at].ends_with('$');
            let after = &rest[at + "crate::".len()..];
            let name: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            rest = after;
            if is_macro_path || name.is_empty() {
                continue;
            }
            let target = if let Some(target) = layer_of_folder(&name) {
                target
            } else if let Some(target) = aliases.get(&name) {
                found.push(format!(
                    "{file}:{}: `crate::{name}` is a crate-root alias; write the layer path (it leads to `{}`)",
                    number + 1,
                    LAYERS[*target]
                ));
                *target
            } else {
                continue;
            };
            if target > layer {
                found.push(format!(
                    "{file}:{}: `crate::{name}` runs up from `{}` to `{}`",
                    number + 1,
                    LAYERS[layer],
                    LAYERS[target]
                ));
            }
        }
    }
    found
}

/// Where a line of code names a path through `::contract_runtime` (the crate's own name,
/// which only the derive's expansion needs), outside a string or a quoted name.
fn extern_name_path(line: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = line[from..].find("contract_runtime::") {
        let at = from + found;
        from = at + 1;
        let before = &line[..at];
        let unescaped_quotes = before.matches('"').count() - before.matches("\\\"").count();
        let quoted = before.ends_with('`') || before.ends_with("\\\"") || unescaped_quotes % 2 == 1;
        let part_of_name = before.ends_with(|c: char| c.is_alphanumeric() || c == '_');
        if !quoted && !part_of_name {
            return Some(at);
        }
    }
    None
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("a readable source folder") {
        let path = entry.expect("a readable entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn imports_run_down_the_layers_only() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let aliases = root_aliases(&fs::read_to_string(src.join("lib.rs")).unwrap());
    // The aliases were found: without them the alias rule could not fail.
    for name in ["schema", "pipeline", "wire", "Pipeline", "ToolOutput", "Report"] {
        assert!(aliases.contains_key(name), "lib.rs no longer re-exports `{name}`: {aliases:?}");
    }
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut found = Vec::new();
    let mut per_layer = [0usize; 3];
    for path in &files {
        let relative = path.strip_prefix(&src).unwrap();
        let folder = relative.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
        // lib.rs and the derive's hidden support module sit above every layer.
        let Some(layer) = layer_of_folder(&folder) else { continue };
        per_layer[layer] += 1;
        let text = fs::read_to_string(path).unwrap();
        found.extend(violations(&relative.display().to_string(), layer, &text, &aliases));
    }
    assert!(per_layer.iter().all(|n| *n > 0), "every layer folder holds sources: {per_layer:?}");
    assert!(found.is_empty(), "imports against the layers:\n{}", found.join("\n"));
}

#[test]
fn the_check_sees_an_upward_import_and_an_alias() {
    let aliases =
        root_aliases("pub use contract::{schema};\npub use serve::{pipeline, wire};\npub use pipeline::{Pipeline};\n");
    // Clean control: a downward path, a macro's `$crate` and a doc link's public path pass.
    assert!(violations("x.rs", 1, "use crate::contract::schema;\n$crate::ContractSet::new()", &aliases).is_empty());
    assert!(violations("x.rs", 0, "    /// See [`crate::pipeline`].", &aliases).is_empty());
    // The crate's own name in code fails; in a message or a quoted name it passes.
    let own = violations("x.rs", 2, "#[schemars(transform = contract_runtime::opaque)]", &aliases);
    assert_eq!(own.len(), 1, "{own:?}");
    assert!(own[0].contains("`contract_runtime::opaque` reaches the crate through its own name"), "{own:?}");
    assert!(violations("x.rs", 2, "let m = \"use `contract_runtime::opaque`\";", &aliases).is_empty());
    assert!(violations("x.rs", 2, "    `contract_runtime::rmcp::Json` for it\",", &aliases).is_empty());
    assert!(violations("x.rs", 2, r#"let m = "with = \"contract_runtime::OpaqueMap\"";"#, &aliases).is_empty());
    // An upward path fails, naming the file, the line and both layers.
    let up = violations("x.rs", 0, "\nuse crate::serve::wire::META_KEY;", &aliases);
    assert_eq!(up, ["x.rs:2: `crate::serve` runs up from `contract` to `serve`"]);
    // A root alias fails even when it runs down, and counts as the layer it reaches.
    let alias = violations("x.rs", 0, "let p: crate::Pipeline;", &aliases);
    assert_eq!(alias.len(), 2, "{alias:?}");
    assert!(alias[0].contains("crate-root alias") && alias[1].contains("runs up from `contract` to `serve`"));
}

#[test]
fn the_crate_docs_open_with_the_readme_example() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = fs::read_to_string(root.join("../README.md")).unwrap();
    let lib = fs::read_to_string(root.join("src/lib.rs")).unwrap();
    // The crate docs include the example's one file; the README shows it whole.
    assert!(
        lib.contains("#![doc = include_str!(\"../docs/quickstart.md\")]"),
        "lib.rs no longer includes the quickstart"
    );
    let example = fs::read_to_string(root.join("docs/quickstart.md")).unwrap();
    assert!(example.starts_with("```rust\n") && example.ends_with("\n```\n"), "{example}");
    assert!(example.lines().count() > 10, "the example is whole: {example}");
    assert!(readme.contains(&example), "README.md's example differs from contract-runtime/docs/quickstart.md");
}
