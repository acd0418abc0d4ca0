"""Block Kit rendering of status and answers: content, alignment, escaping and Slack's limits; CSV exports."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.slack.blocks import (
    FEEDBACK_ACTION,
    MAX_BLOCKS,
    answer_blocks,
    answer_message,
    result_table,
    status_blocks,
    status_message,
)
from bot.slack.mrkdwn import SECTION_LIMIT, display_width, mrkdwn
from bot.slack.results import NATIVE_ROWS, needs_file, result_files
from core.answer.model import Answer, ResultTable
from tests.fakes.slack_server import block_problems
from workers.turns.answers import copy_warnings


def run(sql: str = "SELECT COUNT(*) AS n FROM ORD_MST", **values: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "database": "erp",
        "sql": sql,
        "columns": ["n"],
        "rows": [[42]],
        "truncated": False,
        "error": None,
    }
    return base | values


def payload(**values: Any) -> Answer:
    base: dict[str, Any] = {
        "status": "answered",
        "answer": "42 orders shipped to Busan last month.",
        "rounds": 3,
        "tables_used": ["erp.ORD_MST"],
        "sql": [run()],
        "notes_saved": [],
    }
    return Answer.from_stored(base | values)


def texts(blocks: list[dict[str, Any]]) -> list[str]:
    out = []
    for block in blocks:
        if "text" in block:
            out.append(block["text"]["text"])
        out += [e["text"] for e in block.get("elements", []) if "text" in e]
    return out


def all_text(blocks: list[dict[str, Any]]) -> str:
    return "\n".join(texts(blocks))


def code_blocks(blocks: list[dict[str, Any]]) -> list[str]:
    return re.findall(r"```(.*?)```", all_text(blocks), flags=re.DOTALL)


def tables(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [b for b in blocks if b["type"] == "table"]


def table_cells(table: dict[str, Any]) -> list[list[str]]:
    return [[c["text"] for c in row] for row in table["rows"]]


def content(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The answer's blocks without the feedback buttons that end every answer."""
    assert blocks[-1]["type"] == "context_actions"
    return blocks[:-1]


def test_answer_has_text_sql_table_and_tables_used() -> None:
    message = answer_message(payload())
    blocks = content(message.blocks)
    assert blocks[0] == {
        "type": "section",
        "text": {"type": "mrkdwn", "text": "42 orders shipped to Busan last month."},
    }
    assert "SELECT COUNT(*) AS n FROM ORD_MST" in code_blocks(blocks)
    [table] = tables(blocks)  # the result as a native Slack table, the number column right-aligned
    assert table == {
        "type": "table",
        "column_settings": [{"align": "right", "is_wrapped": True}],
        "rows": [[{"type": "raw_text", "text": "n"}], [{"type": "raw_text", "text": "42"}]],
    }
    assert "SQL on *erp*:" in all_text(blocks)
    assert blocks[-1] == {"type": "context", "elements": [{"type": "mrkdwn", "text": "Tables used: erp.ORD_MST"}]}
    assert "1 row." in all_text(blocks)
    assert message.text == "42 orders shipped to Busan last month."
    assert block_problems(blocks) == []


def test_text_from_users_and_databases_is_escaped() -> None:
    blocks = answer_blocks(
        payload(answer="Ask <@U123> & <!channel>", sql=[run("SELECT a FROM t WHERE a < 3 AND b > 1", rows=[["<b>"]])])
    )
    text = all_text(blocks)
    assert "Ask &lt;@U123&gt; &amp; &lt;!channel&gt;" in text
    assert "WHERE a &lt; 3 AND b &gt; 1" in text
    assert table_cells(tables(blocks)[0])[1] == ["<b>"]  # raw_text cells are never read as mrkdwn
    assert "<@U123>" not in text
    assert "<!channel>" not in text


def test_markdown_answer_becomes_mrkdwn() -> None:
    assert mrkdwn("## Orders\n**42** orders, see [the report](https://example.com/r?a=1&b=2)") == (
        "*Orders*\n*42* orders, see <https://example.com/r?a=1&amp;b=2|the report>"
    )


