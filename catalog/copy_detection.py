"""Which tables are stale copies of which, judged across the whole database; which are period partitions.

A copy (`ORD_MST_BAK`, `ORD_MST_202312`, `BAK_ORD_MST`, `CUST_MST_TMP`) has a name that extends a live table's,
the same or nearly the same columns, no more rows (or keys that are all found in the live table), older data, and
no foreign keys pointing at it. Tables split by period with no single live parent (`SALES_2023`, `SALES_2024`)
and declared partitions are partitions, never copies. A wrong "copy" hides the live table from search, so every
rule errs towards leaving a table live.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.text.identifiers import split_identifier
from core.text.naming import Affix, affixes

LOG_WORDS = {"log", "logs", "hist", "history", "audit", "trail", "journal"}
MIN_COLUMN_SIMILARITY = 0.8
MIN_CONTAINMENT = 0.9


@dataclass
class TableFacts:
    """What copy detection needs to know about one table; `key` identifies it (schema-qualified name)."""

    key: str
    schema: str | None
    name: str
    kind: str
    columns: dict[str, str]  # lower-case column name → type family
    row_count: int | None
    newest: dict[str, str] = field(default_factory=dict)  # lower-case date column → newest value seen
    primary_key: tuple[str, ...] = ()
    inbound_from: set[str] = field(default_factory=set)  # keys of tables with a foreign key to this one
    partition_of: str | None = None


@dataclass
class Judgement:
    role: str
    copy_of: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)


Containment = Callable[[TableFacts, TableFacts], float | None]


def column_similarity(a: TableFacts, b: TableFacts) -> float:
    """Jaccard similarity of the column names (case-insensitive)."""
    names = set(a.columns) | set(b.columns)
    if not names:
        return 0.0
    return round(len(set(a.columns) & set(b.columns)) / len(names), 4)


def type_agreement(a: TableFacts, b: TableFacts) -> float:
    """Share of shared columns whose type family agrees; copies made with CREATE TABLE AS often change types."""
    shared = set(a.columns) & set(b.columns)
    if not shared:
        return 0.0
    return round(sum(1 for n in shared if a.columns[n] == b.columns[n]) / len(shared), 4)


def _newer_than_live(copy: TableFacts, live: TableFacts) -> list[str]:
    return [c for c, v in copy.newest.items() if c in live.newest and v > live.newest[c]]


def _is_log(facts: TableFacts) -> bool:
    words = split_identifier(facts.name)
    return bool(words) and words[-1] in LOG_WORDS


def _find(tables: dict[str, TableFacts], schema: str | None, name: str) -> TableFacts | None:
    wanted = name.lower()
    same_schema = [t for t in tables.values() if t.schema == schema and t.name.lower() == wanted]
    return same_schema[0] if same_schema else None


def _judge_pair(
    copy: TableFacts, live: TableFacts, affix: Affix, containment: Containment
) -> tuple[Judgement | None, dict[str, Any]]:
    """A Judgement when `copy` is a copy (or an archive partition) of `live`; else None with the evidence."""
    evidence: dict[str, Any] = {
        "live_table": live.key,
        "name_pattern": f"{affix.position} {affix.marker}",
        "column_similarity": column_similarity(copy, live),
        "type_agreement": type_agreement(copy, live),
        "rows": {"copy": copy.row_count, "live": live.row_count},
        "inbound_foreign_keys": sorted(copy.inbound_from),
    }
    if evidence["column_similarity"] < MIN_COLUMN_SIMILARITY:
        evidence["verdict"] = "columns differ too much"
        return None, evidence
    real_inbound = {k for k in copy.inbound_from if k != live.key}
    if real_inbound:
        evidence["verdict"] = "other tables reference it"
        return None, evidence
    contained = containment(copy, live)
    evidence["key_containment"] = contained
    newer = _newer_than_live(copy, live)
    if newer:
        evidence["newer_columns"] = newer
    fewer = copy.row_count is not None and live.row_count is not None and copy.row_count <= live.row_count
    if affix.kind == "period":
        if contained is not None and contained >= MIN_CONTAINMENT and not newer:
            return Judgement("snapshot", live.key, evidence), evidence
        if contained is not None and contained < 0.2:
            evidence["verdict"] = "holds rows the live table does not: an archive partition"
            return Judgement("partition", None, evidence), evidence
        if contained is None and fewer and not newer:
            return Judgement("snapshot", live.key, evidence), evidence
        evidence["verdict"] = "period-named but not a subset of the live table"
        return None, evidence
    if contained is not None and contained < 0.5 and affix.kind != "staging":
        evidence["verdict"] = "most of its keys are not in the live table"
        return None, evidence
    if not fewer and not (contained is not None and contained >= MIN_CONTAINMENT):
        evidence["verdict"] = "more rows than the live table"
        return None, evidence
    if newer and affix.kind in ("backup", "snapshot"):
        evidence["verdict"] = "holds newer data than the live table"
        return None, evidence
    return Judgement(affix.kind, live.key, evidence), evidence


def _confidence(evidence: dict[str, Any]) -> float:
    score = 0.5 + 0.25 * (float(evidence["column_similarity"]) - MIN_COLUMN_SIMILARITY) / (1 - MIN_COLUMN_SIMILARITY)
    score += 0.05 * float(evidence.get("type_agreement", 0.0))
    contained = evidence.get("key_containment")
    if contained is not None:
        score += 0.15 * float(contained)
    rows = evidence["rows"]
    if rows["copy"] is not None and rows["live"] is not None and rows["copy"] < rows["live"]:
        score += 0.05
    return round(min(score, 1.0), 3)


def _period_partitions(tables: dict[str, TableFacts], decided: dict[str, Judgement]) -> None:
    """Tables sharing a stem with period markers and no live table of that stem are partitions of one another."""
    groups: dict[tuple[str | None, str], list[TableFacts]] = {}
    for facts in tables.values():
        if facts.key in decided or facts.kind != "table":
            continue
        for affix in affixes(facts.name):
            if affix.kind == "period" and _find(tables, facts.schema, affix.stem) is None:
                groups.setdefault((facts.schema, affix.stem.lower()), []).append(facts)
    for (_, stem), members in groups.items():
        if len(members) < 2:
            continue
        similar = all(column_similarity(members[0], m) >= MIN_COLUMN_SIMILARITY for m in members[1:])
        if not similar:
            continue
        siblings = sorted(m.key for m in members)
        for member in members:
            decided[member.key] = Judgement(
                "partition", None, {"partition_group": stem, "siblings": [s for s in siblings if s != member.key]}
            )


def detect_roles(tables: dict[str, TableFacts], containment: Containment) -> dict[str, Judgement]:
    """A role for every table; copies carry `copy_of` (always a live table) and their evidence."""
    decided: dict[str, Judgement] = {}
    for facts in tables.values():
        if facts.kind == "view":
            decided[facts.key] = Judgement("view")
        elif facts.partition_of is not None:
            decided[facts.key] = Judgement("partition", None, {"declared_partition_of": facts.partition_of})
    rejected: dict[str, list[dict[str, Any]]] = {}
    for facts in sorted(tables.values(), key=lambda t: t.key):
        if facts.key in decided:
            continue
        for affix in affixes(facts.name):
            live = _find(tables, facts.schema, affix.stem)
            if live is None or live.key == facts.key or live.kind == "view":
                continue
            judgement, evidence = _judge_pair(facts, live, affix, containment)
            if judgement is None:
                rejected.setdefault(facts.key, []).append(evidence)
                continue
            judgement.evidence["confidence"] = _confidence(judgement.evidence)
            decided[facts.key] = judgement
            break
    _period_partitions(tables, decided)
    _resolve_chains(decided)
    for facts in tables.values():
        if facts.key not in decided:
            decided[facts.key] = Judgement("log" if _is_log(facts) else "live")
            if facts.key in rejected:
                decided[facts.key].evidence = {"not_a_copy": rejected[facts.key]}
    return decided


def _resolve_chains(decided: dict[str, Judgement]) -> None:
    """A copy of a copy (BAK_ORD_MST_202312) points at the live table at the end of the chain."""
    for judgement in decided.values():
        seen: set[str] = set()
        while judgement.copy_of is not None and judgement.copy_of in decided:
            target = decided[judgement.copy_of]
            if target.copy_of is None or judgement.copy_of in seen:
                break
            seen.add(judgement.copy_of)
            judgement.evidence.setdefault("via", []).append(judgement.copy_of)
            judgement.copy_of = target.copy_of
