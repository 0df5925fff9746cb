//! contract-proxy in front of real servers: stdio, its lanes, its HTTP listener, and the
//! official clients through it.
//! One binary: each module is one file of this folder; the helpers they share are the
//! `support` module (`tests/tests/support/`), included once.

#[path = "../support/mod.rs"]
mod support;

pub mod proxy;
pub mod proxy_clients;
pub mod proxy_disconnect;
pub mod proxy_error_shape;
pub mod proxy_faults;
pub mod proxy_inspector;
pub mod proxy_lane;
pub mod proxy_listen;
pub mod proxy_observe;
pub mod proxy_quick_lane;
pub mod proxy_real_servers;
pub mod proxy_transparent;
pub mod proxy_transparent_http;
pub mod proxy_user_servers;
pub mod tool_change_verdicts;