def test_result_table_is_aligned_and_limited_to_ten_rows_and_six_columns() -> None:
    columns = ["city", "orders", "c3", "c4", "c5", "c6", "c7", "c8"]
    rows = [[f"city{i}", i * 100, None, True, 1.5, "x", "hidden", "hidden"] for i in range(25)]
    table = result_table(ResultTable(columns=columns, rows=rows))
    lines = table.split("\n")
    assert len(lines) == 2 + 10
    assert "hidden" not in table
    assert "c7" not in table
    assert lines[0].split() == ["city", "orders", "c3", "c4", "c5", "c6"]
    assert lines[2].split() == ["city0", "0", "\u2014", "yes", "1.5", "x"]  # NULL is an em dash, as everywhere
    orders_end = lines[0].index("orders") + len("orders")
    assert all(line[:orders_end].endswith(str(i * 100)) for i, line in enumerate(lines[2:]))  # numbers right

    earlier = run(columns=columns, rows=rows)  # only the latest result gets the message's one native table
    blocks = answer_blocks(payload(sql=[earlier, run()]))
    note = all_text(blocks)
    assert "Showing 10 of 25 rows and 6 of 8 columns." in note
    assert "attached as a CSV file" in note
    assert len(tables(blocks)) == 1
    assert block_problems(blocks) == []


def test_native_table_right_aligns_and_formats_numbers_and_keeps_ids_and_years_plain() -> None:
    columns = ["city", "ORDER_ID", "year", "amount", "share", "note"]
    rows = [["Busan", 10001, 2024, 1234567, 0.25, None], ["Seoul", 10002, 2023, -5000, 1234.5, ""]]
    [table] = tables(answer_blocks(payload(sql=[run(columns=columns, rows=rows)])))
    assert table_cells(table) == [
        columns,
        ["Busan", "10001", "2024", "1,234,567", "0.25", "—"],
        ["Seoul", "10002", "2023", "-5,000", "1,234.5", "—"],
    ]
    aligns = [s["align"] for s in table["column_settings"]]
    assert aligns == ["left", "right", "right", "right", "right", "left"]


def test_native_table_shows_up_to_its_limits_and_a_larger_result_gets_a_csv() -> None:
    columns = [f"c{i}" for i in range(25)]
    fits = run(columns=columns[:20], rows=[list(range(20)) for _ in range(NATIVE_ROWS)])
    blocks = answer_blocks(payload(sql=[fits]))
    [table] = tables(blocks)
    assert len(table["rows"]) == NATIVE_ROWS + 1
    assert len(table["rows"][0]) == 20
    assert block_problems(blocks) == []
    assert result_files(payload(sql=[fits])) == []  # shown whole: no file
    too_big = run(columns=columns, rows=[list(range(25)) for _ in range(NATIVE_ROWS + 5)])
    blocks = answer_blocks(payload(sql=[too_big]))
    [table] = tables(blocks)
    assert len(table["rows"]) == NATIVE_ROWS + 1
    assert len(table["rows"][0]) == 20
    assert f"Showing {NATIVE_ROWS} of {NATIVE_ROWS + 5} rows and 20 of 25 columns." in all_text(blocks)
    assert [f.filename for f in result_files(payload(sql=[too_big]))] == ["erp-result-1.csv"]
    assert block_problems(blocks) == []


def test_every_answer_that_ran_sql_ends_with_feedback_buttons() -> None:
    for answer in (payload(), payload(sql=[run(error="boom")])):
        block = answer_blocks(answer)[-1]
        assert block["type"] == "context_actions"
        [buttons] = block["elements"]
        assert buttons["type"] == "feedback_buttons"
        assert buttons["action_id"] == FEEDBACK_ACTION
        assert (buttons["positive_button"]["value"], buttons["negative_button"]["value"]) == ("good", "bad")
    assert answer_blocks(payload(), feedback=False)[-1]["type"] == "context"
    refusal = payload(answer="You have no role that may query a database.", sql=[], tables_used=[])
    assert all(b["type"] != "context_actions" for b in answer_blocks(refusal))  # nothing to judge: no buttons


def test_wide_characters_keep_columns_aligned() -> None:
    table = result_table(ResultTable(columns=["도시", "orders"], rows=[["부산", 12], ["Seoul", 7]]))
    lines = table.split("\n")
    assert {display_width(line) for line in lines} == {display_width(lines[0])}
    assert lines[2] == "부산       12"


