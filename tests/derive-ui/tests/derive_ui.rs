//! Compile-time behaviour of `#[derive(ToolOutput)]`: every misuse is a compile error
//! that points at the offending token and says what to write. Every supported shape is a
//! test of its own in `derive_pass/`, built with the workspace's tests, so trybuild only
//! checks these cases (`cargo check`, no code generated, nothing linked).
//!
//! Regenerate the expected `.stderr` files with `TRYBUILD=overwrite cargo test -p
//! contract-derive-ui`, then read each one before committing it.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
}
