#!/usr/bin/env python3
"""Interop client: the Python MCP SDK (`mcp` 2.3.0) against ferromcp's demo server.

Usage:
    client.py [--mode legacy|auto|2026-07-28] [--deadline SECONDS] stdio CMD [ARG...]
    client.py [--mode ...] http URL
    client.py --mode legacy sse URL     the 2024-11-05 HTTP+SSE transport (URL: the stream)

`legacy` forces the 2025-11-25 initialize handshake; `auto` probes `server/discover` first
(2026-07-28) and must end up on 2026-07-28 with a server that speaks it; a version string pins
that modern version without a probe.

Every check prints one line: `ok   <id>`, `FAIL <id>: <why>`, or `skip <id>: <why>` (optional
checks whose fixture the server does not list). A failed check does not stop the later ones
unless the connection itself failed. Exit status: 0 if every check passed, 1 otherwise.
`.ci/interop.sh` compares the failed ids with `interop/expected-failures.txt`.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp import Client, MCPError, StdioServerParameters, types
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.subscriptions import ToolsListChanged
from mcp.client.streamable_http import streamable_http_client
from mcp_types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse


class CheckFailed(Exception):
    pass


def check(cond: bool, name: str, why: str = "") -> None:
    if not cond:
        raise CheckFailed(f"{name}: {why}")


# --- a transport wrapper that records every JSON-RPC message in both directions -------------


class Wire:
    """What went over the wire: (direction, message) pairs, direction 'in' or 'out'."""

    def __init__(self) -> None:
        self.log: list[tuple[str, Any]] = []

    def responses_to(self, request_id: Any) -> list[Any]:
        return [
            m
            for d, m in self.log
            if d == "in" and isinstance(m, JSONRPCResponse | JSONRPCError) and m.id == request_id
        ]

    def sent_requests(self, method: str) -> list[Any]:
        return [m for d, m in self.log if d == "out" and isinstance(m, JSONRPCRequest) and m.method == method]

    def sent_notifications(self, method: str) -> list[Any]:
        return [m for d, m in self.log if d == "out" and isinstance(m, JSONRPCNotification) and m.method == method]


class _RecordingRead:
    def __init__(self, inner: Any, wire: Wire) -> None:
        self._inner, self._wire = inner, wire

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def receive(self) -> Any:
        item = await self._inner.receive()
        message = getattr(item, "message", None)
        if message is not None:
            self._wire.log.append(("in", message))
        return item

    def __aiter__(self) -> _RecordingRead:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _RecordingRead:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class _RecordingWrite:
    def __init__(self, inner: Any, wire: Wire) -> None:
        self._inner, self._wire = inner, wire

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def send(self, item: Any, /) -> None:
        message = getattr(item, "message", None)
        if message is not None:
            self._wire.log.append(("out", message))
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _RecordingWrite:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


def recording(inner: Any, wire: Wire) -> Any:
    @asynccontextmanager
    async def transport():  # type: ignore[no-untyped-def]
        async with inner as (read, write):
            yield _RecordingRead(read, wire), _RecordingWrite(write, wire)

    return transport()


# --- callbacks the server may need ---------------------------------------------------------

SAMPLED_TEXT = "interop sampled answer"
ELICITED_NAME = "interop-user"


async def on_sampling(_ctx: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=SAMPLED_TEXT),
        model="interop-model",
        stop_reason="endTurn",
    )


async def on_elicitation(_ctx: Any, params: Any) -> types.ElicitResult:
    schema = getattr(params, "requested_schema", None) or {}
    content: dict[str, Any] = {}
    for key, prop in (schema.get("properties") or {}).items():
        kind = prop.get("type")
        if kind == "string":
            content[key] = f"{ELICITED_NAME}@example.com" if "mail" in key else ELICITED_NAME
        elif kind in ("number", "integer"):
            content[key] = 1
        elif kind == "boolean":
            content[key] = True
    return types.ElicitResult(action="accept", content=content)


# --- the checks --------------------------------------------------------------------------


def texts(result: Any) -> list[str]:
    return [c.text for c in (getattr(result, "content", None) or []) if getattr(c, "type", None) == "text"]


class Results:
    def __init__(self) -> None:
        self.failed: list[str] = []

    @asynccontextmanager
    async def check(self, cid: str):  # type: ignore[no-untyped-def]
        """One check: prints `ok`, or `FAIL` with the reason; a failure does not stop the run."""
        try:
            yield
        except CheckFailed as e:
            self.fail(cid, str(e))
        except MCPError as e:
            self.fail(cid, f"MCPError {e.error.code}: {e.error.message}")
        except TimeoutError:
            self.fail(cid, "timed out")
        except Exception as e:  # noqa: BLE001 - a check that raised failed; the next ones still run
            inner: BaseException = e
            while isinstance(inner, BaseExceptionGroup) and len(inner.exceptions) == 1:
                inner = inner.exceptions[0]
            if isinstance(inner, MCPError):
                self.fail(cid, f"MCPError {inner.error.code}: {inner.error.message}")
            else:
                self.fail(cid, f"{type(inner).__name__}: {inner}")
        else:
            print(f"ok   {cid}", flush=True)

    def fail(self, cid: str, why: str) -> None:
        self.failed.append(cid)
        print(f"FAIL {cid}: {why}", flush=True)


async def run(args: argparse.Namespace, results: Results) -> None:
    wire = Wire()
    if args.transport == "stdio":
        inner = stdio_client(StdioServerParameters(command=args.target[0], args=args.target[1:]))
    elif args.transport == "sse":
        inner = sse_client(args.target[0])
    else:
        inner = streamable_http_client(args.target[0])
    logs: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    notifications: list[Any] = []

    async def on_message(message: Any) -> None:
        if not isinstance(message, Exception):
            notifications.append(message)

    modern = args.mode != "legacy"
    client = Client(
        recording(inner, wire),
        mode=args.mode,
        sampling_callback=on_sampling,
        elicitation_callback=on_elicitation,
        logging_callback=on_log,
        log_level="debug" if modern else None,
        message_handler=on_message,
        read_timeout_seconds=15,
        cache=None,
    )
    step = results.check
    connect_started = anyio.current_time()
    async with client:
        async with step("negotiate"):
            # A server that sat on the auto probe would stall the connect for its 10 s timeout.
            took = anyio.current_time() - connect_started
            check(took < 5, "connect time", f"{took:.1f} s to connect")
            expected = "2025-11-25" if args.mode == "legacy" else "2026-07-28"
            check(client.protocol_version == expected, "protocol", f"{client.protocol_version!r}, expected {expected}")
            info = client.server_info
            if args.mode in ("legacy", "auto"):  # a pinned version adopts a synthesised discover result
                check(info is not None and info.name == "ferromcp-demo", "serverInfo", repr(info))
            if args.mode == "auto":
                check(bool(wire.sent_requests("server/discover")), "probe", "auto mode sent no server/discover")
                check(not wire.sent_requests("initialize"), "probe", "auto mode fell back to initialize")
            if args.mode == "legacy":
                check(bool(wire.sent_requests("initialize")), "handshake", "no initialize sent")

        tools: dict[str, Any] = {}
        async with step("tools-list"):
            tools = {t.name: t for t in (await client.list_tools()).tools}
            for name in ("add", "echo", "countdown", "test_simple_text", "test_error_handling"):
                check(name in tools, "tools/list", f"missing {name}; got {sorted(tools)}")

        async with step("tools-call-text"):
            r = await client.call_tool("test_simple_text", {})
            check(not r.is_error and texts(r) == ["This is a simple text response for testing."], "test_simple_text", repr(r))
            r = await client.call_tool("add", {"a": 2, "b": 3})
            check(not r.is_error and texts(r) == ["5"], "add", repr(r))
            r = await client.call_tool("echo", {"text": "héllo"})
            check(not r.is_error and texts(r) == ["héllo"], "echo", repr(r))

        async with step("tools-call-error-result"):
            r = await client.call_tool("test_error_handling", {})
            check(r.is_error is True and bool(texts(r)), "test_error_handling", repr(r))

        async with step("tools-call-image"):
            r = await client.call_tool("test_image_content", {})
            check(not r.is_error and bool(r.content) and r.content[0].type == "image", "test_image_content", repr(r))

        async with step("tools-call-invalid-arguments"):
            # 2025-11-25 server/tools: input validation errors are tool execution errors.
            r = await client.call_tool("add", {"a": "two", "b": 3})
            check(r.is_error is True, "add with a string", repr(r))

        async with step("tools-call-unknown-tool"):
            try:
                r = await client.call_tool("no_such_tool", {})
            except MCPError as e:
                check(e.error.code == -32602, "code", f"{e.error.code} {e.error.message}")
            else:
                raise CheckFailed(f"unknown tool: no JSON-RPC error but {r!r}")

        structured = [n for n, t in tools.items() if t.output_schema]
        if structured:
            async with step("tools-call-structured"):
                r = await client.call_tool(structured[0], {})
                check(r.structured_content is not None, structured[0], repr(r))
        else:
            print("skip tools-call-structured: no tool with an outputSchema", flush=True)

        async with step("resources-list"):
            resources = {res.uri for res in (await client.list_resources()).resources}
            for uri in ("test://static-text", "test://static-binary"):
                check(uri in resources, "resources/list", f"missing {uri}; got {sorted(resources)}")

        async with step("resources-read-text"):
            rr = await client.read_resource("test://static-text")
            text = getattr(rr.contents[0], "text", None) if rr.contents else None
            check(text == "This is the content of the static text resource.", "test://static-text", repr(rr))

        async with step("resources-read-binary"):
            rr = await client.read_resource("test://static-binary")
            blob = getattr(rr.contents[0], "blob", None) if rr.contents else None
            check(bool(blob) and rr.contents[0].mime_type == "image/png", "test://static-binary", repr(rr))

        async with step("resources-read-missing"):
            # -32002 in the handshake era; SEP-2164 makes it -32602 at 2026-07-28.
            want = -32602 if modern else -32002
            try:
                rr = await client.read_resource("test://no-such-resource")
            except MCPError as e:
                check(e.error.code == want, "code", f"{e.error.code} {e.error.message}, expected {want}")
            else:
                raise CheckFailed(f"no error for a missing resource: {rr!r}")

        async with step("resources-templates"):
            templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
            check("test://template/{id}/data" in templates, "resources/templates/list", repr(templates))
            rr = await client.read_resource("test://template/123/data")
            text = getattr(rr.contents[0], "text", "") if rr.contents else ""
            check("123" in text, "read through the template", repr(rr))

        async with step("prompts-list"):
            prompts = {p.name for p in (await client.list_prompts()).prompts}
            for name in ("greet", "test_prompt_with_arguments"):
                check(name in prompts, "prompts/list", f"missing {name}; got {sorted(prompts)}")

        async with step("prompts-get-arguments"):
            gp = await client.get_prompt("test_prompt_with_arguments", {"arg1": "alpha", "arg2": "beta"})
            text = " ".join(getattr(m.content, "text", "") for m in gp.messages)
            check("alpha" in text and "beta" in text, "test_prompt_with_arguments", repr(gp))
            gp = await client.get_prompt("greet", {"name": "Ada"})
            check("Ada" in " ".join(getattr(m.content, "text", "") for m in gp.messages), "greet", repr(gp))

        async with step("completion"):
            ref = types.PromptReference(type="ref/prompt", name="greet")
            cr = await client.complete(ref, {"name": "name", "value": "A"})
            check(sorted(cr.completion.values) == ["Ada", "Alan"], "completion/complete", repr(cr))

        async with step("progress"):
            progress: list[tuple[float, float | None]] = []

            async def on_progress(p: float, total: float | None, _msg: str | None) -> None:
                progress.append((p, total))

            r = await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
            check(not r.is_error, "test_tool_with_progress", repr(r))
            check(len(progress) >= 3, "notifications", f"{len(progress)} progress notifications: {progress}")
            check(all(b[0] > a[0] for a, b in zip(progress, progress[1:])), "increasing", repr(progress))

        if not modern:
            async with step("logging-set-level"):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    await client.set_logging_level("debug")

        async with step("logging-notifications"):
            logs.clear()
            r = await client.call_tool("test_tool_with_logging", {})
            check(not r.is_error, "test_tool_with_logging", repr(r))
            with anyio.move_on_after(1):
                while len(logs) < 3:
                    await anyio.sleep(0.05)
            check(len(logs) >= 3, "notifications/message", f"{len(logs)} log notifications: {logs}")

        if not modern:
            async with step("ping"):
                await client.send_ping()

        async with step("list-changed"):
            # The trigger adds a tool. The handshake era announces it with
            # notifications/tools/list_changed; 2026-07-28 on a subscriptions/listen stream.
            notifications.clear()
            if modern:
                async with client.listen(tools_list_changed=True) as sub:
                    r = await client.call_tool("test_trigger_tool_change", {})
                    check(not r.is_error, "test_trigger_tool_change", repr(r))
                    event = None
                    with anyio.move_on_after(3):
                        event = await sub.__anext__()
                    check(isinstance(event, ToolsListChanged), "subscriptions/listen", f"event {event!r}")
            else:
                r = await client.call_tool("test_trigger_tool_change", {})
                check(not r.is_error, "test_trigger_tool_change", repr(r))
                with anyio.move_on_after(1):
                    while not any(type(n).__name__ == "ToolListChangedNotification" for n in notifications):
                        await anyio.sleep(0.05)
                kinds = [type(n).__name__ for n in notifications]
                check("ToolListChangedNotification" in kinds, "notifications/tools/list_changed", repr(kinds))
            names = {t.name for t in (await client.list_tools()).tools}
            check("test_dynamic_tool" in names, "tools/list after the change", repr(sorted(names)))

        async with step("cancellation"):
            http = args.transport == "http"
            await cancellation(client, wire, http_modern=http and modern, http_legacy=http and not modern)

        # Sampling and elicitation round trips, when the demo has the fixtures.
        if "test_sampling" in tools:
            async with step("sampling"):
                r = await client.call_tool("test_sampling", {"prompt": "What is 2+2?"})
                check(not r.is_error and any(SAMPLED_TEXT in t for t in texts(r)), "test_sampling", repr(r))
        else:
            print("skip sampling: the server lists no test_sampling tool", flush=True)
        if "test_elicitation" in tools:
            async with step("elicitation"):
                r = await client.call_tool("test_elicitation", {"message": "Who are you?"})
                check(not r.is_error and any(ELICITED_NAME in t for t in texts(r)), "test_elicitation", repr(r))
        else:
            print("skip elicitation: the server lists no test_elicitation tool", flush=True)


async def cancellation(client: Client, wire: Wire, *, http_modern: bool, http_legacy: bool) -> None:
    """Start countdown(5), cancel it after its first progress notification; the server must
    never answer it, must stop counting, and must keep serving."""
    started = anyio.Event()
    seen: list[float] = []

    async def on_countdown(p: float, _total: float | None, _msg: str | None) -> None:
        seen.append(p)
        started.set()

    outcome: list[Any] = []
    async with anyio.create_task_group() as tg:

        async def call() -> None:
            outcome.append(await client.call_tool("countdown", {"seconds": 5}, progress_callback=on_countdown))

        tg.start_soon(call)
        with anyio.move_on_after(5):
            await started.wait()
        tg.cancel_scope.cancel()
    check(started.is_set(), "countdown", "no progress notification within 5 s")
    check(not outcome, "countdown", f"finished before it was cancelled: {outcome}")
    calls = [m for m in wire.sent_requests("tools/call") if (m.params or {}).get("name") == "countdown"]
    check(len(calls) == 1, "countdown", f"{len(calls)} countdown requests on the wire")
    request_id = calls[0].id
    if not http_modern:
        # At 2026-07-28 over HTTP the SDK cancels by closing the request's POST instead.
        cancels = wire.sent_notifications("notifications/cancelled")
        sent = any((n.params or {}).get("requestId") == request_id for n in cancels)
        check(sent, "notifications/cancelled", "the SDK sent none for the countdown")
    progress_at_cancel = len(seen)
    r = await client.call_tool("add", {"a": 1, "b": 1})
    check(texts(r) == ["2"], "keeps serving", f"after the cancel: {r!r}")
    await anyio.sleep(2.5)
    answers = wire.responses_to(request_id)
    if http_legacy:
        # The handshake-era HTTP wire can end a POST stream only with a response, so there the
        # server answers a cancelled request -32800 (as the reference Python server does).
        answers = [a for a in answers if not (isinstance(a, JSONRPCError) and a.error.code == -32800)]
    check(not answers, "not answered", f"the server answered the cancelled request: {answers}")
    check(len(seen) <= progress_at_cancel + 1, "stops", f"countdown kept reporting progress: {seen}")
    r = await client.call_tool("echo", {"text": "still here"})
    check(texts(r) == ["still here"], "keeps serving", repr(r))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", default="auto", help="legacy | auto | 2026-07-28")
    parser.add_argument("--deadline", type=float, default=60.0, help="seconds for the whole run")
    parser.add_argument("transport", choices=["stdio", "http", "sse"])
    parser.add_argument("target", nargs="+", help="the command (stdio) or the URL (http, sse)")
    args = parser.parse_args()

    results = Results()

    async def bounded() -> None:
        with anyio.fail_after(args.deadline):
            await run(args, results)

    try:
        anyio.run(bounded)
    except TimeoutError:
        results.fail("run", f"the run took longer than {args.deadline} s")
    except BaseException as e:  # noqa: BLE001 - anything else is a failed interop run
        inner = e
        while isinstance(inner, BaseExceptionGroup) and len(inner.exceptions) == 1:
            inner = inner.exceptions[0]
        results.fail("run", f"{type(inner).__name__}: {inner}")
    return 1 if results.failed else 0


if __name__ == "__main__":
    sys.exit(main())
