"""What a search candidate carries (SPEC §3), built from the stored card of its table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from core.cards.card_head import header_lines
from core.store.models import Note, SourceTable

#: "example": tables a verified example read; "join": a table connecting candidates (`search.join_expansion`).
SIGNAL_ORDER = ("semantic", "keyword", "value", "note", "example", "join")


@dataclass
class Candidate:
    database: str
    schema: str | None
    table: str
    score: float
    role: str
    copy_of: str | None
    head: str
    engine: str | None
    matched_by: list[str]
    codes: dict[str, str] = field(default_factory=dict)
    watch: dict[str, str] = field(default_factory=dict)
    joins: list[str] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)
    marked_database: bool = False
    through: list[str] = field(default_factory=list)  # the candidates a "join" table connects
    values: list[dict[str, str]] = field(default_factory=list)  # values the question names: {column, value}
    covers: list[str] = field(default_factory=list)  # the parts of the question it covers (`search.coverage`)

    def contract(self) -> dict[str, Any]:
        """The fields of the public batch output (SPEC §9)."""
        return (
            {
                "database": self.database,
                "schema": self.schema,
                "table": self.table,
                "score": round(self.score, 6),
                "role": self.role,
                "copy_of": self.copy_of,
                "matched_by": self.matched_by,
            }
            | ({"through": self.through} if self.through else {})
            | ({"values": self.values} if self.values else {})
            | ({"covers": self.covers} if self.covers else {})
        )

    def full(self) -> dict[str, Any]:
        return self.contract() | {
            "engine": self.engine,
            "head": self.head,
            "codes": self.codes,
            "watch": self.watch,
            "joins": self.joins,
            "notes": self.notes,
        }


def _codes(card: dict[str, Any]) -> dict[str, str]:
    found = {}
    for column in card.get("columns", []):
        if column.get("codes"):
            found[column["name"]] = ", ".join(f"{c['code']}={c['meaning'] or '?'}" for c in column["codes"][:12])
    return found


def _joins(card: dict[str, Any]) -> list[str]:
    return [
        f"{','.join(j['from_columns'])} -> {j['to']}({','.join(j['to_columns'])}) {j['kind']}"
        + (f" {j['confidence']:.2f}" if j["kind"] == "inferred" else "")
        for j in card.get("joins", [])
    ]


def card_head(card: dict[str, Any], fallback: str) -> str:
    """The head of a card (as the reader may see it) as text: the part of the card before its columns."""
    if not card.get("table") or not card.get("database"):
        return fallback
    return "\n".join(header_lines(card, card.get("engine")))


def build_candidate(
    row: SourceTable,
    database: str,
    score: float,
    matched: set[str],
    notes: Sequence[Note],
    card: dict[str, Any],
    through: Sequence[str] = (),
    values: Sequence[dict[str, str]] = (),
    covers: Sequence[str] = (),
) -> Candidate:
    """A candidate from `card`, the card of `row` as the reader may see it (`core.cards.card_view.card_for_viewer`)."""
    head = card_head(card, row.name)
    return Candidate(
        database=database,
        schema=row.schema_name or None,
        table=row.name,
        score=score,
        role=row.role,
        copy_of=card.get("copy_of"),
        head=head,
        engine=card.get("engine"),
        matched_by=[s for s in SIGNAL_ORDER if s in matched],
        through=list(through),
        values=list(values),
        covers=list(covers),
        codes=_codes(card),
        watch=dict(card.get("watch") or {}),
        joins=_joins(card),
        notes=[
            {"text": n.text, "author": f"{n.author_platform}:{n.author_id}", "created_at": n.created_at.isoformat()}
            for n in notes
        ],
    )
