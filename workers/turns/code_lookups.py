"""A code looked up by a name the model guessed, replaced by the code the question names (the guided path, before
the statement runs).

A small model that has the code meanings in its schema still often writes `DEPT_CD = (SELECT CODE_GRP FROM CODE_MST
WHERE GRP_NM = 'IT')` or `CARRIER_CD IN (SELECT CODE_CD FROM CODE_DTL WHERE CODE_NM = 'Logistics')`: a lookup by a
name it guessed, which finds nothing or the wrong rows. When the column's card knows its codes' meanings, the
question names every word of exactly one of them (`workers.turns.code_meanings`), and the lookup's own text literals are
words of that meaning, the lookup can only have meant that code: the subquery becomes the code's literal. Anything
else (a subquery that compares no literal, a literal that is not part of the named meaning, a column without code
meanings, a statement that does not parse) is left as written.

The same holds for a code's name compared on a column no table of the statement has (`CODE_NM = 'Cancelled'` where
only ORD_MST is read): when exactly one column of the read tables has a code whose meaning is that name, the
comparison is that column's with the code (`STATUS_CODE = '90'`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlglot import exp

from workers.turns.answer_checks import parse
from workers.turns.code_meanings import meaning_words, meant_codes, named_code, words


def codes_looked_up(sql: str, dialect: str | None, question: str, cards: Mapping[str, dict[str, Any]]) -> str:
    """`sql` with each code lookup the question answers replaced by the code's literal; `sql` when there is none.
    `cards`: the cards of the tables the model was shown, by upper-case name."""
    tree = parse(sql, dialect)
    if tree is None:
        return sql
    changed = False
    for node in list(tree.find_all(exp.EQ, exp.In)):
        column, lookup = _compared(node)
        if column is None or lookup is None:
            continue
        card_column = _card_column(column, cards)
        code = named_code(question, card_column, whole=True) if card_column else None
        if code is None or not _names_meaning_of(lookup, _meaning(card_column, code)):
            continue
        _put(node, exp.EQ(this=column.copy(), expression=exp.Literal.string(code)))
        changed = True
    for node in list(tree.find_all(exp.EQ)):
        named = _code_named(node, cards)
        if named is not None:
            _put(node, named)
            changed = True
    return tree.sql(dialect=dialect) if changed else sql


def _put(node: exp.Expr, comparison: exp.EQ) -> None:
    """`comparison` in place of `node`; where the other side of its AND is the same comparison, that one alone."""
    parent = node.parent
    if isinstance(parent, exp.And):
        other = parent.expression if parent.this is node else parent.this
        if other == comparison:
            parent.replace(other.copy())
            return
    node.replace(comparison)


def _code_named(node: exp.EQ, cards: Mapping[str, dict[str, Any]]) -> exp.EQ | None:
    """`column = 'code'` for `name_column = 'meaning'` where no read table has `name_column` and one read column
    has a code meaning exactly that; None otherwise."""
    column, literal = node.this, node.expression
    if isinstance(literal, exp.Column):
        column, literal = literal, column
    if not isinstance(column, exp.Column) or not isinstance(literal, exp.Literal) or not literal.is_string:
        return None
    select = column.find_ancestor(exp.Select)
    if select is None:
        return None
    read = [t for t in select.find_all(exp.Table) if t.find_ancestor(exp.Select) is select]
    if not read or any(t.name.upper() not in cards for t in read):
        return None
    columns = [(t, c) for t in read for c in cards[t.name.upper()].get("columns", []) if isinstance(c, dict)]
    if any(str(c.get("name", "")).upper() == column.name.upper() for _, c in columns):
        return None  # a column the statement can read: not a name looked up elsewhere
    meaning = literal.this.strip().casefold()
    found = [
        (t, c, str(code["code"]))
        for t, c in columns
        for code in meant_codes(c)
        if str(code.get("meaning") or "").strip().casefold() == meaning
    ]
    if len(found) != 1:
        return None
    table, card_column, code = found[0]
    qualifier = table.alias_or_name if len(read) > 1 else None
    return exp.EQ(this=exp.column(str(card_column["name"]), table=qualifier), expression=exp.Literal.string(code))


def _compared(node: exp.Expr) -> tuple[exp.Column | None, exp.Select | None]:
    """(the column, the SELECT it is compared with) of `col = (SELECT …)` or `col IN (SELECT …)`."""
    if isinstance(node, exp.In):
        query = node.args.get("query")
        subquery = query.this if isinstance(query, exp.Subquery) else query
        column = node.this
    else:
        column, other = node.this, node.expression
        if isinstance(other, exp.Column):
            column, other = other, column
        subquery = other.this if isinstance(other, exp.Subquery) else None
    if not isinstance(column, exp.Column) or not isinstance(subquery, exp.Select):
        return None, None
    return column, subquery


def _card_column(column: exp.Column, cards: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """The card's entry of the column, resolved through the aliases of its own SELECT; {} when uncertain."""
    select = column.find_ancestor(exp.Select)
    if select is None:
        return {}
    tables = {
        t.alias_or_name.upper(): t.name.upper()
        for t in select.find_all(exp.Table)
        if t.find_ancestor(exp.Select) is select
    }
    candidates = [tables.get(column.table.upper(), "")] if column.table else list(dict.fromkeys(tables.values()))
    held = [
        c
        for t in candidates
        for c in (cards.get(t) or {}).get("columns", [])
        if isinstance(c, dict) and str(c.get("name", "")).upper() == column.name.upper()
    ]
    return held[0] if len(held) == 1 else {}


def _meaning(column: dict[str, Any], code: str) -> str:
    return next((str(c.get("meaning") or "") for c in column.get("codes") or [] if str(c.get("code")) == code), "")


def _names_meaning_of(lookup: exp.Select, meaning: str) -> bool:
    """The lookup compares text literals, and every word of them is a word of `meaning`."""
    literals = [lit.this for lit in lookup.find_all(exp.Literal) if lit.is_string and lit.this.strip("% ")]
    if not literals:
        return False
    meant = meaning_words(meaning) | words(meaning)
    return all(words(text.strip("% ")) <= meant for text in literals)
