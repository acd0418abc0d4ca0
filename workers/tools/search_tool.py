"""`search_tables` and `list_tables`: candidate tables for a question, or plain names when search finds nothing."""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from typing import Any

from search.candidates import Candidate
from search.service import DEFAULT_K, MAX_K, SearchInputError, SearchRequest, search_tables
from workers.models.types import ToolSpec
from workers.tools.base import (
    RESULT_BUDGET,
    Tool,
    ToolContext,
    ToolInputError,
    ToolOutput,
    list_argument,
    queryable_source,
    shown_database,
    shown_databases,
    text_argument,
    viewer_reads,
    visible_tables,
)
from workers.tools.privacy import WITHHELD, head_without_values, notes_withheld
from workers.tools.status_words import joined, subject_words

HEAD_CHARS = 220
LISTED_NAMES = 300
#: For a small model (ToolContext.compact): fewer candidates, a shorter head without the "Table X in db (engine):"
#: preamble, no code lists (the card has them) and one column to watch.
COMPACT_K = 5
COMPACT_HEAD_CHARS = 150

_PREAMBLE = re.compile(r"^Table \S+ in \S+ \([^)]*\):\s*")

SEARCH_SPEC = ToolSpec(
    name="search_tables",
    description=(
        "Find the tables that answer a question. Returns ranked candidates with role (live/copy/snapshot/partition), "
        "copy_of, codes and notes, and denied_tables the user may not see. Use terms to search parts of a compound "
        "question separately (entities, filter values)."
    ),
    parameters={
        "type": "object",
        "properties": {
            "question": {"type": "string", "description": "The question in business words."},
            "databases": {"type": "array", "items": {"type": "string"}, "description": "Limit to these databases."},
            "terms": {"type": "array", "items": {"type": "string"}, "description": "Parts searched separately."},
            "k": {"type": "integer", "minimum": 1, "maximum": MAX_K, "description": "How many candidates (8)."},
        },
        "required": ["question"],
    },
)

LIST_SPEC = ToolSpec(
    name="list_tables",
    description="Table names of one database (optionally matching a pattern like ORD*). Use when search finds nothing.",
    parameters={
        "type": "object",
        "properties": {
            "database": {"type": "string"},
            "pattern": {"type": "string", "description": "Shell-style pattern or a word the name contains."},
        },
        "required": ["database"],
    },
)


def _private_candidate_line(rank: int, candidate: Candidate) -> list[str]:
    """A candidate in privacy mode (`workers.tools.privacy`): its head without values, which columns hold codes,
    and how many notes it has; no code, value-index hit or note text."""
    role = candidate.role if candidate.copy_of is None else f"{candidate.role} of {candidate.copy_of}"
    head = " ".join(head_without_values(candidate.head, candidate.watch).split())
    if len(head) > HEAD_CHARS:
        head = head[: HEAD_CHARS - 1] + "…"
    lines = [f"{rank}. {candidate.database}.{candidate.table} [{role}] {head}"]
    if candidate.codes:
        lines.append(f"   coded columns ({WITHHELD}): " + ", ".join(list(candidate.codes)[:3]))
    if candidate.through:
        lines.append("   joins " + " and ".join(candidate.through[:3]))
    if candidate.notes:
        lines.append(f"   {notes_withheld(len(candidate.notes))}")
    return lines


def _held_value(value: dict[str, str]) -> str:
    """A value the question names as the candidate holds it: `STATUS_CODE = '90' (Cancelled)` for a code's meaning,
    `CTGRY_CD: codes of Product category` for the name of a column's group of codes."""
    if "group" in value:
        return f"{value['column']}: codes of {value['group']}"
    held = f"{value['column']} = {value['value']!r}"
    return f"{held} ({value['meaning']})" if value.get("meaning") else held


def _candidate_line(rank: int, candidate: Candidate, compact: bool = False) -> list[str]:
    role = candidate.role if candidate.copy_of is None else f"{candidate.role} of {candidate.copy_of}"
    head = " ".join(candidate.head.split())
    limit = HEAD_CHARS
    if compact:
        head = _PREAMBLE.sub("", head, count=1)
        limit = COMPACT_HEAD_CHARS
    if len(head) > limit:
        head = head[: limit - 1] + "…"
    lines = [f"{rank}. {candidate.database}.{candidate.table} [{role}] {head}"]
    if candidate.codes and not compact:
        lines.append("   codes: " + "; ".join(f"{k}: {v}" for k, v in list(candidate.codes.items())[:3]))
    if candidate.watch:
        shown = list(candidate.watch.items())[: 1 if compact else 3]
        lines.append("   watch: " + "; ".join(f"{k}: {v}" for k, v in shown))
    if candidate.values:
        lines.append("   holds: " + "; ".join(_held_value(v) for v in candidate.values[:3]))
    if candidate.through:
        lines.append("   joins " + " and ".join(candidate.through[:3]))
    for note in candidate.notes[:3]:
        lines.append(f"   note: {note['text'][:200]}")
    return lines


