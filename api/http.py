"""The HTTP API, `/api/v1/` on the bot server (aiohttp): thin handlers over `api.gateway` and `api.turns`.

Every route but the OpenAPI document takes `Authorization: Bearer <token>`. Requests are validated by the models
of `api.models`; every error is JSON (`ErrorBody`), including unknown routes, wrong methods and bodies that are
not JSON, and never names a table or database the caller may not see.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from aiohttp import web
from pydantic import BaseModel, ValidationError

from api.errors import ApiError, BadRequest, TooManyRequests
from api.gateway import Gateway
from api.models import AskRequest, NoteRequest
from api.openapi import openapi_document
from api.turns import POLL_S, TurnDesk
from core.access.tokens import Caller
from search.limits import MAX_K

log = logging.getLogger(__name__)

PREFIX = "/api/v1"
MAX_WAIT_S = 60
#: How long an event stream waits past the turn deadline before it gives up with an error event.
STREAM_MARGIN_S = 60.0
#: Server-sent events, not to be cached or held back by a proxy (nginx buffers responses unless told not to).
EVENT_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
Model = TypeVar("Model", bound=BaseModel)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def error_response(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"error": message, "code": code}, status=status, headers=headers)


@web.middleware
async def json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every failure of an API route as an `ErrorBody`."""
    try:
        return await handler(request)
    except TooManyRequests as exc:
        return error_response(exc.status, exc.code, str(exc), {"Retry-After": str(max(1, round(exc.retry_after_s)))})
    except ApiError as exc:
        return error_response(exc.status, exc.code, str(exc))
    except web.HTTPRequestEntityTooLarge:
        return error_response(413, "too_large", "the request body is too large")
    except web.HTTPMethodNotAllowed as exc:
        allowed = ", ".join(sorted(exc.allowed_methods))
        return error_response(405, "method_not_allowed", f"{request.method} is not allowed here; use {allowed}")
    except web.HTTPNotFound:
        return error_response(404, "not_found", f"there is no API route {request.path}; see {PREFIX}/openapi.json")
    except web.HTTPException as exc:
        return error_response(exc.status, "bad_request", exc.reason)
    except Exception:
        log.exception("API request %s %s failed", request.method, request.path)
        return error_response(500, "internal", "the request could not be completed; the server log has the details")


def validation_message(exc: ValidationError) -> str:
    problems = []
    for item in exc.errors()[:5]:
        where = ".".join(str(part) for part in item["loc"]) or "the body"
        problems.append(f"{where}: {item['msg']}")
    return "; ".join(problems)


