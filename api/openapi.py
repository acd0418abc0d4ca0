"""The OpenAPI 3.1 document of `/api/v1/`, generated from the same pydantic models the handlers validate and
answer with (`api.models`); its JSON Schemas are pydantic's (draft 2020-12, which OpenAPI 3.1 uses)."""

from __future__ import annotations

from functools import cache
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from api.models import (
    AskRequest,
    CardView,
    DatabaseView,
    ErrorBody,
    NoteRequest,
    NoteSaved,
    SearchView,
    TurnView,
)
from search.limits import MAX_K

VERSION = "1.0.0"
PREFIX = "/api/v1"
REQUESTS: tuple[type[BaseModel], ...] = (AskRequest, NoteRequest)
RESPONSES: tuple[type[BaseModel], ...] = (TurnView, SearchView, DatabaseView, CardView, NoteSaved, ErrorBody)
Mode = Literal["validation", "serialization"]


def ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def json_content(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def answer(description: str, model: type[BaseModel] | None = None, schema: dict[str, Any] | None = None) -> Any:
    return {"description": description, "content": json_content(schema or ref(model or ErrorBody))}


def errors(*statuses: int) -> dict[str, Any]:
    words = {
        400: "The request is malformed or a value is out of range.",
        401: "No token, or a token that is unknown, revoked or expired.",
        404: "Nothing by that name that the caller may see.",
        429: "Over the token's rate limit; the Retry-After header says when to try again.",
    }
    return {str(s): answer(words[s]) for s in statuses}


def path_parameter(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "description": description, "schema": schema}


def query_parameter(name: str, description: str, schema: dict[str, Any], *, required: bool = False) -> Any:
    return {"name": name, "in": "query", "required": required, "description": description, "schema": schema}


TURN_ID = path_parameter("turn_id", "The turn id POST /ask returned.", {"type": "integer", "minimum": 1})


def paths() -> dict[str, Any]:
    return {
        f"{PREFIX}/ask": {
            "post": {
                "summary": "Ask a question: store a turn for the workers; its id comes back at once, or the "
                "answer when ?wait=N lets it finish within N seconds.",
                "operationId": "ask",
                "parameters": [
                    query_parameter(
                        "wait",
                        "Seconds to wait for the answer (0-60).",
                        {"type": "integer", "minimum": 0, "maximum": 60},
                    )
                ],
                "requestBody": {"required": True, "content": json_content(ref(AskRequest))},
                "responses": {
                    "200": answer("The turn, finished, with its answer.", TurnView),
                    "202": answer("The turn, queued or running; GET it or its events later.", TurnView),
                    **errors(400, 401, 404, 429),
                },
            }
        },
        f"{PREFIX}/turns/{{turn_id}}": {
            "get": {
                "summary": "A turn of the caller's: its status and, once finished, its typed answer.",
                "operationId": "getTurn",
                "parameters": [TURN_ID],
                "responses": {"200": answer("The turn.", TurnView), **errors(400, 401, 404, 429)},
            }
        },
        f"{PREFIX}/turns/{{turn_id}}/events": {
            "get": {
                "summary": "Server-sent events: `status` ({turn_id, status, line}) at once and whenever it changes, "
                "then one `answer` (a TurnView), then the stream ends; `error` if the turn does not finish in time.",
                "operationId": "turnEvents",
                "parameters": [TURN_ID],
                "responses": {
                    "200": {
                        "description": "An event stream.",
                        "content": {"text/event-stream": {"schema": {"type": "string"}}},
                    },
                    **errors(400, 401, 404, 429),
                },
            }
        },
        f"{PREFIX}/search": {
            "get": {
                "summary": "Candidate tables for a question, as `tablescout search --json` gives them.",
                "operationId": "search",
                "parameters": [
                    query_parameter("question", "The question.", {"type": "string", "minLength": 1}, required=True),
                    query_parameter(
                        "database",
                        "Search only this database (repeatable).",
                        {"type": "array", "items": {"type": "string"}},
                    ),
                    query_parameter("k", "Candidates to return.", {"type": "integer", "minimum": 1, "maximum": MAX_K}),
                ],
                "responses": {"200": answer("The candidates.", SearchView), **errors(400, 401, 404, 429)},
            }
        },
        f"{PREFIX}/databases": {
            "get": {
                "summary": "The databases the caller may ask about, with their summaries.",
                "operationId": "listDatabases",
                "responses": {
                    "200": answer("The databases.", schema={"type": "array", "items": ref(DatabaseView)}),
                    **errors(401, 429),
                },
            }
        },
        f"{PREFIX}/tables/{{database}}/{{table}}": {
            "get": {
                "summary": "A table's card as the caller may see it.",
                "operationId": "getTable",
                "parameters": [
                    path_parameter("database", "Database name or alias.", {"type": "string"}),
                    path_parameter("table", "Table name, optionally schema.table.", {"type": "string"}),
                ],
                "responses": {"200": answer("The card.", CardView), **errors(401, 404, 429)},
            }
        },
        f"{PREFIX}/notes": {
            "post": {
                "summary": "Attach a note to tables: knowledge search and answers use from then on.",
                "operationId": "addNote",
                "requestBody": {"required": True, "content": json_content(ref(NoteRequest))},
                "responses": {"201": answer("The saved note.", NoteSaved), **errors(400, 401, 404, 429)},
            }
        },
    }


@cache
def openapi_document() -> dict[str, Any]:
    models: list[tuple[type[BaseModel], Mode]] = [(m, "validation") for m in REQUESTS]
    models += [(m, "serialization") for m in RESPONSES]
    _, schemas = models_json_schema(models, ref_template="#/components/schemas/{model}")
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "tablescout API",
            "version": VERSION,
            "description": "Governed answers from the company's databases: the same turns, search, cards, notes "
            "and permissions as the Slack and Teams bot. A token acts as one directory user.",
        },
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}],
        "paths": paths() | {f"{PREFIX}/openapi.json": {"get": openapi_operation()}},
        "components": {
            "schemas": schemas.get("$defs", {}),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "An API token."}},
        },
    }


def openapi_operation() -> dict[str, Any]:
    return {
        "summary": "This document.",
        "operationId": "openapi",
        "security": [],
        "responses": {"200": {"description": "The OpenAPI document.", "content": json_content({"type": "object"})}},
    }
