#!/usr/bin/env python3
"""A burst of large invalid results against a running `serve --http`, and
its memory: idle, peak (sampled every 20 ms) and 2 s after (docs/PERFORMANCE.md,
"Memory per request under hostile input").

    savant-think serve --http 127.0.0.1:7811 --stateless --root DIR &
    python3 benches/memory_burst.py 127.0.0.1:7811 $!

SHAPE picks the result: `ints` (default: 2M integers, 4 MB), `objects`
(dense: 380,000 objects like {"k":"b"}, 3.8 MB, issue 46.1; costlier to
parse than its bound, refused before it is parsed), `objects_small`
(150,000 of them, 1.5 MB: answered).
BURST is the number of concurrent calls (default 8). Each answer's error
code is counted and printed.
"""
import http.client
import json
import os
import sys
import threading
import time

addr, pid = sys.argv[1], int(sys.argv[2])
# The invalid results: {"items": [1, 1, …]} (2M integers where strings are
# due), or {"items": [{"k": "b"}, …]}.
SHAPES = {
    "ints": lambda: json.dumps({"items": [1] * 2_000_000}, separators=(",", ":")),
    "objects": lambda: '{"items":[' + ",".join(['{"k":"b"}'] * 380_000) + "]}",
    "objects_small": lambda: '{"items":[' + ",".join(['{"k":"b"}'] * 150_000) + "]}",
}
big = SHAPES[os.environ.get("SHAPE", "ints")]()
answers = {}
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
    r = c.getresponse()
    text = r.read().decode(errors="replace")
    key = "%d %s" % (r.status, "VALIDATION_FAILED" if "VALIDATION_FAILED" in text else text[:90])
    answers[key] = answers.get(key, 0) + 1


# The baseline is a server that has answered: one small call first (the
# code it runs is then paged in, as it is after the burst).
post(0, '{"items": ["a", 1]}')
time.sleep(3)
print("idle MB", rss_mb())
answers.clear()
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
print("input MB %.1f, peak MB" % (len(big) / 1e6), peak[0])
print("answers", {k: v for k, v in answers.items()})
time.sleep(2.5)
print("after MB", rss_mb())
