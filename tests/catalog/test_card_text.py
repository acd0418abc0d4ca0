from __future__ import annotations

from typing import Any

from catalog.card_text import render_card


def wide_card(columns: int) -> dict[str, Any]:
    cols = []
    for i in range(columns):
        cols.append(
            {
                "name": f"ATTR_{i:03d}",
                "type": "VARCHAR(40)",
                "family": "text",
                "nullable": True,
                "key": "PK" if i == 0 else None,
                "comment": f"attribute number {i} of the product specification sheet",
                "stats": {"null_ratio": 0.25, "distinct": 1000 + i},
                "frequent": [[f"value-{i}-{j}", 0.05] for j in range(5)],
            }
        )
    if columns <= 300:
        return {
            "database": "plm",
            "schema": None,
            "table": "PRD_SPEC",
            "role": "live",
            "copy_of": None,
            "purpose": "p",
            "row_count": 10,
            "row_count_exact": True,
            "primary_key": ["ATTR_000"],
            "foreign_keys": [],
            "columns": cols,
            "watch": {},
            "joins": [],
        }
    cols[250]["codes"] = [
        {"code": "A", "meaning": "active", "share": 0.9},
        {"code": "X", "meaning": None, "share": 0.1},
    ]
    cols[250]["codes_source"] = "CODE_DTL group ATTR_STAT"
    cols[300]["watch"] = "free text written by people"
    return {
        "database": "plm",
        "schema": None,
        "table": "PRD_SPEC_WIDE",
        "role": "live",
        "copy_of": None,
        "purpose": "Product specification, one row per ATTR_000",
        "row_count": 12000,
        "row_count_exact": True,
        "primary_key": ["ATTR_000"],
        "foreign_keys": [],
        "columns": cols,
        "watch": {"ATTR_300": "free text written by people"},
        "joins": [],
    }


def test_small_card_is_complete() -> None:
    text = render_card(wide_card(5))
    assert "Details cut" not in text
    assert text.count("\n- ") == 5
    assert "attribute number 3" in text


def test_wide_card_keeps_every_name_type_and_key_and_lists_what_was_cut() -> None:
    card = wide_card(400)
    text = render_card(card, budget=20000)
    assert len(text) <= 20000
    lines = text.splitlines()
    column_lines = [line for line in lines if line.startswith("- ATTR_")]
    assert len(column_lines) == 400
    for i in range(400):
        assert f"- ATTR_{i:03d} VARCHAR(40)" in text
    assert "- ATTR_000 VARCHAR(40) PK" in text
    assert "codes: A=active, X=?" in text, "code columns keep their details first"
    assert "WATCH: free text" in text
    cut_line = next(line for line in lines if line.startswith("Details cut for"))
    cut = cut_line.split(": ", 1)[1].split(". Ask")[0].split(", ")
    assert 100 < len(cut) < 400
    assert "ATTR_250" not in cut
    assert "ATTR_399" in cut
    for name in cut:
        assert f"- {name} VARCHAR(40) |" not in text, "a cut column shows no details"


def test_budget_smaller_than_the_names_still_lists_every_column() -> None:
    text = render_card(wide_card(400), budget=2000)
    for i in range(400):
        assert f"- ATTR_{i:03d} VARCHAR(40)" in text
    assert "Details cut for 400 column(s)" in text or "Details cut for 399 column(s)" in text


def test_cut_columns_can_be_opened() -> None:
    card = wide_card(400)
    text = render_card(card, columns=["ATTR_399", "attr_398", "NOPE"])
    assert "Details of 2 requested column(s)" in text
    assert "attribute number 399" in text
    assert "attribute number 398" in text
    assert "No such column: nope" in text
    assert "attribute number 397" not in text
    # the other columns are still named, with their types, so SQL on them needs no second card
    assert "Other columns (398): ATTR_000 VARCHAR(40) PK, ATTR_001 VARCHAR(40)," in text
    assert "more (open the card without columns)" in text  # as many as the budget holds
    assert len(text) <= 6000
    small = render_card(wide_card(12), columns=["ATTR_003"])
    assert small.endswith("ATTR_010 VARCHAR(40), ATTR_011 VARCHAR(40)")


def test_copy_card_says_which_table_to_use() -> None:
    card = wide_card(3) | {
        "table": "PRD_SPEC_WIDE_BAK",
        "role": "backup",
        "copy_of": "PRD_SPEC_WIDE",
        "copy_evidence": {
            "name_pattern": "suffix BAK",
            "column_similarity": 1.0,
            "rows": {"copy": 100, "live": 12000},
            "key_containment": 1.0,
        },
    }
    text = render_card(card)
    assert "backup copy of PRD_SPEC_WIDE" in text
    assert "use PRD_SPEC_WIDE unless the user asks about this copy" in text
    assert "100 vs 12,000 rows" in text
