"""Issue 48, point 2: the server's own cost of a `think_next` over MCP stdio
beyond a `ping`, on the corpus's code_review_initial migrated as `cri` (69
steps), fsync off. Starts CMD (a `savant-think serve` command line, possibly
under valgrind), plans RUNS runs and makes, per run, either its 69
`think_next` calls (MODE next) or as many `ping`s (MODE ping), each call
waiting for its answer. Prints the calls made and the server's CPU time per
call (user + system, from the child's rusage; start-up included).

Usage: python3 benches/mcp_calls_cpu.py MODE RUNS -- CMD...
(ROOT of CMD: a project with workflows/cri.yaml and `[state] fsync = false`,
see docs/PERFORMANCE.md, "As a process"; remove ROOT/.savant between runs.)
Instructions per call beyond ping: run it under
`valgrind --tool=callgrind` once per MODE and divide the difference of the
two totals by the calls."""
import json, os, subprocess, sys
mode, runs = sys.argv[1], int(sys.argv[2])
cmd = sys.argv[sys.argv.index("--") + 1:]
env = dict(os.environ, LOG_LEVEL="error", SAVANT_STATE_FSYNC="0")
p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
n = 0
def rpc(method, params=None):
    global n
    n += 1
    msg = {"jsonrpc": "2.0", "id": n, "method": method}
    if params is not None: msg["params"] = params
    p.stdin.write((json.dumps(msg) + "\n").encode()); p.stdin.flush()
    while True:
        r = json.loads(p.stdout.readline())
        if r.get("id") == n: return r
rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "calls_cpu", "version": "1"}})
p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'); p.stdin.flush()
calls = 0
for r in range(runs):
    rid = f"c{r}-{os.getpid()}"
    st = rpc("tools/call", {"name": "think_plan", "arguments": {"workflow": "cri", "run_id": rid, "params": {"mr_iid": "7"}}})["result"]["structuredContent"]
    k = 0
    while not st.get("done") and st.get("instruction") and k < 69:
        k += 1; calls += 1
        if mode == "ping":
            rpc("ping"); continue
        res = rpc("tools/call", {"name": "think_next", "arguments": {"workflow": "cri", "run_id": rid, "step_id": st["instruction"]["step_id"], "result": {"ok": True}}})["result"]
        assert not res.get("isError"), res
        st = res["structuredContent"]
p.stdin.close()
_, status, ru = os.wait4(p.pid, 0)
print(f"{mode}: {calls} calls, server CPU {(ru.ru_utime + ru.ru_stime) * 1e6 / max(calls, 1):.1f} us per call (user {ru.ru_utime:.2f} s, system {ru.ru_stime:.2f} s)")
