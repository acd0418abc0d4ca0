"""`tablescout search`: candidate tables for a question, one at a time or a JSONL batch (SPEC §9)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from core.errors import ConfigError, TablescoutError
from search.limits import MAX_K
from tablescout.cli.context import console, current_store, principal_for, settings

if TYPE_CHECKING:
    from core.config.settings import Settings
    from search.service import SearchResult

# The search code, the permission model and the encoders are imported inside the commands that use them, so that
# building the command line (`tablescout --help`, any other command) does not load them.


def result_json(result: SearchResult, *, full: bool) -> dict[str, Any]:
    return {
        "searched": {
            "databases": result.searched.databases,
            "count": len(result.searched.databases),
            "total": result.searched.total,
        },
        "candidates": [c.full() if full else c.contract() for c in result.candidates],
        "denied_tables": result.denied_tables,
        "parts": [p.contract() for p in result.parts],  # what the question mentions, searched beside it
    }


def _print(result: SearchResult) -> None:
    console.print(result.searched.describe())
    table = Table("#", "database", "table", "role", "copy of", "score", "matched by")
    for rank, c in enumerate(result.candidates, start=1):
        table.add_row(
            str(rank), c.database, c.table, c.role, c.copy_of or "", f"{c.score:.4f}", ", ".join(c.matched_by)
        )
    console.print(table)
    if result.denied_tables:
        console.print("Also relevant but not permitted: " + ", ".join(result.denied_tables))
    if result.parts:
        console.print("Question parts: " + "; ".join(f"{p.text} ({p.kind})" for p in result.parts))


def _batch_line(raw: str, number: int) -> dict[str, Any]:
    try:
        item = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"line {number}: not JSON ({exc.msg})") from exc
    if not isinstance(item, dict) or "id" not in item or not isinstance(item.get("question"), str):
        raise ConfigError(f'line {number}: expected an object with "id" and a "question" string')
    return item


def _run_batch(path: Path, k: int, config: Settings) -> int:
    from search.service import SearchRequest, search_tables
    from workers.runtime import encoders_for
    from workers.viewer_reads import SqlViewerReads

    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc
    failures = 0
    encoders = encoders_for(config)
    with current_store(config) as store:
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            item_id: Any = None
            try:
                item = _batch_line(raw, number)
                item_id = item["id"]
                with store.transaction() as session:
                    principal, viewer = principal_for(session, config, item.get("user"))
                    request = SearchRequest(item["question"], databases=item.get("databases") or [], k=k)
                    reads = SqlViewerReads(session, config, principal)
                    result = search_tables(session, principal, request, encoders, viewer, reads)
                out = {"id": item_id} | result_json(result, full=False)
            except TablescoutError as exc:
                failures += 1
                out = {"id": item_id, "error": str(exc), "searched": None, "candidates": [], "denied_tables": []}
            sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
            sys.stdout.flush()
    return failures


def search(
    question: Annotated[str | None, typer.Argument(help="The business question.")] = None,
    db: Annotated[list[str] | None, typer.Option("--db", help="Search only this database (repeatable).")] = None,
    user: Annotated[str | None, typer.Option("--user", help="Search as slack:ID or teams:ID.")] = None,
    k: Annotated[int, typer.Option("-k", help=f"Candidates to return (1-{MAX_K}).")] = 8,
    term: Annotated[list[str] | None, typer.Option("--term", help="Extra search term (repeatable).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
    batch: Annotated[
        Path | None, typer.Option("--batch", help="JSONL file of {id, question, databases?, user?}.")
    ] = None,
) -> None:
    """Find the tables that answer a question: live tables first, copies behind them, denied ones by name."""
    config = settings()
    if batch is not None:
        if question is not None:
            raise ConfigError("give either a question or --batch, not both")
        if not 1 <= k <= MAX_K:
            raise ConfigError(f"k must be between 1 and {MAX_K}, not {k}")
        if _run_batch(batch, k, config):
            raise typer.Exit(1)
        return
    if question is None:
        raise ConfigError('give a question, e.g. tablescout search "how many orders shipped last month?"')
    from search.service import SearchRequest, search_tables
    from workers.runtime import encoders_for
    from workers.viewer_reads import SqlViewerReads

    encoders = encoders_for(config)
    with current_store(config) as store, store.transaction() as session:
        principal, viewer = principal_for(session, config, user)
        request = SearchRequest(question, databases=db or [], terms=term or [], k=k)
        reads = SqlViewerReads(session, config, principal)
        result = search_tables(session, principal, request, encoders, viewer, reads)
    if as_json:
        typer.echo(json.dumps(result_json(result, full=True), indent=2, ensure_ascii=False))
    else:
        _print(result)
