"""A GBNF grammar (llama.cpp's grammar format) under which a local model can write only one read query over the
tables and columns it was shown (SPEC §4, the guided path's SQL call).

The grammar does not parse SQL; it fixes its words. The statement starts with SELECT or WITH and is a run of
chunks separated by single spaces; a chunk joins words, string literals and numbers with punctuation ("T1.CITY",
"COUNT(*)", "x>='2024-01-01'"), never two words. A word is a keyword, a function the SQL guard allows
(`workers.sql.functions`), a shown table or column (as written, or quoted), a short alias ("T1", "o"), or any name
right after AS; after a qualifier's dot comes a shown column or a star, never a short alias-shaped fragment (a
sampled "T2.grp nm" for `T2.GRP_NM`). So a column the model invents ("ORDER_DATE" for "ORD_DT") cannot be written,
nor a second statement, a comment or a table it was not shown; whether the statement is valid SQL is still the
guard's job.

The text is emitted as the content of a JSON string (`json_string`): no double quote except escaped, no backslash,
no newline.

After FROM and JOIN a plain SELECT may name only a shown table or open a subquery (a column follows FROM only in
`EXTRACT(YEAR FROM col)`): a short alias or a column there would let an invented table ("FROM ord" for "ORD_MST")
through. A statement that starts with WITH may also read its own common table expressions, whose names a grammar
cannot know, so there a short name is allowed after FROM as well.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from itertools import groupby

from workers.sql.functions import ALLOWED_NAMES, ALLOWED_TYPED

KEYWORDS = """
    SELECT DISTINCT WHERE AND OR NOT IN IS NULL LIKE GLOB BETWEEN GROUP BY ORDER HAVING LIMIT OFFSET ASC DESC
    INNER LEFT RIGHT FULL OUTER CROSS NATURAL ON USING UNION ALL INTERSECT EXCEPT CASE WHEN THEN ELSE END EXISTS
    WITH AS TRUE FALSE INTERVAL OVER PARTITION ROWS RANGE PRECEDING FOLLOWING CURRENT ROW UNBOUNDED FILTER ESCAPE
    COLLATE NOCASE INTEGER INT REAL TEXT FLOAT DECIMAL NUMERIC DATE TIMESTAMP CHAR VARCHAR SIGNED UNSIGNED DOUBLE
    YEAR MONTH DAY HOUR MINUTE SECOND NULLS FIRST LAST CAST
