"""Errors a connector raises, and turning driver exceptions into messages fit to show a user."""

from __future__ import annotations

from typing import Any

from core.errors import SourceError


class SourceTimeout(SourceError):
    """A statement against a source ran longer than the connector's statement timeout and was cancelled."""


def driver_message(exc: BaseException, secret: str | None = None) -> str:
    """The first line of a driver error, without what SQLAlchemy adds (SQL, parameters), and with `secret` masked.

    PyMySQL errors carry `(code, message)` as their arguments; they read better as `message [code]`.
    """
    orig = _innermost_driver_error(exc)
    args: tuple[Any, ...] = tuple(getattr(orig, "args", ()))
    if len(args) == 2 and isinstance(args[0], int) and isinstance(args[1], str):
        message = f"{args[1]} [{args[0]}]"
    else:
        message = str(orig)
    lines = [line for line in message.strip().splitlines() if line.strip()]
    first = lines[0].strip() if lines else type(orig).__name__
    if secret:
        first = first.replace(secret, "***")
    return first


def _innermost_driver_error(exc: BaseException) -> BaseException:
    """The DBAPI exception SQLAlchemy wrapped, also where a reflection error was raised from it; else `exc`."""
    cause: BaseException | None = exc
    while cause is not None:
        orig = getattr(cause, "orig", None)
        if isinstance(orig, BaseException):
            return orig
        cause = cause.__cause__
    return exc