def test_long_cells_are_cut() -> None:
    table = result_table(ResultTable(columns=["comment"], rows=[["x" * 200]]))
    assert "x" * 23 + "…" in table
    assert "x" * 25 not in table


def test_long_answer_is_split_into_sections_with_code_fences_balanced() -> None:
    code = "\n".join(f"line {i} " + "y" * 60 for i in range(80))
    answer = "Here is the detail:\n" + "word " * 500 + "\n```\n" + code + "\n```\nDone."
    blocks = answer_blocks(payload(answer=answer, sql=[]))
    sections = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    assert len(sections) >= 3
    assert all(len(s) <= SECTION_LIMIT for s in sections)
    assert all(s.count("```") % 2 == 0 for s in sections)
    assert sections[-1].endswith("Done.")
    assert block_problems(blocks) == []


def test_very_long_answer_is_shortened_with_a_note() -> None:
    answer = "\n".join("z" * 100 for _ in range(1000))
    blocks = answer_blocks(payload(answer=answer, sql=[]))
    assert "(answer shortened)" in all_text(blocks)
    assert len(blocks) <= MAX_BLOCKS
    assert block_problems(blocks) == []
    assert len(answer_message(payload(answer=answer)).text) <= 3000


def test_long_sql_is_cut_with_a_note() -> None:
    sql = "SELECT " + ", ".join(f"column_{i} < {i}" for i in range(800)) + " FROM ORD_MST"
    blocks = answer_blocks(payload(sql=[run(sql)]))
    assert block_problems(blocks) == []
    sql_text = next(t for t in texts(blocks) if t.startswith("SQL on"))
    assert re.search(r"… \(SQL cut here, \d+ more characters\)```$", sql_text)
    assert "&l…" not in sql_text
    assert not re.search(r"&[a-z]*\n", sql_text)


def test_many_sql_statements_stay_within_fifty_blocks_and_keep_the_latest_success() -> None:
    runs = [run(f"SELECT {i} FROM bad", error="no such column", rows=[], columns=[]) for i in range(30)]
    runs += [run(f"SELECT {i} AS n FROM ORD_MST", rows=[[i]]) for i in range(30)]
    blocks = answer_blocks(payload(sql=runs))
    assert len(blocks) <= MAX_BLOCKS
    text = all_text(blocks)
    assert "SELECT 29 AS n FROM ORD_MST" in text
    assert re.search(r"\d+ more SQL statements not shown here\.", text)
    assert blocks[-2]["elements"][0]["text"] == "Tables used: erp.ORD_MST"
    assert block_problems(blocks) == []


def test_failed_sql_shows_its_error() -> None:
    blocks = answer_blocks(payload(sql=[run("SELECT nope FROM ORD_MST", error="Unknown column 'nope'")]))
    text = all_text(blocks)
    assert "SQL on *erp* (failed):" in text
    assert "Error: Unknown column 'nope'" in text
    assert "1 row." not in text


def test_truncated_result_says_more_rows_exist() -> None:
    blocks = answer_blocks(payload(sql=[run(rows=[[1], [2]], truncated=True)]))
    text = all_text(blocks)
    assert "The result was truncated: more rows exist than the 2 fetched." in text
    assert "attached as a CSV file" in text


def test_empty_result_says_no_rows() -> None:
    assert "No rows." in all_text(answer_blocks(payload(sql=[run(rows=[])])))


def test_copy_used_on_purpose_is_noted() -> None:
    copies = ["erp.ORD_MST_BAK"]
    answer = payload(tables_used=copies, copies_used=copies, warnings=copy_warnings(copies))
    blocks = content(answer_blocks(answer))
    assert blocks[-1]["elements"] == [
        {"type": "mrkdwn", "text": "Tables used: erp.ORD_MST_BAK"},
        {"type": "mrkdwn", "text": ":warning: erp.ORD_MST_BAK is a copy of a live table, used on purpose."},
    ]


