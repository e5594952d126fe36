#!/usr/bin/env python3
"""A soak of `serve --http` (issue 46.3, docs/PERFORMANCE.md, "Nothing grows
over time"): moderate mixed load for a while, the server's resources sampled
all along; each must stay flat after warm-up, and every acknowledged event
must be in the store at the end.

    STORE=file SECONDS=600 python3 benches/soak.py
    STORE=pg   SECONDS=600 python3 benches/soak.py   # starts its own PostgreSQL (initdb)

BIN is the binary (default target/debug/savant-think); DRIVERS the clients
driving four-step runs to `done` (default 4); CACHED_RUNS, if set, is
written as `[state] cached_runs`.

The load, all on fresh connections: drivers plan runs and `think_next`
them to done, one in eight reset with `force` and driven again, one in
eight forked from `s2` and the fork driven to done; a reader calls
`think_state_list` and `think_state_get`; an inspector client fetches the
run list, a run's page and JSON, and holds a run's live stream open for
two seconds; a dropper sends `think_next` and closes its socket before the
answer, then deletes the run; a pruner runs `savant-think state prune` (done runs beyond the
newest 200, archived copies) every 5 s, and `[state.keep]` prunes archived copies in
the background once a minute.

Sampled every second: RSS, open fds, threads (`/proc/PID`), database
connections (PostgreSQL: `pg_stat_activity`), the store's size (the state
directory; PostgreSQL: `pg_database_size`). Printed: the mean of each
quarter and, after warm-up (the first quarter), the least-squares slope per
minute. Exit status 1 if an acknowledged event is missing.
"""
import http.client
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

BIN = os.path.abspath(os.environ.get("BIN", "target/debug/savant-think"))
STORE = os.environ.get("STORE", "file")
SECONDS = float(os.environ.get("SECONDS", "600"))
DRIVERS = int(os.environ.get("DRIVERS", "4"))
STEPS = 4

WORKFLOW = "id: four\nsteps:\n" + "".join(
    "  - id: s%d\n    call: prompt.say\n    input_template: { text: hi }\n%s"
    % (i, "    deps: [s%d]\n" % (i - 1) if i else "")
    for i in range(STEPS)
)


