"""What every tool receives and returns.

The security context (principal, viewer, conversation) comes from the stored turn, never from the model's
arguments; a tool only reads its arguments to know *what* to look at, and checks *whether* the user may.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from core.access.permissions import Principal
from core.access.users import UserRef
from core.answer.values import ValueKind
from core.cards.card_view import card_for_principal
from core.config.settings import Settings
from core.errors import TablescoutError
from core.store.models import Source, SourceTable
from core.store.repositories import catalog as catalog_repo
from core.store.repositories import sources as source_repo
from search.service import Encoders
from workers.models.types import ToolSpec
from workers.viewer_reads import SqlViewerReads

#: The most characters one tool result may hand the model (a card is shortened to fit well within it; a search hands
#: over the candidates beyond its k only while they fit).
RESULT_BUDGET = 8000


class ToolInputError(TablescoutError):
    """The model's arguments are wrong; the message goes back to the model so it can correct the call."""


@dataclass(frozen=True)
class Conversation:
    platform: str
    workspace_id: str | None
    channel_id: str | None
    thread_id: str | None
    private: bool


@dataclass
class SqlRecord:
    """One run_sql call of the turn, as `tablescout ask --json` reports it."""

    database: str
    sql: str
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool
    error: str | None
    #: What each result column holds, from the cards of the columns the SQL reads (`workers.sql.result_kinds`).
    kinds: list[ValueKind | None] = field(default_factory=list)


@dataclass
class ToolContext:
    session: Session
    settings: Settings
    principal: Principal
    viewer: UserRef | None
    author: UserRef
    conversation: Conversation
    encoders: Encoders
    pins: list[str]
    user_texts: list[str]  # what the asking user wrote in this conversation, newest last
    turn_id: int | None = None
    may_query: bool = True  # the user may query at least one database
    compact: bool = False  # write results briefly, for a small model (ModelProvider.small_model)
    #: Privacy mode with a hosted model (`core.access.privacy`): results are written without values
    #: (`workers.tools.privacy`); the rows still reach the answer.
    schema_only: bool = False
    tool_call_id: int | None = None
    opened: set[tuple[str, str]] = field(default_factory=set)  # (database, TABLE) cards opened this turn
    tables_used: list[str] = field(default_factory=list)
    copies_used: list[str] = field(default_factory=list)  # copies queried on purpose (the user named them)
    used_table_ids: dict[str, int] = field(default_factory=dict)  # "db.TABLE" of tables_used → its catalog id
    sql_runs: list[SqlRecord] = field(default_factory=list)
    notes_saved: list[str] = field(default_factory=list)

    def use(self, qualified: str, table_id: int | None = None) -> None:
        if qualified not in self.tables_used:
            self.tables_used.append(qualified)
        if table_id is not None:
            self.used_table_ids[qualified] = table_id


@dataclass(frozen=True)
class ToolOutput:
    text: str
    is_error: bool = False


@dataclass(frozen=True)
class Tool:
    spec: ToolSpec
    run: Callable[[ToolContext, dict[str, Any]], ToolOutput]
    #: The status line shown while it runs ("Searching tables…"), for the chat audience: it names a database or
    #: table only when the asker may see it (status messages in a channel are read by everyone there).
    status: Callable[[ToolContext, dict[str, Any]], str]


def shown_database(context: ToolContext, arguments: dict[str, Any]) -> str | None:
    """The `database` argument, for a status line, when the asker may query that database."""
    value = arguments.get("database")
    if not isinstance(value, str) or not value.strip():
        return None
    source = source_repo.by_name_or_alias(context.session, value)
    return source.name if source is not None and context.principal.may_see(source.name) else None


def shown_table(context: ToolContext, arguments: dict[str, Any], name: object) -> str | None:
    """Table `name` from the arguments, for a status line, when the asker may see it in the argument's database."""
    database = shown_database(context, arguments)
    if database is None or not isinstance(name, str) or not name.strip():
        return None
    schema, _, table = name.strip().rpartition(".")
    return name.strip() if context.principal.may_see(database, table, schema or None) else None


def shown_databases(context: ToolContext, names: list[str]) -> list[str]:
    """The databases among `names` (names or aliases) the asker may query, canonical and in order, for a status."""
    shown: list[str] = []
    for name in names:
        database = shown_database(context, {"database": name})
        if database is not None and database not in shown:
            shown.append(database)
    return shown


def text_argument(arguments: dict[str, Any], name: str, *, required: bool = True) -> str | None:
    value = arguments.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise ToolInputError(f"argument {name!r} is required")
        return None
    if not isinstance(value, str):
        raise ToolInputError(f"argument {name!r} must be a string")
    return value.strip()


def list_argument(arguments: dict[str, Any], name: str) -> list[str]:
    value = arguments.get(name)
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ToolInputError(f"argument {name!r} must be a list of strings")
    return [v.strip() for v in value if v.strip()]


def queryable_source(context: ToolContext, label: str) -> Source:
    """The source named `label` (name or alias) if the user may query it; otherwise a message for the model."""
    source = source_repo.by_name_or_alias(context.session, label)
    if source is None:
        known = [s.name for s in source_repo.all_sources(context.session) if context.principal.may_see(s.name)]
        close = difflib.get_close_matches(label, known, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; databases: {', '.join(known) or 'none'}"
        raise ToolInputError(f"there is no database {label!r}{hint}")
    if not context.principal.may_see(source.name):
        raise ToolInputError(f"no permission: this user may not query database {source.name}")
    return source


def split_table(name: str) -> tuple[str | None, str]:
    schema, _, bare = name.strip().rpartition(".")
    return (schema or None), bare


def visible_tables(context: ToolContext, source: Source) -> list[SourceTable]:
    """The analysed tables of `source` that are visible and that the user may see."""
    return [
        t
        for t in catalog_repo.tables_of(context.session, source.id)
        if t.visible and context.principal.may_see_table(source.name, t)
    ]


def visible_table(context: ToolContext, source: Source, name: str) -> SourceTable:
    """The analysed table `name` of `source` that the user may see; denied tables answer "no permission"."""
    schema, bare = split_table(name)
    row = catalog_repo.find_table(context.session, source.id, bare, schema)
    if row is not None and not context.principal.may_see_table(source.name, row):
        raise ToolInputError(
            f"no permission: {source.name}.{row.name} exists but this user may not see it; "
            "tell the user the data exists and they have no permission"
        )
    if row is None or row.card is None or not row.visible:
        known = [t.name for t in visible_tables(context, source)]
        close = difflib.get_close_matches(bare.upper(), [k.upper() for k in known], n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else "; use search_tables to find tables"
        raise ToolInputError(f"{source.name} has no table {name!r}{hint}")
    return row


def viewer_reads(context: ToolContext) -> SqlViewerReads:
    """Counting for this user through their own SQL path (`workers.viewer_reads`)."""
    return SqlViewerReads(context.session, context.settings, context.principal)


def viewer_card(context: ToolContext, source: Source, row: SourceTable) -> dict[str, Any]:
    """The card of `row` as this user may see it: nothing in it leads to or comes from a table they may not see,
    and its counts and values are those their own SQL would read (`core.cards.card_policies`)."""
    facts = viewer_reads(context).table_facts(source.name, row, "full")
    return card_for_principal(context.principal, source.name, dict(row.card or {}), facts)
