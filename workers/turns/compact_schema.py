"""The compact schema a small model writes its one SQL statement from (the guided path, `workers.turns.guided`).

Only the chosen tables, in the form such models were trained on: one `CREATE TABLE` statement per table with its
keys and its references to the other chosen tables, its code meanings and columns to watch as comments, a few
example rows, and where search found the question's values. Everything comes from the card as the reader may see it
(`core.cards.card_view`: hidden columns are not there, masked columns carry no values), and the example rows are read
through the permission-checked SQL service (`workers.sql.service`), without the masked columns, so row filters
apply to them as to any other SQL of the user's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from core.store.models import Source
from workers.sql.guard import dialect_for
from workers.sql.limits import SqlLimits
from workers.sql.service import run_sql
from workers.tools.base import ToolContext

#: Example rows per table, and the characters of one example cell.
EXAMPLE_ROWS = 2
EXAMPLE_CELL_CHARS = 20
#: Characters of code meanings listed per column (the most frequent codes first), and columns per table (keys,
#: code columns and value matches first). Every input token costs a small model on a CPU time.
CODES_CHARS = 110
COLUMNS_SHOWN = 40
_EXAMPLE_LIMITS = SqlLimits(max_rows=EXAMPLE_ROWS, timeout_s=5.0)


@dataclass
class SchemaTable:
    """One chosen table: its card as the reader sees it, and the question's values search found in it."""

    name: str
    schema: str | None
    card: dict[str, Any]
    values: list[dict[str, str]] = field(default_factory=list)

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}" if self.schema else self.name


def _quoted(name: str) -> str:
    return name if name.replace("_", "").isalnum() and not name[:1].isdigit() else '"' + name.replace('"', '""') + '"'


def shown_columns(table: SchemaTable) -> list[dict[str, Any]]:
    columns = [c for c in table.card.get("columns", []) if isinstance(c, dict) and c.get("name")]
    if len(columns) <= COLUMNS_SHOWN:
        return columns
    valued = {v["column"] for v in table.values}

    def priority(column: dict[str, Any]) -> int:
        if column.get("key") or column["name"] in valued:
            return 0
        return 1 if column.get("codes") or column.get("watch") else 2

    kept = {c["name"] for c in sorted(columns, key=priority)[:COLUMNS_SHOWN]}
    return [c for c in columns if c["name"] in kept]


def named_value_line(table: SchemaTable, value: dict[str, str]) -> str:
    """A value the question names as a comment of the compact schema: where it is held, and as which code."""
    where = f"{table.name}.{value['column']}"
    if "group" in value:
        return f"-- the question's {value['group']!r} names what the codes of {where} are"
    meaning = value.get("meaning")
    if meaning:
        said = value.get("said") or meaning
        means = f" ({meaning})" if said != meaning else ""
        return f"-- the question's {said!r} is the code {value['value']!r}{means} of {where}"
    if value.get("said"):
        return f"-- the question's {value['said']!r} is the value {value['value']!r} of {where}"
    return f"-- the question's {value['value']!r} is a value of {where}"


def _column_line(column: dict[str, Any], primary: Sequence[str], references: dict[str, str]) -> str:
    line = f"  {_quoted(column['name'])} {column.get('type') or ''}".rstrip()
    if list(primary) == [column["name"]]:
        line += " PRIMARY KEY"
    if column["name"] in references:
        line += f" REFERENCES {references[column['name']]}"
    notes = []
    if column.get("comment"):
        notes.append(str(column["comment"]).strip()[:80])
    if column.get("masked"):
        notes.append("masked for you: no real values")
    codes = column.get("codes") or []
    if codes:
        meanings = [f"{c['code']}={c['meaning']}" if c.get("meaning") else str(c["code"]) for c in codes]
        shown = ""
        for index, meaning in enumerate(meanings):
            if len(shown) + len(meaning) > CODES_CHARS:
                shown += f", … ({len(meanings) - index} more)"
                break
            shown = f"{shown}, {meaning}" if shown else meaning
        notes.append("codes: " + shown)
    stats = column.get("stats") or {}
    if stats.get("date_text_format"):
        notes.append(f"dates as text {stats['date_text_format']}")
    if column.get("watch"):
        notes.append(f"watch: {column['watch']}")
    return line + (" -- " + "; ".join(notes) if notes else "")


