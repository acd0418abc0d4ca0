"""Row filters compare text exactly on every engine (SPEC §6), so a filter admits the same rows everywhere.

MariaDB's usual collations ignore case and trailing spaces, so `SHIP_CITY = 'Busan'` would also admit 'BUSAN' and
'busan  '. In a row filter's predicate every `=`, `<>`, `<=>`, `IN` and `LIKE` whose operands are all text (a
string column of the table, a string literal, a `{user.ATTR}` value) compares their UTF-8 bytes instead:
`CAST(CAST(x AS CHAR CHARACTER SET utf8mb4) AS BINARY)`, which is case-sensitive and pads nothing. An `=` or `IN`
keeps its collation comparison beside the exact one (the exact match is a subset of it), so an index on the column
can still find the candidates. Numbers, dates and anything else keep comparing as they do.

SQLite's LIKE ignores the case of ASCII letters; in a row filter `x LIKE p` becomes `(x LIKE p AND ts_like(x, p))`,
where `ts_like` (`like_exactly`, registered by the executor for the statement) matches case-sensitively, as
PostgreSQL does. `=` and `IN` are exact on SQLite and PostgreSQL already.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from sqlglot import exp

SQLITE_LIKE_FUNCTION = "ts_like"

_COMPARISONS: tuple[type[exp.Expr], ...] = (exp.EQ, exp.NEQ, exp.NullSafeEQ, exp.In, exp.Like)
_KEEP_INDEXABLE: tuple[type[exp.Expr], ...] = (exp.EQ, exp.In)


def exact_text_comparisons(
    predicate: exp.Expr, table_alias: str, text_columns: Collection[str], placeholders: Collection[str]
) -> exp.Expr:
    """`predicate` with its text comparisons made exact. Columns of the filtered table are qualified with
    `table_alias`; `text_columns` are its string-typed columns; `placeholders` the names bound to attribute values."""
    for node in reversed(list(predicate.find_all(*_COMPARISONS))):
        operands = _operands(node)
        if not operands or not all(_is_text(o, table_alias, text_columns, placeholders) for o in operands):
            continue
        exact = node.copy()
        for operand in _operands(exact) or []:
            operand.replace(_as_bytes(operand.copy()))
        replacement = exp.Paren(this=exp.and_(node.copy(), exact)) if isinstance(node, _KEEP_INDEXABLE) else exact
        if node is predicate:
            predicate = replacement
        else:
            node.replace(replacement)
    return predicate


def _operands(node: exp.Expr) -> list[exp.Expr] | None:
    if isinstance(node, exp.In):
        if node.args.get("query") is not None or node.args.get("unnest") is not None:
            return None
        return [node.this, *node.expressions]
    return [node.this, node.expression]


def _is_text(node: exp.Expr, table_alias: str, text_columns: Collection[str], placeholders: Collection[str]) -> bool:
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Literal):
        return bool(node.is_string)
    if isinstance(node, exp.Column):
        if node.table == table_alias:
            return node.name in text_columns
        return not node.table and node.name in placeholders
    return False


def _as_bytes(node: exp.Expr) -> exp.Expr:
    utf8 = exp.Cast(this=node, to=exp.DataType(this=exp.DataType.Type.CHARACTER_SET, kind=exp.Var(this="utf8mb4")))
    return exp.Cast(this=utf8, to=exp.DataType.build("BINARY", dialect="mysql"))


def exact_like_on_sqlite(predicate: exp.Expr) -> exp.Expr:
    """`predicate` with every LIKE also matched case-sensitively (`ts_like`)."""
    for node in reversed(list(predicate.find_all(exp.Like))):
        escape = node.parent if isinstance(node.parent, exp.Escape) else None
        target: exp.Expr = escape if escape is not None else node
        arguments = [node.this.copy(), node.expression.copy()]
        if escape is not None:
            arguments.append(escape.expression.copy())
        exact = exp.Anonymous(this=SQLITE_LIKE_FUNCTION, expressions=arguments)
        replacement = exp.Paren(this=exp.and_(target.copy(), exact))
        if target is predicate:
            predicate = replacement
        else:
            target.replace(replacement)
    return predicate


def like_exactly(value: Any, pattern: Any, escape: Any = None) -> int | None:
    """SQL LIKE, case-sensitive: `%` any text, `_` one character, `escape` makes the next character literal."""
    if value is None or pattern is None:
        return None
    parts: list[str] = []
    characters = iter(str(pattern))
    for character in characters:
        if escape is not None and character == str(escape):
            parts.append(re.escape(next(characters, "")))
        elif character == "%":
            parts.append(".*")
        elif character == "_":
            parts.append(".")
        else:
            parts.append(re.escape(character))
    return int(re.fullmatch("".join(parts), str(value), re.DOTALL) is not None)
