"""Issue 48, point 2: `think_next` over MCP stdio against `ping` on the same
server, on the corpus's code_review_initial migrated as `cri` (69 steps),
fsync off, measured as a client sees it: one `ping` then one `think_next`,
alternating, so both see the same load; a new run is planned (untimed) when
one is done. Prints the median ratio over blocks of 50 pairs (as
benches/mcp.rs's `mcp_stdio_vs_ping` does per sample) and each call's median.

Usage: python3 benches/mcp_corpus_vs_ping.py BINARY ROOT CALLS
(ROOT: a project with workflows/cri.yaml and `[state] fsync = false`; see
docs/PERFORMANCE.md, "As a process".)"""
import os, statistics, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import Server
binary, root, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
srv = Server([binary, "serve", "--root", root], "vs_ping")
run = 0
def plan():
    global run
    run += 1
    return srv.plan(f"r{run}-{os.getpid()}")
state = plan()
ratios, pings, nexts = [], [], []
for i in range(calls):
    if state.get("done") or not state.get("instruction"):
        state = plan()
    step = state["instruction"]["step_id"]
    t0 = time.perf_counter(); srv.rpc("ping"); t1 = time.perf_counter()
    state = srv.next(f"r{run}-{os.getpid()}", step)
    t2 = time.perf_counter()
    pings.append(t1 - t0); nexts.append(t2 - t1)
srv.close()
# ratio per block of 50 pairs, as the criterion bench does per sample
blocks = [sum(nexts[i:i+50]) / sum(pings[i:i+50]) for i in range(0, len(nexts) - 49, 50)]
q = statistics.quantiles(blocks, n=4)
print(f"{os.path.basename(os.path.dirname(binary))}: think_next/ping {statistics.median(blocks):.2f}x (quartiles {q[0]:.2f}-{q[2]:.2f}, {len(blocks)} blocks of 50), ping median {statistics.median(pings)*1e6:.0f} us, think_next median {statistics.median(nexts)*1e6:.0f} us, runs {run}")
