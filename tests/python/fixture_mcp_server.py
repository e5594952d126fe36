"""A small MCP server over stdio for the tests (standard library only).

Its tools have output schemas and annotations, and tools/list is paged (one
tool a page), so `tools sync` must follow nextCursor. Options:
  --fail          print a reason on stderr and exit 1 before answering
  --wrong-output  get_item returns a result that violates its outputSchema
  --version V     the version it reports (default 1.0.0)
"""

import json
import sys

ARGS = sys.argv[1:]
VERSION = ARGS[ARGS.index("--version") + 1] if "--version" in ARGS else "1.0.0"

TOOLS = [
    {
        "name": "get_item",
        "title": "Get an item",
        "description": "Get an item by id.",
        "inputSchema": {
            "type": "object",
            "required": ["id"],
            "properties": {"id": {"type": "integer", "description": "The item's id."}},
        },
        "outputSchema": {
            "type": "object",
            "required": ["title", "labels"],
            "properties": {
                "title": {"type": "string"},
                "labels": {"type": "array", "items": {"type": "string"}},
            },
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
    {
        "name": "delete_item",
        "description": "Delete an item for good.",
        "inputSchema": {
            "type": "object",
            "required": ["id"],
            "properties": {"id": {"type": "integer"}},
        },
        "annotations": {"destructiveHint": True, "idempotentHint": True},
    },
    {
        "name": "echo",
        "description": "Echo the text back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
]


def reply(msg_id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}) + "\n")
    sys.stdout.flush()


def call(name, args):
    if name == "get_item":
        item = {"title": "Item %s" % args.get("id"), "labels": ["a"]}
        if "--wrong-output" in ARGS:
            item = {"titel": "Item %s" % args.get("id")}
        return {"content": [{"type": "text", "text": json.dumps(item)}], "structuredContent": item}
    if name == "delete_item":
        return {"content": [{"type": "text", "text": "deleted"}]}
    return {"content": [{"type": "text", "text": args.get("text", "")}]}


def main():
    if "--fail" in ARGS:
        sys.stderr.write("fixture: cannot reach the item database at 127.0.0.1:1\n")
        sys.stderr.flush()
        sys.exit(1)
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        method, msg_id, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if msg_id is None:
            continue
        if method == "initialize":
            reply(msg_id, {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "fixture-items", "version": VERSION},
            })
        elif method == "tools/list":
            page = int(params.get("cursor") or 0)
            result = {"tools": TOOLS[page:page + 1]}
            if page + 1 < len(TOOLS):
                result["nextCursor"] = str(page + 1)
            reply(msg_id, result)
        elif method == "tools/call":
            reply(msg_id, call(params.get("name"), params.get("arguments") or {}))
        elif method == "ping":
            reply(msg_id, {})
        else:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id,
                                         "error": {"code": -32601, "message": "no method " + str(method)}}) + "\n")
            sys.stdout.flush()


main()
