"""The `tablescout` command (SPEC §9). Only commands that work are registered."""

from __future__ import annotations

import sys

import typer

from core.errors import TablescoutError
from tablescout.cli import directory_cmd, health_cmd, model_cmd, note_cmd, sample_cmd, source_cmd
from tablescout.cli.analyze_cmd import analyze
from tablescout.cli.ask_cmd import ask, chat
from tablescout.cli.card_cmd import card
from tablescout.cli.context import errors
from tablescout.cli.demo_cmd import demo
from tablescout.cli.init_cmd import init
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
app.command("analyze")(analyze)
app.command("card")(card)
app.command("search")(search)
app.command("ask")(ask)
app.command("chat")(chat)
app.command("demo")(demo)
app.command("worker")(worker)
app.command("serve")(serve)
app.add_typer(directory_cmd.app, name="directory")
app.add_typer(model_cmd.app, name="model")
app.add_typer(health_cmd.app, name="health")


def main() -> None:
    try:
        app()
    except TablescoutError as exc:
        errors.print(f"[red]error:[/] {exc}", highlight=False)
        sys.exit(1)
