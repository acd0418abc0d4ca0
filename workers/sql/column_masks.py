"""What a masked column reads as in the subquery that stands for its table (SPEC §6): its mask, per engine.

- `hide`: the column is left out of the subquery, so for this user it does not exist: naming it fails as an unknown
  column does, and `SELECT *` has no such column.
- `null`: NULL.
- `redact`: '***' where the value is not NULL (NULL stays NULL, so counts of filled values still work).
- `hash`: the MD5 of the value's text, as 32 hex digits (PostgreSQL `md5`, MariaDB/MySQL `MD5`, SQLite a function
  the engine registers, `ts_mask_hash`): equal values hash equally, so joins and COUNT(DISTINCT) still work.
Whatever the query does with the column (WHERE, GROUP BY, ORDER BY, joins, window functions) it does with the masked
value, because that is all the subquery yields.
"""

from __future__ import annotations

import hashlib
from typing import Any

from sqlglot import exp

from core.row_predicates import MaskKind

SQLITE_HASH_FUNCTION = "ts_mask_hash"


def sqlite_mask_hash(value: Any) -> str | None:
    """SQLite's `ts_mask_hash(x)`: the MD5 of x's text as the other engines compute it (NULL stays NULL)."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return hashlib.md5(value, usedforsecurity=False).hexdigest()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return hashlib.md5(str(value).encode("utf-8"), usedforsecurity=False).hexdigest()


def masked_value(kind: MaskKind, column: exp.Column, family: str) -> exp.Expr:
    """The expression that replaces `column` under mask `kind` ("null", "redact" or "hash") on engine `family`."""
    if kind == "null":
        return exp.Null()
    if kind == "redact":
        return exp.Case(
            ifs=[exp.If(this=exp.Is(this=column, expression=exp.Null()), true=exp.Null())],
            default=exp.Literal.string("***"),
        )
    if kind == "hash":
        if family == "postgresql":
            return exp.Anonymous(this="md5", expressions=[exp.Cast(this=column, to=exp.DataType.build("text"))])
        if family == "mysql":
            return exp.Anonymous(this="MD5", expressions=[column])
        return exp.Anonymous(this=SQLITE_HASH_FUNCTION, expressions=[column])
    raise ValueError(f"no masked value for {kind!r}")
