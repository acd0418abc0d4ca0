"""From measurements and judgements to stored cards: code meanings, columns to watch, joins, text, summary."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from catalog.card_text import render_card
from catalog.code_values import CodeTable, resolve_meanings
from catalog.connectors.base import Connector, TableInfo
from catalog.copy_detection import Judgement
from catalog.join_inference import JoinEdge, declared_joins, inferred_join, name_candidates
from catalog.misuse import columns_to_watch
from catalog.summary import summarise
from catalog.table_card import CardInputs, build_card
from catalog.table_facts import Measured, key_resolver, stored_profiles
from catalog.view_lineage import column_reads_of
from core.errors import TablescoutError
from core.store.models import SourceTable
from core.store.repositories import catalog as catalog_repo

COPY_ROLES = {"backup", "draft", "staging", "snapshot"}
#: Tables written to the store per flush (their rows, then their columns in one statement each).
PERSIST_BATCH = 500


@dataclass
class BuiltCatalog:
    cards: dict[str, dict[str, Any]] = field(default_factory=dict)
    measured: dict[str, Measured] = field(default_factory=dict)
    judgements: dict[str, Judgement] = field(default_factory=dict)
    joins: list[JoinEdge] = field(default_factory=list)
    summary: str = ""
    listed: set[tuple[str, str]] = field(default_factory=set)  # (schema, name) of every table the source listed


def find_joins(connector: Connector, measured: dict[str, Measured], judgements: dict[str, Judgement]) -> list[JoinEdge]:
    key_of = key_resolver(measured)
    edges: list[JoinEdge] = []
    for item in measured.values():
        edges.extend(declared_joins(item.info, key_of))
    declared = {(e.from_table, c, e.to_table) for e in edges for c in e.from_columns}
    usable = [
        m.info for k, m in measured.items() if judgements[k].role not in COPY_ROLES and m.info.ref.kind == "table"
    ]
    for candidate in name_candidates(usable, declared):
        values = (measured[candidate.from_info.ref.qualified].facts.get("value_samples") or {}).get(candidate.column)
        if not values:
            continue
        try:
            found = connector.count_present(candidate.to_info.ref, candidate.key, values)
        except TablescoutError:
            continue
        edge = inferred_join(candidate, found / len(values), len(values))
        if edge is not None:
            edges.append(edge)
    return edges


@dataclass
class CodeFacts:
    """What `_codes_for` found, per column."""

    codes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    read_from: dict[str, list[list[str | None]] | None] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)  # {name, from: [schema, table]} of the group


def _codes_for(
    info: TableInfo,
    facts: dict[str, Any],
    code_tables: Sequence[CodeTable],
    reads_of: dict[str, list[tuple[str | None, str]] | None],
) -> CodeFacts:
    """Codes per column with their meanings, where the meanings came from, the tables they were read from (the
    code table and, for a code view, everything it reads; None when a view's reads cannot be followed) and the code
    table's column that holds the meanings."""
    found = CodeFacts()
    codes, sources, read_from, labels = found.codes, found.sources, found.read_from, found.labels
    columns = {c.name: c for c in info.columns}
    for name, pairs in (facts.get("code_values") or {}).items():
        if name not in columns:
            continue
        fk_target = next((fk.ref_table for fk in info.foreign_keys if name in fk.columns), None)
        resolved = resolve_meanings(info.ref.name, columns[name], [p[0] for p in pairs], code_tables, fk_target)
        meanings, table = resolved.meanings, resolved.table
        codes[name] = [{"code": code, "meaning": meanings.get(code), "share": share} for code, share in pairs]
        if resolved.source:
            sources[name] = resolved.source
        if table is not None and table.group_names_from and resolved.group in table.group_names:
            found.groups[name] = {"name": table.group_names[resolved.group], "from": [*table.group_names_from]}
        if table is None:
            read_from[name] = []
            continue
        behind = reads_of.get(table.qualified, []) if table.kind == "view" else []
        read_from[name] = None if behind is None else [[table.schema, table.table], *([s, n] for s, n in behind)]
        labels[name] = table.label_column
    return found


def build_cards(
    connector: Connector,
    database: str,
    measured: dict[str, Measured],
    judgements: dict[str, Judgement],
    code_tables: Sequence[CodeTable],
    profile: bool,
) -> BuiltCatalog:
    built = BuiltCatalog(measured=measured, judgements=judgements)
    built.joins = find_joins(connector, measured, judgements) if profile else []
    if not profile:
        key_of = key_resolver(measured)
        built.joins = [e for m in measured.values() for e in declared_joins(m.info, key_of)]
    copies_of: dict[str, list[dict[str, Any]]] = {}
    for key, judgement in judgements.items():
        if judgement.copy_of is not None:
            rows = measured[key].facts.get("row_count")
            copies_of.setdefault(judgement.copy_of, []).append(
                {"table": measured[key].info.ref.name, "role": judgement.role, "row_count": rows}
            )
    engine = f"{connector.engine} {connector.version}"
    reads_of = {key: connector.view_reads(m.info.ref) for key, m in measured.items() if m.info.ref.kind == "view"}
    column_reads = column_reads_of(connector, [m.info for m in measured.values()], reads_of)
    for key, item in measured.items():
        judgement = judgements[key]
        profiles = stored_profiles(item.facts)
        code_facts = _codes_for(item.info, item.facts, code_tables, reads_of)
        watch = columns_to_watch(item.info.columns, profiles, set(code_facts.codes))
        inputs = CardInputs(
            database=database,
            info=item.info,
            role=judgement.role,
            copy_of=measured[judgement.copy_of].info.ref.name if judgement.copy_of else None,
            copy_evidence=judgement.evidence or None,
            row_count=item.facts.get("row_count"),
            row_count_exact=bool(item.facts.get("row_count_exact")),
            profiles=profiles,
            codes=code_facts.codes,
            code_sources=code_facts.sources,
            codes_from=code_facts.read_from,
            code_labels=code_facts.labels,
            code_groups=code_facts.groups,
            reads=reads_of.get(key, []),
            column_reads=column_reads.get(key),
            watch=watch,
            joins=[_facing(j, key) for j in built.joins if j.from_table == key or j.to_table == key],
            referenced_by=sorted({j.from_table for j in built.joins if j.to_table == key and j.kind == "declared"}),
            copies=sorted(copies_of.get(key, []), key=lambda c: str(c["table"])),
            sample=item.facts.get("sample"),
            skipped_reason=item.facts.get("skipped_reason"),
        )
        built.cards[key] = build_card(inputs)
        built.cards[key]["engine"] = engine
    built.summary = summarise(database, connector.engine, list(built.cards.values()))
    return built


def persist(session: Session, source_id: int, built: BuiltCatalog, now: datetime, engine: str) -> list[str]:
    """Store tables, columns and joins; tables no longer seen turn invisible. Returns the names that did. Tables
    are written `PERSIST_BATCH` at a time: one read of the stored tables, then for each batch one flush of its
    rows and one statement each to drop and insert its columns."""
    stored = catalog_repo.tables_by_name(session, source_id)
    rows: dict[str, SourceTable] = {}
    keys = list(built.cards)
    for start in range(0, len(keys), PERSIST_BATCH):
        batch = keys[start : start + PERSIST_BATCH]
        for key in batch:
            rows[key] = _table_row(session, source_id, stored, built, key, now, engine)
        session.flush()
        catalog_repo.replace_columns(session, {rows[key].id: _column_rows(built.cards[key]) for key in batch})
    for key, judgement in built.judgements.items():
        info = built.measured[key].info
        row = rows.get(key) or stored.get((info.ref.schema or "", info.ref.name))
        if row is None:
            row = SourceTable(source_id=source_id, schema_name=info.ref.schema or "", name=info.ref.name)
            session.add(row)
        copy_of = rows.get(judgement.copy_of) if judgement.copy_of else None
        row.copy_of_id = copy_of.id if copy_of is not None else None
    session.flush()
    ids = {key: row.id for key, row in rows.items()}
    catalog_repo.replace_joins(
        session,
        source_id,
        [
            {
                "from_table_id": ids[j.from_table],
                "from_columns": list(j.from_columns),
                "to_table_id": ids[j.to_table],
                "to_columns": list(j.to_columns),
                "kind": j.kind,
                "basis": j.basis,
                "confidence": j.confidence,
            }
            for j in built.joins
            if j.from_table in ids and j.to_table in ids
        ],
    )
    gone = catalog_repo.mark_invisible(session, source_id, built.listed, now)
    catalog_repo.record_analysis(session, source_id, built.summary, now, engine.split(" ", 1)[-1])
    return gone


def _table_row(
    session: Session,
    source_id: int,
    stored: dict[tuple[str, str], SourceTable],
    built: BuiltCatalog,
    key: str,
    now: datetime,
    engine: str,
) -> SourceTable:
    """The stored row of table `key` (added when new), its card and facts set."""
    card, item = built.cards[key], built.measured[key]
    schema, name = item.info.ref.schema or "", item.info.ref.name
    row = stored.get((schema, name))
    if row is None:
        row = SourceTable(source_id=source_id, schema_name=schema, name=name)
        session.add(row)
    row.role = card["role"]
    row.copy_evidence = card["copy_evidence"]
    row.visible = True
    row.invisible_since = None
    row.row_count = card["row_count"]
    row.row_count_exact = card["row_count_exact"]
    row.card = card
    row.card_text = render_card(card, engine=engine)
    row.fingerprint = item.facts.get("fingerprint")
    row.facts = item.facts
    row.skipped_reason = card["skipped_reason"]
    row.analysed_at = now
    return row


def _column_rows(card: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "ordinal": i,
            "name": c["name"],
            "data_type": c["type"][:200],
            "nullable": c["nullable"],
            "key_role": c["key"],
            "comment": c["comment"],
            "profile": {k: c[k] for k in ("stats", "frequent", "codes", "watch") if k in c} or None,
        }
        for i, c in enumerate(card["columns"])
    ]


def _facing(edge: JoinEdge, key: str) -> JoinEdge:
    """The edge as seen from table `key`: its own columns first, the other table as the target (a card shows
    "ORD_NO -> ORD_DTL_H(ORD_NO)" on ORD_MST, not ORD_DTL_H's "ORD_NO -> ORD_MST(ORD_NO)")."""
    if edge.from_table == key:
        return edge
    return replace(
        edge,
        from_table=edge.to_table,
        from_columns=edge.to_columns,
        to_table=edge.from_table,
        to_columns=edge.from_columns,
    )
