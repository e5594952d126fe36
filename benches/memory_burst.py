#!/usr/bin/env python3
"""A burst of large invalid results against a running `serve --http`, and
its memory: idle, peak (sampled every 20 ms) and 2 s after (docs/PERFORMANCE.md,
"Memory per request under hostile input").

    savant-think serve --http 127.0.0.1:7811 --stateless --root DIR &
    python3 benches/memory_burst.py 127.0.0.1:7811 $!
"""
import http.client
import json
import os
import sys
import threading
import time

addr, pid = sys.argv[1], int(sys.argv[2])
# The invalid 4 MB result: {"items": [1, 1, …]} (2M integers where strings are due).
big = json.dumps({"items": [1] * 2_000_000}, separators=(",", ":"))
SCHEMA = {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}}}}


def rss_mb():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) // 1024


def post(i, response=None):
    args = '{"schema":%s,"response":%s}' % (json.dumps(SCHEMA), response or big)
    body = '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"think_validate","arguments":%s}}' % (i, args)
    host, port = addr.split(":")
    c = http.client.HTTPConnection(host, int(port), timeout=120)
    c.request("POST", "/mcp", body, {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    c.getresponse().read()


# The baseline is a server that has answered: one small call first (the
# code it runs is then paged in, as it is after the burst).
post(0, '{"items": ["a", 1]}')
time.sleep(3)
print("idle MB", rss_mb())
peak, stop = [0], [False]


def watch():
    while not stop[0]:
        peak[0] = max(peak[0], rss_mb())
        time.sleep(0.02)


watcher = threading.Thread(target=watch)
watcher.start()
calls = [threading.Thread(target=post, args=(i,)) for i in range(int(os.environ.get("BURST", "8")))]
for t in calls:
    t.start()
for t in calls:
    t.join()
stop[0] = True
watcher.join()
print("peak MB", peak[0])
time.sleep(2.5)
print("after MB", rss_mb())
