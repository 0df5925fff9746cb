//! `cargo xtask circles`: no module of a crate imports, through any chain of sibling
//! modules, a module that imports it back. A circle means two files hold one concern, or
//! one file holds two: the fix is to move the shared piece down into a module of its own,
//! never to merge the files back.
//!
//! The check reads every crate's `src/` folder: each file is a module (`a/mod.rs` and
//! `a.rs` are `a`), each `crate::`, `super::` or `self::` path an edge to the deepest
//! module it names. A module's own parents and children are not edges (a parent declares
//! its children; a child uses its parent's shared vocabulary). Test modules, comments and
//! doc comments are left out.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::project_root;

/// The crates whose sources are checked, by folder.
const CRATES: [&str; 7] = [
    "contract-derive",
    "contract-runtime",
    "contract-tools",
    "contract-audit",
    "contract-proxy",
    "tool-contracts-cli",
    "xtask",
];

pub(crate) fn main() -> ExitCode {
    match run() {
        Ok(0) => ExitCode::SUCCESS,
        Ok(found) => {
            eprintln!("circles: {found} module circle(s); move the shared piece into a module of its own");
            ExitCode::FAILURE
        }
        Err(message) => {
            eprintln!("circles: {message}");
            ExitCode::from(2)
        }
    }
}

/// Checks every crate; prints each circle and returns how many there are.
pub(crate) fn run() -> Result<usize, String> {
    let root = project_root();
    let mut found = 0;
    for name in CRATES {
        let src = root.join(name).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files).map_err(|e| format!("cannot read {}: {e}", src.display()))?;
        let mut sources = BTreeMap::new();
        for file in files {
            let text = fs::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            sources.insert(module_of(file.strip_prefix(&src).expect("under src")), text);
        }
        for circle in circles(&sources) {
            println!("{name}: {}", circle.join(" <-> "));
            found += 1;
        }
    }
    Ok(found)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// The module path of a file under `src/`: `a/b.rs` and `a/b/mod.rs` are `a::b`; the
