"""The `tablescout` command (SPEC §9). Only commands that work are registered."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator, MutableMapping
from typing import Any, NoReturn

import typer
from rich.markup import escape
from typer import _click
from typer.core import TyperGroup

from core import interrupts
from core.errors import TablescoutError
from tablescout.cli.context import errors, exit_interrupted

#: The commands, in the order `tablescout --help` lists them, each with its module under tablescout.cli and the
#: name there of its function or, for a group of commands, its Typer app. A module is imported when its command is
#: looked up (to run it, or to list it in the help), so a light command loads no other command's code.
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("init_cmd", "init"),
    "analyze": ("analyze_cmd", "analyze"),
    "card": ("card_cmd", "card"),
    "search": ("search_cmd", "search"),
    "ask": ("ask_cmd", "ask"),
    "chat": ("ask_cmd", "chat"),
    "demo": ("demo_cmd", "demo"),
    "worker": ("worker_cmd", "worker"),
    "serve": ("serve_cmd", "serve"),
    "mcp": ("mcp_cmd", "mcp"),
    "source": ("source_cmd", "app"),
    "sample": ("sample_cmd", "app"),
    "note": ("note_cmd", "app"),
    "examples": ("examples_cmd", "app"),
    "review": ("review_cmd", "app"),
    "token": ("token_cmd", "app"),
    "directory": ("directory_cmd", "app"),
    "model": ("model_cmd", "app"),
    "health": ("health_cmd", "app"),
    "mask-key": ("mask_key_cmd", "app"),
}


def _build(name: str) -> _click.Command:
    """The command `name` as Typer builds it when the command is registered on `app` itself."""
    module, attribute = COMMANDS[name]
    # An import statement's way (`__import__`), not importlib.import_module's, so that Python's import-time report
    # (`-X importtime`) names the module as it names every other.
    __import__(f"{__name__}.{module}")
    target = getattr(sys.modules[f"{__name__}.{module}"], attribute)
    holder = typer.Typer()  # registered here as on `app`, for the same command information
    if isinstance(target, typer.Typer):
        holder.add_typer(target, name=name)
        return typer.main.get_group_from_info(
            holder.registered_groups[0],
            pretty_exceptions_short=app.pretty_exceptions_short,
            suggest_commands=app.suggest_commands,
            rich_markup_mode=app.rich_markup_mode,
        )
    holder.command(name)(target)
    return typer.main.get_command_from_info(
        holder.registered_commands[0],
        pretty_exceptions_short=app.pretty_exceptions_short,
        rich_markup_mode=app.rich_markup_mode,
    )


class _Commands(MutableMapping[str, _click.Command]):
    """The top-level commands by name, every name known at once, each command built when first looked up."""

    def __init__(self, added: MutableMapping[str, _click.Command]) -> None:
        self._names = [*COMMANDS, *(name for name in added if name not in COMMANDS)]
        self._built = dict(added)

    def __getitem__(self, name: str) -> _click.Command:
        built = self._built.get(name)
        if built is None:
            if name not in self._names:
                raise KeyError(name)
            built = self._built[name] = _build(name)
        return built

    def __setitem__(self, name: str, command: _click.Command) -> None:
        if name not in self._names:
            self._names.append(name)
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        self._names.remove(name)
        self._built.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


class _LazyGroup(TyperGroup):
    """`tablescout`: a Typer group whose commands are built (their modules imported) only when looked up."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _Commands(self.commands)


app = typer.Typer(
    name="tablescout",
    cls=_LazyGroup,
    help="Answers business questions from your databases, choosing tables before writing SQL.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@app.callback()
def _group() -> None:
    """Nothing to do before a command: registered so that Typer makes `app` a group (its commands are in
    COMMANDS, not registered on it)."""


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
