#!/usr/bin/env python3
"""A tiny stdio MCP server for tests: one tool, `probe`, that echoes its arguments.

Newline-delimited JSON-RPC 2.0 (initialize, tools/list, tools/call, ping); any other
request gets a JSON-RPC error, notifications get nothing. `--slow-start <seconds>` waits that
long before reading anything, as a server that is slow to start does: the demo plugin starts it
so, so the environment probe's report is only right when the probe waits for its servers.
"""

import json
import sys
import time

TOOL = {"name": "probe", "description": "Echo the arguments back (a test probe).", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}


def answer(request: dict) -> dict | None:
    method, ident = request.get("method"), request.get("id")
    if ident is None:
        return None
    if method == "initialize":
        version = (request.get("params") or {}).get("protocolVersion") or "2025-06-18"
        result = {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "mini", "version": "0.1"}}
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        args = (request.get("params") or {}).get("arguments") or {}
        result = {"content": [{"type": "text", "text": "probe-ok " + json.dumps(args, sort_keys=True)}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": f"method not found: {method}"}}
    return {"jsonrpc": "2.0", "id": ident, "result": result}


if "--slow-start" in sys.argv:
    time.sleep(float(sys.argv[sys.argv.index("--slow-start") + 1]))
for line in sys.stdin:
    if not line.strip():
        continue
    reply = answer(json.loads(line))
    if reply is not None:
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
