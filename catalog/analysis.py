"""Analysing a source: measure every table, judge copies and joins across the database, build cards, store.

Each table that fails (no permission, a view that cannot be queried, a timeout) is skipped or degraded with a
recorded reason and the rest completes; what is already stored for a table that could not be read is kept.
Unchanged tables (same shape and row estimate) reuse their stored measurements.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy import URL

from catalog import source_url
from catalog.account_capabilities import AccountCheck
from catalog.account_check import operator_warning
from catalog.card_building import build_cards, persist
from catalog.code_values import CodeTable, code_table_shape, fill_code_table, fill_group_names, group_name_columns
from catalog.connectors import open_connector
from catalog.connectors.base import Connector, TableInfo, TableRef
from catalog.copy_detection import Judgement, TableFacts, detect_roles
from catalog.probe import probe
from catalog.table_facts import Measured, fingerprint, key_resolver, measure
from core import interrupts
from core.config.settings import Settings
from core.errors import NotFoundError, SourceError, TablescoutError
from core.store.database import Store
from core.store.models import Source
from core.store.repositories import catalog as catalog_repo
from core.store.repositories import sources as source_repo

CODE_TABLE_ROWS = 5000
KEY_SAMPLE = 200


class Progress(Protocol):
    def start(self, source: str, total: int) -> None: ...
    def working_on(self, table: str) -> None: ...
    def advance(self) -> None: ...


@dataclass
class AnalysisOptions:
    profile: bool = True
    sample_rows: int = 2000
    full: bool = False
    statement_timeout_s: float = 10.0


#: How a skipped table's reason starts when analysis could not even list its columns (it has no card then).
NOT_DESCRIBED = "cannot describe"


@dataclass
class AnalysisReport:
    source: str
    tables: int = 0
    measured: int = 0
    reused: int = 0
    copies: list[tuple[str, str, str]] = field(default_factory=list)  # table, live table, role
    partitions: list[str] = field(default_factory=list)
    joins_declared: int = 0
    joins_inferred: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    invisible: list[str] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0
    #: What the account may do beyond reading, checked again by this analysis (labels; None: not checked).
    privileges: list[str] | None = None
    #: A line for the operator when the account can do more than read, or could not be checked.
    account_warning: str | None = None


def _location(settings: Settings, source: Source) -> tuple[URL, str]:
    """The source's URL with secrets expanded, and as it may be shown."""
    entry = settings.file.sources.get(source.name)
    if entry is None:
        raise SourceError(f"source {source.name} has no URL in {settings.config_path}; add it again")
    parsed = source_url.parse(entry.url)
    return source_url.expand(parsed, settings.environment_value), source_url.display(parsed)


def connect(settings: Settings, source: Source, timeout_s: float) -> Connector:
    return open_connector(_location(settings, source)[0], statement_timeout_s=timeout_s)


def check_source_account(settings: Settings, source: Source) -> AccountCheck:
    """What the source's account may do beyond reading now (catalog.account_check), through its own short session."""
    url, shown = _location(settings, source)
    return probe(url, shown).account


def _stored_facts(store: Store, source_id: int) -> dict[tuple[str, str], dict[str, Any]]:
    with store.transaction() as session:
        return {(t.schema_name, t.name): dict(t.facts or {}) for t in catalog_repo.tables_of(session, source_id)}


def _measure_all(
    connector: Connector,
    refs: list[TableRef],
    stored: dict[tuple[str, str], dict[str, Any]],
    options: AnalysisOptions,
    progress: Progress | None,
    report: AnalysisReport,
) -> dict[str, Measured]:
    measured: dict[str, Measured] = {}
    for ref in refs:
        # A stop signal that arrived inside an SQLite statement was taken for its timeout: stop here instead.
        interrupts.raise_if_requested()
        if progress is not None:
            progress.working_on(ref.qualified)
        try:
            info = connector.describe(ref)
        except TablescoutError as exc:
            report.skipped.append((ref.qualified, f"{NOT_DESCRIBED}: {exc}"))
            if progress is not None:
                progress.advance()
            continue
        previous = stored.get((ref.schema or "", ref.name))
        reusable = (
            previous is not None
            and not options.full
            and previous.get("fingerprint") == fingerprint(info)
            and previous.get("profiled") == options.profile
            and not previous.get("skipped_reason")
        )
        if reusable and previous is not None:
            measured[ref.qualified] = Measured(info, previous)
            report.reused += 1
        else:
            measured[ref.qualified] = _measure_one(connector, info, options, report)
        if progress is not None:
            progress.advance()
    return measured


def _measure_one(connector: Connector, info: TableInfo, options: AnalysisOptions, report: AnalysisReport) -> Measured:
    try:
        facts = measure(connector, info, options.sample_rows, profile=options.profile)
        report.measured += 1
        return Measured(info, facts)
    except TablescoutError as exc:
        reason = f"could not read rows: {exc}"
        report.skipped.append((info.ref.qualified, reason))
        facts = {"fingerprint": fingerprint(info), "profiled": False, "row_count": info.row_estimate}
        facts["skipped_reason"] = reason
        return Measured(info, facts, reason)


def _code_tables(connector: Connector, measured: dict[str, Measured]) -> list[CodeTable]:
    tables = []
    for item in measured.values():
        shape = code_table_shape(item.info)
        rows = item.facts.get("row_count")
        if shape is None or (isinstance(rows, int) and rows > CODE_TABLE_ROWS):
            continue
        columns = [c for c in (shape.group_column, shape.code_column, shape.label_column) if c]
        try:
            sample = connector.sample(item.info.ref, columns, CODE_TABLE_ROWS)
        except TablescoutError:
            continue
        fill_code_table(shape, sample.columns, sample.rows)
        if shape.entries:
            tables.append(shape)
            _name_groups(connector, measured, shape, item.info)
    return tables


