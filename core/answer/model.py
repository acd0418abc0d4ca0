"""`Answer`: what a turn answered, with every SQL it ran and the rows they returned.

Both turn paths build one (`workers.turns.engine`); it is stored with the turn (`core.store.repositories.turns`)
and, for a chat conversation, queued in the answer outbox, then read back as this type by Slack
(`bot.slack.blocks`), Teams (`bot.teams.cards`), the console (`bot.console`) and `ask --json`. Its JSON keeps the
keys SPEC §9 gives `ask --json`: `status`, `answer`, `rounds`, `tables_used` and `sql` (each run with `database`,
`sql`, `columns`, `rows`, `truncated`, `error`); `kinds`, `copies_used`, `notes_saved`, `warnings`, `sources_note`,
`guided` and `chart` (a `Chart`: a series or a breakdown drawn, built by `workers.charts`) come beside them. Reading
is lenient: a payload stored before a field existed gets its default, and a chart that cannot be read is dropped.
"""

from __future__ import annotations

import datetime as dt
import secrets
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from core.answer.values import ValueKind, column_header, format_value, infer_kind
from core.text.storable_text import storable

Status = Literal["answered", "partial", "failed"]
ChartType = Literal["line", "bar"]


def json_cell(value: Any) -> Any:
    """A result cell as JSON: exact integers stay integers, other decimals become floats, dates ISO text; text is
    storable (a database value may hold a NUL character, which the store refuses)."""
    if isinstance(value, str):
        return storable(value)
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(bytes(value))} bytes>"
    return storable(str(value))


class ResultTable(BaseModel):
    """One run_sql call of the turn: the statement, and its rows or its error."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    database: str = "?"
    sql: str = ""
    columns: list[str] = Field(default_factory=list)
    #: What each column holds, from the card of the column it reads; empty where it was not derived.
    kinds: list[ValueKind | None] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)
    truncated: bool = False
    error: str | None = None

    @property
    def succeeded(self) -> bool:
        return not self.error

    def kind(self, index: int) -> ValueKind:
        """Column `index`'s kind: as derived, else guessed from its name and values."""
        known = self.kinds[index] if index < len(self.kinds) else None
        if known is not None:
            return known
        return infer_kind(self.columns[index] if index < len(self.columns) else "", [r[index] for r in self.rows])

    def headers(self) -> list[str]:
        """The column names as a reader reads them: SQL aliases as written, unnamed aggregates in words."""
        return [column_header(c) for c in self.columns]

    def column_kinds(self) -> list[ValueKind]:
        return [self.kind(i) for i in range(len(self.columns))]

    def cells(self, *, null: str | None = None) -> list[list[str]]:
        """Every row as text for a person, each cell as its column's kind says (`core.answer.values`)."""
        kinds = self.column_kinds()
        options = {} if null is None else {"null": null}
        return [
            [format_value(v, kinds[i] if i < len(kinds) else ValueKind.TEXT, **options) for i, v in enumerate(row)]
            for row in self.rows
        ]


class Chart(BaseModel):
    """One result drawn: a line over time or bars by a category, as a Vega-Lite spec and, once rendered, a PNG.

    `x` is the result column along the x axis, `y` the one or two measure columns drawn; `spec` is a complete
    Vega-Lite v5 spec with the rows inlined (any Vega-Lite client can draw it again); `image` is the path of the
    PNG written by the worker, None when it was not rendered; `alt` says in a sentence what the image shows.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    type: ChartType
    title: str = ""
    x: str
    y: list[str] = Field(min_length=1, max_length=2)
    spec: dict[str, Any] = Field(default_factory=dict)
    image: str | None = None
    alt: str = ""

    def png(self) -> bytes | None:
        """The rendered image, when it was rendered and its file is on this machine (the worker that ran the turn
        delivers its answer, so it is there unless the file was removed since)."""
        if not self.image:
            return None
        try:
            return Path(self.image).read_bytes()
        except OSError:
            return None


class Answer(BaseModel):
    """A turn's one answer."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    status: Status
    text: str = Field(default="", alias="answer")
    rounds: int = 0
    tables_used: list[str] = Field(default_factory=list)
    #: Tables among those used that are copies of a live table, queried on purpose because the user named them.
    copies_used: list[str] = Field(default_factory=list)
    results: list[ResultTable] = Field(default_factory=list, alias="sql")
    notes_saved: list[str] = Field(default_factory=list)
    #: What the reader should know before trusting the answer, one sentence each.
    warnings: list[str] = Field(default_factory=list)
    #: Why these tables, in business terms, when the search left copies out ("From the live orders table
    #: (ORD_MST); the backup copy ORD_MST_BAK was left out."); None when there is nothing to say.
    sources_note: str | None = None
    #: The guided path's trace (steps, tables offered, repairs): kept with the turn for whoever looks into it.
    guided: dict[str, Any] | None = None
    #: The result drawn, when one is a series over time or a breakdown by a category (`workers.charts`).
    chart: Chart | None = None
    #: `TURN-RANDOM`: names the links to this answer's result files (Teams' "download all rows",
    #: bot/result_files.py) and makes them unguessable; None for an answer without results.
    file_key: str | None = None

    @staticmethod
    def new_file_key(turn_id: int) -> str:
        """A new `file_key` for an answer of turn `turn_id`."""
        return f"{turn_id}-{secrets.token_urlsafe(18)}"

    @classmethod
    def from_stored(cls, payload: Any) -> Answer:
        """An answer from its stored JSON; anything unreadable becomes a failed answer saying so, never an error. A
        chart that cannot be read is dropped and the rest of the answer kept."""
        if isinstance(payload, dict):
            runs = [r for r in payload.get("sql") or [] if isinstance(r, dict)]
            clean = {k: v for k, v in payload.items() if k not in ("sql", "chart") and v is not None}
            chart = _stored_chart(payload.get("chart"))
            if chart is not None:
                clean["chart"] = chart
            if clean.get("status") not in ("answered", "partial", "failed"):
                clean["status"] = "failed"
            try:
                return cls.model_validate(clean | {"sql": runs})
            except ValueError:
                pass
        return cls(status="failed", text="This answer could not be read back.")

    def to_json(self) -> dict[str, Any]:
        """The answer as JSON, with SPEC §9's keys (`answer`, `sql`); what the store and `ask --json` hold."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=False)


def _stored_chart(payload: Any) -> Chart | None:
    """The stored chart, or None when there is none or it cannot be read."""
    if payload is None:
        return None
    try:
        return Chart.model_validate(payload)
    except ValueError:
        return None
