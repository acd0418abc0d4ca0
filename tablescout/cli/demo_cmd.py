"""`tablescout demo`: the sample ERP on the embedded defaults, analysed and indexed, then a console chat.

Every step is idempotent, so running the demo again reuses what the first run built. With no hosted model configured
and the local model installed (`tablescout model install-local`), the demo starts the local model server as a child
process on a free loopback port and answers with it; the server stops when the demo ends. With neither, the demo
still shows, for each question, the tables search would use, and says how to configure or install a model.
"""

from __future__ import annotations

import sys
from contextlib import ExitStack
from typing import Annotated

import typer

from tablescout.cli import sample_cmd
from tablescout.cli.analyze_cmd import analyze
from tablescout.cli.ask_cmd import converse, no_model_reply, search_only, with_local_model
from tablescout.cli.context import console, current_store, settings
from tablescout.cli.init_cmd import init

EXAMPLES = (
    "How many orders were placed in 2024?",
    "Which five customers spent the most in 2023?",
    "How many order lines were returned, and for what total amount?",
)


def demo(
    question: Annotated[
        list[str] | None, typer.Option("--question", "-q", help="Ask this instead of the examples (repeatable).")
    ] = None,
    interactive: Annotated[
        bool | None, typer.Option("--chat/--no-chat", help="Open the chat afterwards (default: when on a terminal).")
    ] = None,
) -> None:
    """Build the sample ERP, analyse and index it, then chat with it (all on the embedded defaults)."""
    # Imported here, not at the top, so that building the command line does not load the turn code.
    from bot.console import ConsoleView
    from tablescout.cli.turn_session import ConsoleSession
    from workers.models.registry import provider_from_settings

    console.rule("1. metadata store")
    init()
    console.rule("2. sample databases")
    sample_cmd.build(directory=None, register=True)
    console.rule("3. analysis and search index")
    analyze(names=None, all_sources=True)
    config = settings()  # read again: the sample sources are in the configuration now
    console.rule("4. questions")
    view = ConsoleView(console)
    with ExitStack() as running, current_store(config) as store:
        config, local = with_local_model(running, config, view)
        answering = provider_from_settings(config) is not None
        if local is not None:
            view.note("Only the first example is asked of the local model.")
        session = ConsoleSession(config, store)
        if answering and session.in_process and local is None:
            view.note("TABLESCOUT_REDIS_URL is not set: turns run in this process.")
        examples = list(EXAMPLES[:1] if local is not None else EXAMPLES)
        for text in question or examples:
            console.print(f"[bold cyan]question>[/] {text}", highlight=False)
            if not answering:
                no_model_reply(view, search_only(config, store, session, text))
                continue
            turn_id = session.submit(text)
            with view.working():
                result = session.run(turn_id, view.status)
            view.answer(result)
        chat_now = interactive if interactive is not None else sys.stdin.isatty()
        if chat_now:
            console.rule("5. your turn")
            view.note('Ask about orders, customers, products, returns or billing; "exit" leaves.')
            converse(config, store, session, view, console)
