//! Compile-time tests of `#[derive(ToolOutput)]` live in `tests/`; this library is empty.
