#!/usr/bin/env bash
# Installs the pinned official MCP clients the interop tests drive, into ignored folders:
#   node_modules/  @modelcontextprotocol/sdk (the TypeScript SDK v1 client),
#                  @modelcontextprotocol/client (the TypeScript SDK v2 client),
#                  @modelcontextprotocol/inspector (the MCP Inspector, whose CLI runs its own
#                  v2 client), @modelcontextprotocol/server-everything (the server the
#                  client harness and contract-audit are proven against), and
#                  @modelcontextprotocol/server with @modelcontextprotocol/node (the
#                  TypeScript SDK v2 server and its node:http transport, for the peers
#                  benchmark's v2 server, peers/ts2_server.mjs); fastmcp (the library
#                  firecrawl-mcp runs on) with zod, firecrawl-mcp and agentic-qe, the real
#                  TypeScript servers contract-audit's call findings are proven against
#                  (sdk_servers.mjs, fake_firecrawl_api.mjs, tests/tests/client/audit_real.rs), from
#                  package.json + package-lock.json (npm ci). firecrawl-mcp asks for Node 22
#                  (`engines`) and runs on Node 20. The Inspector's package asks
#                  for a newer Node than 20 (`engines`); npm warns and installs it, and
#                  its CLI runs on Node 20, which the interop tests prove.
#   .venv/         mcp from requirements.txt (every transitive dependency pinned), and uv
#                  (whose uvx runs the tool-contracts wheel in the package test)
# The same two SDKs serve the test servers in peers/ and rugpull/ (rugpull/rugpull.py runs
# its streamable HTTP app on uvicorn, which requirements.txt pins already).
# Idempotent: a stamp per ecosystem records what was installed, so a second run that has
# nothing to do returns at once. Needs only node/npm and python3 (with venv and pip).
set -euo pipefail
cd "$(dirname "$0")"

need() {
    command -v "$1" >/dev/null 2>&1 || { echo "install.sh: \`$1\` is required for the interop tests" >&2; exit 1; }
}

stamp_of() {
    # What an install depends on: the lock/requirements file and the tool version.
    { cat "$@"; "$TOOL" --version; } | sha256sum | cut -d' ' -f1
}

need node
need npm
TOOL=node
node_stamp="$(stamp_of package.json package-lock.json)"
if [ "$(cat node_modules/.tool-contracts-stamp 2>/dev/null || true)" != "$node_stamp" ]; then
    echo "install.sh: installing the TypeScript clients (npm ci)" >&2
    npm ci --no-audit --no-fund --loglevel=error >&2
    echo "$node_stamp" > node_modules/.tool-contracts-stamp
fi

aqe_stamp="$(stamp_of aqe/package.json aqe/package-lock.json)"
if [ "$(cat aqe/node_modules/.tool-contracts-stamp 2>/dev/null || true)" != "$aqe_stamp" ]; then
    echo "install.sh: installing agentic-qe (npm install, in aqe/)" >&2
    (cd aqe && npm install --no-audit --no-fund --loglevel=error >&2)
    echo "$aqe_stamp" > aqe/node_modules/.tool-contracts-stamp
fi

PYTHON="${PYTHON:-python3}"
need "$PYTHON"
TOOL="$PYTHON"
py_stamp="$(stamp_of requirements.txt)"
if [ "$(cat .venv/.tool-contracts-stamp 2>/dev/null || true)" != "$py_stamp" ]; then
    echo "install.sh: installing the Python SDK client (pip, into .venv)" >&2
    rm -rf .venv
    "$PYTHON" -m venv .venv
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-input -r requirements.txt >&2
    echo "$py_stamp" > .venv/.tool-contracts-stamp
fi

for package in @modelcontextprotocol/sdk @modelcontextprotocol/client @modelcontextprotocol/inspector \
    @modelcontextprotocol/server-everything @modelcontextprotocol/server @modelcontextprotocol/node \
    fastmcp firecrawl-mcp aqe/node_modules/agentic-qe; do
    case "$package" in aqe/*) path="./$package" ;; *) path="./node_modules/$package" ;; esac
    node -e "const p=require('$path/package.json');console.error('install.sh: '+p.name+' '+p.version)"
done
.venv/bin/python -c "import sys; from importlib.metadata import version; print('install.sh: mcp ' + version('mcp'), file=sys.stderr)"
