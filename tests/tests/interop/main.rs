//! Interop with code nobody on this project wrote: the official TypeScript and Python
//! clients and the MCP Inspector, peer SDK servers, and the packaged crates built in user
//! workspaces (package smoke, real result shapes, clippy on them).
//! One binary: each module is one file of this folder; the helpers they share are the
//! `support` module (`tests/tests/support/`), included once.

#[path = "../support/mod.rs"]
mod support;

pub mod interop;
pub mod interop_bad_input;
pub mod package_smoke;
pub mod packages;
pub mod peer_servers;
pub mod real_shapes;
pub mod real_shapes_clippy;
