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
sent a server-to-client request: its think_next answers with an
input-required result (src/mcp/input_required.rs) carrying the question; the
SDK asks the person and retries with the answer and the request state, which
is recorded; a declined one leaves the step waiting; a replayed, tampered or
misplaced state is refused (REQUEST_STATE_REFUSED) and records nothing.
Exits non-zero on the first failed check.
"""

import asyncio
import sys

from mcp import types
from mcp.shared.exceptions import MCPError
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
        # Yes: think_next answers with an input-required result, the SDK asks
        # the person and retries with the answer; it is recorded and the
        # retry returns the next instruction.
        person.replies.append(types.ElicitResult(action="accept", content={"approved": True}))
        err, out = await start(client, "modern")
        assert not err and not person.replies, out
        assert len(person.asked) == 1, person.asked
        asked = person.asked[0]
        assert asked.message == QUESTION, asked
        schema = asked.requested_schema
        assert schema["required"] == ["approved"] and schema["properties"]["approved"]["type"] == "boolean", schema
        s, steps = await state(client, "modern")
        assert steps["approve"] == "done" and s["captures"]["approval"] == {"approved": True}, s
        await finish(client, "modern", out, "merge", "gitlab.merge_merge_request", {"project": "group/app", "mr_iid": "!7"})
        s, steps = await state(client, "modern")
        assert steps == {"fetch_mr": "done", "approve": "done", "merge": "done", "explain_no": "skipped"}, steps
        if wire is not None:
            assert "elicitation/create" not in wire.methods(), wire.methods()

        # Decline: the step keeps waiting, think_answer answers it later.
        person.replies.append(types.ElicitResult(action="decline"))
        err, out = await start(client, "modern-no")
        assert not err and not person.replies, out
        check_waiting(out)
        s, steps = await state(client, "modern-no")
        assert steps["approve"] == "waiting" and "approval" not in s["captures"], s

        await replayed_state(client)


async def raw_next(client, run_id, **retry):
    """think_next for fetch_mr of a planned run, the input-required loop driven by hand."""
    args = {"workflow": WF, "run_id": run_id, "step_id": "fetch_mr", "result": MR}
    return await client.session.call_tool("think_next", args, allow_input_required=True, **retry)


async def expect_refused(client, run_id, responses, state_token, what):
    """The retry is a JSON-RPC error with REQUEST_STATE_REFUSED in its data."""
    try:
        await raw_next(client, run_id, input_responses=responses, request_state=state_token)
    except MCPError as e:
        assert (e.error.data or {}).get("error") == "REQUEST_STATE_REFUSED", e.error
        return
    raise AssertionError(f"{what} request state was accepted")


async def replayed_state(client):
    """The request state is single-use and tamper-proof: a replay, an edited
    state, or the state sent with another call is refused and records nothing;
    an answer outside the schema is VALIDATION_FAILED and records nothing."""
    plan = {"workflow": WF, "params": {"mr_iid": "!7", "project": "group/app"}}
    for run_id in ["replay", "wrong-answer"]:
        err, out = await call(client, "think_plan", {**plan, "run_id": run_id})
        assert not err, out
    first = await raw_next(client, "replay")
    assert isinstance(first, types.InputRequiredResult), first
    assert list(first.input_requests) == ["answer"], first.input_requests
    assert first.input_requests["answer"].params.message == QUESTION, first.input_requests
    state_token = first.request_state
    assert state_token, first
    yes = {"answer": types.ElicitResult(action="accept", content={"approved": True})}
    no = {"answer": types.ElicitResult(action="accept", content={"approved": False, "note": "replayed"})}

    # Tampered (last character changed): refused, nothing recorded.
    tampered = state_token[:-1] + ("A" if state_token[-1] != "A" else "B")
    await expect_refused(client, "replay", no, tampered, "a tampered")
    # The state with another call (another run's arguments): refused.
    await expect_refused(client, "wrong-answer", no, state_token, "another call's")
    s, steps = await state(client, "replay")
    assert steps["approve"] == "waiting" and "approval" not in s["captures"], s

    # The real retry is recorded; replaying it is refused and changes nothing.
    done = await raw_next(client, "replay", input_responses=yes, request_state=state_token)
    assert isinstance(done, types.CallToolResult) and not done.is_error, done
    assert done.structured_content["instruction"]["step_id"] == "merge", done.structured_content
    await expect_refused(client, "replay", no, state_token, "a replayed")
    s, steps = await state(client, "replay")
    assert steps["approve"] == "done" and s["captures"]["approval"] == {"approved": True}, s

    # An answer outside the schema: VALIDATION_FAILED naming the field, the step waits.
    first = await raw_next(client, "wrong-answer")
    assert isinstance(first, types.InputRequiredResult), first
    bad = {"answer": types.ElicitResult(action="accept", content={"note": "no flag"})}
    out = await raw_next(client, "wrong-answer", input_responses=bad, request_state=first.request_state)
    assert isinstance(out, types.CallToolResult) and out.is_error, out
    body = out.structured_content
    assert body["error"] == "VALIDATION_FAILED" and "approved" in str(body["details"]), body
    s, steps = await state(client, "wrong-answer")
    assert steps["approve"] == "waiting" and "approval" not in s["captures"], s


async def main(transport, a, b):
    where = {"binary": a, "root": b} if transport == "stdio" else {"url": a, "token": b}
    await session_client(transport, where)
    await stateless_client(transport, where)
    print(f"python mcp sdk elicitation: {transport}: ok")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
