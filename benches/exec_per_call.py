"""Issue 48, point 1: `exec WORKFLOW --dry-run --json` as a process, per call:
(median wall of the exec − median wall of `--version`) ÷ 70 (plan + 69
nexts of the corpus's code_review_initial migrated as `cri`), and the same
for CPU (user + system, from wait4's rusage). Binaries run in turn, each
round N times each; the run state is removed after every round.

Usage: python3 benches/exec_per_call.py ROOT ROUNDS N NAME=BINARY...
(ROOT: a project with workflows/cri.yaml and `[state] fsync = false`; see
docs/PERFORMANCE.md, "As a process".)"""
import os, shutil, statistics, sys, time

root, rounds, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
bins = dict(a.split("=", 1) for a in sys.argv[4:])


def run(argv):
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        fd = os.open("/dev/null", os.O_WRONLY)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.execv(argv[0], argv)
    _, status, ru = os.wait4(pid, 0)
    assert status == 0, (argv, status)
    return time.perf_counter() - t0, ru.ru_utime + ru.ru_stime


res = {(b, k): ([], []) for b in bins for k in ("exec", "ver")}
loads = []
for _ in range(rounds):
    loads.append(os.getloadavg()[0])
    for b, path in bins.items():
        for k, argv in (("exec", [path, "exec", "cri", "--dry-run", "--json", "--root", root]),
                        ("ver", [path, "--version"])):
            for _ in range(n):
                w, c = run(argv)
                res[(b, k)][0].append(w)
                res[(b, k)][1].append(c)
    shutil.rmtree(os.path.join(root, ".savant"), ignore_errors=True)
print("load %.2f-%.2f" % (min(loads), max(loads)))
for b in bins:
    ew, ec = map(statistics.median, res[(b, "exec")])
    vw, vc = map(statistics.median, res[(b, "ver")])
    print(f"{b}: exec wall {ew*1e3:.2f} ms cpu {ec*1e3:.2f} ms; --version wall {vw*1e3:.2f} cpu {vc*1e3:.2f}; "
          f"per call wall {(ew-vw)/70*1e6:.1f} us cpu {(ec-vc)/70*1e6:.1f} us")
