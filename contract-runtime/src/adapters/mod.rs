//! The third layer: adapters to an MCP SDK and to the client side. They use the
//! [`serve`](crate::serve) and [`contract`](crate::contract) layers; nothing below
//! uses them.
//!
//! - `rmcp` (feature `rmcp`): advertise and enforce contracts in an rmcp server, and
//!   the `Json<T>` that keeps NaN and limits behind the checks.
//! - `http` (feature `http`): rmcp's streamable HTTP behind a front with limits, for axum.
//! - `client` (feature `client`, its rmcp part with `rmcp-client`): the validating
//!   client harness.

#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "rmcp")]
pub mod rmcp;
