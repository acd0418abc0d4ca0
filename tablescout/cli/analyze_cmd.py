"""`tablescout analyze [NAME...|--all]`: introspect, profile, judge copies and joins, build cards."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from core import interrupts
from core.errors import ConfigError
from tablescout.cli.context import console, current_store, errors, settings

if TYPE_CHECKING:
    from catalog.analysis import AnalysisReport
    from workers.catalog_refresh import RefreshReport

# The analysis code is imported where it runs, so that building the command line does not load it.

#: Exit status of an analysis that finished but could not read some tables (1 means a source was not analysed).
SKIPPED_EXIT = 3


class BarProgress:
    """Rich progress bar: tables done/total, the table being read, elapsed time."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.task: object | None = None
        self.source = ""

    def start(self, source: str, total: int) -> None:
        self.source = source
        self.task = self.progress.add_task(source, total=total)

    def working_on(self, table: str) -> None:
        if self.task is not None:
            self.progress.update(self.task, description=f"{self.source}: {table}")  # type: ignore[arg-type]

    def advance(self) -> None:
        if self.task is not None:
            self.progress.advance(self.task)  # type: ignore[arg-type]


def _summary_table(reports: list[AnalysisReport]) -> Table:
    table = Table("source", "tables", "copies", "partitions", "joins", "skipped", "seconds")
    for r in reports:
        if r.error:
            table.add_row(r.source, "[red]failed[/]", "-", "-", "-", "-", "-")
            continue
        table.add_row(
            r.source,
            f"{r.tables} ({r.reused} unchanged)" + (f", {len(r.invisible)} gone" if r.invisible else ""),
            str(len(r.copies)),
            str(len(r.partitions)),
            f"{r.joins_declared}+{r.joins_inferred}",
            str(len(r.skipped)),
            f"{r.seconds:.1f}",
        )
    table.caption = "joins: declared + inferred"
    return table


def _skipped_line(report: AnalysisReport) -> str:
    """One line naming the tables analysis could not read, so a partial analysis never looks like a full one."""
    from catalog.analysis import NOT_DESCRIBED

    unread = [table for table, reason in report.skipped if not reason.startswith(NOT_DESCRIBED)]
    missing = [table for table, reason in report.skipped if reason.startswith(NOT_DESCRIBED)]
    parts = []
    if missing:
        parts.append(f"{len(missing)} left out of search (cannot describe): {', '.join(missing)}")
    if unread:
        parts.append(f"{len(unread)} with names and types only (rows could not be read): {', '.join(unread)}")
    seen = report.tables + len(missing)
    return f"{report.source}: {len(report.skipped)} of {seen} tables not fully analysed; " + "; ".join(parts)


def _details(report: AnalysisReport) -> None:
    if report.account_warning:
        errors.print(f"[bold yellow]warning:[/] {escape(report.account_warning)}", highlight=False)
    if report.error:
        errors.print(f"[red]{report.source}: not analysed:[/] {report.error}")
        return
    for table, live, role in report.copies:
        console.print(f"{report.source}: {table} is a {role} copy of {live}")
    if report.partitions:
        console.print(f"{report.source}: partitions {', '.join(report.partitions)}")
    for table, reason in report.skipped:
        console.print(f"[yellow]{report.source}: skipped {table}:[/] {reason}")
    if report.invisible:
        console.print(f"{report.source}: no longer visible: {', '.join(report.invisible)} (notes kept)")


def analyze(
    names: Annotated[list[str] | None, typer.Argument(help="Sources to analyse.")] = None,
    all_sources: Annotated[bool, typer.Option("--all", help="Analyse every registered source.")] = False,
    schema_only: Annotated[bool, typer.Option("--schema-only", help="Read no rows: names, types, keys only.")] = False,
    full: Annotated[bool, typer.Option("--full", help="Measure unchanged tables again.")] = False,
    sample_rows: Annotated[int, typer.Option("--sample-rows", min=10, max=100_000, help="Rows read per table.")] = 2000,
    timeout: Annotated[float, typer.Option("--timeout", min=0.5, max=600, help="Seconds per statement.")] = 10.0,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array of reports on stdout.")] = False,
) -> None:
    """Analyse sources: cards with column meanings, stale copies, partitions and joins."""
    from catalog.analysis import AnalysisOptions
    from core.store.repositories import sources as source_repo
    from search.encoders import embedder_for
    from search.index_upkeep import IndexUpkeep
    from search.multilingual import index_multilingual, multilingual_for
    from workers.catalog_refresh import refresh_source

    if bool(names) == all_sources:
        raise ConfigError("name the sources to analyse, or use --all (not both)")
    config = settings()
    options = AnalysisOptions(profile=not schema_only, sample_rows=sample_rows, full=full, statement_timeout_s=timeout)
    refreshed: list[RefreshReport] = []
    with current_store(config) as store:
        if all_sources:
            with store.transaction() as session:
                names = [s.name for s in source_repo.all_sources(session)]
            if not names:
                raise ConfigError("no sources registered yet; add one with `tablescout source add NAME URL`")
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=errors, transient=as_json) as progress:
            upkeep = IndexUpkeep(store)
            try:
                for name in names or []:
                    refreshed.append(
                        refresh_source(config, store, name, options, BarProgress(progress), upkeep=upkeep, refine=False)
                    )
                # Every source is searchable now (fast vectors); their chunks get the main encoder's vectors, then
                # their multilingual ones, before the run ends (and before a vector index set aside is built again).
                second = multilingual_for(config)
                for item in refreshed:
                    if item.index is not None and item.source_id is not None:
                        if item.index.fast:
                            progress.console.print(
                                f"{item.analysis.source}: refining {item.index.fast} chunk vectors..."
                            )
                        item.index.refined = upkeep.refine(item.source_id, embedder_for(config))
                        if second is not None:
                            item.index.multilingual = index_multilingual(store, item.source_id, second)
            except interrupts.Interrupted:
                # Stopped: no rebuild of every chunk on the way out. The next analyze builds a vector index this
                # run set aside; searches meanwhile find nearest chunks by an exact scan.
                raise
            except BaseException:
                upkeep.close()
                raise
            if upkeep.suspension is not None:
                progress.console.print("building the search vector index again over every chunk...")
            upkeep.close()
    reports = [r.analysis for r in refreshed]
    if as_json:
        rows = [asdict(r.analysis) | {"index": asdict(r.index) if r.index else None} for r in refreshed]
        typer.echo(json.dumps(rows, indent=2))
    else:
        for item in refreshed:
            _details(item.analysis)
            if item.index is not None:
                console.print(
                    f"{item.analysis.source}: search index {item.index.tables} tables, "
                    f"{item.index.embedded} chunks embedded, {item.index.reused} unchanged"
                    + (f"; {item.index.multilingual} multilingual vectors made" if item.index.multilingual else "")
                )
                if item.index.refined:
                    console.print(
                        f"{item.analysis.source}: search index refined, {item.index.refined} chunk vectors made "
                        "by the main encoder"
                    )
        if upkeep.built_s is not None:
            console.print(f"search: vector index built in {upkeep.built_s:.1f} s")
        console.print(_summary_table(reports))
    if any(r.error for r in reports):
        raise typer.Exit(1)
    skipped = [r for r in reports if r.skipped]
    if skipped:
        for r in skipped:
            errors.print(f"[bold yellow]warning:[/] {escape(_skipped_line(r))}", highlight=False)
        raise typer.Exit(SKIPPED_EXIT)
