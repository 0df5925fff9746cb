//! The runtime's serving path: the pipeline and its limits, redaction, the in-memory and
//! Redis result caches (a redis-server of its own), report-only rollout, the operator
//! events, the HTTP front in process and qe-server's HTTP and stdio under hostile peers.
//! One binary: each module is one file of this folder; the helpers they share are the
//! `support` module (`tests/tests/support/`), included once.

#[path = "../support/mod.rs"]
mod support;

pub mod cache;
pub mod http_disconnect;
pub mod http_front;
pub mod http_hostile;
pub mod http_lane;
pub mod http_stateless;
pub mod observe_events;
pub mod pipeline;
pub mod pipeline_limits;
pub mod redact;
pub mod redis_cache;
pub mod redis_outage;
pub mod report_only;
pub mod stdio_pipes;
