"""Shared by the official-SDK client tests in this folder (tests/it/mcp_clients.rs).

`connect()` opens an `mcp.Client` (SDK 2.x) on `savant-think serve` either
over stdio (the test's BINARY launched by the SDK) or over Streamable HTTP
(a server the Rust test started, with its bearer token), in one of the SDK's
modes: `legacy` is a 2025-11-25 session (initialize, then Mcp-Session-Id),
`auto` probes `server/discover` and, against savant-think, adopts 2026-07-28:
stateless requests, no session. Over HTTP every POST is recorded in `wire`
(its JSON-RPC method, the request's and the response's headers) so a test can
say what went over the wire, not only what the SDK reports.
"""

import json
from contextlib import asynccontextmanager

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

REVISION = {"legacy": "2025-11-25", "auto": "2026-07-28"}

# What the server tells every client to do first (src/mcp/server.rs, INSTRUCTIONS).
INSTRUCTION_WORDS = ["think_driver_prompt", "think_workflows_list", "think_plan", "think_next", "done: true"]


class Wire:
    """The HTTP exchanges of one client: (method, request headers, response headers)."""

    def __init__(self):
        self.posts = []

    async def on_response(self, response):
        request = response.request
        if request.method != "POST":
            return
        body = json.loads(request.content or b"{}")
        method = body.get("method") if isinstance(body, dict) else None
        self.posts.append((method, dict(request.headers), dict(response.headers), response.status_code))

    def methods(self):
        return [m for m, _, _, _ in self.posts]


@asynccontextmanager
async def connect(transport, mode, binary=None, root=None, url=None, token=None, **client_args):
    """Yields `(client, wire)`; `wire` is None on stdio."""
    if transport == "stdio":
        params = StdioServerParameters(
            command=binary, args=["serve", "--root", root], env={"LOG_LEVEL": "warn"}
        )
        async with Client(params, mode=mode, **client_args) as client:
            yield client, None
        return
    wire = Wire()
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"},
        event_hooks={"response": [wire.on_response]},
        timeout=httpx2.Timeout(60.0),
    )
    async with http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode, **client_args) as client:
            yield client, wire


def check_connection(client, wire, mode):
    """The negotiated revision, the server's identity and its instructions;
    over HTTP, that a session client has one and a stateless client has none."""
    assert client.protocol_version == REVISION[mode], (mode, client.protocol_version)
    assert client.server_info is not None and client.server_info.name == "savant-think", client.server_info
    instructions = client.instructions or ""
    for word in INSTRUCTION_WORDS:
        assert word in instructions, f"{word!r} missing from the instructions: {instructions!r}"
    if wire is None:
        return
    methods = wire.methods()
    assert all(status == 200 for _, _, _, status in wire.posts if status != 202), wire.posts
    if mode == "legacy":
        assert methods[0] == "initialize", methods
        assert "server/discover" not in methods, methods
        sid = wire.posts[0][2].get("mcp-session-id")
        assert sid, f"initialize opened no session: {wire.posts[0][2]}"
        for method, sent, _, _ in wire.posts[1:]:
            assert sent.get("mcp-session-id") == sid, (method, sent)
            assert sent.get("mcp-protocol-version") == "2025-11-25", (method, sent)
    else:
        assert methods[0] == "server/discover", methods
        assert "initialize" not in methods and "notifications/initialized" not in methods, methods
        for method, sent, got, _ in wire.posts:
            assert "mcp-session-id" not in sent and "mcp-session-id" not in got, (method, sent, got)
            if method != "server/discover":
                assert sent.get("mcp-protocol-version") == "2026-07-28", (method, sent)


async def call(client, name, args):
    """`(isError, structuredContent)` of a tool call; checks the text copy."""
    r = await client.call_tool(name, args)
    assert r.structured_content is not None, f"{name}: no structuredContent"
    assert json.loads(r.content[0].text) == r.structured_content, f"{name}: the text copy differs"
    return bool(r.is_error), r.structured_content
