//! Compile-time behaviour of `#[derive(ToolOutput)]`: every misuse is a compile error
//! that points at the offending token and says what to write, and every supported shape
//! compiles and yields the contract it should.
//!
//! Regenerate the expected `.stderr` files with `TRYBUILD=overwrite cargo test -p
//! contract-derive-ui`, then read each one before committing it.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
