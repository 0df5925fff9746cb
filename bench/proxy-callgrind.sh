#!/usr/bin/env bash
# Instructions per call of contract-proxy, of the relay that only copies bytes, and of the
# server alone (`peers serve plain`), with stdio on both sides: each process under
# `valgrind --tool=callgrind` (the top process only), N sequential `search_tickets_page`
# calls (each sent once the previous one is answered) after `initialize` and one
# `tools/list`, a run of 0 calls subtracted.
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
cat > "$work/drive.py" <<'PY'
# A client that makes its calls one after another: each request is written once the
# answer to the one before it is read.
import json, subprocess, sys
items, n, cmd = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
def send(message):
    child.stdin.write((json.dumps(message) + "\n").encode())
    child.stdin.flush()
def answer(id):
    while True:
        message = json.loads(child.stdout.readline())
        if message.get("id") == id and "method" not in message:
            return message
send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "cg", "version": "1"}}})
answer(0)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": "l", "method": "tools/list", "params": {}})
answer("l")
for i in range(1, n + 1):
    send({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "search_tickets_page", "arguments": {"query": "t-", "limit": items}}})
    assert "result" in answer(i)
child.stdin.close()
child.wait()
PY
count() { # items calls out-file command...
    local items=$1 calls=$2 out=$3
    shift 3
    python3 "$work/drive.py" "$items" "$calls" valgrind --tool=callgrind --callgrind-out-file="$out" "$@"
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
        base=$(count "$items" 0 "$work/$who-0.out" "${cmd[@]}")
        full=$(count "$items" "$n" "$work/$who-$n.out" "${cmd[@]}")
        printf '%6d  %-7s %14d\n' "$items" "$who" $(((full - base) / n))
    done
done