def start_pg(tmp):
    """initdb + pg_ctl start on a free port (as `postgres` when root)."""
    bins = sorted(
        (int(v), "/usr/lib/postgresql/%s/bin" % v) for v in os.listdir("/usr/lib/postgresql") if v.isdigit()
    )
    bin_dir = bins[-1][1]
    pgdir = os.path.join(tmp, "pg")
    os.makedirs(pgdir)
    as_pg = os.geteuid() == 0
    if as_pg:
        shutil.chown(tmp, "postgres")
        shutil.chown(pgdir, "postgres")

    def run(*args):
        cmd = [os.path.join(bin_dir, args[0]), *args[1:]]
        if as_pg:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)

    data = os.path.join(pgdir, "data")
    run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    opts = "-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=300" % (port, pgdir)
    run("pg_ctl", "-D", data, "-l", os.path.join(pgdir, "log"), "-o", opts, "-w", "start")
    psql = [os.path.join(bin_dir, "psql"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-Atc"]
    stop = lambda: run("pg_ctl", "-D", data, "-m", "immediate", "stop")
    return "postgres://postgres@127.0.0.1:%d/postgres" % port, psql, stop


def start(tmp):
    root = os.path.join(tmp, "root")
    os.makedirs(os.path.join(root, "workflows"))
    with open(os.path.join(root, "workflows", "four.yaml"), "w") as f:
        f.write(WORKFLOW)
    toml = '[state]\nfsync = false\n'
    if os.environ.get("CACHED_RUNS"):
        toml += "cached_runs = %s\n" % os.environ["CACHED_RUNS"]
    toml += '[state.keep]\nstatus = ["archived"]\nolder_than = "10s"\n'
    with open(os.path.join(root, "savant-think.toml"), "w") as f:
        f.write(toml)
    env = dict(os.environ, LOG_LEVEL="error")
    env.pop("SAVANT_THINK_TOKEN", None)
    psql, stop_pg = None, None
    if STORE == "pg":
        env["SAVANT_STATE_URL"], psql, stop_pg = start_pg(tmp)
    server = subprocess.Popen(
        [BIN, "serve", "--http", "127.0.0.1:0", "--stateless", "--root", root],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    for line in server.stderr:
        if "http://" in line:
            addr = line.split("http://")[1].split("/")[0]
            break
    threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
    return root, env, server, addr, psql, stop_pg


class Client:
    def __init__(self, addr):
        self.host, port = addr.split(":")
        self.port = int(port)

    def call(self, tool, args):
        """One tools/call on a fresh connection: the tool's answer (a dict)."""
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": args}}
        )
        c = http.client.HTTPConnection(self.host, self.port, timeout=60)
        c.request("POST", "/mcp", body, {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
        r = c.getresponse()
        text = r.read().decode()
        c.close()
        if r.status != 200:
            raise RuntimeError("%s: %d %s" % (tool, r.status, text[:200]))
        for line in text.splitlines():
            if line.startswith("data:"):
                text = line[5:]
        reply = json.loads(text)
        if "result" not in reply:
            raise RuntimeError("%s: %s" % (tool, text[:300]))
        return json.loads(reply["result"]["content"][0]["text"])

    def live(self, path, hold):
        """Opens a live stream (server-sent events), reads it for `hold`
        seconds, goes away; its status and how many events came."""
        s = socket.create_connection((self.host, self.port))
        s.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\nAccept: text/event-stream\r\n\r\n" % (path, self.host, self.port)).encode())
        s.settimeout(0.25)
        got, end = b"", time.time() + hold
        while time.time() < end:
            try:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
            except (socket.timeout, TimeoutError):
                pass
        s.close()
        status = got.split(b" ", 2)[1].decode() if got.startswith(b"HTTP/") else "none"
        return status, got.count(b"data:")

    def get(self, path):
        c = http.client.HTTPConnection(self.host, self.port, timeout=60)
        c.request("GET", path)
        r = c.getresponse()
        r.read()
        c.close()
        return r.status

    def drop(self, tool, args):
        """Sends a call and closes the socket before the answer."""
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": args}}
        )
        s = socket.create_connection((self.host, self.port))
        s.sendall(
            (
                "POST /mcp HTTP/1.1\r\nHost: %s:%d\r\nAccept: application/json, text/event-stream\r\n"
                "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                % (self.host, self.port, len(body), body)
            ).encode()
        )
        s.close()


class Book:
    """What the server acknowledged, per run: step -> result."""

    def __init__(self):
        self.lock = threading.Lock()
        self.runs = {}
        self.done = []
        self.pruned = set()
        self.counts = {}
        self.errors = []

    def count(self, what):
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + 1

    def error(self, e):
        with self.lock:
            self.count_unlocked("error")
            if len(self.errors) < 10:
                self.errors.append(str(e)[:300])

    def count_unlocked(self, what):
        self.counts[what] = self.counts.get(what, 0) + 1


def drive(cl, book, run, acked, start_at, by):
    """think_next from step `start_at` to done; records each acknowledged result."""
    for i in range(start_at, STEPS):
        result = {"by": by, "step": i, "pad": "x" * random.randint(10, 200)}
        a = cl.call("think_next", {"workflow": "four", "run_id": run, "step_id": "s%d" % i, "result": result})
        if "error" in a:
            raise RuntimeError("next %s s%d: %s" % (run, i, a))
        acked["s%d" % i] = result
        book.count("next")


def driver(cl, book, n, until):
    k = 0
    while time.time() < until:
        k += 1
        run = "d%d-%d" % (n, k)
        try:
            a = cl.call("think_plan", {"workflow": "four", "run_id": run})
            if a.get("instruction", {}).get("step_id") != "s0":
                raise RuntimeError("plan %s: %s" % (run, a))
            acked = {}
            with book.lock:
                book.runs[run] = acked
            book.count("plan")
            drive(cl, book, run, acked, 0, n)
            if k % 8 == 3:
                a = cl.call("think_reset", {"workflow": "four", "run_id": run, "force": True})
                if "error" in a:
                    raise RuntimeError("reset %s: %s" % (run, a))
                acked.clear()
                book.count("reset")
                drive(cl, book, run, acked, 0, n)
            if k % 8 == 6:
                fork = run + "f"
                a = cl.call("think_fork", {"workflow": "four", "run_id": run, "from": "s2", "new_run_id": fork})
                if "error" in a:
                    raise RuntimeError("fork %s: %s" % (run, a))
                facked = {s: acked[s] for s in ("s0", "s1")}
                with book.lock:
                    book.runs[fork] = facked
                book.count("fork")
                drive(cl, book, fork, facked, 2, n)
            with book.lock:
                book.done.append(run)
        except Exception as e:  # noqa: BLE001 (a bench reports, it does not stop)
            book.error(e)


def reader(cl, book, until):
    while time.time() < until:
        try:
            with book.lock:
                run = random.choice(book.done) if book.done else None
            a = cl.call("think_state_list", {"workflow": "four"})
            book.count("list" if "runs" in a else "list_error")
            if run:
                a = cl.call("think_state_get", {"workflow": "four", "run_id": run})
                book.count("get" if a.get("run_id") == run or a.get("error") == "UNKNOWN_RUN" else "get_error")
            time.sleep(0.05)
        except Exception as e:  # noqa: BLE001
            book.error(e)


def inspector(cl, book, until):
    while time.time() < until:
        try:
            with book.lock:
                run = random.choice(book.done[-50:]) if book.done else None
            for path in ["/ui/", "/ui/api/runs"] + (
                ["/ui/runs/four/%s" % run, "/ui/api/runs/four/%s" % run] if run else []
            ):
                book.count("ui %d" % cl.get(path))
            if run:
                status, events = cl.live("/ui/api/runs/four/%s/live" % run, 2)
                book.count("live %s%s" % (status, "" if events else " (no event)"))
        except Exception as e:  # noqa: BLE001
            book.error(e)


def dropper(cl, book, until):
    k = 0
    while time.time() < until:
        k += 1
        run = "x-%d" % k
        try:
            cl.call("think_plan", {"workflow": "four", "run_id": run})
            cl.drop("think_next", {"workflow": "four", "run_id": run, "step_id": "s0", "result": {"dropped": k}})
            book.count("dropped")
            time.sleep(0.1)
            # Gone with the rest: archived, then pruned.
            # (`state delete`: not an MCP tool.)
            for _ in range(20):
                out = subprocess.run([BIN, "state", "delete", "four", "--run-id", run, "--root", cl.root],
                                     env=cl.env, capture_output=True, text=True)
                if "RUN_BUSY" not in out.stdout + out.stderr:
                    break
                time.sleep(0.1)
            book.count("deleted" if out.returncode == 0 else "delete failed")
            time.sleep(0.2)
        except Exception as e:  # noqa: BLE001
            book.error(e)


def pruner(cl, book, until):
    """`state prune` (another process, as an operator's cron would be)."""
    while time.time() < until:
        time.sleep(5)
        try:
            out = subprocess.run(
                [BIN, "state", "prune", "--status", "done,archived", "--keep-last", "200", "--root", cl.root],
                env=cl.env, capture_output=True, text=True, check=True,
            ).stdout
            a = json.loads(out)
            with book.lock:
                for r in a.get("runs", []):
                    if not r.get("archive_id"):
                        book.pruned.add(r["run_id"])
            book.count("prune")
        except Exception as e:  # noqa: BLE001
            book.error(e)


def dir_size(path):
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_blocks * 512
            except OSError:
                pass
    return total


def sample(pid, root, psql):
    status = open("/proc/%d/status" % pid).read()
    field = lambda k: int(next(l for l in status.splitlines() if l.startswith(k)).split()[1])
    s = {
        "rss_mb": field("VmRSS:") / 1024,
        "threads": field("Threads:"),
        "fds": len(os.listdir("/proc/%d/fd" % pid)),
    }
    if psql:
        q = lambda sql: int(subprocess.run(psql + [sql], capture_output=True, text=True).stdout.strip() or 0)
        s["db_conns"] = q("select count(*) from pg_stat_activity where backend_type = 'client backend'") - 1
        s["store_mb"] = q("select pg_database_size(current_database())") / 1e6
    else:
        s["store_mb"] = dir_size(os.path.join(root, ".savant", "state")) / 1e6
    return s


def slope_per_min(ts, ys):
    n = len(ts)
    mt, my = sum(ts) / n, sum(ys) / n
    var = sum((t - mt) ** 2 for t in ts)
    return 60 * sum((t - mt) * (y - my) for t, y in zip(ts, ys)) / var if var else 0.0


def verify(cl, book):
    """Every acknowledged result is in the store, or its run was pruned (done)."""
    missing, checked = [], 0
    for run, acked in list(book.runs.items()):
        a = cl.call("think_state_get", {"workflow": "four", "run_id": run})
        if a.get("error") == "UNKNOWN_RUN" and run in book.pruned:
            continue
        checked += 1
        results = {s["id"]: s.get("result") for s in a.get("steps", [])}
        for step, result in acked.items():
            if results.get(step) != result:
                missing.append((run, step))
    return checked, missing


def main():
    tmp = tempfile.mkdtemp(prefix="savant-soak-")
    root, env, server, addr, psql, stop_pg = start(tmp)
    cl, book = Client(addr), Book()
    cl.root, cl.env = root, env
    began = time.time()
    until = began + SECONDS
    threads = [threading.Thread(target=driver, args=(cl, book, n, until)) for n in range(DRIVERS)]
    threads += [threading.Thread(target=f, args=(cl, book, until)) for f in (reader, inspector, dropper, pruner)]
    for t in threads:
        t.start()
    samples = []
    try:
        while time.time() < until:
            samples.append((time.time() - began, sample(server.pid, root, psql)))
            time.sleep(1)
        for t in threads:
            t.join()
        samples.append((time.time() - began, sample(server.pid, root, psql)))
        checked, missing = verify(cl, book)
    finally:
        server.kill()
        server.wait()
        if stop_pg:
            stop_pg()
    shutil.rmtree(tmp, ignore_errors=True)

    print("store %s, %.0f s, %s" % (STORE, SECONDS, json.dumps(dict(sorted(book.counts.items())))))
    if book.errors:
        print("errors (first ones):", *book.errors, sep="\n  ")
    keys = list(samples[0][1])
    q = len(samples) // 4
    print("%-10s %10s %10s %10s %10s %14s" % ("", "Q1", "Q2", "Q3", "Q4", "slope/min Q2-4"))
    for k in keys:
        quarters = [samples[i * q : (i + 1) * q if i < 3 else len(samples)] for i in range(4)]
        means = [sum(s[k] for _, s in part) / max(len(part), 1) for part in quarters]
        after = samples[q:]
        slope = slope_per_min([t for t, _ in after], [s[k] for _, s in after])
        print("%-10s %10.1f %10.1f %10.1f %10.1f %14.2f" % (k, *means, slope))
    runs = sum(1 for _ in book.done)
    print("runs driven to done %d; checked at the end %d (pruned %d); missing %d" % (runs, checked, len(book.pruned), len(missing)))
    if missing:
        print("missing:", missing[:10])
        sys.exit(1)


main()
