#!/usr/bin/env python3
"""Interop: the Python MCP SDK's (`mcp` 2.3.0) OAuth client against ferromcp's embedded
authorization server (`ferromcp serve --http ADDR --auth`).

Usage:
    oauth_client.py [--mode legacy|auto] [--deadline SECONDS] URL

The SDK's `OAuthClientProvider` runs the whole MCP authorization flow: the 401 challenge,
RFC 9728 protected-resource metadata, RFC 8414 authorization-server metadata, RFC 7591
dynamic registration, the PKCE S256 authorization-code flow (with `resource` and RFC 9207
`iss` checks) and the token exchange. The authorization step is headless: the redirect
handler GETs the authorization URL without following the redirect (ferromcp's default
consent hook approves at once) and the callback handler hands the SDK the redirect's `code`,
`state` and `iss`. Then the tokens are used, refreshed and revoked.

Every check prints one line: `ok   <id>` or `FAIL <id>: <why>`. Exit status: 0 if every
check passed, 1 otherwise. `.ci/interop.sh` compares the failed ids with
`interop/expected-failures.txt`.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qs, urlparse

import anyio
import httpx2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

REDIRECT = "http://127.0.0.1:9/callback"


class CheckFailed(Exception):
    pass


def check(cond: bool, name: str, why: str = "") -> None:
    if not cond:
        raise CheckFailed(f"{name}: {why}")


class Memory(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Headless:
    """The user-agent step without a browser: follow nothing, read the redirect."""

    def __init__(self) -> None:
        self.result: AuthorizationCodeResult | None = None
        self.authorize_urls: list[str] = []

    async def redirect(self, url: str) -> None:
        self.authorize_urls.append(url)
        async with httpx2.AsyncClient(follow_redirects=False) as http:
            r = await http.get(url)
        if r.status_code not in (302, 303):
            raise RuntimeError(f"authorization endpoint answered {r.status_code}: {r.text[:200]}")
        q = parse_qs(urlparse(r.headers["location"]).query)
        if "code" not in q:
            raise RuntimeError(f"no code in the redirect: {q}")
        self.result = AuthorizationCodeResult(code=q["code"][0], state=q.get("state", [None])[0], iss=q.get("iss", [None])[0])

    async def callback(self) -> AuthorizationCodeResult:
        assert self.result is not None, "the redirect handler ran first"
        result, self.result = self.result, None
        return result


class Results:
    def __init__(self) -> None:
        self.failed: list[str] = []

    @asynccontextmanager
    async def check(self, cid: str):
        try:
            yield
        except CheckFailed as e:
            self.fail(cid, str(e))
        except Exception as e:  # noqa: BLE001 - a check that raised failed; the next ones still run
            inner: BaseException = e
            while isinstance(inner, BaseExceptionGroup) and len(inner.exceptions) == 1:
                inner = inner.exceptions[0]
            self.fail(cid, f"{type(inner).__name__}: {inner}")
        else:
            print(f"ok   {cid}", flush=True)

    def fail(self, cid: str, why: str) -> None:
        self.failed.append(cid)
        print(f"FAIL {cid}: {why}", flush=True)


def text_of(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def run(args: argparse.Namespace, results: Results) -> None:
    url = args.url
    base = url.rsplit("/mcp", 1)[0]
    storage = Memory()
    headless = Headless()
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="python-sdk-interop",
            redirect_uris=[REDIRECT],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=headless.redirect,
        callback_handler=headless.callback,
    )
    http = httpx2.AsyncClient(auth=provider, timeout=15)
    step = results.check

    async def session(expect_tools: bool = True) -> None:
        client = Client(streamable_http_client(url, http_client=http), mode=args.mode, read_timeout_seconds=15, cache=None)
        async with client:
            tools = await client.list_tools()
            names = [t.name for t in tools.tools]
            check("add" in names, "tools", f"no `add` in {names}")
            r = await client.call_tool("add", {"a": 2, "b": 3})
            check(not r.is_error and "5" in text_of(r), "add", repr(r))

    async with step("oauth-flow"):
        # 401 → discovery → registration → authorization (PKCE, resource, state, iss) → token.
        await session()
        check(storage.client is not None, "registration", "no client registered")
        check(storage.tokens is not None, "token", "no tokens stored")

    async with step("authorization-request"):
        check(len(headless.authorize_urls) == 1, "one authorization", f"{len(headless.authorize_urls)} runs")
        q = parse_qs(urlparse(headless.authorize_urls[0]).query)
        check(q.get("code_challenge_method") == ["S256"], "PKCE", repr(q.get("code_challenge_method")))
        check(q.get("resource") == [url], "resource", repr(q.get("resource")))
        check(q.get("scope") == ["mcp"], "scope from the challenge", repr(q.get("scope")))

    async with step("token-shape"):
        t = storage.tokens
        assert t is not None
        check(t.token_type == "Bearer" and bool(t.refresh_token), "tokens", repr(t.model_dump(exclude={"access_token", "refresh_token"})))
        check(t.scope == "mcp", "scope", repr(t.scope))
        check(t.access_token.count(".") == 2, "jwt", "the access token is not a JWT")

    async with step("refresh"):
        # The refresh_token grant, as the SDK would send it: a new access token and a rotated
        # refresh token; the old refresh token is then spent.
        assert storage.tokens is not None and storage.client is not None
        old = storage.tokens.refresh_token
        async with httpx2.AsyncClient() as raw:
            r = await raw.post(f"{base}/token", data={"grant_type": "refresh_token", "refresh_token": old,
                                                      "client_id": storage.client.client_id, "resource": url})
            check(r.status_code == 200, "refresh", f"{r.status_code} {r.text[:200]}")
            new = OAuthToken.model_validate(r.json())
            check(new.refresh_token != old, "rotation", "the refresh token was not rotated")
            storage.tokens = new
        await session()

    async with step("revocation"):
        assert storage.tokens is not None and storage.client is not None
        async with httpx2.AsyncClient() as raw:
            r = await raw.post(f"{base}/revoke", data={"token": storage.tokens.refresh_token, "client_id": storage.client.client_id})
            check(r.status_code == 200, "revoke", f"{r.status_code} {r.text[:200]}")
            r = await raw.post(f"{url}", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                               headers={"authorization": f"Bearer {storage.tokens.access_token}",
                                        "accept": "application/json, text/event-stream"})
            check(r.status_code == 401, "revoked access token", f"{r.status_code}")
        # The SDK re-authorizes on the 401 (its refresh fails: the grant is revoked).
        before = len(headless.authorize_urls)
        await session()
        check(len(headless.authorize_urls) == before + 1, "re-authorized", f"{len(headless.authorize_urls) - before} runs")
    await http.aclose()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="legacy", choices=["legacy", "auto"])
    parser.add_argument("--deadline", type=float, default=100)
    parser.add_argument("url")
    args = parser.parse_args()
    results = Results()

    async def guarded() -> None:
        with anyio.fail_after(args.deadline):
            await run(args, results)

    try:
        anyio.run(guarded)
    except TimeoutError:
        results.fail("run", f"deadline of {args.deadline} s reached")
    except Exception as e:  # noqa: BLE001
        results.fail("run", f"{type(e).__name__}: {e}")
    return 1 if results.failed else 0


if __name__ == "__main__":
    sys.exit(main())
