"""The `tablescout` command (SPEC §9). Only commands that work are registered."""

from __future__ import annotations

import gc
import sys
from typing import NoReturn

import typer
from rich.markup import escape

from core import interrupts
from core.errors import TablescoutError
from tablescout.cli import (
    directory_cmd,
    examples_cmd,
    health_cmd,
    mask_key_cmd,
    model_cmd,
    note_cmd,
    review_cmd,
    sample_cmd,
    source_cmd,
    token_cmd,
)
from tablescout.cli.analyze_cmd import analyze
from tablescout.cli.ask_cmd import ask, chat
from tablescout.cli.card_cmd import card
from tablescout.cli.context import errors, exit_interrupted
from tablescout.cli.demo_cmd import demo
from tablescout.cli.init_cmd import init
from tablescout.cli.mcp_cmd import mcp
from tablescout.cli.search_cmd import search
from tablescout.cli.serve_cmd import serve
from tablescout.cli.worker_cmd import worker

app = typer.Typer(
    name="tablescout",
    help="Answers business questions from your databases, choosing tables before writing SQL.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.command("init")(init)
app.add_typer(source_cmd.app, name="source")
app.add_typer(sample_cmd.app, name="sample")
app.add_typer(note_cmd.app, name="note")
app.add_typer(examples_cmd.app, name="examples")
app.add_typer(review_cmd.app, name="review")
app.command("analyze")(analyze)
app.command("card")(card)
app.command("search")(search)
app.command("ask")(ask)
app.command("chat")(chat)
app.command("demo")(demo)
app.command("worker")(worker)
app.command("serve")(serve)
app.command("mcp")(mcp)
app.add_typer(token_cmd.app, name="token")
app.add_typer(directory_cmd.app, name="directory")
app.add_typer(model_cmd.app, name="model")
app.add_typer(health_cmd.app, name="health")
app.add_typer(mask_key_cmd.app, name="mask-key")


def _not_utf8(arguments: list[str]) -> int | None:
    """The position of the first argument that is not valid UTF-8 (Python keeps such bytes as lone surrogates)."""
    for position, argument in enumerate(arguments, start=1):
        try:
            argument.encode("utf-8")
        except UnicodeEncodeError:
            return position
    return None


def _fail(message: str) -> NoReturn:
    errors.print(f"[red]error:[/] {escape(message)}", highlight=False)
    sys.exit(1)


def main() -> None:
    # What is alive now (the command line's modules and classes) lives as long as the process: frozen, it is left
    # out of every later collection (`source list` spent 50 ms collecting, 30 of them in one full collection that
    # scanned these objects; 20 ms with them frozen).
    gc.freeze()
    interrupts.install()  # SIGINT, SIGTERM, SIGHUP: the store and children are closed on the way out
    position = _not_utf8(sys.argv[1:])
    if position is not None:
        _fail(f"argument {position} is not valid UTF-8 text; nothing was done")
    try:
        app()
    except SystemExit as exc:
        exit_interrupted(exc)
        raise
    except interrupts.Interrupted as exc:  # one that reached past Typer's own handling
        exit_interrupted(SystemExit(exc.exit_code))
        raise
    except TablescoutError as exc:
        _fail(str(exc))
    except Exception as exc:
        # A connection that broke in the middle of a command (the store or a source went away): one line, no
        # traceback; what was already committed stays, the rest was rolled back with the transaction. SQLAlchemy
        # is imported only here, so that commands which never open a database do not load it.
        from sqlalchemy.exc import DBAPIError, OperationalError

        if not isinstance(exc, DBAPIError):
            raise
        if not exc.connection_invalidated and not isinstance(exc, OperationalError):
            raise
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig is not None else type(exc).__name__
        _fail(f"lost the connection to a database in the middle of the command ({reason}); nothing more was saved")
