"""What a masked column reads as in the subquery that stands for its table (SPEC §6): its mask, per engine.

- `hide`: the column is left out of the subquery, so for this user it does not exist: naming it fails as an unknown
  column does, and `SELECT *` has no such column.
- `null`: NULL.
- `redact`: '***' where the value is not NULL (NULL stays NULL, so counts of filled values still work).
- `hash`: HMAC-SHA-256 of the value's text under the installation's mask key (`core.access.mask_key`), as 64 hex digits;
  NULL stays NULL. Equal values hash equally within the installation, so joins and COUNT(DISTINCT) still work,
  and without the key no guess can be tested against a hash. PostgreSQL and MariaDB/MySQL have SHA-256 but no
  HMAC, so the statement computes HMAC from it: SHA256(outer pad || SHA256(inner pad || text)), with the two
  padded keys bound as parameters (`KeyParameters`), never written into the text; SQLite calls `ts_mask_hash`,
  which the executor registers for the statement with the key (`keyed_sqlite_hash`).
Whatever the query does with the column (WHERE, GROUP BY, ORDER BY, joins, window functions) it does with the masked
value, because that is all the subquery yields.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from core.access.mask_key import MaskKey, MaskKeyError
from core.access.row_predicates import MaskKind

log = logging.getLogger(__name__)

SQLITE_HASH_FUNCTION = "ts_mask_hash"


@dataclass(frozen=True)
class KeyParameters:
    """The placeholders the mask key's padded forms are bound to (hex text)."""

    inner: exp.Expr
    outer: exp.Expr


class MaskKeyUnavailable(Exception):
    """A hash mask applies and the mask key cannot be used; `str(exc)` is safe to show (the log has the reason)."""


class KeyBinding:
    """The mask key for one statement: read once, when the first hash mask needs it, and its padded forms bound
    through `placeholder` (on the server engines; SQLite's function is keyed by the executor)."""

    def __init__(
        self,
        source: Callable[[], MaskKey] | None,
        family: str,
        database: str,
        placeholder: Callable[[str], exp.Expr],
    ) -> None:
        self.source, self.family, self.database, self.placeholder = source, family, database, placeholder
        self.key: MaskKey | None = None
        self._parameters: KeyParameters | None = None

    def parameters(self) -> KeyParameters | None:
        """The placeholders of the padded keys (None on SQLite); raise MaskKeyUnavailable without a usable key."""
        if self.key is None:
            try:
                if self.source is None:
                    raise MaskKeyError("no mask key was given to the row-filter rewrite")
                self.key = self.source()
            except MaskKeyError as exc:
                log.error(
                    "column masks on %s: a hash mask applies and the mask key cannot be used: %s", self.database, exc
                )
                raise MaskKeyUnavailable(
                    "refused: a column this query reads is hash-masked for you and the mask key of this installation "
                    "cannot be used (a configuration problem); tell the user to ask the operator to check the mask "
                    "key (the log says why)"
                ) from exc
        if self.family == "sqlite":
            return None
        if self._parameters is None:
            self._parameters = KeyParameters(
                inner=self.placeholder(self.key.inner_pad), outer=self.placeholder(self.key.outer_pad)
            )
        return self._parameters


def value_text(value: Any) -> bytes:
    """The bytes SQLite's `ts_mask_hash` hashes: a blob as it is, a whole REAL as an integer, else the text."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).encode("utf-8")


def keyed_sqlite_hash(key: MaskKey) -> Callable[[Any], str | None]:
    """SQLite's `ts_mask_hash(x)` under `key` (NULL stays NULL)."""

    def mask_hash(value: Any) -> str | None:
        return None if value is None else key.digest(value_text(value))

    return mask_hash


def masked_value(kind: MaskKind, column: exp.Column, family: str, key: KeyParameters | None = None) -> exp.Expr:
    """The expression that replaces `column` under mask `kind` ("null", "redact" or "hash") on engine `family`;
    `hash` on PostgreSQL and MariaDB/MySQL needs the key's placeholders."""
    if kind == "null":
        return exp.Null()
    if kind == "redact":
        return exp.Case(
            ifs=[exp.If(this=exp.Is(this=column, expression=exp.Null()), true=exp.Null())],
            default=exp.Literal.string("***"),
        )
    if kind == "hash":
        if family == "sqlite":
            return exp.Anonymous(this=SQLITE_HASH_FUNCTION, expressions=[column])
        if key is None:
            raise ValueError("a hash mask on a server engine needs the key's placeholders")
        if family == "postgresql":
            return _postgres_hmac(column, key)
        if family == "mysql":
            return _mysql_hmac(column, key)
    raise ValueError(f"no masked value for {kind!r} on {family}")


def _call(name: str, *arguments: exp.Expr) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(arguments))


def _postgres_hmac(column: exp.Column, key: KeyParameters) -> exp.Expr:
    def unhex(pad: exp.Expr) -> exp.Expr:
        return _call("decode", pad, exp.Literal.string("hex"))

    text = _call("convert_to", exp.Cast(this=column, to=exp.DataType.build("text")), exp.Literal.string("UTF8"))
    inner = _call("sha256", exp.DPipe(this=unhex(key.inner), expression=text))
    return _call(
        "encode", _call("sha256", exp.DPipe(this=unhex(key.outer), expression=inner)), exp.Literal.string("hex")
    )


def _mysql_hmac(column: exp.Column, key: KeyParameters) -> exp.Expr:
    bits = exp.Literal.number(256)
    # CONCAT with a binary argument is binary: the value's bytes in its own character set, numbers and dates as
    # their text; NULL makes the whole expression NULL.
    inner = _call("SHA2", _call("CONCAT", _call("UNHEX", key.inner), column), bits)
    return _call("SHA2", _call("CONCAT", _call("UNHEX", key.outer), _call("UNHEX", inner)), bits.copy())