def _name_groups(connector: Connector, measured: dict[str, Measured], table: CodeTable, info: TableInfo) -> None:
    """The names of a grouped code table's groups, from the table its group column refers to (`code_values`)."""
    for other in measured.values():
        columns = group_name_columns(table, info, other.info)
        if columns is None:
            continue
        try:
            sample = connector.sample(other.info.ref, list(columns), CODE_TABLE_ROWS)
        except TablescoutError:
            return
        fill_group_names(table, (other.info.ref.schema, other.info.ref.name), columns, sample.columns, sample.rows)
        return


def _containment(
    connector: Connector, measured: dict[str, Measured]
) -> Callable[[TableFacts, TableFacts], float | None]:
    """Share of a candidate copy's values of the live table's key that the live table holds (None: no key)."""
    cache: dict[tuple[str, str], float | None] = {}

    def containment(copy: TableFacts, live: TableFacts) -> float | None:
        pair = (copy.key, live.key)
        if pair not in cache:
            cache[pair] = _contained(connector, measured[copy.key].info, measured[live.key].info)
        return cache[pair]

    return containment


def _contained(connector: Connector, copy: TableInfo, live: TableInfo) -> float | None:
    if len(live.primary_key) != 1:
        return None
    key = live.primary_key[0]
    column = next((c.name for c in copy.columns if c.name.lower() == key.lower()), None)
    if column is None:
        return None
    try:
        sample = connector.sample(copy.ref, [column], KEY_SAMPLE)
        values = list(dict.fromkeys(row[0] for row in sample.rows if row[0] is not None))
        if not values:
            return None
        return round(connector.count_present(live.ref, key, values) / len(values), 4)
    except TablescoutError:
        return None


def _table_facts(
    measured: dict[str, Measured], key_of: Callable[[str | None, str], str | None]
) -> dict[str, TableFacts]:
    facts: dict[str, TableFacts] = {}
    for key, item in measured.items():
        info = item.info
        facts[key] = TableFacts(
            key=key,
            schema=info.ref.schema,
            name=info.ref.name,
            kind=info.ref.kind,
            columns={c.name.lower(): c.family for c in info.columns},
            row_count=item.facts.get("row_count"),
            newest=dict(item.facts.get("newest") or {}),
            primary_key=tuple(c.lower() for c in info.primary_key),
            partition_of=info.partition_of,
        )
    for key, item in measured.items():
        for fk in item.info.foreign_keys:
            target = key_of(fk.ref_schema if fk.ref_schema is not None else item.info.ref.schema, fk.ref_table)
            if target is not None and target != key:
                facts[target].inbound_from.add(key)
    return facts


def judge(connector: Connector, measured: dict[str, Measured]) -> dict[str, Judgement]:
    key_of = key_resolver(measured)
    return detect_roles(_table_facts(measured, key_of), _containment(connector, measured))


def analyze_source(
    settings: Settings, store: Store, name: str, options: AnalysisOptions, progress: Progress | None = None
) -> AnalysisReport:
    """Analyse one registered source and store its cards; a source that cannot be read at all is reported."""
    started = time.monotonic()
    with store.transaction() as session:
        source = source_repo.by_name_or_alias(session, name)
        if source is None:
            raise NotFoundError(f"there is no source named {name!r}; `tablescout source list` shows them")
        session.expunge(source)
    report = AnalysisReport(source=source.name)
    try:
        connector = connect(settings, source, options.statement_timeout_s)
    except TablescoutError as exc:
        report.error = str(exc)
        return report
    try:
        account: AccountCheck | None = check_source_account(settings, source)
    except TablescoutError as exc:
        account = None
        report.account_warning = f"the account of source {source.name} could not be checked again: {exc}"
    if account is not None:
        report.privileges = account.stored()
        report.account_warning = operator_warning(source.name, account, file_writable=False)
        with store.transaction() as session:
            source_repo.set_write_capabilities(session, source.id, account.stored())
    try:
        refs = connector.list_tables()
        if progress is not None:
            progress.start(source.name, len(refs))
        measured = _measure_all(connector, refs, _stored_facts(store, source.id), options, progress, report)
        interrupts.raise_if_requested()
        judgements = judge(connector, measured)
        code_tables = _code_tables(connector, measured) if options.profile else []
        built = build_cards(connector, source.name, measured, judgements, code_tables, options.profile)
        built.listed = {(r.schema or "", r.name) for r in refs}
        engine = f"{connector.engine} {connector.version}"
    except TablescoutError as exc:
        report.error = str(exc)
        return report
    finally:
        connector.close()
    now = datetime.now(UTC)
    with store.transaction() as session:
        report.invisible = persist(session, source.id, built, now, engine)
    report.tables = len(measured)
    for key, judgement in sorted(judgements.items()):
        if judgement.copy_of is not None:
            report.copies.append((key, judgement.copy_of, judgement.role))
        elif judgement.role == "partition":
            report.partitions.append(key)
    report.joins_declared = sum(1 for j in built.joins if j.kind == "declared")
    report.joins_inferred = sum(1 for j in built.joins if j.kind == "inferred")
    report.seconds = round(time.monotonic() - started, 2)
    return report
