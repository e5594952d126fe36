#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance)
# against `savant-think serve --http` and checks the result against
# expected-failures.yml. Not part of `cargo test` (it downloads Node 22 and the
# suite from the npm registry); see docs/mcp.md, "Conformance".
#
#   tests/mcp_conformance/run.sh            # builds the release binary first
#   SAVANT_BIN=path/to/savant-think tests/mcp_conformance/run.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
crate="$(cd "$here/../.." && pwd)"
work="$crate/target/mcp-conformance"
suite_version="${CONFORMANCE_VERSION:-0.1.16}"
port="${CONFORMANCE_PORT:-7339}"

mkdir -p "$work"
if [ ! -x "$work/node_modules/.bin/conformance" ]; then
  (cd "$work" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund \
    node@22 "@modelcontextprotocol/conformance@$suite_version")
fi
export PATH="$work/node_modules/.bin:$PATH"
echo "node $(node --version), conformance $suite_version"

bin="${SAVANT_BIN:-}"
if [ -z "$bin" ]; then
  cargo build --release --quiet --manifest-path "$crate/Cargo.toml"
  bin="$crate/target/release/savant-think"
fi

root="$(mktemp -d)"
# A user's project: only workflows/ (no schemas/, no prompts/).
cp -r "$crate/workflows" "$root/"
LOG_LEVEL=warn "$bin" serve --http "127.0.0.1:$port" --root "$root" 2>"$work/server.log" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$root"' EXIT
for _ in $(seq 1 100); do
  (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done

conformance server --url "http://127.0.0.1:$port/mcp" --expected-failures "$here/expected-failures.yml"
