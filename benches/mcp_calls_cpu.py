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
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import Server
mode, runs = sys.argv[1], int(sys.argv[2])
cmd = sys.argv[sys.argv.index("--") + 1:]
srv = Server(cmd, "calls_cpu")
calls = 0
for r in range(runs):
    rid = f"c{r}-{os.getpid()}"
    st = srv.plan(rid)
    k = 0
    while not st.get("done") and st.get("instruction") and k < 69:
        k += 1; calls += 1
        if mode == "ping":
            srv.rpc("ping"); continue
        st = srv.next(rid, st["instruction"]["step_id"])
ru = srv.close()
print(f"{mode}: {calls} calls, server CPU {(ru.ru_utime + ru.ru_stime) * 1e6 / max(calls, 1):.1f} us per call (user {ru.ru_utime:.2f} s, system {ru.ru_stime:.2f} s)")
