#!/usr/bin/env python3
"""Interop through `ferromcp gateway`: peer SDKs' servers behind it, peer SDKs' clients in
front of it.

Usage:
    gateway_front.py FERROMCP ferromcp NAME TARGET
        A gateway mounting TARGET (a stdio server's command line, one string split shell-style,
        or a Streamable HTTP URL) as [servers.NAME], reached by the ferromcp CLI's client on
        stdio: its tools are listed and called by their prefixed names (NAME_add, NAME_echo,
        NAME_fail), as every interop peer server exposes them (interop/README.md).
    gateway_front.py FERROMCP python MODE
        A gateway mounting `ferromcp serve` as [servers.demo], reached on stdio by the Python
        SDK's client (mode legacy or auto), which calls demo_add.
    gateway_front.py FERROMCP ts NODE
        The same, reached by the TypeScript SDK's client (interop/typescript/gateway_client.mjs,
        MCP_SDK_NODE_MODULES as for client.mjs).

Every check prints `ok   <id>` or `FAIL <id>: <why>`; exit status 0 if every check passed, 1
otherwise.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from typing import Any

TIMEOUT = 30
failed: list[str] = []


def check(cid: str, cond: bool, why: str) -> None:
    if cond:
        print(f"ok   {cid}", flush=True)
    else:
        failed.append(cid)
        print(f"FAIL {cid}: {why}", flush=True)


def config(name: str, target: list[str] | str) -> str:
    """A gateway config mounting `target` as [servers.NAME]; returns its path."""
    if isinstance(target, str):
        body = f"url = {json.dumps(target)}\n"
    else:
        body = f"command = {json.dumps(target[0])}\nargs = {json.dumps(target[1:])}\n"
    fd, path = tempfile.mkstemp(prefix="ferromcp-gateway-interop-", suffix=".toml")
    with os.fdopen(fd, "w") as f:
        f.write(f"[servers.{name}]\n{body}")
    return path


def texts(result: Any) -> list[str]:
    if not isinstance(result, dict):
        return []
    return [c.get("text", "") for c in result.get("content") or [] if isinstance(c, dict) and c.get("type") == "text"]


def ferromcp_front(ferromcp: str, name: str, target: str) -> None:
    backend: list[str] | str = target if target.startswith("http") else shlex.split(target)
    path = config(name, backend)
    gateway = shlex.join([ferromcp, "gateway", path])
    try:

        def run(*args: str) -> tuple[int, Any, str]:
            cmd = [ferromcp, *args, "--timeout", "20"]
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, check=False)
            except subprocess.TimeoutExpired:
                return 124, None, f"no exit within {TIMEOUT} s"
            try:
                out = json.loads(p.stdout) if p.stdout.strip() else None
            except ValueError:
                out = None
            return p.returncode, out, p.stderr.strip()[-2000:]

        rc, out, err = run("tools", gateway)
        names = sorted(t.get("name") for t in (out or {}).get("tools", [])) if isinstance(out, dict) else []
        want = [f"{name}_add", f"{name}_echo", f"{name}_fail"]
        check("gateway-tools-list", rc == 0 and all(w in names for w in want), f"exit {rc}, tools {names}; {err}")
        rc, out, err = run("tool", gateway, f"{name}_add", '{"a": 2, "b": 3}')
        check("gateway-tool-add", rc == 0 and texts(out) == ["5"], f"exit {rc}, result {out}; {err}")
        rc, out, err = run("tool", gateway, f"{name}_echo", '{"text": "héllo"}')
        check("gateway-tool-echo", rc == 0 and texts(out) == ["héllo"], f"exit {rc}, result {out}; {err}")
        rc, out, err = run("tool", gateway, f"{name}_fail")
        is_error = isinstance(out, dict) and out.get("isError") is True
        check("gateway-tool-error-result", rc == 3 and is_error, f"exit {rc} (expected 3), result {out}; {err}")
    finally:
        os.unlink(path)


async def python_front(ferromcp: str, mode: str) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    path = config("demo", [ferromcp, "serve"])
    try:
        params = StdioServerParameters(command=ferromcp, args=["gateway", path])
        client = Client(stdio_client(params), mode=mode, read_timeout_seconds=15, cache=None)
        async with client:
            names = [t.name for t in (await client.list_tools()).tools]
            check("gateway-tools-list", "demo_add" in names and "demo_echo" in names, f"tools {sorted(names)}")
            r = await client.call_tool("demo_add", {"a": 2, "b": 3})
            got = [c.text for c in r.content if getattr(c, "type", "") == "text"]
            check("gateway-tool-add", not r.is_error and got == ["5"], repr(r))
    finally:
        os.unlink(path)


def ts_front(ferromcp: str, node: str) -> None:
    path = config("demo", [ferromcp, "serve"])
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "typescript", "gateway_client.mjs")
    try:
        p = subprocess.run([node, script, ferromcp, "gateway", path], capture_output=True, text=True, timeout=TIMEOUT * 2, check=False)
        sys.stdout.write(p.stdout)
        if p.returncode != 0 and "FAIL" not in p.stdout:
            check("ts-client", False, f"exit {p.returncode}: {p.stderr[-2000:]}")
        elif p.returncode != 0:
            failed.append("ts-client")
    finally:
        os.unlink(path)


def main() -> int:
    args = sys.argv[1:]
    if len(args) == 4 and args[1] == "ferromcp":
        ferromcp_front(args[0], args[2], args[3])
    elif len(args) == 3 and args[1] == "python":
        import anyio

        try:
            anyio.run(python_front, args[0], args[2])
        except Exception as e:  # noqa: BLE001 - reported as a failed check
            check("python-client", False, f"{type(e).__name__}: {e}")
    elif len(args) == 3 and args[1] == "ts":
        ts_front(args[0], args[2])
    else:
        print("FAIL run: usage: gateway_front.py FERROMCP (ferromcp NAME TARGET | python MODE | ts NODE)", flush=True)
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
