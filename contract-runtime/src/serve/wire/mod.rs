//! The MCP wire: what a `tools/call` result looks like, success or failure, and the
//! protocol-era rules for non-object roots. Split by concern: [`codes`](ErrorCode) (error
//! codes and [`ToolError`]), eras ([`ProtocolVersion`], root wrapping) and the envelope
//! ([`ToolCallResult`], the contract identity in `_meta`).

mod codes;
mod envelope;
mod era;
mod error;

pub use crate::contract::escape::write_json_string;
pub use codes::*;
pub use envelope::*;
pub use era::*;
pub use error::*;

/// The namespaced `_meta` key under which a tool and its results carry the contract
/// identity.
pub const META_KEY: &str = "tool-contracts.dev/contract";

/// The namespaced `_meta` key that says whether a result was served from the cache
/// (`"hit"`) or computed and offered to it (`"miss"`); absent when no cache was asked.
/// Replicas behind one load balancer can then be told apart from the outside.
pub const CACHE_META_KEY: &str = "tool-contracts.dev/cache";

/// The first protocol revision whose `structuredContent` may be any JSON value
/// (SEP-2106). Older peers get a non-object root wrapped as `{"result": …}`.
pub const NATURAL_ROOTS_SINCE: &str = "2026-07-28";
