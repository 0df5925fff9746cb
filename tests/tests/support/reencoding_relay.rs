//! The re-encoding relay (`tests/interop/proxy/reencoding_relay.mjs`): a stdio relay that
//! parses every message and writes it anew, gives the client's requests ids of its own,
//! stamps its own `_meta` envelope on calls and answers `ping` itself. The proxy tests put
//! it where the proxy would be, to prove that their oracles catch a relay that is not
//! transparent.

use super::bins;

/// The relay's command line in front of `upstream` (a command line).
pub(crate) fn reencoding_relay(upstream: &[String]) -> Vec<String> {
    let script = bins::root().join("tests/interop/proxy/reencoding_relay.mjs");
    let mut argv = vec!["node".to_owned(), script.display().to_string(), "--".to_owned()];
    argv.extend(upstream.iter().cloned());
    argv
}
