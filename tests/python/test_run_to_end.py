"""Drives a whole `release_notes` run with the official Python SDK client.

Usage:
  python3 tests/python/test_run_to_end.py stdio MODE BINARY ROOT
  python3 tests/python/test_run_to_end.py http MODE URL TOKEN
MODE is `legacy` (a 2025-11-25 session) or `auto` (server/discover, then
2026-07-28 stateless requests). `cargo test --test it mcp_clients::` runs it.
It checks the negotiated revision and the instructions (sdk_client), lists
the workflows, runs think_plan then think_next until done — calling `think`
and `prompt_say` on the server like a model would — and reads the final
state back with think_state_get. Exits non-zero on the first failed check.
"""

import asyncio
import sys

from sdk_client import call, check_connection, connect

CHANGES = [
    {"iid": 1, "title": "Add dark mode", "labels": []},
    {"iid": 2, "title": "Bump CI image", "labels": ["ci"]},
    {"iid": 3, "title": "Export to CSV", "labels": ["feature"]},
]


def sentence(thought):
    """What the "model" answers a describe_change thought: names the change."""
    for change in CHANGES:
        if f'"{change["title"]}"' in thought:
            return {"sentence": f"{change['title']} is here."}
    raise AssertionError(f"a thought about no listed change: {thought}")


async def drive(client, run_id):
    err, listed = await call(client, "think_workflows_list", {})
    assert not err and "release_notes" in [w["id"] for w in listed["workflows"]], listed
    err, out = await call(
        client, "think_plan", {"workflow": "release_notes", "params": {"milestone": "v9"}, "run_id": run_id}
    )
    assert not err and out["run_id"] == run_id, out
    calls, said = [], None
    for _ in range(12):
        if out["done"]:
            break
        i = out["instruction"]
        calls.append((i["step_id"], i["call"]))
        if i["call"] == "gitlab.list_merge_requests":
            assert i["input"] == {"milestone": "v9", "state": "merged"}, i
            result = {"items": CHANGES}
        elif i["call"] == "think":
            err, t = await call(client, "think", dict(i["input"], workflow="release_notes", run_id=run_id))
            assert not err and t["recorded_in"] == "run", t
            result = sentence(i["input"]["thought"])
        elif i["call"] == "prompt.say":
            err, result = await call(client, "prompt_say", i["input"])
            assert not err, result
            said = i["input"]["text"]
        else:
            raise AssertionError(f"unexpected call {i['call']}")
        err, out = await call(
            client,
            "think_next",
            {"workflow": "release_notes", "run_id": run_id, "step_id": i["step_id"], "result": result},
        )
        assert not err, out
    assert out["done"] is True and out["state"]["status"] == "done", out
    # The CI-labelled change is skipped by the workflow's `when:`.
    assert calls == [
        ("list_changes", "gitlab.list_merge_requests"),
        ("describe_change[0]", "think"),
        ("describe_change[2]", "think"),
        ("publish", "prompt.say"),
    ], calls
    # The skipped item keeps its place in `notes` as null.
    assert said == (
        "Release notes for v9 (3 changes considered):\n"
        '[{"sentence":"Add dark mode is here."},null,{"sentence":"Export to CSV is here."}]'
    ), said


async def check_final_state(client, run_id):
    err, state = await call(client, "think_state_get", {"workflow": "release_notes", "run_id": run_id})
    assert not err, state
    assert state["status"] == "done" and state["run_id"] == run_id, state
    assert state["params"]["milestone"] == "v9", state["params"]
    assert [s["status"] for s in state["steps"]] == ["done", "done", "done"], state["steps"]
    captures = state["captures"]
    assert captures["changes"] == {"items": CHANGES}, captures
    notes = [{"sentence": "Add dark mode is here."}, None, {"sentence": "Export to CSV is here."}]
    assert captures["notes"] == notes, captures["notes"]
    done = [h.get("step_id") for h in state["history"]]
    assert done[0] == "list_changes" and done[-1] == "publish", state["history"]


async def main(transport, mode, a, b):
    where = {"binary": a, "root": b} if transport == "stdio" else {"url": a, "token": b}
    run_id = f"py-{transport}-{mode}"
    async with connect(transport, mode, **where) as (client, wire):
        check_connection(client, wire, mode)
        await drive(client, run_id)
        await check_final_state(client, run_id)
        if wire is not None:
            check_connection(client, wire, mode)
    print(f"python mcp sdk: {transport} {mode}: ok")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