def run_search(context: ToolContext, arguments: dict[str, Any]) -> ToolOutput:
    question = text_argument(arguments, "question")
    assert question is not None
    databases = list_argument(arguments, "databases") or list(context.pins)
    if context.pins:
        databases = list(context.pins)  # the user's pin wins over the model's choice
    k = arguments.get("k", COMPACT_K if context.compact else DEFAULT_K)
    if not isinstance(k, int) or isinstance(k, bool):
        raise ToolInputError("argument 'k' must be an integer")
    request = SearchRequest(
        question=question,
        databases=databases,
        terms=list_argument(arguments, "terms"),
        k=k,
        # the model's own k is exact; otherwise the question's parts and the connectors between its candidates may
        # bring a few more (a small model's compact listing stays at its k)
        adaptive="k" not in arguments and not context.compact,
    )
    try:
        result = search_tables(
            context.session, context.principal, request, context.encoders, context.viewer, viewer_reads(context)
        )
    except SearchInputError as exc:
        raise ToolInputError(str(exc)) from exc
    lines = [
        result.searched.describe() + (": " + ", ".join(result.searched.databases) if result.searched.databases else "")
    ]
    if not result.candidates:
        lines.append("No candidate tables. Try other words, terms, or list_tables.")
    denied = []
    if result.denied_tables:
        denied.append("denied_tables (exist, but this user has no permission): " + ", ".join(result.denied_tables))
    room = RESULT_BUDGET - len("\n".join([*lines, *denied])) - 1
    for rank, candidate in enumerate(result.candidates, start=1):
        if context.schema_only:
            block = _private_candidate_line(rank, candidate)
        else:
            block = _candidate_line(rank, candidate, context.compact)
        room -= len("\n".join(block)) + 1
        if rank > k and room < 0:
            break  # a candidate beyond k only while it fits, and never at the cost of the denied tables' line
        lines.extend(block)
    return ToolOutput("\n".join([*lines, *denied]))


def run_list(context: ToolContext, arguments: dict[str, Any]) -> ToolOutput:
    label = text_argument(arguments, "database")
    assert label is not None
    source = queryable_source(context, label)
    pattern = (text_argument(arguments, "pattern", required=False) or "*").casefold()
    if not any(ch in pattern for ch in "*?["):
        pattern = f"*{pattern}*"
    names = []
    for table in visible_tables(context, source):
        qualified = f"{table.schema_name}.{table.name}" if table.schema_name else table.name
        if fnmatchcase(qualified.casefold(), pattern) or fnmatchcase(table.name.casefold(), pattern):
            names.append(qualified + ("" if table.role == "live" else f" ({table.role})"))
    if not names:
        return ToolOutput(f"{source.name}: no table matches {pattern!r}")
    shown = names[:LISTED_NAMES]
    more = f"\n… {len(names) - LISTED_NAMES} more; narrow the pattern" if len(names) > LISTED_NAMES else ""
    return ToolOutput(f"{source.name} ({len(names)} tables): " + ", ".join(shown) + more)


def _list_status(context: ToolContext, arguments: dict[str, Any]) -> str:
    database = shown_database(context, arguments)
    return f"Listing tables of {database}…" if database else "Listing tables…"


def _search_status(context: ToolContext, arguments: dict[str, Any]) -> str:
    """ "Looking for tables about orders in erp…": the asker's own words for what is looked for, and the databases
    searched that the asker may query (the pin wins, as in the search itself)."""
    searched: list[str] = []
    for value in [arguments.get("question"), arguments.get("terms")]:
        if isinstance(value, str):
            searched.append(value)
        elif isinstance(value, list):
            searched.extend(v for v in value if isinstance(v, str))
    named = context.pins or _names(arguments.get("databases"))
    databases = shown_databases(context, named)
    about = subject_words(searched, context.user_texts)
    if not about and not databases:
        return "Searching tables…"
    line = "Looking for tables"
    if about:
        line += f" about {joined(about)}"
    if len(databases) > 2:
        line += f" in {len(databases)} databases"
    elif databases:
        line += f" in {joined(databases)}"
    return line + "…"


def _names(value: object) -> list[str]:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


SEARCH_TOOL = Tool(SEARCH_SPEC, run_search, _search_status)
LIST_TOOL = Tool(LIST_SPEC, run_list, _list_status)
