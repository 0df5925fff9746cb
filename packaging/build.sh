#!/usr/bin/env bash
# Builds the tool-contracts packages for this machine's platform into target/packages/:
#   the PyPI wheel (maturin, `bindings = "bin"`: the binary inside a wheel, as ruff and uv ship)
#   and the npm packages (the launcher `tool-contracts` and the platform package holding the
#   binary, as esbuild and Biome ship).
#
#   bash packaging/build.sh [--release]
#
# Without --release the binary is the dev profile's (what the package smoke test installs);
# the release workflow builds with --release, once per target. Needs the Rust toolchain,
# python3 with venv and pip (maturin is installed into target/packaging-venv, pinned) and
# node with npm. The version of every package is the crate's. The binary is built where
# CARGO_TARGET_DIR says (by default target/).
set -euo pipefail
cd "$(dirname "$0")/.."

MATURIN_VERSION=1.16.0
profile=dev
[ "${1:-}" = "--release" ] && profile=release
out=target/packages
rm -rf "$out"
mkdir -p "$out"

version=$(cargo metadata --format-version 1 --no-deps \
    | python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "tool-contracts"))')
host=$(rustc -vV | sed -n 's/^host: //p')

venv=target/packaging-venv
if [ "$(cat "$venv/.maturin" 2>/dev/null || true)" != "$MATURIN_VERSION" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "maturin==$MATURIN_VERSION" >&2
    echo "$MATURIN_VERSION" > "$venv/.maturin"
fi

# The wheel: maturin builds the binary with cargo and puts it in the wheel's scripts.
"$venv/bin/maturin" build --quiet --manifest-path tool-contracts-cli/Cargo.toml \
    --profile "$profile" --out "$out" >&2
ls "$out"/*.whl

# The npm packages, around the binary cargo has just built for the wheel.
dir=debug
[ "$profile" = release ] && dir=release
cargo build --quiet --profile "$profile" -p tool-contracts --bin tool-contracts
node packaging/npm/build.mjs --version "$version" --target "$host" \
    --binary "${CARGO_TARGET_DIR:-target}/$dir/tool-contracts" --out "$out/npm"
