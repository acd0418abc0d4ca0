"""The MCP SDK's streamable HTTP transport (an ASGI application) served from an aiohttp route.

aiohttp and the SDK share the event loop (anyio runs on asyncio), so an aiohttp request is handed over as one ASGI
`http` call: its scope built from the request, its body read at once (the server's body limit applies), and what
the application sends written to a streaming response, so server-sent events reach the client as they are sent.
The session manager's task group lives in a task of its own for as long as the application runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

from aiohttp import web

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
AsgiApp = Callable[[Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]]


def scope_of(request: web.Request) -> Scope:
    host, port = (request.transport.get_extra_info("sockname") or ("", 0))[:2] if request.transport else ("", 0)
    peer = request.transport.get_extra_info("peername") if request.transport else None
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": f"{request.version.major}.{request.version.minor}",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.raw_path.split("?", 1)[0].encode(),
        "query_string": request.query_string.encode(),
        "root_path": "",
        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in request.headers.items()],
        "client": tuple(peer[:2]) if peer else None,
        "server": (host, port),
        "state": {},
    }


async def serve_asgi(app: AsgiApp, request: web.Request) -> web.StreamResponse:
    """Run one ASGI call of `app` for `request`."""
    body = await request.read()
    finished = asyncio.Event()
    delivered = False
    response: web.StreamResponse | None = None

    async def receive() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await finished.wait()  # the application listens for a disconnect while it streams
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        nonlocal response
        if message["type"] == "http.response.start":
            response = web.StreamResponse(status=message["status"])
            for name, value in message.get("headers", []):
                response.headers.add(name.decode("latin-1"), value.decode("latin-1"))
            await response.prepare(request)
        elif message["type"] == "http.response.body" and response is not None:
            await response.write(message.get("body", b""))
            if not message.get("more_body", False):
                await response.write_eof()

    try:
        await app(scope_of(request), receive, send)
    finally:
        finished.set()
    if response is None:
        return web.json_response({"error": "the MCP server gave no answer", "code": "internal"}, status=500)
    return response


def lifespan(run: Callable[[], Any]) -> Callable[[web.Application], AsyncIterator[None]]:
    """An aiohttp cleanup context holding `run()` (an async context manager, the SDK's session manager) open in a
    task of its own: anyio's task group must be entered and left by the same task."""

    async def hold(_: web.Application) -> AsyncIterator[None]:
        started = asyncio.Event()
        stop = asyncio.Event()

        async def keep() -> None:
            async with run():
                started.set()
                await stop.wait()

        task = asyncio.create_task(keep())
        waiting = asyncio.create_task(started.wait())
        await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            waiting.cancel()
            task.result()  # raises what stopped it from starting
        yield
        stop.set()
        await task

    return hold
