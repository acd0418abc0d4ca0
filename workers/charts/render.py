"""Rendering a chart to PNG in the worker process: `png(spec)` draws a Vega-Lite spec with vl-convert (Vega and
Vega-Lite run in an embedded JavaScript engine, no browser; bench/results/chart_render.md compares it with
matplotlib), and `chart_for(table, title, directory, name)` gives the `Chart` of a result, its image written to
`directory/name.png`.

`chart_for` never raises: a result that makes no chart gives None; a spec or an image that could not be made is
logged and gives None or a Chart without an image, so an answer never fails for its picture. The first render in a
process starts the JavaScript engine (0.5 to 0.7 s on 2 cores, and about 75 MB more memory, 135 MB once warm);
later ones take 50 to 90 ms. The bot server never renders.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import vl_convert

from core.answer.model import Chart, ChartType, ResultTable
from workers.charts.labels import alt_text
from workers.charts.shape import shape_of
from workers.charts.spec import VEGA_LITE_MAJOR, vega_lite

log = logging.getLogger(__name__)

#: Pixels per spec unit: a 600 by 300 chart becomes a PNG about 1,250 by 700 px, sharp on high-density screens.
SCALE = 2.0
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,120}$")


def png(spec: dict[str, Any]) -> bytes:
    """The PNG image of a Vega-Lite spec whose data is inlined (no URL may be fetched while drawing), drawn by the
    Vega-Lite version its `$schema` names."""
    return vl_convert.vegalite_to_png(spec, vl_version=vega_lite_version(), scale=SCALE, allowed_base_urls=[])


@functools.cache
def vega_lite_version() -> str:
    """The newest Vega-Lite of the major version the specs name that vl-convert bundles (it defaults to its newest
    of all, which a later release may make a major version the specs were not written for)."""
    bundled = [v for v in vl_convert.get_vegalite_versions() if v.split(".")[0] == str(VEGA_LITE_MAJOR)]
    if not bundled:
        raise ValueError(f"vl-convert bundles no Vega-Lite {VEGA_LITE_MAJOR}")
    return max(bundled, key=lambda v: tuple(int(p) for p in v.split(".") if p.isdigit()))


def chart_for(
    table: ResultTable, title: str, directory: Path, name: str, chart_type: ChartType | None = None
) -> Chart | None:
    """The chart of `table` under `title`, its PNG written to `directory/name.png` (`name`: letters, digits, `.`,
    `_`, `-`), or None when the result is no series or breakdown. `chart_type` draws it as that type (a user asked
    for bars) instead of its own (line for time, bars for categories). A failure to draw or write the image is
    logged and gives the Chart with `image` None; nothing is raised."""
    try:
        chart = _unrendered(table, title, chart_type)
    except Exception:  # a bug in shaping must not cost the answer
        log.exception("no chart for a result of %s columns and %s rows", len(table.columns), len(table.rows))
        return None
    if chart is None:
        return None
    try:
        path = _write(_target(directory, name), _timed_png(chart.spec, name))
        prune(directory)
    except Exception as exc:  # vl-convert raises ValueError for a spec it cannot draw; OSError for the file
        log.warning("chart %s could not be rendered: %s", name, exc, exc_info=True)
        return chart
    return chart.model_copy(update={"image": str(path)})


def _unrendered(table: ResultTable, title: str, chart_type: ChartType | None) -> Chart | None:
    shape = shape_of(table)
    if shape is None:
        return None
    if chart_type is not None:
        shape = replace(shape, type=chart_type)
    return Chart(
        type=shape.type,
        title=title,
        x=shape.x,
        y=[m.name for m in shape.measures],
        spec=vega_lite(shape, title),
        alt=alt_text(shape),
    )


def _timed_png(spec: dict[str, Any], name: str) -> bytes:
    started = time.perf_counter()
    image = png(spec)
    log.debug("chart %s rendered in %.0f ms, %d bytes", name, (time.perf_counter() - started) * 1000, len(image))
    return image


def _target(directory: Path, name: str) -> Path:
    """Where the image of chart `name` goes, checked before anything is drawn."""
    if not _NAME.match(name) or name.endswith("."):
        raise ValueError(f"not a file name for a chart: {name!r}")
    return directory / f"{name}.png"


def _write(target: Path, image: bytes) -> Path:
    """Write the image whole or not at all (a reader never sees half a file)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(image)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


#: Chart images older than this are removed: the chat platform holds its own copy once the answer is delivered.
KEEP_DAYS = 30
#: How often one process looks for old images.
PRUNE_EVERY_S = 3600.0
_pruned_at: dict[Path, float] = {}


def prune(directory: Path, *, now: float | None = None, keep_days: float = KEEP_DAYS) -> int:
    """Remove chart images (and temporary files a crash left) in `directory` older than `keep_days`, at most once
    per `PRUNE_EVERY_S` per process; how many were removed. A file that cannot be removed is left for next time."""
    current = time.time() if now is None else now
    if current - _pruned_at.get(directory, float("-inf")) < PRUNE_EVERY_S:
        return 0
    _pruned_at[directory] = current
    removed = 0
    for path in directory.glob("*.png"):
        removed += _remove_if_older(path, current - keep_days * 86400)
    for path in directory.glob(".*.tmp"):
        removed += _remove_if_older(path, current - 86400)
    if removed:
        log.info("removed %d chart images older than %g days from %s", removed, keep_days, directory)
    return removed


def _remove_if_older(path: Path, cutoff: float) -> int:
    try:
        if path.stat().st_mtime >= cutoff:
            return 0
        path.unlink()
    except OSError:
        return 0
    return 1
