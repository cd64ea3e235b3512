#!/usr/bin/env python3
"""Interop: the `ferromcp` CLI's client commands (inspect, tools, tool, call) against a peer
server (stdio command or Streamable HTTP URL) written with another SDK.

Usage: cli_peer.py FERROMCP PROTOCOL ERA TARGET
    PROTOCOL  what to pass to --protocol: auto, 2025-11-25 or 2026-07-28
    ERA       the era the connection must end up in: handshake or modern
    TARGET    a URL, or the stdio server's command line (one string, split shell-style)

The peer exposes what every interop peer server exposes (interop/README.md). Every check prints
`ok   <id>` or `FAIL <id>: <why>`; exit status 0 if every check passed, 1 otherwise. Standard
library only.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

TIMEOUT = 30
failed: list[str] = []


def run(ferromcp: str, protocol: str, *args: str) -> tuple[int, Any, str]:
    """Runs one CLI command; returns (exit status, parsed stdout or None, stderr)."""
    cmd = [ferromcp, *args, "--protocol", protocol, "--timeout", "20"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return 124, None, f"no exit within {TIMEOUT} s: {cmd}"
    try:
        out = json.loads(p.stdout) if p.stdout.strip() else None
    except ValueError:
        out = None
    return p.returncode, out, p.stderr.strip()


def check(cid: str, cond: bool, why: str) -> None:
    if cond:
        print(f"ok   {cid}", flush=True)
    else:
        failed.append(cid)
        print(f"FAIL {cid}: {why}", flush=True)


def texts(result: Any) -> list[str]:
    if not isinstance(result, dict):
        return []
    return [c.get("text", "") for c in result.get("content") or [] if isinstance(c, dict) and c.get("type") == "text"]


def main() -> int:
    if len(sys.argv) != 5:
        print("FAIL run: usage: cli_peer.py FERROMCP PROTOCOL ERA TARGET", flush=True)
        return 1
    ferromcp, protocol, era, target = sys.argv[1:]

    rc, out, err = run(ferromcp, protocol, "inspect", target, "--json")
    got_era = out.get("era") if isinstance(out, dict) else None
    check("inspect", rc == 0 and got_era == era, f"exit {rc}, era {got_era!r} (expected {era}); {err}")
    if isinstance(out, dict):
        print(f"     protocol {out.get('protocolVersion')}, server {out.get('serverInfo')}", flush=True)

    rc, out, err = run(ferromcp, protocol, "tools", target)
    listed = {t.get("name"): t for t in (out or {}).get("tools", [])} if isinstance(out, dict) else {}
    names = sorted(listed)
    check("tools", rc == 0 and {"add", "echo", "fail"} <= set(names), f"exit {rc}, tools {names}; {err}")

    rc, out, err = run(ferromcp, protocol, "tool", target, "add", '{"a": 2, "b": 3}')
    check("tool-add", rc == 0 and texts(out) == ["5"], f"exit {rc}, result {out}; {err}")
    if (listed.get("add") or {}).get("outputSchema"):
        # A peer whose `add` declares an output schema must send structured content with it.
        got = out.get("structuredContent") if isinstance(out, dict) else None
        check("tool-add-structured", isinstance(got, dict), f"no structuredContent: {out}")

    # A peer that lists `protocol_info` (the TS SDK v2 peer) reports, as structured output, the
    # era and revision it served the call at: the server's side of the negotiation.
    if "protocol_info" in names:
        rc, out, err = run(ferromcp, protocol, "tool", target, "protocol_info")
        got = (out or {}).get("structuredContent") if isinstance(out, dict) else None
        want = {"era": era, "protocolVersion": "2026-07-28" if era == "modern" else "2025-11-25"}
        check("tool-structured-protocol-info", rc == 0 and got == want, f"exit {rc}, result {out} (expected {want}); {err}")

    rc, out, err = run(ferromcp, protocol, "tool", target, "fail")
    is_error = isinstance(out, dict) and out.get("isError") is True
    check("tool-error-result", rc == 3 and is_error, f"exit {rc} (expected 3), result {out}; {err}")

    rc, out, err = run(ferromcp, protocol, "call", target, "resources/read", '{"uri": "interop://hello"}')
    contents = (out or {}).get("contents") if isinstance(out, dict) else None
    text = contents[0].get("text", "") if contents else ""
    check("call-resources-read", rc == 0 and text.startswith("hello from"), f"exit {rc}, result {out}; {err}")

    params = '{"name": "greet", "arguments": {"name": "Ada"}}'
    rc, out, err = run(ferromcp, protocol, "call", target, "prompts/get", params)
    messages = (out or {}).get("messages") if isinstance(out, dict) else None
    said = " ".join(str((m.get("content") or {}).get("text", "")) for m in messages or [])
    check("call-prompts-get", rc == 0 and "Ada" in said, f"exit {rc}, result {out}; {err}")

    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
