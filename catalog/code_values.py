"""Code columns (few distinct short values) and what their codes mean.

A meaning comes, in order of trust, from a declared foreign key to a code table, a code table whose codes cover
the column's values (the group named in the column comment first, then the group whose name shares words with
the column), a `10=ordered, 20=paid` list in the column comment; otherwise it is left unknown.

A code table partitioned by groups often names its groups in a table of their own, which its group column refers
to by a declared key (CODE_DTL's CODE_GRP → CODE_MST: `PRD_CTGRY` is "Product category"). That name says what a
column coded from the group holds: a question about "product categories" is about the products' category codes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from catalog.connectors.base import ColumnInfo, TableInfo
from catalog.profiling import ColumnProfile
from core.text.naming import expand_words

MAX_CODES = 40
MAX_CODE_LENGTH = 12
CODE_NAME_WORDS = {
    "cd",
    "code",
    "stat",
    "status",
    "sts",
    "type",
    "tp",
    "yn",
    "flag",
    "flg",
    "grd",
    "grade",
    "kind",
    "class",
    "cls",
    "div",
    "gb",
    "rsn",
    "reason",
    "mthd",
    "method",
    "level",
    "lvl",
    "category",
    "ctgry",
}
LABEL_WORDS = {"nm", "name", "desc", "description", "label", "meaning", "text", "txt", "title"}
GROUP_WORDS = {"grp", "group", "type", "kind", "category", "class", "div", "gb"}
COMMENT_PAIRS = re.compile(r"([A-Za-z0-9]{1,12})\s*[=:]\s*([^,;/|\n]{1,40})")


@dataclass
class CodeTable:
    """A lookup table: code → label, optionally partitioned by a group column (CODE_DTL: CODE_GRP, CODE_CD)."""

    table: str
    code_column: str
    label_column: str
    group_column: str | None
    entries: dict[str, dict[str, str]] = field(default_factory=dict)  # group ("" when none) → code → label
    schema: str | None = None  # None: the default schema
    kind: str = "table"  # "table" or "view"
    group_names: dict[str, str] = field(default_factory=dict)  # group → its name (`fill_group_names`)
    group_names_from: tuple[str | None, str] | None = None  # the (schema, table) the names were read from

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.table}" if self.schema else self.table


def _words(name: str) -> set[str]:
    return {w for w in expand_words(name) if w}


def _raw_words(name: str) -> set[str]:
    return set(re.split(r"[^a-z0-9]+", name.lower())) - {""}


def is_code_column(column: ColumnInfo, profile: ColumnProfile, is_key: bool) -> bool:
    if is_key or column.family not in ("text", "integer") or profile.distinct == 0:
        return False
    if profile.distinct > MAX_CODES or profile.date_text_format is not None:
        return False
    if column.family == "text" and (profile.max_length or 0) > MAX_CODE_LENGTH:
        return False
    named_like_code = bool(_raw_words(column.name) & CODE_NAME_WORDS)
    present = profile.sample_size * (1 - profile.null_ratio)
    repetitive = present >= 20 and profile.distinct <= max(2, present * 0.05)
    return named_like_code or repetitive


def code_table_shape(info: TableInfo) -> CodeTable | None:
    """Whether a table looks like a code table, and which columns hold code, label and group."""
    cols = [c for c in info.columns]
    labels = [c for c in cols if c.family == "text" and _raw_words(c.name) & LABEL_WORDS]
    codes = [
        c
        for c in cols
        if c.family in ("text", "integer") and _raw_words(c.name) & (CODE_NAME_WORDS | {"id", "no"}) and c not in labels
    ]
    if not labels or not codes:
        return None
    groups = [c for c in codes if _raw_words(c.name) & GROUP_WORDS]
    flags = {c.name for c in codes if _raw_words(c.name) & {"yn", "flag", "flg"}}
    keyed = [c for c in codes if c.name in info.primary_key and c not in groups]
    plain = keyed or [c for c in codes if c not in groups and c.name not in flags]
    if not plain:
        return None
    code_column = plain[-1]
    in_key = [g for g in groups if g.name in info.primary_key and g.name != code_column.name]
    group_column = in_key[0].name if in_key else None
    if info.primary_key and code_column.name not in info.primary_key:
        return None
    return CodeTable(
        info.ref.name, code_column.name, labels[0].name, group_column, schema=info.ref.schema, kind=info.ref.kind
    )


def fill_code_table(table: CodeTable, columns: Sequence[str], rows: Sequence[tuple[object, ...]]) -> None:
    index = {c: i for i, c in enumerate(columns)}
    for row in rows:
        code, label = row[index[table.code_column]], row[index[table.label_column]]
        if code is None or label is None:
            continue
        group = str(row[index[table.group_column]]) if table.group_column else ""
        table.entries.setdefault(group, {})[str(code).strip()] = str(label)


def group_name_columns(table: CodeTable, info: TableInfo, named: TableInfo) -> tuple[str, str] | None:
    """(key, name) columns of `named`, when `table` (whose table is `info`) is partitioned by groups and its group
    column refers by a declared key to `named`, which holds a text column of labels beside that key."""
    if table.group_column is None:
        return None
    for fk in info.foreign_keys:
        if list(fk.columns) != [table.group_column] or fk.ref_table.lower() != named.ref.name.lower():
            continue
        if fk.ref_schema and named.ref.schema and fk.ref_schema.lower() != named.ref.schema.lower():
            continue
        key = fk.ref_columns[0]
        labels = [
            c.name for c in named.columns if c.family == "text" and c.name != key and _raw_words(c.name) & LABEL_WORDS
        ]
        if labels:
            return key, labels[0]
    return None


def fill_group_names(
    table: CodeTable,
    source: tuple[str | None, str],
    columns: tuple[str, str],
    sampled: Sequence[str],
    rows: Sequence[tuple[object, ...]],
) -> None:
    """The names of the code table's groups, from `rows` (with columns `sampled`) of the table `source` that names
    them in its `columns` (key, name)."""
    key, name = (sampled.index(c) for c in columns)
    names = {str(r[key]).strip(): str(r[name]) for r in rows if r[key] is not None and r[name] is not None}
    table.group_names = {group: names[group] for group in table.entries if group in names}
    table.group_names_from = source if table.group_names else None


def _from_comment(comment: str | None, codes: set[str]) -> dict[str, str]:
    if not comment:
        return {}
    pairs = {k.strip(): v.strip() for k, v in COMMENT_PAIRS.findall(comment)}
    return pairs if codes and codes <= set(pairs) else {}


@dataclass(frozen=True)
class Meanings:
    """Meanings for a column's codes: where they came from ("CODE_DTL group ORD_STAT", "column comment"), the code
    table they were read from (None for a comment) and the group of that table."""

    meanings: dict[str, str] = field(default_factory=dict)
    source: str | None = None
    table: CodeTable | None = None
    group: str = ""


def resolve_meanings(
    table_name: str,
    column: ColumnInfo,
    codes: list[str],
    code_tables: Sequence[CodeTable],
    fk_target: str | None,
) -> Meanings:
    """Meanings for the codes (none found: `Meanings()`)."""
    wanted = {c.strip() for c in codes}
    if not wanted:
        return Meanings()
    comment = column.comment or ""
    candidates: list[tuple[tuple[int, float, int], dict[str, str], str, CodeTable, str]] = []
    for table in code_tables:
        if table.table == table_name:
            continue
        for group, entries in table.entries.items():
            covered = len(wanted & set(entries)) / len(wanted)
            if covered < 0.8:
                continue
            by_fk = fk_target is not None and fk_target.lower() == table.table.lower()
            named = bool(group) and group.lower() in comment.lower() and table.table.lower() in comment.lower()
            overlap = len(_words(group) & (_words(column.name) | _words(table_name))) if group else 0
            rank = (2 if by_fk else 1 if named else 0, covered, overlap)
            where = f"{table.table} group {group}" if group else table.table
            candidates.append((rank, entries, where, table, group))
    if candidates:
        candidates.sort(key=lambda c: c[0], reverse=True)
        best = candidates[0]
        ambiguous = len(candidates) > 1 and candidates[1][0] == best[0] and best[0][0] == 0
        if not ambiguous:
            return Meanings({c: best[1][c] for c in wanted if c in best[1]}, best[2], best[3], best[4])
    from_comment = _from_comment(column.comment, wanted)
    if from_comment:
        return Meanings({c: from_comment[c] for c in wanted}, "column comment")
    return Meanings()
