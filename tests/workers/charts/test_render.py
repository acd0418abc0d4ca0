"""`chart_for`: the Chart of a result with its PNG written, None for a result that makes no chart, and a failure to
render logged and answered with a Chart without an image, never raised."""

from __future__ import annotations

import logging
import os
import struct
from pathlib import Path

import pytest

from core.answer.model import Answer, Chart
from tests.workers.charts.tables import cities, months_2024, table
from workers.charts import render
from workers.charts.render import chart_for

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's header chunk (IHDR, the first after the signature)."""
    assert data[:8] == PNG_SIGNATURE
    length, kind = struct.unpack(">I4s", data[8:16])
    assert (length, kind) == (13, b"IHDR")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _rendered(chart: Chart | None) -> tuple[Chart, bytes]:
    assert chart is not None
    assert chart.image is not None
    return chart, Path(chart.image).read_bytes()


def test_a_time_series_becomes_a_line_chart_with_its_png(tmp_path: Path) -> None:
    chart, image = _rendered(chart_for(months_2024(), "Orders per month in 2024", tmp_path, "turn-17"))
    assert (chart.type, chart.title, chart.x, chart.y) == ("line", "Orders per month in 2024", "month", ["orders"])
    assert chart.image == str(tmp_path / "turn-17.png")
    assert chart.spec["mark"]["type"] == "line"
    assert "June 2024" in chart.alt
    width, height = _png_size(image)
    assert width >= 400
    assert height >= 200
    assert [p.name for p in tmp_path.iterdir()] == ["turn-17.png"]  # no temporary file left behind


def test_a_breakdown_becomes_a_bar_chart_with_its_png(tmp_path: Path) -> None:
    chart, image = _rendered(chart_for(cities(), "Order amount by city", tmp_path / "charts", "turn-18"))
    assert (chart.type, chart.x, chart.y) == ("bar", "city", ["total_amount"])
    assert chart.alt.endswith("the highest is 12,345.50 for Seoul.")
    assert _png_size(image)[0] >= 400


def test_a_result_that_is_no_series_or_breakdown_gives_no_chart_and_no_file(tmp_path: Path) -> None:
    assert chart_for(table(["orders"], [[4750]]), "Orders", tmp_path, "turn-19") is None
    assert list(tmp_path.iterdir()) == []


def test_a_render_failure_is_logged_and_gives_a_chart_without_an_image(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(spec: object) -> bytes:
        raise ValueError("the JavaScript engine fell over")

    monkeypatch.setattr(render, "png", broken)
    with caplog.at_level(logging.WARNING, logger="workers.charts.render"):
        chart = chart_for(months_2024(), "Orders per month in 2024", tmp_path, "turn-20")
    assert chart is not None
    assert chart.image is None
    assert chart.spec["mark"]["type"] == "line"  # the spec still goes with the answer
    assert "June 2024" in chart.alt
    assert "the JavaScript engine fell over" in caplog.text
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["../escape", "a/b", "", ".hidden"])
def test_a_name_that_is_no_plain_file_name_is_refused_and_logged(
    tmp_path: Path, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="workers.charts.render"):
        chart = chart_for(months_2024(), "Orders", tmp_path / "charts", name)
    assert chart is not None
    assert chart.image is None
    assert "not a file name" in caplog.text
    assert not (tmp_path / "escape.png").exists()


def test_a_bug_in_shaping_is_logged_and_gives_no_chart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(table: object) -> None:
        raise KeyError("surprise")

    monkeypatch.setattr(render, "shape_of", broken)
    with caplog.at_level(logging.ERROR, logger="workers.charts.render"):
        assert chart_for(months_2024(), "Orders", tmp_path, "turn-21") is None
    assert "no chart" in caplog.text


def test_the_chart_travels_with_the_answer_and_reads_back(tmp_path: Path) -> None:
    chart = chart_for(cities(), "Order amount by city", tmp_path, "turn-22")
    answer = Answer(status="answered", text="Seoul ordered the most.", results=[cities()], chart=chart)
    back = Answer.from_stored(answer.to_json())
    assert back.chart == chart


def test_old_chart_images_are_pruned_and_new_ones_kept(tmp_path: Path) -> None:
    now = 2_000_000_000.0
    old, new, other = tmp_path / "turn-1.png", tmp_path / "turn-2.png", tmp_path / "notes.txt"
    crashed = tmp_path / ".turn-3.abc.tmp"
    for path in (old, new, other, crashed):
        path.write_bytes(b"x")
    os.utime(old, (now - 31 * 86400, now - 31 * 86400))
    os.utime(new, (now - 29 * 86400, now - 29 * 86400))
    os.utime(other, (now - 400 * 86400, now - 400 * 86400))
    os.utime(crashed, (now - 2 * 86400, now - 2 * 86400))
    assert render.prune(tmp_path, now=now) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "turn-2.png"]
    os.utime(new, (now - 40 * 86400, now - 40 * 86400))
    assert render.prune(tmp_path, now=now + 60) == 0  # looked an hour ago: not again yet
    assert render.prune(tmp_path, now=now + 3601) == 1
