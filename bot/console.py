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
from rich.panel import Panel
from rich.status import Status
from rich.syntax import Syntax
from rich.table import Table

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

    def answer(self, result: dict[str, Any]) -> None:
        status = result.get("status", "")
        style = {"answered": "green", "partial": "yellow"}.get(status, "red")
        panel = Panel(result.get("answer") or "", title=f"answer ({status})", border_style=style)
        self.console.print(panel, soft_wrap=False)
        for run in result.get("sql", []):
            title = f"SQL on {run['database']}" + (" (failed)" if run.get("error") else "")
            sql = Syntax(run["sql"], "sql", word_wrap=True)
            self.console.print(sql, style="dim" if run.get("error") else "", soft_wrap=False)
            if run.get("error"):
                self.console.print(f"[red]{title}: {run['error']}[/]", highlight=False)
                continue
            self.console.print(self._rows(run, title), soft_wrap=False)
        if result.get("tables_used"):
            self.console.print("Tables used: " + ", ".join(result["tables_used"]), highlight=False)
        if result.get("notes_saved"):
            self.console.print("Notes saved on: " + ", ".join(result["notes_saved"]), highlight=False)
        rounds = result.get("rounds")
        if rounds is not None:
            self.note(f"{rounds} round(s)")

    def _rows(self, run: dict[str, Any], title: str) -> Table:
        table = Table(*[str(c) for c in run.get("columns", [])], title=title, title_justify="left")
        rows = run.get("rows", [])
        for row in rows[:SHOWN_ROWS]:
            table.add_row(*["" if v is None else str(v) for v in row])
        more = len(rows) - SHOWN_ROWS
        if more > 0 or run.get("truncated"):
            table.caption = f"{len(rows)} rows fetched" + (", more exist (truncated)" if run.get("truncated") else "")
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
