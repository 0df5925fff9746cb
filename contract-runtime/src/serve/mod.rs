//! The second layer: serving a result. It uses the [`contract`](crate::contract) layer
//! and knows nothing of any MCP SDK or transport.
//!
//! - [`pipeline`]: handler → serialize → post-result middleware → validate → cache
//!   admission → emit.
//! - [`cache`]: the `ResultCache` trait and the bounded in-memory cache, bound to
//!   contract identities; a Redis-backed cache with feature `redis`.
//! - [`wire`]: error codes, protocol eras and the result envelope.
//! - [`observe`]: report-only rollout ([`Enforcement`](observe::Enforcement)), the
//!   pipeline's counters ([`Stats`](observe::Stats)) and its `tracing` events.
//! - [`set`]: [`ContractSet`](set::ContractSet), the contracts a server publishes, bound
//!   to its tools.
//! - [`observed`]: what a tool's results looked like (counts, types and names per
//!   pointer, never values), which a proxy records and a suggestion is made from.

pub mod cache;
pub mod observe;
pub mod observed;
pub mod pipeline;
pub mod set;
pub mod wire;
