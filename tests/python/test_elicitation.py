"""A person answers a run's `await:` through the official Python SDK client's
elicitation callback.

Usage:
  python3 tests/python/test_elicitation.py stdio BINARY ROOT
  python3 tests/python/test_elicitation.py http URL TOKEN
`cargo test --test it mcp_clients::` runs it. The workflow is the bundled
`merge_when_approved`: fetch a merge request, ask a person, merge on yes or
leave a note on no. A 2025-11-25 session client that declares elicitation is
asked by the server itself (`elicitation/create`, src/mcp/elicit.rs) when
think_next reaches the wait: an accepted answer is recorded and the call
returns the next instruction; a declined or cancelled one, or an accepted
one that fails the wait's schema, leaves the step waiting, and think_answer
answers it later. A 2026-07-28 client (server/discover, no session) is never
sent a server-to-client request: its think_next says the run waits and
think_answer answers. Exits non-zero on the first failed check.
"""

import asyncio
import sys

from mcp import types
from sdk_client import call, check_connection, connect

WF = "merge_when_approved"
MR = {"iid": 7, "title": "Add dark mode", "source_branch": "dark", "target_branch": "main", "changes": []}
QUESTION = 'Merge !7 "Add dark mode" (dark into main)?'


class Person:
    """The elicitation callback: answers each question with the next reply
    of `replies` and keeps every question it was asked."""

    def __init__(self):
        self.asked, self.replies = [], []

    async def __call__(self, context, params):
        self.asked.append(params)
        return self.replies.pop(0)


async def start(client, run_id):
    """think_plan, then the merge request for fetch_mr: think_next's answer."""
    args = {"workflow": WF, "run_id": run_id, "params": {"mr_iid": "!7", "project": "group/app"}}
    err, out = await call(client, "think_plan", args)
    assert not err, out
    i = out["instruction"]
    assert (i["step_id"], i["call"]) == ("fetch_mr", "gitlab.get_merge_request"), i
    assert i["input"] == {"project": "group/app", "mr_iid": "!7"}, i
    return await call(client, "think_next", {"workflow": WF, "run_id": run_id, "step_id": "fetch_mr", "result": MR})


async def state(client, run_id):
    err, s = await call(client, "think_state_get", {"workflow": WF, "run_id": run_id})
    assert not err, s
    return s, {step["id"]: step["status"] for step in s["steps"]}


def check_waiting(out):
    """A progress that says the run waits for the person at `approve`."""
    assert out["instruction"] is None and out["done"] is False, out
    wait = out["waiting"][0]
    assert wait["step_id"] == "approve" and wait["ask"] == QUESTION, wait
    assert wait["schema"]["required"] == ["approved"], wait


async def finish(client, run_id, out, step, call_name, expect_input):
    """The instruction after the answer is `step`; submit it; the run is done."""
    i = out["instruction"]
    assert (i["step_id"], i["call"]) == (step, call_name), out
    assert i["input"] == expect_input, i
    err, out = await call(client, "think_next", {"workflow": WF, "run_id": run_id, "step_id": step, "result": {"ok": True}})
    assert not err and out["done"] is True and out["state"]["status"] == "done", out


async def session_client(transport, where):
    person = Person()
    async with connect(transport, "legacy", elicitation_callback=person, **where) as (client, wire):
        check_connection(client, wire, "legacy")
        # Yes: asked through elicitation/create, recorded, merged.
        person.replies.append(types.ElicitResult(action="accept", content={"approved": True}))
        err, out = await start(client, "yes")
        assert not err and not person.replies, out
        asked = person.asked[-1]
        assert asked.message == QUESTION, asked
        schema = asked.requested_schema
        assert schema["required"] == ["approved"], schema
        assert schema["properties"]["approved"]["type"] == "boolean", schema
        assert schema["properties"]["note"]["type"] == "string", schema
        s, steps = await state(client, "yes")
        assert steps["approve"] == "done" and s["captures"]["approval"] == {"approved": True}, s
        await finish(client, "yes", out, "merge", "gitlab.merge_merge_request", {"project": "group/app", "mr_iid": "!7"})
        s, steps = await state(client, "yes")
        assert steps == {"fetch_mr": "done", "approve": "done", "merge": "done", "explain_no": "skipped"}, steps

        # Decline, cancel, and an answer outside the schema: the step keeps waiting.
        for run_id, reply in [
            ("declined", types.ElicitResult(action="decline")),
            ("cancelled", types.ElicitResult(action="cancel")),
        ]:
            person.replies.append(reply)
            err, out = await start(client, run_id)
            assert not err and not person.replies, out
            check_waiting(out)
            s, steps = await state(client, run_id)
            assert steps["approve"] == "waiting" and "approval" not in s["captures"], s
        person.replies.append(types.ElicitResult(action="accept", content={"note": "no flag"}))
        err, out = await start(client, "wrong")
        assert err and out["error"] == "VALIDATION_FAILED" and "approved" in str(out["details"]), out
        s, steps = await state(client, "wrong")
        assert steps["approve"] == "waiting" and "approval" not in s["captures"], s

        # The declined run is answered later with think_answer: the note path.
        answer = {"workflow": WF, "run_id": "declined", "step_id": "approve",
                  "value": {"approved": False, "note": "not before the release"}}
        err, out = await call(client, "think_answer", answer)
        assert not err, out
        body = "Not merged: not before the release."
        await finish(client, "declined", out, "explain_no", "gitlab.create_note",
                     {"project": "group/app", "mr_iid": "!7", "body": body})
        s, steps = await state(client, "declined")
        assert steps == {"fetch_mr": "done", "approve": "done", "merge": "skipped", "explain_no": "done"}, steps
        assert len(person.asked) == 4, person.asked


async def stateless_client(transport, where):
    person = Person()
    async with connect(transport, "auto", elicitation_callback=person, **where) as (client, wire):
        check_connection(client, wire, "auto")
        err, out = await start(client, "modern")
        assert not err, out
        check_waiting(out)
        assert person.asked == [], "a 2026-07-28 request was sent elicitation/create"
        answer = {"workflow": WF, "run_id": "modern", "step_id": "approve", "value": {"approved": True}}
        err, out = await call(client, "think_answer", answer)
        assert not err, out
        await finish(client, "modern", out, "merge", "gitlab.merge_merge_request", {"project": "group/app", "mr_iid": "!7"})
        s, steps = await state(client, "modern")
        assert s["captures"]["approval"] == {"approved": True}, s
        assert steps == {"fetch_mr": "done", "approve": "done", "merge": "done", "explain_no": "skipped"}, steps


async def main(transport, a, b):
    where = {"binary": a, "root": b} if transport == "stdio" else {"url": a, "token": b}
    await session_client(transport, where)
    await stateless_client(transport, where)
    print(f"python mcp sdk elicitation: {transport}: ok")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
