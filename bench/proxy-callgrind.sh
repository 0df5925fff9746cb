#!/usr/bin/env bash
# Instructions per call of contract-proxy, of the relay that only copies bytes, and of the
# server alone (`peers serve plain`), with stdio on both sides: the peers command's counts
# (examples/qe-server/examples/peers/callgrind.rs). Each process runs under
# `valgrind --tool=callgrind` (the top process only) with N sequential
# `search_tickets_page` calls (each sent once the previous one is answered) after
# `initialize` and one `tools/list`, and a run of 0 calls is subtracted; ours is counted
# beside them. Extra arguments go to the peers command, e.g.
#
#   bash bench/proxy-callgrind.sh --era 2025-11-25,2026-07-28 --root object,array
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p contract-proxy
exec cargo run --release -p qe-server --features server --example peers -- \
    --instructions-only --servers "relay,contract-proxy,plain rmcp" "$@"
