"""The MCP server (official `mcp` SDK): tools and resources over `api.gateway` and `api.turns`, for an assistant
or agent that has never seen tablescout. `tablescout mcp` serves it over stdio with the token from
`TABLESCOUT_TOKEN`; the bot server serves it at `/mcp` over streamable HTTP (`api.asgi`) with a bearer token.

Every call is made as the token's directory user, checked again on each call (a revoked token stops working at
once), counted against the token's rate limit, and answered with what that user may see; refusals come back as
tool errors with a plain sentence.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from api.errors import ApiError
from api.models import AskRequest, NoteSaved, SearchView, SqlResult
from api.turns import TurnDesk
from core.access.tokens import Caller
from search.limits import MAX_K

T = TypeVar("T")
#: Who a call is from: the HTTP request's checked token (`api.surface`), or the stdio process's token checked again.
Identify = Callable[[], Caller]

INSTRUCTIONS = """\
tablescout answers business questions from the company's own databases (an ERP, billing and the like) for one \
person: you act as the user whose token you hold, and you see only the databases, tables, rows and columns that \
user may see. Enterprise databases are full of stale copies and backups (ORD_MST_BAK, CUST_2023); search ranks \
live tables first and marks copies, so prefer role=live.

For a question in business words, call `ask`: it searches, reads table cards, writes and runs SQL, and returns \
the answer with the SQL and rows. To work step by step instead: `search_tables` for candidates, \
`get_table_card` for a table's columns, codes and joins, then `run_readonly_sql`. When the user tells you \
something worth keeping about a table (a copy nobody should use, what a code means), save it with `add_note`. \
The resource tablescout://databases lists the databases with a summary of each."""

SEARCH = """\
Find the tables that can answer a question, across the company databases this user may query. Returns the best \
candidates first, each with its database, table, score, role (live, copy, backup, log, ...), copy_of (the live \
table a copy duplicates), why it matched, a short description of the table, code meanings, joins and users' \
notes; denied_tables names relevant tables this user may not read. Use it before writing SQL."""

CARD = """\
Read one table's card: what the table holds, whether it is live or a copy, every column with its type, value \
statistics and sample values, code meanings (e.g. ST_CD 'S' = shipped), columns easy to misuse, how it joins to \
other tables, and notes from users. Masked columns show no values; read the card of every table before using \
it in SQL."""

SQL = """\
Run one read-only SQL query (SELECT or WITH) on one database, in that database's own dialect (the card names \
the engine). It runs through the same guard as the chat bot: one statement, read-only, allowed functions only, \
the user's row filters and column masks applied, a timeout, and at most 200 rows (truncated=true means more: \
count or aggregate in SQL). Refusals and errors say what to change."""

ASK = """\
Ask a business question in plain words and get a checked answer: tablescout searches the tables, reads their \
cards, writes and runs read-only SQL and returns {turn_id, thread_id, status, answer}; the answer holds the \
sentence, the SQL it ran with the rows, the tables used and warnings. Takes from a few seconds to a few minutes. \
Pass thread_id from an earlier answer to ask a follow-up in the same conversation. A message that starts with \
"remember this:" saves a note instead."""

NOTE = """\
Save a note about one or more tables of a database: knowledge search and answers use from then on, e.g. \
"ORD_MST_BAK is a stale copy, use ORD_MST" or "ST_CD 'H' means on hold". Shared with everyone who may see \
those tables, unless private."""


def build_server(desk: TurnDesk, identify: Identify, *, ask_wait_s: float) -> MCPServer:
    gateway = desk.gateway
    server: MCPServer = MCPServer("tablescout", instructions=INSTRUCTIONS, log_level="WARNING")
    reading = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    async def call(work: Callable[[Caller], T], errors: type[Exception] = ToolError) -> T:
        try:
            caller = await asyncio.to_thread(identify)
            return await asyncio.to_thread(work, caller)
        except ApiError as exc:
            raise errors(str(exc)) from exc

    @server.tool(description=SEARCH, annotations=reading)
    async def search_tables(
        question: Annotated[str, Field(min_length=1, max_length=4000, description="The question, in business words.")],
        databases: Annotated[list[str], Field(description="Search only these databases (optional).")] = [],  # noqa: B006
        k: Annotated[int, Field(ge=1, le=MAX_K, description="How many candidates to return.")] = 8,
    ) -> SearchView:
        return await call(lambda caller: gateway.search(caller, question, databases, k))

    @server.tool(description=CARD, annotations=reading)
    async def get_table_card(
        database: Annotated[str, Field(description="The database name, as search_tables gives it.")],
        table: Annotated[str, Field(description="The table name (or schema.table).")],
    ) -> str:
        return (await call(lambda caller: gateway.card(caller, database, table))).text

    @server.tool(description=SQL, annotations=reading)
    async def run_readonly_sql(
        database: Annotated[str, Field(description="The database to run it on.")],
        sql: Annotated[str, Field(min_length=1, max_length=20000, description="One SELECT or WITH query.")],
    ) -> SqlResult:
        return await call(lambda caller: gateway.run_sql(caller, database, sql))

    @server.tool(description=ASK, annotations=ToolAnnotations(read_only_hint=False, open_world_hint=False))
    async def ask(
        question: Annotated[str, Field(min_length=1, max_length=4000, description="The question, in business words.")],
        databases: Annotated[list[str], Field(description="Only these databases (optional).")] = [],  # noqa: B006
        thread_id: Annotated[str | None, Field(description="Continue this earlier conversation.")] = None,
    ) -> dict[str, Any]:
        try:
            request = AskRequest(question=question, databases=databases, thread_id=thread_id)
        except ValueError as exc:
            raise ToolError(f"the arguments are not valid: {exc}") from exc
        try:
            caller = await asyncio.to_thread(identify)
            view = await asyncio.to_thread(desk.ask, caller, request)
            finished = await desk.wait(caller, view.turn_id, ask_wait_s)
        except ApiError as exc:
            raise ToolError(str(exc)) from exc
        return finished.to_json()

    @server.tool(description=NOTE, annotations=ToolAnnotations(read_only_hint=False, open_world_hint=False))
    async def add_note(
        database: Annotated[str, Field(description="The database the tables are in.")],
        tables: Annotated[list[str], Field(min_length=1, max_length=20, description="The table names.")],
        text: Annotated[str, Field(min_length=1, max_length=2000, description="What to remember.")],
        private: Annotated[bool, Field(description="Only this user sees the note.")] = False,
    ) -> NoteSaved:
        return await call(lambda caller: gateway.add_note(caller, database, tables, text, private=private))

    @server.resource(
        "tablescout://databases",
        name="databases",
        description="The databases this user may ask about, each with a summary of what it holds (JSON).",
        mime_type="application/json",
    )
    async def databases() -> str:
        found = await call(gateway.databases, ResourceError)
        return json.dumps([d.model_dump(mode="json") for d in found], ensure_ascii=False)

    @server.resource(
        "tablescout://databases/{database}",
        name="database",
        description="One database's summary: its main tables, what they hold, which are copies.",
        mime_type="text/plain",
    )
    async def database(database: str) -> str:
        found = await call(lambda caller: gateway.database(caller, database), ResourceError)
        return found.summary or f"{found.name} has not been analysed yet."

    return server
