"""The server-driving prelude shared by benches/mcp_calls_cpu.py and
benches/mcp_corpus_vs_ping.py (issue 48, point 2): starts a `savant-think
serve` command line over stdio, with logging quiet and fsync off, makes the
MCP handshake, and sends JSON-RPC requests one at a time, each waiting for
its answer (lines with another id, such as notifications, are skipped)."""
import json, os, subprocess


class Server:
    def __init__(self, cmd, client_name):
        env = dict(os.environ, LOG_LEVEL="error", SAVANT_STATE_FSYNC="0")
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.n = 0
        self.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": client_name, "version": "1"}})
        self.p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.p.stdin.flush()

    def rpc(self, method, params=None):
        self.n += 1
        msg = {"jsonrpc": "2.0", "id": self.n, "method": method}
        if params is not None:
            msg["params"] = params
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()
        while True:
            r = json.loads(self.p.stdout.readline())
            if r.get("id") == self.n:
                return r

    def call(self, name, arguments):
        """A tools/call: its result (the caller checks `isError`)."""
        return self.rpc("tools/call", {"name": name, "arguments": arguments})["result"]

    def plan(self, run_id):
        """think_plan of `cri` (params `mr_iid`): its structured reply."""
        return self.call("think_plan", {"workflow": "cri", "run_id": run_id,
                                        "params": {"mr_iid": "7"}})["structuredContent"]

    def next(self, run_id, step_id):
        """think_next of `cri` with result {"ok": true}: its structured reply."""
        res = self.call("think_next", {"workflow": "cri", "run_id": run_id,
                                       "step_id": step_id, "result": {"ok": True}})
        assert not res.get("isError"), res
        return res["structuredContent"]

    def close(self):
        """Closes stdin and reaps the server: its rusage (from wait4)."""
        self.p.stdin.close()
        _, _, ru = os.wait4(self.p.pid, 0)
        return ru
