"""The console surface: a turn's answer in a terminal (the answer, its SQL, a result table, the tables used) and
a live status line while rounds run. Rendering only; the command line decides where turns run.

The command line's console soft-wraps, so a long line of plain text stays one line to copy; boxes (the answer
panel, the SQL, tables) are printed with soft wrapping off, since soft wrapping would crop them at the terminal's
width: a long answer or statement wraps at words inside its box instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.status import Status
from rich.syntax import Syntax
from rich.table import Table

from core.answer.model import Answer, ResultTable
from core.answer.values import is_numeric

SHOWN_ROWS = 20


class ConsoleView:
    def __init__(self, console: Console) -> None:
        self.console = console
        self._status: Status | None = None

    @contextmanager
    def working(self, first: str = "Starting…") -> Iterator[None]:
        """A live status line, replaced as rounds progress, gone when the answer is shown."""
        with self.console.status(first) as status:
            self._status = status
            try:
                yield
            finally:
                self._status = None

    def status(self, text: str) -> None:
        if self._status is not None:
            self._status.update(text)
        elif not self.console.is_terminal:
            self.console.print(f"[dim]… {text}[/]", highlight=False)

    def note(self, text: str) -> None:
        self.console.print(f"[dim]{text}[/]", highlight=False)

    def answer(self, answer: Answer) -> None:
        style = {"answered": "green", "partial": "yellow"}.get(answer.status, "red")
        panel = Panel(answer.text, title=f"answer ({answer.status})", border_style=style)
        self.console.print(panel, soft_wrap=False)
        for run in answer.results:
            title = f"SQL on {run.database}" + (" (failed)" if run.error else "")
            sql = Syntax(run.sql, "sql", word_wrap=True)
            self.console.print(sql, style="dim" if run.error else "", soft_wrap=False)
            if run.error:
                self.console.print(f"[red]{escape(title)}: {escape(run.error)}[/]", highlight=False)
                continue
            self.console.print(self.rows(run, title), soft_wrap=False)
        if answer.tables_used:
            self.console.print("Tables used: " + ", ".join(answer.tables_used), highlight=False, markup=False)
        if answer.chart is not None and answer.chart.image:
            self.note(escape(f"Chart: {answer.chart.image} ({answer.chart.alt})"))
        if answer.sources_note:
            self.note(escape(answer.sources_note))
        for warning in answer.warnings:
            self.console.print(f"[yellow]{escape(warning)}[/]", highlight=False)
        if answer.notes_saved:
            self.console.print("Notes saved on: " + ", ".join(answer.notes_saved), highlight=False, markup=False)
        self.note(f"{answer.rounds} round(s)")

    @staticmethod
    def rows(run: ResultTable, title: str) -> Table:
        """A result as a console table; each cell as it reads on every surface (`core.answer.values`)."""
        numeric = [is_numeric(kind) for kind in run.column_kinds()]
        table = Table(title=title, title_justify="left", min_width=len(title) + 4)  # the title on one line
        for column, right in zip(run.headers(), numeric, strict=False):
            table.add_column(column, justify="right" if right else "left")
        for row in run.cells()[:SHOWN_ROWS]:
            table.add_row(*row)
        more = len(run.rows) - SHOWN_ROWS
        if more > 0 or run.truncated:
            table.caption = f"{len(run.rows)} rows fetched" + (", more exist (truncated)" if run.truncated else "")
        return table

    def candidates(self, searched: str, candidates: list[dict[str, Any]], denied: list[str]) -> None:
        """What search found for a question, shown when no model is configured to answer it."""
        table = Table("#", "database", "table", "role", "copy of", "matched by", title=searched, title_justify="left")
        for rank, c in enumerate(candidates, start=1):
            table.add_row(
                str(rank), c["database"], c["table"], c["role"], c["copy_of"] or "", ", ".join(c["matched_by"])
            )
        self.console.print(table, soft_wrap=False)
        if denied:
            self.console.print("Also relevant but not permitted: " + ", ".join(denied), highlight=False)
