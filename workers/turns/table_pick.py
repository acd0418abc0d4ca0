"""The model's choice among the guided path's candidate tables (`workers.turns.selection`): when more candidates
than `DIRECT_TABLES` remain and none stand clearly ahead, one constrained call names the tables the query needs."""

from __future__ import annotations

from workers.models.types import ModelReply, ToolSpec
from workers.turns.selection import Selection

#: The most tables the model may choose.
PICK_AT_MOST = 4
#: Columns of each table listed in the choice's prompt.
PICK_COLUMNS = 8


def pick_spec(selection: Selection) -> ToolSpec:
    names = [t.name for t in selection.tables]
    return ToolSpec(
        name="choose_tables",
        description="The tables the query needs.",
        parameters={
            "type": "object",
            "properties": {
                "tables": {
                    "type": "array",
                    "items": {"type": "string", "enum": names},
                    "minItems": 1,
                    "maxItems": PICK_AT_MOST,
                }
            },
            "required": ["tables"],
        },
    )


def pick_prompt(question: str, selection: Selection) -> str:
    lines = [f"Tables of database {selection.database}, most relevant first:"]
    for table in selection.tables:
        purpose = " ".join(str(table.card.get("purpose") or "").split())[:120]
        columns = [str(c["name"]) for c in table.card.get("columns", []) if isinstance(c, dict)]
        more = ", …" if len(columns) > PICK_COLUMNS else ""
        role = table.card.get("role") or "live"
        label = table.name if role == "live" else f"{table.name} ({role})"
        lines.append(f"- {label}: {purpose}. Columns: {', '.join(columns[:PICK_COLUMNS])}{more}")
    lines += ["", f"Question: {question}", "Choose the tables the query needs."]
    return "\n".join(lines)


def picked_tables(selection: Selection, reply: ModelReply) -> Selection:
    """The selection narrowed to the tables the model chose (and the join tables between them); the leading
    candidates when it chose none it was offered."""
    offered = {t.name: t for t in selection.tables}
    chosen: list[str] = []
    for call in reply.tool_calls:
        names = call.arguments.get("tables")
        for name in names if isinstance(names, list) else []:
            if isinstance(name, str) and name in offered and name not in chosen:
                chosen.append(name)
    if not chosen:
        chosen = [t.name for t in selection.tables[:2]]
    for candidate in selection.candidates:
        if candidate.table not in chosen and candidate.through and len(set(candidate.through) & set(chosen)) >= 2:
            chosen.append(candidate.table)
    rank = [t.name for t in selection.tables]
    kept = sorted(chosen[:PICK_AT_MOST], key=rank.index)
    return Selection(
        database=selection.database,
        engine=selection.engine,
        tables=[offered[name] for name in kept],
        candidates=[c for c in selection.candidates if c.table in kept],
        denied=selection.denied,
        examples=selection.examples,
        linked=selection.linked,
    )