""".split()
#: The words after which a table is named: not in `KEYWORDS`, so they are written only through their own rule.
SOURCE_WORDS = ("FROM", "JOIN")
#: The units of `EXTRACT(unit FROM column)`.
DATE_UNITS = ("YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND", "QUARTER", "WEEK", "DOW", "EPOCH")
#: Aliases the model may use without AS: a letter and up to two letters or digits ("T1", "o", "od").
ALIAS = "[A-Za-z] [A-Za-z0-9]? [A-Za-z0-9]?"
_PUNCTUATION = ["(", ")", ",", "*", "=", "<", ">", "!", "+", "-", "/", "%", "|"]
_SIMPLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _literal(text: str) -> str:
    """`text` as a GBNF string literal (JSON's escaping is the same for the characters names use)."""
    return json.dumps(text, ensure_ascii=False)


def _alternatives(words: Iterable[str]) -> str:
    """The words as one GBNF expression that writes each shared prefix once ("ORD_" ("DT" | "NO")): llama.cpp keeps
    one parse stack per alternative that may come next and, whenever a sampled token breaks the grammar, checks the
    whole vocabulary against every stack. A flat list of a thousand words cost seconds per such check; as a prefix
    tree it is one stack per distinct first character."""
    return _branches(sorted({w for w in words if w}))


def _branches(words: list[str]) -> str:
    """`words` (sorted, distinct, non-empty) as alternatives grouped by their first character."""
    branches = []
    for _, group in groupby(words, key=lambda w: w[0]):
        members = list(group)
        if len(members) == 1:
            branches.append(_literal(members[0]))
            continue
        prefix = _shared_start(members[0], members[-1])  # sorted: the first and last share what all share
        rest = [m[len(prefix) :] for m in members if len(m) > len(prefix)]
        optional = "?" if len(rest) < len(members) else ""  # the prefix is itself one of the words
        branches.append(f"{_literal(prefix)} ({_branches(rest)}){optional}")
    return " | ".join(branches)


def _shared_start(first: str, last: str) -> str:
    size = 0
    while size < min(len(first), len(last)) and first[size] == last[size]:
        size += 1
    return first[:size]


def function_names(dialect: str | None) -> list[str]:
    """Names of the functions the guard allows in `dialect`, as a model writes them."""
    names = set(ALLOWED_NAMES.get(dialect or "", ALLOWED_NAMES["sqlite"]))
    for cls in ALLOWED_TYPED:
        names.update(n.lower() for n in getattr(cls, "_sql_names", []) or [] if _SIMPLE.fullmatch(n))
    return sorted(names)


def _name_forms(name: str, identifier_quote: str) -> list[str]:
    """A shown name as the statement may write it: bare when it can be, and quoted (a JSON-escaped double quote,
    or the dialect's own quote)."""
    forms = [name] if _SIMPLE.fullmatch(name) else []
    forms.append('\\"' + name.replace('"', "") + '\\"')
    if identifier_quote == "`":
        forms.append("`" + name.replace("`", "") + "`")
    return forms


def sql_grammar(tables: Sequence[tuple[str, Sequence[str]]], dialect: str | None, rule: str = "sql") -> str:
    """GBNF rules whose rule `rule` produces one read statement over `tables` ((table, its shown columns)); the other
    rules are prefixed with `rule`, so the grammar can sit inside another one."""
    quote = "`" if dialect == "mysql" else '"'
    table_names: list[str] = []
    names: list[str] = []
    for table, columns in tables:
        table_names += _name_forms(table, quote)
        for column in columns:
            names += _name_forms(column, quote)
    keywords = [k for w in KEYWORDS for k in (w, w.lower())]
    functions = [f for name in function_names(dialect) for f in (name, name.upper())]
    sources = [k for w in SOURCE_WORDS for k in (w, w.lower())]
    units = [k for w in DATE_UNITS for k in (w, w.lower())]
    p = rule
    return "\n".join(
        [
            f'{p} ::= ("SELECT" | "select") (" " {p}-part)+ | ("WITH" | "with") (" " {p}-with-part)+',
            f"{p}-part ::= {p}-from {p}-source {p}-punct* | {p}-named",
            f"{p}-with-part ::= {p}-from ({p}-source | {p}-alias) {p}-punct* | {p}-named",
            f'{p}-named ::= ("AS" | "as") " " {p}-free {p}-punct* | {p}-chunk',
            f'{p}-from ::= ({_alternatives(sources)}) " "',
            f'{p}-source ::= "("+ ("SELECT" | "select" | "WITH" | "with") | {p}-table',
            f"{p}-chunk ::= {p}-punct* {p}-seg ({p}-punct+ {p}-seg)* {p}-punct* | {p}-punct+",
            f"{p}-seg ::= {p}-qualified | {p}-atom | {p}-extract",
            # after a dot only a shown column or a star: "T2.grp" (an alias-shaped fragment) cannot be written
            f'{p}-qualified ::= ({p}-alias | {p}-table) "." ({p}-column | "*")',
            f"{p}-column ::= {_alternatives(names)}",
            # EXTRACT(YEAR FROM o.ORD_DT): the one place a column follows FROM
            f'{p}-extract ::= ("EXTRACT" | "extract") "(" {p}-unit " " ("FROM" | "from") " " {p}-operand',
            f"{p}-operand ::= {p}-qualified | {p}-atom",
            f"{p}-unit ::= {_alternatives(units)}",
            f"{p}-atom ::= {p}-word | {p}-string | {p}-number",
            # one prefix tree for every word a chunk may hold, so a word's first character is one stack (see
            # `_alternatives`); tables also have a tree of their own, for what follows FROM and JOIN
            f"{p}-word ::= {p}-words | {p}-alias",
            f"{p}-words ::= {_alternatives([*table_names, *names, *keywords, *functions])}",
            f"{p}-table ::= {_alternatives(table_names)}",
            f"{p}-alias ::= {ALIAS}",
            f'{p}-free ::= [A-Za-z_] [A-Za-z0-9_]* | "\\\\\\"" [^"\\\\\\x00-\\x1f]+ "\\\\\\""',
            f"""{p}-string ::= "'" ([^'"\\\\\\x00-\\x1f] | "''")* "'\"""",
            f'{p}-number ::= [0-9]+ ("." [0-9]+)?',
            f"{p}-punct ::= {_alternatives(_PUNCTUATION)}",
        ]
    )
