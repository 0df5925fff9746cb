#!/usr/bin/env bash
# Instructions per call of contract-proxy, of the relay that only copies bytes, and of the
# server alone (`peers serve plain`), with stdio on both sides: each process under
# `valgrind --tool=callgrind` (the top process only), N sequential `search_tickets_page`
# calls after `initialize` and one `tools/list`, a run of 0 calls subtracted.
#
#   cargo build --release -p contract-proxy
#   cargo build --release -p qe-server --features server --example peers
#   bash bench/proxy-callgrind.sh
set -euo pipefail
cd "$(dirname "$0")/.."
T=target/release
P=$T/examples/peers
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
requests() { # items count
    printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cg","version":"1"}}}' \
        '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
        '{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{}}'
    for ((i = 1; i <= $2; i++)); do
        printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search_tickets_page","arguments":{"query":"t-","limit":%d}}}\n' "$i" "$1"
    done
}
count() { # out-file command...
    local out=$1
    shift
    # The sleep keeps stdin open until the last answer is written.
    (cat; sleep 4) | valgrind --tool=callgrind --callgrind-out-file="$out" "$@" >/dev/null 2>&1
    grep '^summary:' "$out" | cut -d' ' -f2
}
printf '%6s  %-7s %14s\n' items process instructions/call
for pair in 1:200 100:50 1000:20; do
    items=${pair%%:*}
    n=${pair##*:}
    for who in proxy relay server; do
        case $who in
            proxy) cmd=("$T/contract-proxy" -- "$P" serve plain) ;;
            relay) cmd=("$P" relay -- "$P" serve plain) ;;
            server) cmd=("$P" serve plain) ;;
        esac
        base=$(requests "$items" 0 | count "$work/$who-0.out" "${cmd[@]}")
        full=$(requests "$items" "$n" | count "$work/$who-$n.out" "${cmd[@]}")
        printf '%6d  %-7s %14d\n' "$items" "$who" $(((full - base) / n))
    done
done