async def body_of(request: web.Request, model: type[Model]) -> Model:
    raw = await request.read()
    try:
        data = json.loads(raw or b"null")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadRequest("the body is not JSON") from exc
    if not isinstance(data, dict):
        raise BadRequest("the body must be one JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise BadRequest(validation_message(exc)) from exc


def int_query(request: web.Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(f"{name} must be a whole number") from None
    if not low <= value <= high:
        raise BadRequest(f"{name} must be between {low} and {high}")
    return value


def turn_id_of(request: web.Request) -> int:
    try:
        return int(request.match_info["turn_id"])
    except ValueError:
        raise BadRequest("the turn id must be a whole number") from None


class HttpApi:
    def __init__(self, gateway: Gateway, desk: TurnDesk) -> None:
        self.gateway = gateway
        self.desk = desk

    def application(self) -> web.Application:
        app = web.Application(middlewares=[json_errors])
        for method, path, handler in ROUTES:
            app.router.add_route(method, path, getattr(self, handler.__name__))
        return app

    async def caller(self, request: web.Request) -> Caller:
        return await asyncio.to_thread(self.gateway.authenticate, request.headers.get("Authorization"))

    async def openapi(self, _: web.Request) -> web.Response:
        return web.json_response(openapi_document())

    async def ask(self, request: web.Request) -> web.Response:
        caller = await self.caller(request)
        asked = await body_of(request, AskRequest)
        wait = int_query(request, "wait", 0, 0, MAX_WAIT_S)
        view = await asyncio.to_thread(self.desk.ask, caller, asked)
        if wait:
            view = await self.desk.wait(caller, view.turn_id, wait)
        return web.json_response(view.to_json(), status=200 if view.answer is not None else 202)

    async def turn(self, request: web.Request) -> web.Response:
        caller = await self.caller(request)
        view, _ = await asyncio.to_thread(self.desk.view, caller, turn_id_of(request))
        return web.json_response(view.to_json())

    async def events(self, request: web.Request) -> web.StreamResponse:
        """Server-sent events: `status` at once and whenever the status line changes, then one `answer`, then the
        end (a turn already finished gets one `status` and its `answer`)."""
        caller = await self.caller(request)
        turn_id = turn_id_of(request)
        view, line = await asyncio.to_thread(self.desk.view, caller, turn_id)  # a turn not theirs: 404 before streaming
        stream = web.StreamResponse(headers=EVENT_HEADERS)
        await stream.prepare(request)
        give_up = time.monotonic() + self.gateway.settings.turn_deadline_s + STREAM_MARGIN_S
        shown: tuple[str, str | None] | None = None
        try:
            await send_event(stream, "status", {"turn_id": turn_id, "status": view.status, "line": line})
            shown = (view.status, line)
            while view.answer is None:
                if (view.status, line) != shown:
                    shown = (view.status, line)
                    await send_event(stream, "status", {"turn_id": turn_id, "status": view.status, "line": line})
                if time.monotonic() > give_up:
                    body = {"error": "the turn did not finish in time; GET the turn later", "code": "timeout"}
                    await send_event(stream, "error", body)
                    break
                await asyncio.sleep(POLL_S)
                view, line = await asyncio.to_thread(self.desk.view, caller, turn_id)
            else:
                await send_event(stream, "answer", view.to_json())
            await stream.write_eof()
        except ConnectionResetError:  # the client went away; the turn goes on and can be read later
            log.info("event stream of turn %s closed by the client", turn_id)
        return stream

    async def search(self, request: web.Request) -> web.Response:
        caller = await self.caller(request)
        question = request.query.get("question", "").strip()
        if not question:
            raise BadRequest("give the question as ?question=…")
        databases = request.query.getall("database", [])
        k = int_query(request, "k", 8, 1, MAX_K)
        found = await asyncio.to_thread(self.gateway.search, caller, question, databases, k)
        return web.json_response(found.model_dump(mode="json"))

    async def databases(self, request: web.Request) -> web.Response:
        caller = await self.caller(request)
        found = await asyncio.to_thread(self.gateway.databases, caller)
        return web.json_response([d.model_dump(mode="json") for d in found])

    async def table(self, request: web.Request) -> web.Response:
        caller = await self.caller(request)
        database, table = request.match_info["database"], request.match_info["table"]
        card = await asyncio.to_thread(self.gateway.card, caller, database, table)
        return web.json_response(card.model_dump(mode="json"))

    async def add_note(self, request: web.Request) -> web.Response:
        caller = await self.caller(request)
        note = await body_of(request, NoteRequest)
        saved = await asyncio.to_thread(
            self.gateway.add_note, caller, note.database, note.tables, note.text, private=note.private
        )
        return web.json_response(saved.model_dump(mode="json"), status=201)


#: Every route under PREFIX: method, path and the handler (api/openapi.py documents each).
ROUTES: tuple[tuple[str, str, Callable[..., Awaitable[web.StreamResponse]]], ...] = (
    ("GET", "/openapi.json", HttpApi.openapi),
    ("POST", "/ask", HttpApi.ask),
    ("GET", "/turns/{turn_id}", HttpApi.turn),
    ("GET", "/turns/{turn_id}/events", HttpApi.events),
    ("GET", "/search", HttpApi.search),
    ("GET", "/databases", HttpApi.databases),
    ("GET", "/tables/{database}/{table}", HttpApi.table),
    ("POST", "/notes", HttpApi.add_note),
)


async def send_event(stream: web.StreamResponse, event: str, data: dict[str, Any]) -> None:
    await stream.write(f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode())
