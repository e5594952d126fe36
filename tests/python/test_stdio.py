"""Drives `savant-think serve` (stdio) with the official Python MCP SDK.

Usage: python3 tests/python/test_stdio.py BINARY ROOT
(`cargo test --test it mcp_clients::` runs it with a scratch ROOT). Exits non-zero
on the first failed check.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def field(obj, *names):
    """Reads a field by its SDK name (snake_case in 2.x, camelCase in 1.x)."""
    for n in names:
        if hasattr(obj, n):
            return getattr(obj, n)
    raise AttributeError(f"{type(obj).__name__} has none of {names}")


async def call(session, name, args):
    r = await session.call_tool(name, args)
    structured = field(r, "structured_content", "structuredContent")
    assert structured is not None, f"{name}: no structuredContent"
    assert json.loads(r.content[0].text) == structured, f"{name}: the text copy differs"
    return bool(field(r, "is_error", "isError")), structured


async def main(binary, root):
    params = StdioServerParameters(
        command=binary, args=["serve", "--root", root], env={"LOG_LEVEL": "warn"}
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            info = field(init, "server_info", "serverInfo")
            assert info.name == "savant-think", info
            assert "think_driver_prompt" in (init.instructions or "")

            tools = {t.name: t for t in (await session.list_tools()).tools}
            for want in ["think_plan", "think_next", "think", "prompt_say", "think_workflows_list"]:
                assert want in tools, sorted(tools)
            assert field(tools["think_plan"], "output_schema", "outputSchema") is not None

            prompts = [p.name for p in (await session.list_prompts()).prompts]
            assert "stable" in prompts, prompts
            got = await session.get_prompt("stable")
            assert got.messages[0].content.text.strip(), "empty driver prompt"

            err, listed = await call(session, "think_workflows_list", {})
            assert not err and any(w["id"] == "release_notes" for w in listed["workflows"])

            run_id = "python-1"
            err, out = await call(
                session,
                "think_plan",
                {"workflow": "release_notes", "params": {"milestone": "v1"}, "run_id": run_id},
            )
            assert not err, out
            err, bad = await call(
                session,
                "think_next",
                {"workflow": "release_notes", "run_id": run_id, "step_id": "list_changes",
                 "result_snapshot": {"items": "nope"}},
            )
            assert err and bad["error"] == "VALIDATION_FAILED", bad

            for _ in range(20):
                if out["done"]:
                    break
                i = out["instruction"]
                if i["call"] == "gitlab.list_merge_requests":
                    result = {"items": [
                        {"iid": 1, "title": "Add dark mode", "labels": []},
                        {"iid": 2, "title": "Bump CI image", "labels": ["ci"]},
                    ]}
                elif i["call"] == "think":
                    err, t = await call(session, "think", dict(i["input"], workflow="release_notes", run_id=run_id))
                    assert not err and t["recorded_in"] == "run", t
                    result = {"sentence": "It is better now."}
                elif i["call"] == "prompt.say":
                    err, result = await call(session, "prompt_say", i["input"])
                    assert not err, result
                else:
                    raise AssertionError(f"unexpected call {i['call']}")
                err, out = await call(
                    session,
                    "think_next",
                    {"workflow": "release_notes", "run_id": run_id, "step_id": i["step_id"],
                     "result_snapshot": result},
                )
                assert not err, out
            assert out["done"] is True, out

            uris = [str(r.uri) for r in (await session.list_resources()).resources]
            assert f"run://release_notes/{run_id}" in uris, uris
            read = await session.read_resource(f"run://release_notes/{run_id}")
            assert json.loads(read.contents[0].text)["status"] == "done"

            # A tool the server does not have is a JSON-RPC error (-32602).
            try:
                r = await session.call_tool("think_plann", {})
            except Exception as e:  # the SDK's McpError / MCPError
                data = getattr(e, "error", e)
                assert field(data, "code") == -32602, e
                assert field(data, "data")["error"] == "UNKNOWN_TOOL", e
            else:
                raise AssertionError(f"an unknown tool answered with a result: {r}")
    print("python mcp sdk: ok")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
