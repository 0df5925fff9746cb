//! A quality-engineering MCP server whose tool results are enforced output contracts.
//!
//! This crate holds the contracted result types of the demo slice: fleet, task and
//! pipeline status, quality and security assessments, a slash-named coverage tool, an array-rooted ticket search and a scrape result that
//! carries pass-through data. [`tools`] holds the tool logic over in-memory data; the
//! `server` feature adds the runnable rmcp server (`cargo run -p qe-server --features server`).

pub mod contracts;
#[cfg(feature = "server")]
pub mod http;
#[cfg(feature = "server")]
pub mod replica;
pub mod samples;
#[cfg(feature = "server")]
pub mod server;
pub mod tools;

pub use contracts::all_contracts;

/// The server package's version: what covers uncontracted tools and tool additions and
/// removals in `schemas/tools/server.json`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