def test_note_confirmation_names_the_table() -> None:
    note = payload(
        answer="Saved: ORD_MST_BAK is a copy nobody uses.", sql=[], tables_used=[], notes_saved=["erp.ORD_MST"]
    )
    message = answer_message(note)
    assert all(b["type"] != "context_actions" for b in message.blocks)  # a confirmation, not an answer to judge
    assert texts(message.blocks) == [
        "Saved: ORD_MST_BAK is a copy nobody uses.",
        ":memo: Note saved on erp.ORD_MST.",
    ]
    assert code_blocks(message.blocks) == []
    empty = answer_message(note.model_copy(update={"text": ""}))
    assert empty.text == "Note saved on erp.ORD_MST."


def test_status_message() -> None:
    assert status_blocks("Running SQL on erp…") == [
        {"type": "context", "elements": [{"type": "mrkdwn", "text": ":hourglass_flowing_sand: Running SQL on erp…"}]}
    ]
    assert status_message("Opening <ORD_MST>…").text == "Opening &lt;ORD_MST&gt;…"


def test_csv_files_only_for_results_the_table_cannot_show() -> None:
    small = run()
    long = run(columns=["id", "city"], rows=[[i, f"c{i}"] for i in range(11)])
    wide = run(columns=[f"c{i}" for i in range(7)], rows=[list(range(7))])
    truncated = run(rows=[[1]], truncated=True)
    failed = run(error="boom", rows=[[i] for i in range(50)], truncated=True)
    shapes = [ResultTable.model_validate(r) for r in (small, long, wide, truncated, failed)]
    assert [needs_file(r) for r in shapes] == [False, True, True, True, False]
    files = result_files(payload(sql=[small, long, failed, truncated]))
    assert [f.filename for f in files] == ["erp-result-2.csv", "erp-result-4.csv"]
    assert files[0].title == "Result of SQL 2 on erp: 11 rows"
    assert files[1].title == "Result of SQL 4 on erp: 1 row (more rows exist; only these were fetched)"
    parsed = list(csv.reader(io.StringIO(files[0].content.decode("utf-8-sig"))))
    assert parsed[0] == ["id", "city"]
    assert parsed[1:] == [[str(i), f"c{i}"] for i in range(11)]


cells = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=80), st.just("<&>" * 30)
)


@st.composite
def sql_runs(draw: st.DrawFn) -> dict[str, Any]:
    width = draw(st.integers(0, 9))
    return {
        "database": draw(st.text(min_size=1, max_size=20)),
        "sql": draw(st.one_of(st.text(max_size=200), st.text(alphabet="<>&a ;", min_size=2990, max_size=4000))),
        "columns": [draw(st.text(max_size=30)) for _ in range(width)],
        "rows": draw(st.lists(st.lists(cells, min_size=width, max_size=width), max_size=14)),
        "truncated": draw(st.booleans()),
        "error": draw(st.one_of(st.none(), st.text(min_size=1, max_size=300))),
    }


@settings(max_examples=60, deadline=None)
@given(
    answer=st.one_of(st.text(max_size=500), st.text(alphabet="ab\n`*<&", min_size=2000, max_size=20000)),
    runs=st.lists(sql_runs(), max_size=25),
    tables=st.lists(st.text(min_size=1, max_size=300), max_size=30),
    notes=st.lists(st.text(min_size=1, max_size=40), max_size=3),
)
def test_any_answer_renders_within_slack_limits(
    answer: str, runs: list[dict[str, Any]], tables: list[str], notes: list[str]
) -> None:
    message = answer_message(payload(answer=answer, sql=runs, tables_used=tables, notes_saved=notes))
    assert block_problems(message.blocks) == []
    assert 0 < len(message.text) <= 3000


def test_the_notification_text_is_plain_while_the_blocks_keep_the_formatting() -> None:
    message = answer_message(payload(answer="## Orders\nThere were **4750** orders in *2024* (see `ORD_MST`)."))
    assert message.text == "Orders\nThere were 4750 orders in 2024 (see ORD_MST)."
    assert "*4750*" in texts(message.blocks)[0]  # Slack bold in the message itself
    escaped = answer_message(payload(answer="**<b>** & ORD_MST_BAK"))
    assert escaped.text == "&lt;b&gt; &amp; ORD_MST_BAK"
