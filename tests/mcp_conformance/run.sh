#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in package.json / package-lock.json) against `savant-think serve
# --http`, for each protocol revision savant-think serves, and checks every
# result against expected-failures.<revision>.yml. Not part of `cargo test`
# (it installs Node 22 and the suite from the npm registry); `.ci/run` runs it.
# See docs/mcp.md, "Conformance".
#
#   tests/mcp_conformance/run.sh            # builds the release binary first
#   SAVANT_BIN=path/to/savant-think tests/mcp_conformance/run.sh
#
# For each revision it runs the scenarios the suite requires for it
# (`--requirements`), then the ones the suite runs but does not score that
# apply to this server (`EXTRA_*` below), one by one. It exits non-zero when a
# check fails that the revision's list does not name, and when a listed one
# passes (the list cannot rot). Results: target/mcp-conformance/<revision>/.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
crate="$(cd "$here/../.." && pwd)"
work="$crate/target/mcp-conformance"
port="${CONFORMANCE_PORT:-7339}"
revisions=(2025-11-25 2026-07-28)
# Not scored for the revision, but they test what this server does:
# sessions, SSE resumption (pending in the suite), JSON Schema 2020-12
# keywords (pending), header validation (pending).
EXTRA_2025_11_25=(server-session-lifecycle server-sse-polling json-schema-2020-12)
EXTRA_2026_07_28=(json-schema-2020-12 http-header-validation http-custom-header-server-validation)
# The tasks extension's scenarios: an extension, on no revision's timeline
# (so `--force`), run against a second server whose project allows
# think_exec (`[mcp] exec = true`), the only way it declares
# io.modelcontextprotocol/tasks. Checked against expected-failures.tasks.yml.
TASKS=(tasks-lifecycle tasks-capability-negotiation tasks-wire-fields
  tasks-request-state-removal tasks-mrtr-input tasks-request-headers
  tasks-dispatch-and-envelope tasks-status-notifications
  tasks-required-task-error tasks-mrtr-composition)

# Exactly the locked versions, into tests/mcp_conformance/node_modules
# (again only when the lockfile changed).
if [ ! -x "$here/node_modules/.bin/conformance" ] || [ "$here/package-lock.json" -nt "$here/node_modules/.package-lock.json" ]; then
  (cd "$here" && npm ci --silent --no-audit --no-fund)
fi
export PATH="$here/node_modules/.bin:$PATH"
echo "node $(node --version), conformance $(conformance --version)"

bin="${SAVANT_BIN:-}"
if [ -z "$bin" ]; then
  cargo build --release --quiet --manifest-path "$crate/Cargo.toml"
  bin="$crate/target/release/savant-think"
fi

mkdir -p "$work"
root="$(mktemp -d)"
# A user's project: only workflows/ (no schemas/, no prompts/).
cp -r "$crate/workflows" "$root/"
# The same project once more, allowing think_exec, for the tasks extension.
tasks_root="$(mktemp -d)"
cp -r "$crate/workflows" "$tasks_root/"
printf '[mcp]\nexec = true\n' >"$tasks_root/savant-think.toml"
tasks_port=$((port + 1))
LOG_LEVEL=warn "$bin" serve --http "127.0.0.1:$port" --root "$root" 2>"$work/server.log" &
server=$!
LOG_LEVEL=warn "$bin" serve --http "127.0.0.1:$tasks_port" --root "$tasks_root" 2>"$work/server-tasks.log" &
tasks_server=$!
trap 'kill $server $tasks_server 2>/dev/null; rm -rf "$root" "$tasks_root"' EXIT
for p in "$port" "$tasks_port"; do
  for _ in $(seq 1 100); do
    (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null && break
    sleep 0.1
  done
done

url="http://127.0.0.1:$port/mcp"
failed=()
for rev in "${revisions[@]}"; do
  baseline="$here/expected-failures.$rev.yml"
  out="$work/$rev"
  rm -rf "$out"
  echo "== conformance $rev: the scenarios it requires"
  conformance server --url "$url" --requirements "$rev" --expected-failures "$baseline" -o "$out" \
    || failed+=("$rev")
  extra="EXTRA_${rev//-/_}[@]"
  for scenario in "${!extra}"; do
    echo "== conformance $rev: $scenario (not scored for $rev)"
    conformance server --url "$url" --spec-version "$rev" --scenario "$scenario" \
      --expected-failures "$baseline" -o "$out" || failed+=("$rev $scenario")
  done
done
rm -rf "$work/tasks"
for scenario in "${TASKS[@]}"; do
  echo "== conformance tasks extension: $scenario"
  conformance server --url "http://127.0.0.1:$tasks_port/mcp" --scenario "$scenario" --force \
    --expected-failures "$here/expected-failures.tasks.yml" -o "$work/tasks" || failed+=("tasks $scenario")
done
if [ "${#failed[@]}" -gt 0 ]; then
  printf 'conformance: unexpected results in: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "conformance: every result as expected (${revisions[*]}, tasks extension)"
