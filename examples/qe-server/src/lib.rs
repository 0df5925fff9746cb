//! A quality-engineering MCP server whose tool results are enforced output contracts.
//!
//! This crate holds the contracted result types of the demo slice (seed documents 000,
//! 001 and 004): fleet, task and pipeline status, quality and security assessments, a
//! slash-named coverage tool, an array-rooted ticket search and a scrape result that
//! carries pass-through data.

pub mod contracts;
pub mod samples;

pub use contracts::all_contracts;
