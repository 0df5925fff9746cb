//! The runtime's folders are its layers — `contract` (1), `serve` (2), `adapters` (3) —
//! and imports run downward only. This test reads every source file and fails on a path
//! that runs up a layer, and on a path through a crate-root alias (`crate::schema`,
//! `crate::Pipeline`), which would hide the layer it reaches.

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
    for line in lib.lines().map(str::trim) {
        let Some(rest) = line.strip_prefix("pub use ") else { continue };
        let rest = rest.trim_end_matches(';');
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
    // Clean control: a downward path and a macro's `$crate` pass.
    assert!(violations("x.rs", 1, "use crate::contract::schema;\n$crate::ContractSet::new()", &aliases).is_empty());
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
    let start = readme.find("```rust\n").expect("the README has a Rust example");
    let end = start + readme[start..].find("\n```\n").expect("the example ends") + "\n```".len();
    let example = &readme[start..end];
    let in_docs: String = lib
        .lines()
        .filter_map(|line| line.strip_prefix("//!"))
        .map(|line| line.strip_prefix(' ').unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(example.lines().count() > 10, "the README example was found whole: {example}");
    assert!(in_docs.contains(example), "the crate docs' quickstart differs from the README's example");
}
