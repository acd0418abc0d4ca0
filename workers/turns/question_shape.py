"""What a question asks of the shape of its answer: a breakdown ("by month", "per region", "for each customer",
"월별"), an average ("평균"), the top N ("top 5", "the three oldest", "which five customers … the most", "상위 10"),
or every row that matches ("what are …", "every student": a LIMIT 1 there keeps one of them), and whether a
statement's result has that shape (`workers.turns.answer_checks`). Patterns of English and Korean phrasing only:
nothing of any database."""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp

from workers.tools.base import SqlRecord

_NUMBER_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_COUNT = r"(\d{1,3}|two|three|four|five|six|seven|eight|nine|ten)"
_TIME_UNIT = r"(month|year|week|day|quarter|date|hour)s?"
_BY_TIME = re.compile(rf"\b(by|per|each|every|for each|for every)\s+(the\s+)?{_TIME_UNIT}\b", re.IGNORECASE)
_PER_GROUP = re.compile(r"\b(per|for each|for every|in each|of each|by each)\s+[a-z]", re.IGNORECASE)
_KOREAN_BY = re.compile(r"[\uAC00-\uD7A3]+별")
_AGGREGATE = re.compile(
    r"\b(how many|number of|count|total|sum|average|avg|mean|maximum|minimum|max|min|most|least)\b", re.IGNORECASE
)
_TOP_N = re.compile(rf"\b(top|first|best|largest|highest|biggest|most|lowest|smallest|bottom)\s+{_COUNT}\b", re.I)
_N_SUPERLATIVE = re.compile(rf"\b(which|what|list|show|name|give|find)\s+(are\s+)?(the\s+)?{_COUNT}\s+[a-z]", re.I)
_SUPERLATIVE = re.compile(r"\b(most|least|top|best|worst|[a-z]{3,}est)\b", re.I)
_THE_N_EST = re.compile(rf"\bthe\s+{_COUNT}\s+([a-z]{{3,}}est|most|least|top|best|worst)\b", re.IGNORECASE)
_KOREAN_TOP = re.compile(r"상위\s*(\d{1,3})")
#: Words that ask for one row among many: a superlative, an extreme, an order's end, "one".
_ONE_OF_MANY = re.compile(
    r"\b(most|least|top|best|worst|first|last|latest|earliest|max|maximum|min|minimum|[a-z]{3,}est|one|single)\b|"
    r"가장|최대|최소|최고|최저|최근|처음|마지막|하나|1위",
    re.IGNORECASE,
)
#: A question that asks for several rows: "what are …", "every …", "all …", "list …", "모든".
_SEVERAL = re.compile(r"^\s*(what|which|who)\s+(are|were)\b|\b(every|all|each)\b|^\s*(list|show)\b|모든|모두", re.I)


def asked_top(question: str) -> int | None:
    """N of "top N", "the N largest …", "which N customers … the most", "상위 N"; None when not asked."""
    for pattern, group in ((_TOP_N, 2), (_THE_N_EST, 1), (_KOREAN_TOP, 1)):
        match = pattern.search(question)
        if match:
            return _count(match.group(group))
    match = _N_SUPERLATIVE.search(question)
    if match and _SUPERLATIVE.search(question[match.end() :]):
        return _count(match.group(4))
    return None


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBER_WORDS[word.lower()]


def asked_breakdown(question: str) -> str:
    """Which breakdown the question asks for: "time" over time ("by month"), "group" one per group ("per region",
    "for each customer", "지역별"), "" none."""
    if _BY_TIME.search(question) or re.search(r"(월|연도|년도|분기|일자|주)별", question):
        return "time"
    if _KOREAN_BY.search(question) or (_PER_GROUP.search(question) and _AGGREGATE.search(question)):
        return "group"
    return ""


_AVERAGE = re.compile(r"\b(average|averages|avg)\b|평균", re.IGNORECASE)
_SHARE = re.compile(r"\b(percent|percentage|ratio|proportion|share|fraction|rate)\b|비율|퍼센트", re.IGNORECASE)
_NONE = re.compile(r"\b(not\s+\w+\s+any|no\s+\w+|without|never|does not have|do not have|don't have)\b", re.IGNORECASE)


_ONE_FIGURE = re.compile(
    r"^\s*(how many|count the|(what|which) (is|was|were|are)? ?the (total|average|mean|number|sum|count|"
    r"maximum|minimum|largest|smallest|highest|lowest)\b)",
    re.IGNORECASE,
)
_MANY = re.compile(r"\b(each|every|per|by|different|respective|respectively|all the|list|show)\b|별", re.IGNORECASE)
#: Words that ask for something per group, however the sentence goes on.
_GROUPS = re.compile(r"\b(each|every|per|by|different|respective|respectively)\b|별", re.IGNORECASE)


def asked_one_figure(question: str) -> bool:
    """The question asks for one figure ("How many orders …?", "What was the average …?") and for nothing per
    group or as a list."""
    return _ONE_FIGURE.search(question) is not None and _MANY.search(question) is None


