"""The HTTP API (`/api/v1/`) and the MCP server (`/mcp`) mounted on the bot server's aiohttp application.

`tablescout serve` builds an `ApiSurface` and hands it to the bot server (`bot.server.BotServer`), which calls
`install` with its own hook for stored turns (the outbox relay publishes them to the workers, as for chat).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextvars import ContextVar

from aiohttp import web
from mcp.server.transport_security import TransportSecuritySettings

from api.asgi import lifespan, serve_asgi
from api.errors import ApiError, TooManyRequests, Unauthorized
from api.gateway import Gateway
from api.http import PREFIX, HttpApi, error_response
from api.mcp_server import build_server
from api.turns import KickRelay, TurnDesk
from core.access.tokens import Caller
from core.config.settings import Settings
from core.store.database import Store

MCP_PATH = "/mcp"
#: How long past the turn deadline the MCP `ask` tool waits for the answer.
ASK_MARGIN_S = 30.0
#: The checked caller of the MCP request being served. Set by the route before the request is handed to the SDK,
#: whose tasks for the request start from the route's context (the SDK's own bearer authentication travels the
#: same way), so every tool and resource of that request reads it and no other request's.
REQUEST_CALLER: ContextVar[Caller | None] = ContextVar("tablescout_mcp_caller", default=None)


def request_caller() -> Caller:
    caller = REQUEST_CALLER.get()
    if caller is None:  # only /mcp reaches the tools, and it checked the token first
        raise Unauthorized("send the API token as `Authorization: Bearer <token>`")
    return caller


class ApiSurface:
    name = "api"

    def __init__(self, settings: Settings, store: Store) -> None:
        self.gateway = Gateway(settings, store)

    def install(self, app: web.Application, on_stored: Callable[[int], None]) -> None:
        desk = TurnDesk(self.gateway, KickRelay(on_stored))
        app.add_subapp(PREFIX, HttpApi(self.gateway, desk).application())
        wait = self.gateway.settings.turn_deadline_s + ASK_MARGIN_S
        mcp = build_server(desk, request_caller, ask_wait_s=wait)
        # Every request carries a bearer token (never a cookie), so a page that rebinds a name to this host gains
        # nothing; the Host check would refuse the server's own public name.
        mcp.streamable_http_app(
            stateless_http=True, transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False)
        )
        manager = mcp.session_manager

        async def route(request: web.Request) -> web.StreamResponse:
            try:
                caller = await asyncio.to_thread(self.gateway.authenticate, request.headers.get("Authorization"))
            except TooManyRequests as exc:
                retry = {"Retry-After": str(max(1, round(exc.retry_after_s)))}
                return error_response(exc.status, exc.code, str(exc), retry)
            except ApiError as exc:
                return error_response(exc.status, exc.code, str(exc), {"WWW-Authenticate": "Bearer"})
            REQUEST_CALLER.set(caller)  # this handler's task context only
            try:
                return await serve_asgi(manager.handle_request, request)
            except web.HTTPRequestEntityTooLarge:
                return error_response(413, "too_large", "the request body is too large")

        app.router.add_route("*", MCP_PATH, route)
        app.cleanup_ctx.append(lifespan(manager.run))
