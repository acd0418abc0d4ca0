"""Markdown answers as plain text for notifications: markup goes, names and arithmetic stay."""

from __future__ import annotations

import pytest

from bot.plain_text import plain_text


@pytest.mark.parametrize(
    ("markdown", "plain"),
    [
        ("There were **4750** orders.", "There were 4750 orders."),
        ("__4750__ orders, ~~4749~~", "4750 orders, 4749"),
        ("# Orders\nIn *2024*: _4750_", "Orders\nIn 2024: 4750"),
        ("See [the report](https://wiki.example/r) and ![chart](https://x.example/c.png)", "See the report and chart"),
        ("> quoted\n* one\n+ two\n- three", "quoted\n- one\n- two\n- three"),
        ("```sql\nSELECT 1\n```\ndone", "SELECT 1\ndone"),
        ("Use `SELECT **` on `EMP_*`", "Use SELECT ** on EMP_*"),
        ("ORD_MST, EMP_* and snake_case_name; 5 * 3 = 15", "ORD_MST, EMP_* and snake_case_name; 5 * 3 = 15"),
        ("**ORD_MST** had ***7*** rows", "ORD_MST had 7 rows"),
        ("", ""),
    ],
)
def test_plain_text(markdown: str, plain: str) -> None:
    assert plain_text(markdown) == plain
