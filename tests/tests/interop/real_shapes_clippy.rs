//! rmcp's `Json` returned where ours belongs is caught before deployment, by clippy.
//!
//! A tool returning `rmcp::Json<T>` instead of `contract_runtime::rmcp::Json<T>` compiles
//! and lists the same `outputSchema` (rmcp's `#[tool]` macro finds `Json` by name and
//! builds the schema from `T`), so only its calls fail. `tests/fixtures/real-shapes`
//! carries the `clippy.toml` entry the rmcp guide gives users, and its feature
//! `rmcp-json` switches the `lookup` tool to rmcp's `Json`, imported through rmcp's
//! crate-root re-export. Built against the packaged crates (support/smoke.rs), in the
//! target directory real_shapes.rs builds in:
//!
//! 1. `cargo clippy -- -D warnings` with `rmcp-json` fails, and only on the disallowed
//!    type: at the import and at the return type, each naming the type and the reason;
//! 2. without it (the reason applied: ours imported) the same command passes;
//! 3. the guide and the README give users that very `clippy.toml` entry.

use crate::support::smoke;

use smoke::{ok, run, UserWorkspace};

/// The path clippy is told to refuse, and the reason it prints.
const DISALLOWED: &str = "rmcp::handler::server::wrapper::Json";
const REASON: &str = "import `contract_runtime::rmcp::Json` instead: rmcp's writes NaN and infinity as null before \
                      the output contract can check them";

/// `cargo clippy -p shapes-server [FEATURES] -- -D warnings` in the workspace.
fn clippy(ws: &UserWorkspace, features: &[&str]) -> std::process::Command {
    let mut args = vec!["clippy", "--quiet", "-p", "shapes-server"];
    args.extend_from_slice(features);
    args.extend_from_slice(&["--", "-D", "warnings"]);
    ws.cargo(&args)
}

#[test]
fn clippy_refuses_rmcp_json_and_passes_ours() {
    let ws = UserWorkspace::new("real-shapes", "real-shapes-clippy");

    // 1. rmcp's `Json` fails the lint, at each place it is named, with the reason.
    let out = run(clippy(&ws, &["--features", "rmcp-json"]), "cargo clippy --features rmcp-json");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "clippy -D warnings passes rmcp's Json:\n{stderr}");
    let refusal = format!("use of a disallowed type `{DISALLOWED}`");
    assert_eq!(stderr.matches(&refusal).count(), 2, "the import and the return type:\n{stderr}");
    assert_eq!(stderr.matches(REASON).count(), 2, "each refusal gives the reason:\n{stderr}");
    for site in ["pub use rmcp::Json;", ") -> Result<lookup_json::Json<Lookup>, ToolError> {"] {
        assert!(stderr.contains(site), "a refusal shows `{site}`:\n{stderr}");
    }
    // It compiles: the lint is the only error.
    assert!(!stderr.contains("error[E"), "a compile error, not the lint:\n{stderr}");
    assert_eq!(stderr.matches("error: ").count(), 3, "two refusals and clippy's summary:\n{stderr}");

    // 2. The control, the reason applied: ours passes the same command.
    let out = ok(clippy(&ws, &[]), "cargo clippy (our Json)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains(DISALLOWED), "{stderr}");

    // 3. The entry users are told to add is the one proven here.
    let config = std::fs::read_to_string(ws.dir.join("clippy.toml")).expect("the fixture's clippy.toml");
    let entry = config
        .lines()
        .find(|line| line.contains(DISALLOWED))
        .unwrap_or_else(|| panic!("clippy.toml names {DISALLOWED}:\n{config}"))
        .trim();
    assert!(entry.contains(&format!("reason = \"{REASON}\"")), "{entry}");
    for doc in ["README.md", "contract-runtime/docs/rmcp.md"] {
        let text = std::fs::read_to_string(smoke::workspace().join(doc)).expect("the doc");
        assert!(text.contains(entry), "{doc} gives the clippy.toml entry `{entry}`");
        assert!(text.contains("cargo clippy -- -D warnings"), "{doc} says how to run it");
    }
}