/// crate root is empty.
fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if let Some(last) = parts.last_mut() {
        *last = last.trim_end_matches(".rs").to_owned();
    }
    if parts.last().is_some_and(|last| matches!(last.as_str(), "mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// The module circles among `sources` (module path → text), each as its members'
/// paths (`a/b`, `lib` for the root), sorted.
fn circles(sources: &BTreeMap<Vec<String>, String>) -> Vec<Vec<String>> {
    let modules: Vec<&Vec<String>> = sources.keys().collect();
    let index: BTreeMap<&Vec<String>, usize> = modules.iter().enumerate().map(|(i, m)| (*m, i)).collect();
    let edges: Vec<Vec<usize>> = modules
        .iter()
        .map(|module| {
            let mut to: Vec<usize> = imports(module, &sources[*module], sources).iter().map(|m| index[m]).collect();
            to.sort_unstable();
            to.dedup();
            to
        })
        .collect();
    let mut found: Vec<Vec<String>> = strongly_connected(&edges)
        .into_iter()
        .filter(|component| component.len() > 1)
        .map(|component| {
            let mut names: Vec<String> = component
                .iter()
                .map(|i| if modules[*i].is_empty() { "lib".to_owned() } else { modules[*i].join("/") })
                .collect();
            names.sort();
            names
        })
        .collect();
    found.sort();
    found
}

/// The modules of `sources` that `module`'s code names, its parents and children left out.
fn imports(module: &[String], text: &str, sources: &BTreeMap<Vec<String>, String>) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for line in code_lines(text) {
        let mut rest = line;
        while let Some(at) = find_path(rest) {
            let path = &rest[at..];
            let end = path.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(path.len());
            let segments: Vec<&str> = path[..end].split("::").filter(|s| !s.is_empty()).collect();
            rest = &path[end..];
            let Some(target) = resolve(module, &segments, sources) else { continue };
            let related = target.starts_with(module) || module.starts_with(&target);
            if !related {
                found.push(target);
            }
        }
    }
    found
}

/// Where the next `crate::`, `super::` or `self::` path starts in `text`.
fn find_path(text: &str) -> Option<usize> {
    ["crate::", "super::", "self::"]
        .iter()
        .filter_map(|head| {
            let mut from = 0;
            while let Some(found) = text[from..].find(head) {
                let at = from + found;
                let part_of_word =
                    text[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$' || c == ':');
                if !part_of_word {
                    return Some(at);
                }
                from = at + head.len();
            }
            None
        })
        .min()
}

/// The deepest module of `sources` that `segments` (a path written in `module`) names:
/// the module the path starts from when it names an item there.
fn resolve(module: &[String], segments: &[&str], sources: &BTreeMap<Vec<String>, String>) -> Option<Vec<String>> {
    let (mut at, rest): (Vec<String>, &[&str]) = match segments.split_first()? {
        (&"crate", rest) => (Vec::new(), rest),
        (&"self", rest) => (module.to_vec(), rest),
        (&"super", _) => {
            let ups = segments.iter().take_while(|s| **s == "super").count();
            (module[..module.len().checked_sub(ups)?].to_vec(), &segments[ups..])
        }
        _ => return None,
    };
    let mut deepest = Some(at.clone());
    for segment in rest {
        at.push((*segment).to_owned());
        if sources.contains_key(&at) {
            deepest = Some(at.clone());
        } else {
            break;
        }
    }
    deepest
}

/// The lines of `text` that are code: comments and the unit tests left out.
fn code_lines(text: &str) -> impl Iterator<Item = &str> {
    let tests = text.find("#[cfg(test)]\nmod tests").unwrap_or(text.len());
    text[..tests].lines().filter(|line| !line.trim_start().starts_with("//"))
}

/// Tarjan's strongly connected components of the graph `edges` (node → its targets).
fn strongly_connected(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct State<'e> {
        edges: &'e [Vec<usize>],
        next: usize,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        found: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State<'_>, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &s.edges[v] {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(index) if s.on_stack[w] => s.low[v] = s.low[v].min(index),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            s.found.push(component);
        }
    }
    let n = edges.len();
    let mut state = State {
        edges,
        next: 0,
        index: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on_stack: vec![false; n],
        found: Vec::new(),
    };
    for v in 0..n {
        if state.index[v].is_none() {
            visit(&mut state, v);
        }
    }
    state.found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> BTreeMap<Vec<String>, String> {
        files.iter().map(|(path, text)| (module_of(Path::new(path)), (*text).to_owned())).collect()
    }

    #[test]
    fn a_circle_through_siblings_is_found_and_a_chain_is_not() {
        // Clean control: a chain downward, parents and children using each other, a
        // commented-out path and a test module's import.
        let clean = tree(&[
            ("lib.rs", "mod a;\nmod b;\nuse crate::a::x;"),
            ("a/mod.rs", "mod inner;\nuse self::inner::y;\nuse crate::b::z;"),
            ("a/inner.rs", "use super::shared;\n// use crate::lib_only;"),
            ("b.rs", "pub fn z() {}\n#[cfg(test)]\nmod tests {\n    use crate::a::x;\n}"),
        ]);
        assert!(circles(&clean).is_empty(), "{:?}", circles(&clean));
        // A circle through three modules, one reached with `super::`.
        let circle = tree(&[
            ("lib.rs", "mod a;\nmod b;\nmod c;"),
            ("a.rs", "use crate::b::thing;"),
            ("b.rs", "use crate::c::{self, other};"),
            ("c.rs", "fn f() { super::a::g() }"),
        ]);
        assert_eq!(circles(&circle), [["a", "b", "c"]]);
        // Two sibling files in a folder.
        let pair =
            tree(&[("x/mod.rs", "mod p;\nmod q;"), ("x/p.rs", "use super::q::Q;"), ("x/q.rs", "use super::p::P;")]);
        assert_eq!(circles(&pair), [["x/p", "x/q"]]);
    }

    #[test]
    fn paths_resolve_to_the_deepest_module_named() {
        let sources = tree(&[("lib.rs", ""), ("a/mod.rs", ""), ("a/b.rs", "")]);
        let at = |module: &[&str], path: &str| {
            let module: Vec<String> = module.iter().map(|s| (*s).to_owned()).collect();
            resolve(&module, &path.split("::").collect::<Vec<_>>(), &sources)
        };
        assert_eq!(at(&[], "crate::a::b::Item"), Some(vec!["a".to_owned(), "b".to_owned()]));
        assert_eq!(at(&["a", "b"], "super::Item"), Some(vec!["a".to_owned()]));
        assert_eq!(at(&["a", "b"], "super::super::a::b"), Some(vec!["a".to_owned(), "b".to_owned()]));
        // A path leaving the crate names nothing.
        assert_eq!(at(&[], "super::x"), None);
        // `$crate::` and `contract_runtime::crate_x` are not paths of this crate.
        assert_eq!(find_path("$crate::a"), None);
        assert_eq!(find_path("my_crate::a"), None);
        assert_eq!(find_path("x(crate::a)"), Some(2));
    }

    #[test]
    fn the_workspace_has_no_circle() {
        assert_eq!(run(), Ok(0));
    }
}
