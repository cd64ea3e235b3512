#!/usr/bin/env python3
"""Interop peer: a tiny MCP server written with the Python SDK (`mcp` 2.3.0), for ferromcp's
client. It serves what the SDK serves (2025-11-25 through `initialize`, 2026-07-28 through
`server/discover`) on stdio, with `--http PORT` over Streamable HTTP at
http://127.0.0.1:PORT/mcp, or with `--sse PORT` over the 2024-11-05 HTTP+SSE transport (the
stream at http://127.0.0.1:PORT/sse, messages POSTed to /messages/).

Contents, the same in every interop peer server: tools `add` (a + b), `echo` (text), `fail`
(an error result); resource `interop://hello` (text); prompt `greet` (argument `name`).
"""

import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("python-interop-peer")


@server.tool(description="Adds two numbers.")
def add(a: float, b: float) -> str:
    total = a + b
    return str(int(total)) if total.is_integer() else str(total)


@server.tool(description="Returns its text.")
def echo(text: str) -> str:
    return text


@server.tool(description="Always returns an error result.")
def fail() -> str:
    raise ToolError("python peer: intended failure")


@server.resource("interop://hello", name="hello", mime_type="text/plain")
def hello() -> str:
    return "hello from python"


@server.prompt(description="Greets someone.")
def greet(name: str) -> str:
    return f"Say hello to {name}."


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif len(sys.argv) == 3 and sys.argv[1] == "--sse":
        server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