def _references(table: SchemaTable, chosen: Sequence[SchemaTable]) -> list[tuple[list[str], str, list[str]]]:
    """(columns, chosen table, its columns) for each link from `table` to another chosen table, once each: declared
    foreign keys first, then the joins analysis found, written from the referring side only (a join from the
    table's own primary key to a column of the other that is not its key is the other table's reference)."""
    by_name = {t.name.upper(): t for t in chosen}
    primary = [str(c) for c in table.card.get("primary_key") or []]
    found: list[tuple[list[str], str, list[str]]] = []
    seen: set[tuple[str, ...]] = set()
    links = [
        (fk.get("columns") or [], str(fk.get("references", "")), fk.get("ref_columns") or [])
        for fk in table.card.get("foreign_keys") or []
    ]
    links += [
        (j.get("from_columns") or [], str(j.get("to", "")), j.get("to_columns") or [])
        for j in table.card.get("joins") or []
    ]
    for columns, target, target_columns in links:
        other = by_name.get(target.rpartition(".")[2].upper())
        if other is None or other.name.upper() == table.name.upper() or len(columns) != len(target_columns):
            continue
        other_primary = [str(c) for c in other.card.get("primary_key") or []]
        if [str(c) for c in columns] == primary and [str(c) for c in target_columns] != other_primary:
            continue  # the other table refers to this one's key
        key = tuple(str(c).upper() for c in columns)
        if not columns or key in seen:
            continue
        seen.add(key)
        found.append(([str(c) for c in columns], other.name, [str(c) for c in target_columns]))
    return found


def create_table(table: SchemaTable, chosen: Sequence[SchemaTable]) -> str:
    """`CREATE TABLE` with the table's keys and its references to the other chosen tables, in the form of the DDL
    such models were trained on (no separate join lines: those invite joins the question does not need)."""
    card = table.card
    primary = [str(c) for c in card.get("primary_key") or []]
    inline: dict[str, str] = {}
    compound: list[str] = []
    for own, target, target_columns in _references(table, chosen):
        if len(own) == 1:
            inline.setdefault(own[0], f"{_quoted(target)}({_quoted(target_columns[0])})")
        else:
            compound.append(
                f"  FOREIGN KEY ({', '.join(_quoted(c) for c in own)}) REFERENCES {_quoted(target)}"
                f"({', '.join(_quoted(c) for c in target_columns)})"
            )
    columns = shown_columns(table)
    lines = [_column_line(c, primary, inline) for c in columns]
    if len(primary) > 1:
        lines.append(f"  PRIMARY KEY ({', '.join(_quoted(c) for c in primary)})")
    lines += compound
    body = ",\n".join(lines)
    return f"CREATE TABLE {_quoted(table.name)} (\n{body}\n);"


def _cell(value: Any) -> str:
    text = "NULL" if value is None else str(value)
    text = " ".join(text.split())
    return text if len(text) <= EXAMPLE_CELL_CHARS else text[: EXAMPLE_CELL_CHARS - 1] + "…"


def example_rows(context: ToolContext, source: Source, table: SchemaTable) -> list[str]:
    """A few rows of `table` as the reader may read them (row filters applied), masked columns left out; [] when
    the read fails or the table is empty."""
    columns = [c["name"] for c in shown_columns(table) if not c.get("masked")]
    if not columns or dialect_for(source.engine) is None:
        return []
    quote = '"' if dialect_for(source.engine) != "mysql" else "`"

    def q(name: str) -> str:
        return quote + name.replace(quote, quote * 2) + quote

    target = f"{q(table.schema)}.{q(table.name)}" if table.schema else q(table.name)
    sql = f"SELECT {', '.join(q(c) for c in columns)} FROM {target} LIMIT {EXAMPLE_ROWS}"
    outcome = run_sql(
        context.session,
        context.settings,
        context.principal,
        source.name,
        sql,
        limits=_EXAMPLE_LIMITS,
        turn_id=context.turn_id,
    )
    if outcome.status != "ok" or not outcome.rows:
        return []
    return [" | ".join(outcome.columns)] + [" | ".join(_cell(v) for v in row) for row in outcome.rows]


def render(context: ToolContext, source: Source, tables: Sequence[SchemaTable], *, examples: bool = True) -> str:
    """The compact schema of `tables` (all of `source`) as the SQL prompt shows it."""
    parts = []
    for table in tables:
        block = [create_table(table, tables)]
        rows = example_rows(context, source, table) if examples else []
        if rows:
            block.append(f"/* {len(rows) - 1} example rows of {table.name}:\n" + "\n".join(rows) + "\n*/")
        parts.append("\n".join(block))
    found = [named_value_line(t, v) for t in tables for v in t.values[:3]]
    if found:
        parts.append("\n".join(found))
    return "\n\n".join(parts)
