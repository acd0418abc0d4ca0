"""The console surface in a narrow terminal: boxes wrap their text instead of cropping it, with the command line's
soft-wrapping console (tablescout/cli/context.py)."""

from __future__ import annotations

import io

from rich.console import Console

from bot.console import ConsoleView
from core.answer.model import Answer

WIDTH = 60
SQL = (
    "SELECT c.CUST_NM, SUM(o.TOT_AMT) AS total_amount_2024 FROM ORD_MST o JOIN CUST_MST c ON c.CUST_NO = o.CUST_NO "
    "WHERE o.ORD_DT >= '2024-01-01' GROUP BY c.CUST_NM ORDER BY total_amount_2024 DESC LIMIT 10"
)
ANSWER = "Busan Trading had the largest total in 2024, followed by Seoul Foods and Incheon Marine Supply."


def rendered(result: dict[str, object]) -> list[str]:
    answer = Answer.from_stored(result)
    out = io.StringIO()
    console = Console(file=out, width=WIDTH, soft_wrap=True, force_terminal=True, color_system=None)
    ConsoleView(console).answer(answer)
    return out.getvalue().splitlines()


def test_a_long_statement_and_answer_wrap_at_the_terminal_width() -> None:
    run = {"database": "erp", "sql": SQL, "columns": ["CUST_NM", "total"], "rows": [["Busan Trading", 912000]]}
    lines = rendered({"status": "answered", "answer": ANSWER, "sql": [run], "rounds": 4})
    assert all(len(line) <= WIDTH for line in lines), lines
    shown = " ".join(" ".join(line.strip(" │╭╮╰╯─").split()) for line in lines)
    assert SQL in shown  # every word of the statement, in order, none cut off
    assert ANSWER in shown
    assert "Busan Trading" in shown
