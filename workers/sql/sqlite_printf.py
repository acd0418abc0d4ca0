"""SQLite's printf() and format() return NULL, not an error, when their text would be longer than the length limit
(`SQLITE_MAX_LENGTH`), so a query would read a NULL it never asked for. Every such call in the model's statement is
wrapped as `ts_fits(printf(f, ...), f IS NULL)`: `ts_fits`, which the executor registers for the statement, passes
the value through and fails the statement when printf gave NULL for a format that was not NULL (the only other way
it gives NULL). Views run their own definitions; a printf inside a view's definition is not wrapped.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

FITS_FUNCTION = "ts_fits"
_NAMES = frozenset({"printf", "format"})


class ValueTooLong(ValueError):
    """printf() or format() gave NULL because the text would be too long."""


def _is_printf(node: exp.Expr) -> bool:
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower() in _NAMES
    return isinstance(node, exp.Format)


def checked_printf(statement: exp.Expr) -> exp.Expr | None:
    """A copy of `statement` with every printf() and format() call wrapped, or None when it makes no such call."""
    if not any(_is_printf(node) for node in statement.find_all(exp.Func)):
        return None
    copy = statement.copy()
    for node in reversed(list(copy.find_all(exp.Func))):  # inner calls first, so that nested ones are wrapped too
        if not _is_printf(node):
            continue
        arguments = [a for a in ([node.this] if isinstance(node, exp.Format) else []) + node.expressions if a]
        if not arguments:
            continue  # printf() with no format is NULL anyway
        format_is_null = exp.Is(this=arguments[0].copy(), expression=exp.Null())
        wrapper = exp.Anonymous(this=FITS_FUNCTION, expressions=[])
        node.replace(wrapper)
        wrapper.set("expressions", [node, format_is_null])
    return copy


def fits(value: Any, format_is_null: Any) -> Any:
    """`ts_fits(value, format_is_null)`: the value, unless printf gave NULL for a format that was not NULL."""
    if value is None and not format_is_null:
        raise ValueTooLong("printf() or format() text would be too long")
    return value
