"""`tablescout ask` and `tablescout chat`: one full turn printed, or a console conversation (SPEC §9).

With no model configured and the local model installed (`tablescout model install-local`), both start the local
model server as a child process for as long as they run (`with_local_model`), as `tablescout demo` does; with
neither, they show the tables search would use and how to get a model."""

from __future__ import annotations

import json
from contextlib import ExitStack
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from core.errors import ConfigError
from tablescout.cli.context import console, current_store, errors, principal_for, settings

if TYPE_CHECKING:
    from bot.console import ConsoleView
    from core.answer.model import Answer
    from core.config.settings import Settings
    from core.store.database import Store
    from tablescout.cli.turn_session import ConsoleSession
    from workers.models.local_gguf import InstalledModel

# The turn, search, model and console-view code is imported inside the functions that use it, so that building the
# command line does not load it.

#: SPEC §9's keys, and the chart other clients may draw again (`null`, or its type, title, x, y, spec and image)
CONTRACT_KEYS = ("status", "answer", "rounds", "tables_used", "sql", "chart")
SQL_KEYS = ("database", "sql", "columns", "rows", "truncated", "error")
EXIT_WORDS = {"exit", "quit", ":q", "bye"}

DbOption = Annotated[list[str] | None, typer.Option("--db", help="Pin the search to this database (repeatable).")]
UserOption = Annotated[
    str | None, typer.Option("--user", help="Ask as this chat user (slack:ID or teams:ID), with their permissions.")
]


def search_only(config: Settings, store: Store, session: ConsoleSession, question: str) -> dict[str, Any]:
    """What search finds for a question, for when no model is configured to answer it."""
    from search.service import SearchRequest, search_tables
    from workers.runtime import encoders_for
    from workers.viewer_reads import SqlViewerReads

    with store.transaction() as db:
        principal, viewer = principal_for(db, config, session.user)
        request = SearchRequest(question=question, databases=list(session.pins))
        reads = SqlViewerReads(db, config, principal)
        result = search_tables(db, principal, request, encoders_for(config), viewer, reads)
    return {
        "searched": result.searched.describe() + ": " + ", ".join(result.searched.databases),
        "candidates": [c.contract() for c in result.candidates],
        "denied_tables": result.denied_tables,
    }


def no_model_reply(view: ConsoleView, found: dict[str, Any]) -> None:
    """The tables search found, and every way to configure or install a model (none is configured or installed)."""
    from workers.models.registry import describe_model_setup

    view.candidates(found["searched"], found["candidates"], found["denied_tables"])
    view.console.print(
        "[yellow]These are the tables tablescout would use; it does not answer without a model.[/]\n"
        + describe_model_setup(),
        highlight=False,
    )


def with_local_model(running: ExitStack, config: Settings, view: ConsoleView) -> tuple[Settings, InstalledModel | None]:
    """`config` as it is when it names a model or none is installed; otherwise the installed local model started
    as a child process (`tablescout model serve-local`) that `running` stops, and `config` answering with it."""
    from tablescout.cli.model_cmd import local_model_server
    from workers.models.local_gguf import installed_model
    from workers.models.registry import provider_from_settings

    if provider_from_settings(config) is not None:
        return config, None
    local = installed_model(config.home)
    if local is None:
        return config, None
    with view.console.status(f"No hosted model is configured: starting the local model {local.name}…"):
        endpoint = running.enter_context(local_model_server(config))
    view.note(
        f"Answering with the local model {local.name} at {endpoint.base_url}, in this process; on a CPU a question "
        f"takes from a few seconds to a minute (log: {endpoint.log})."
    )
    return endpoint.settings_for(config), local


def ask(
    question: Annotated[str, typer.Argument(help="The question, in business words.")],
    db: DbOption = None,
    user: UserOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object (SPEC §9).")] = False,
) -> None:
    """Answer one question: search, open cards, run read-only SQL, print the answer."""
    from bot.console import ConsoleView
    from bot.messages import too_long
    from tablescout.cli.turn_session import ConsoleSession
    from workers.models.registry import describe_model_setup, provider_from_settings

    refusal = too_long(question)
    if refusal is not None:
        raise ConfigError(refusal)
    config = settings()
    view = ConsoleView(errors if as_json else console)
    with ExitStack() as running, current_store(config) as store:
        session = ConsoleSession(config, store, user=user, pins=db or [])
        session.check_user()
        if provider_from_settings(config) is None:
            config, local = with_local_model(running, config, view)
            if local is None:
                found = search_only(config, store, session, question)
                if as_json:
                    reply = {"status": "no_model", "answer": describe_model_setup(), "rounds": 0, "tables_used": []}
                    typer.echo(json.dumps(reply | {"sql": []} | found, ensure_ascii=False))
                else:
                    no_model_reply(view, found)
                raise typer.Exit(1)
            session = ConsoleSession(config, store, user=user, pins=db or [])
        elif session.in_process:
            view.note("TABLESCOUT_REDIS_URL is not set: running the turn in this process.")
        turn_id = session.submit(question)
        with view.working():
            result = session.run(turn_id, view.status)
    if as_json:
        typer.echo(json.dumps(contract_json(result) | {"turn_id": turn_id}, ensure_ascii=False))
    else:
        view.answer(result)
    if result.status == "failed":
        raise typer.Exit(1)


def contract_json(answer: Answer) -> dict[str, Any]:
    """The answer as `ask --json` prints it: SPEC §9's keys, each SQL run with exactly its six keys, and the chart."""
    shown = answer.to_json()
    runs = [{k: run[k] for k in SQL_KEYS} for run in shown["sql"]]
    return {k: shown[k] for k in CONTRACT_KEYS} | {"sql": runs}


def converse(config: Settings, store: Store, session: ConsoleSession, view: ConsoleView, prompt: Console) -> None:
    """Read questions until the user leaves; every message continues the same conversation."""
    from bot.messages import too_long
    from workers.models.registry import provider_from_settings

    answering = provider_from_settings(config) is not None
    while True:
        try:
            text = prompt.input("[bold cyan]you>[/] ").strip()
        except (EOFError, KeyboardInterrupt):
            view.console.print()
            return
        if not text:
            continue
        if text.lower() in EXIT_WORDS:
            return
        refusal = too_long(text)
        if refusal is not None:
            view.console.print(f"[yellow]{escape(refusal)}[/]", highlight=False)
            continue
        if not answering:
            no_model_reply(view, search_only(config, store, session, text))
            continue
        turn_id = session.submit(text)
        with view.working():
            result = session.run(turn_id, view.status)
        view.answer(result)


def chat(db: DbOption = None, user: UserOption = None) -> None:
    """A console conversation with the same turn engine the chat bots use (exit with Ctrl-D or "exit")."""
    from bot.console import ConsoleView
    from tablescout.cli.turn_session import ConsoleSession

    config = settings()
    view = ConsoleView(console)
    with ExitStack() as running, current_store(config) as store:
        ConsoleSession(config, store, user=user, pins=db or []).check_user()
        config, _ = with_local_model(running, config, view)
        session = ConsoleSession(config, store, user=user, pins=db or [])
        where = "in this process" if session.in_process else "on the workers behind TABLESCOUT_REDIS_URL"
        view.note(f'Turns run {where}. Type a question; "remember this: …" saves a note; "exit" leaves.')
        converse(config, store, session, view, console)