def asked_share(question: str) -> bool:
    """The question asks for a percentage, ratio or share."""
    return _SHARE.search(question) is not None


def asked_average(question: str) -> bool:
    """The question asks for an average ("the average weight", "average life expectancy above 72", "평균")."""
    return _AVERAGE.search(question) is not None


def computes_average(tree: exp.Expr) -> bool:
    """The statement computes an average (AVG, or a division such as SUM / COUNT) or reads a column named for one
    (a stored average)."""
    if tree.find(exp.Avg, exp.Div) is not None:
        return True
    return any(_AVERAGE.search(column.name.replace("_", " ")) for column in tree.find_all(exp.Column))


def asked_none(question: str) -> bool:
    """The question asks for things that have none of something ("owners without dogs", "never ordered")."""
    return _NONE.search(question) is not None


def _rows(count: int) -> str:
    return f"{count} row" if count == 1 else f"{count} rows"


def _int(node: Any) -> int | None:
    if isinstance(node, exp.Literal) and node.is_int:
        return int(node.this)
    return None


def shape_problems(question: str, tree: exp.Expr, record: SqlRecord) -> list[tuple[str, str]]:
    """(what to tell the user, what to tell the repair call) for each way the result lacks the asked shape."""
    doubts = []
    grouped = tree.find(exp.Group) is not None or tree.find(exp.Window) is not None
    breakdown = asked_breakdown(question)
    if breakdown and not grouped and len(record.rows) <= 1:
        unit = _BY_TIME.search(question)
        per = f"per {unit.group(3)}" if unit else "per group"
        doubts.append(
            (
                f"The question asks for a breakdown ({per}), but this is a single figure.",
                f"The question asks for one row {per}: select the {per.removeprefix('per ')} as a column and GROUP "
                "BY it.",
            )
        )
    if asked_one_figure(question) and grouped and len(record.rows) > 1:
        doubts.append(
            (
                f"The question asks for one figure, but the result has {_rows(len(record.rows))}, one per group.",
                "The question asks for one figure: the result must be one row. Do not GROUP BY the things counted; "
                "to count groups that pass a HAVING test, count the rows of the grouped query in an outer SELECT.",
            )
        )
    if asked_average(question) and not computes_average(tree):
        doubts.append(
            (
                "The question asks for an average, but the query computes none.",
                "The question asks for an average: compute it with AVG() over the rows it averages (in HAVING when "
                "it is a condition on groups), not on one row's value.",
            )
        )
    top = asked_top(question)
    limit = tree.args.get("limit")
    limited = _int(limit.expression) if isinstance(limit, exp.Limit) else None
    one_row = asked_one_figure(question) or asked_average(question)  # one figure: one row, however it is written
    several = _SEVERAL.search(question) is not None and _ONE_OF_MANY.search(question) is None
    if limited == 1 and top is None and not one_row and several:
        doubts.append(
            (
                "The query keeps only its first row, but the question asks for all that match (not the most, least "
                "or first one), so some may be left out.",
                "The question asks for every row that matches, not the first one: remove LIMIT 1.",
            )
        )
    if top is not None and top > 1 and (len(record.rows) > top or (limited is not None and limited < top)):
        doubts.append(
            (
                f"The question asks for the top {top}, but the result has {_rows(len(record.rows))}.",
                f"The question asks for the top {top}: ORDER BY the measure DESC and LIMIT {top}.",
            )
        )
    return doubts


def ungrouped(question: str, tree: exp.Expr, record: SqlRecord, dialect: str | None) -> str | None:
    """The statement without its GROUP BY, when the result has a row per group, the outer SELECT returns only
    aggregates over the groups (`SELECT SUM(AMT) FROM S GROUP BY MONTH`), and the question asks for one figure, or
    for nothing per group, by time or as a top N ("show me revenue": rows with nothing to tell them apart answer no
    such question): one figure over all the rows, written without a model call. None where dropping the grouping
    could change what is counted (a HAVING test, a LIMIT, a window, DISTINCT, a grouped column in the result, a
    compound statement)."""
    ungroupable = asked_one_figure(question) or (
        _GROUPS.search(question) is None and not asked_breakdown(question) and asked_top(question) is None
    )
    if not (ungroupable and len(record.rows) > 1 and isinstance(tree, exp.Select)):
        return None
    if tree.args.get("group") is None or any(tree.args.get(k) for k in ("having", "limit", "distinct", "qualify")):
        return None
    if tree.find(exp.Window) is not None or not tree.expressions:
        return None
    for projection in tree.expressions:
        aggregate = projection.find(exp.AggFunc)
        if aggregate is None or any(
            column.find_ancestor(exp.AggFunc) is None for column in projection.find_all(exp.Column)
        ):
            return None
    flat = tree.copy()
    flat.set("group", None)
    flat.set("order", None)  # one row: nothing to order
    return flat.sql(dialect=dialect)
