"""Rewriting the model's SQL where it uses what the source's engine lacks, before the guard sees it.

Two mistakes every model makes, small ones all the time, have one correct reading and are fixed rather than sent
back for another round:
- a table qualified with the tablescout database name (`erp.ORD_MST`) where that name is not a schema of the source:
  the qualifier is dropped (the query runs on that database anyway);
- on SQLite, MySQL/PostgreSQL date-part functions SQLite does not have: `YEAR(x)`, `MONTH(x)`, `DAY(x)`,
  `EXTRACT(YEAR FROM x)` (and MONTH, DAY, HOUR, MINUTE, SECOND) become `CAST(STRFTIME('%Y', x) AS INTEGER)` and so
  on; `DATE_FORMAT(x, fmt)` becomes `STRFTIME(fmt, x)` with MySQL's format letters translated; `NOW()` and
  `CURDATE()` become `DATETIME('now')` and `DATE('now')`; `STRFTIME(fmt, x)` compared with a number
  (`STRFTIME('%Y', d) = 2024`, which in SQLite compares text with an integer and never holds) is cast to INTEGER;
- a column alias the statement declares (`AS ORDER_COUNT`, `AS Total_Qty`) written again with a space or a hyphen
  where the underscore was (`ORDER BY ORDER COUNT`, `ORDER BY TOTAL-Qty`): a space leaves the statement unparsable
  and a hyphen (in ORDER BY, GROUP BY or HAVING, where an alias is what one names) subtracts two columns that are
  not there, so the alias as declared is meant. The spaced spelling is replaced only when the statement does not
  parse without it, and only outside string literals.

The rewritten statement is what runs and what is recorded, and the model is told what changed, so the SQL shown to
the user is the SQL that ran. Anything that does not parse, even with its aliases put back, is left alone: the guard
then reports the parse error.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

_PARTS: dict[type[exp.Expr], tuple[str, str]] = {
    exp.Year: ("YEAR", "%Y"),
    exp.Month: ("MONTH", "%m"),
    exp.Day: ("DAY", "%d"),
    exp.DayOfMonth: ("DAYOFMONTH", "%d"),
}
_EXTRACT_FORMATS = {"YEAR": "%Y", "MONTH": "%m", "DAY": "%d", "HOUR": "%H", "MINUTE": "%M", "SECOND": "%S"}
#: MySQL DATE_FORMAT letters and their SQLite strftime spelling; a format using any other letter (%M is the month
#: name in MySQL but the minute in SQLite) is not rewritten.
_MYSQL_FORMAT = {
    "%Y": "%Y",
    "%m": "%m",
    "%d": "%d",
    "%H": "%H",
    "%j": "%j",
    "%w": "%w",
    "%%": "%%",
    "%i": "%M",
    "%s": "%S",
    "%S": "%S",
    "%T": "%H:%M:%S",
}
_NOW = {"NOW": "DATETIME", "CURDATE": "DATE", "SYSDATE": "DATETIME"}


@dataclass(frozen=True)
class Repaired:
    sql: str
    changes: tuple[str, ...]


def repair(sql: str, dialect: str, database_names: Collection[str] = ()) -> Repaired | None:
    """`sql` rewritten for `dialect`, or None when nothing needed changing (or it does not parse).

    `database_names` are the names the source goes by in tablescout (name and aliases) that are not schemas of the
    source: a table qualified with one of them loses the qualifier.
    """
    changes: list[str] = []
    statements = _parsed(sql, dialect)
    if statements is None:
        respelt = _aliases_respelt(sql)
        statements = _parsed(respelt, dialect) if respelt != sql else None
        if statements is None:
            return None
        changes.append("wrote a column alias as it was declared")
    if len(statements) != 1:
        return None
    own = {name.lower(): name for name in database_names}
    aliases = {a.lower(): a for a in _declared_aliases(statements[0])}
    tree = statements[0].transform(lambda node: _rewrite(node, dialect, own, aliases, changes), copy=True)
    if not changes:
        return None
    return Repaired(sql=tree.sql(dialect=dialect), changes=tuple(dict.fromkeys(changes)))


def _parsed(sql: str, dialect: str) -> list[exp.Expr] | None:
    try:
        return [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except (SqlglotError, RecursionError, ValueError):
        return None


#: `AS name` of a column alias, as a model writes it (bare, or in any of the quotes).
_ALIAS = re.compile(r"\bAS\s+[`\"'\[]?([A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+)[`\"'\]]?", re.IGNORECASE)
_QUOTED = re.compile(r"'(?:[^']|'')*'")


def _aliases_respelt(sql: str) -> str:
    """`sql` with each declared alias that has underscores, written elsewhere with spaces or hyphens instead, put
    back as declared (outside string literals)."""
    aliases = dict.fromkeys(_ALIAS.findall(sql))
    if not aliases:
        return sql
    patterns = [
        (re.compile(r"(?<![\w.])" + r"[ \t]*[ \t-][ \t]*".join(map(re.escape, a.split("_"))) + r"(?!\w)", re.I), a)
        for a in aliases
    ]
    pieces = []
    at = 0
    for quoted in [*_QUOTED.finditer(sql), None]:
        end = quoted.start() if quoted is not None else len(sql)
        text = sql[at:end]
        for pattern, alias in patterns:
            text = pattern.sub(alias, text)
        pieces.append(text + (quoted.group(0) if quoted is not None else ""))
        at = quoted.end() if quoted is not None else end
    return "".join(pieces)


def _declared_aliases(tree: exp.Expr) -> list[str]:
    return [e.alias for select in tree.find_all(exp.Select) for e in select.expressions if e.alias]


def _rewrite(
    node: exp.Expr, dialect: str, own: dict[str, str], aliases: dict[str, str], changes: list[str]
) -> exp.Expr:
    if isinstance(node, exp.Sub) and aliases and node.find_ancestor(exp.Order, exp.Group, exp.Having) is not None:
        left, right = node.this, node.expression
        if _bare(left) and _bare(right):
            joined = f"{left.name}_{right.name}".lower()
            if joined in aliases:
                changes.append(f"read {left.name}-{right.name} as the alias {aliases[joined]}")
                return exp.column(aliases[joined])
    if isinstance(node, exp.Table) and own:
        schema = node.args.get("db")
        if isinstance(schema, exp.Identifier) and node.args.get("catalog") is None and schema.name.lower() in own:
            changes.append(f"dropped the database name {own[schema.name.lower()]} before table names")
            node = node.copy()
            node.set("db", None)
            return node
    if dialect != "sqlite":
        return node
    numbered = _numbered_strftime(node)
    if numbered is not None:
        changes.append("SQLite's STRFTIME() gives text; compared it as a number with CAST(… AS INTEGER)")
        return numbered
    for kind, (name, fmt) in _PARTS.items():
        if type(node) is kind and isinstance(node.this, exp.Expr):
            changes.append(f"SQLite has no {name}(); used STRFTIME('{fmt}', …)")
            return _date_part(node.this, fmt)
    if isinstance(node, exp.Extract) and isinstance(node.expression, exp.Expr):
        unit = node.this.name.upper() if isinstance(node.this, exp.Expr) else ""
        if unit in _EXTRACT_FORMATS:
            changes.append(f"SQLite has no EXTRACT(); used STRFTIME('{_EXTRACT_FORMATS[unit]}', …)")
            return _date_part(node.expression, _EXTRACT_FORMATS[unit])
    if isinstance(node, exp.Anonymous):
        name = str(node.name).upper()
        if name == "DATE_FORMAT" and len(node.expressions) == 2 and isinstance(node.expressions[1], exp.Literal):
            value, pattern = node.expressions
            translated = _strftime(pattern.name)
            if translated is not None:
                changes.append("SQLite has no DATE_FORMAT(); used STRFTIME()")
                return exp.Anonymous(this="STRFTIME", expressions=[exp.Literal.string(translated), value])
        if name in _NOW and not node.expressions:
            changes.append(f"SQLite has no {name}(); used {_NOW[name]}('now')")
            return exp.Anonymous(this=_NOW[name], expressions=[exp.Literal.string("now")])
    return node


_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)


def _numbered_strftime(node: exp.Expr) -> exp.Expr | None:
    """`node`, a comparison of STRFTIME(…) with integer literals only, with the STRFTIME cast to INTEGER; else None."""
    if isinstance(node, _COMPARISONS):
        sides = [node.this, node.expression]
    elif isinstance(node, exp.In) and not node.args.get("query"):
        sides = [node.this, *node.expressions]
    elif isinstance(node, exp.Between):
        sides = [node.this, node.args.get("low"), node.args.get("high")]
    else:
        return None
    texts = [s for s in sides if isinstance(s, exp.TimeToStr)]
    numbers = [s for s in sides if isinstance(s, exp.Literal) and s.is_int]
    if len(texts) != 1 or len(texts) + len(numbers) != len(sides):
        return None
    copied = node.copy()
    text = next(s for s in copied.iter_expressions() if isinstance(s, exp.TimeToStr))
    text.replace(exp.Cast(this=text.copy(), to=exp.DataType.build("INTEGER")))
    return copied


def _bare(node: exp.Expr | None) -> bool:
    """An unqualified column name."""
    return isinstance(node, exp.Column) and not node.table and isinstance(node.this, exp.Identifier)


def _date_part(value: exp.Expr, fmt: str) -> exp.Expr:
    strftime = exp.Anonymous(this="STRFTIME", expressions=[exp.Literal.string(fmt), value.copy()])
    return exp.Cast(this=strftime, to=exp.DataType.build("INTEGER"))


def _strftime(mysql_format: str) -> str | None:
    """SQLite's spelling of a MySQL DATE_FORMAT pattern; None when it uses a letter without a sure equivalent."""
    out = []
    index = 0
    while index < len(mysql_format):
        if mysql_format[index] != "%":
            out.append(mysql_format[index])
            index += 1
            continue
        pair = mysql_format[index : index + 2]
        if pair not in _MYSQL_FORMAT:
            return None
        out.append(_MYSQL_FORMAT[pair])
        index += 2
    return "".join(out)
