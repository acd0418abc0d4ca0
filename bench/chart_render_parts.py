"""What the chart renderer benchmark (`bench.chart_render`) draws and weighs: the two result tables (a 60-month series
of counts, 20 cities' amounts), matplotlib's drawing of a chart equivalent to the Vega-Lite spec `workers.charts`
ships, and each renderer's install cost (the packages it adds to the project's, their wheels and installed size).

matplotlib is imported by name at run time: it is not a dependency of the project, only a candidate measured here.
"""

from __future__ import annotations

import datetime as dt
import importlib
import importlib.metadata as metadata
import io
import random
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from bench.harness import REPO
from core.answer.model import ResultTable
from core.answer.values import ValueKind
from workers.charts.labels import axis_title, humanise
from workers.charts.shape import Shape, shape_of

CITIES = (
    "Seoul Busan Incheon Daegu Daejeon Gwangju Suwon Ulsan Changwon Goyang Yongin Seongnam Bucheon Cheongju Ansan "
    "Jeonju Cheonan Namyangju Hwaseong Gimhae"
).split()
FIGURE_INCHES = (6.2, 3.5)
DPI = 200  # 1,240 by 700 px, the size of the vl-convert PNG at scale 2


@dataclass(frozen=True)
class Candidate:
    """A renderer: the distribution that brings it."""

    distribution: str

    def version(self) -> str:
        return metadata.version(self.distribution)


CANDIDATES = {"vl-convert": Candidate("vl-convert-python"), "matplotlib": Candidate("matplotlib")}


def line_table() -> ResultTable:
    """60 months of order counts, 2020-01 to 2024-12."""
    rng = random.Random(7)
    months = [dt.date(2020 + i // 12, i % 12 + 1, 1).isoformat() for i in range(60)]
    return ResultTable(
        columns=["month", "orders"],
        kinds=[ValueKind.DATE, ValueKind.COUNT],
        rows=[[m, 400 + i * 6 + rng.randint(-80, 80)] for i, m in enumerate(months)],
    )


def bar_table() -> ResultTable:
    """Total order amounts of 20 cities."""
    rng = random.Random(11)
    return ResultTable(
        columns=["city", "total_amount"],
        kinds=[ValueKind.TEXT, ValueKind.AMOUNT],
        rows=[[city, round(rng.uniform(50_000, 2_500_000), 2)] for city in CITIES],
    )


def matplotlib_drawer() -> Callable[[ResultTable], bytes]:
    """A function drawing a table's chart with matplotlib (Agg, no pyplot): importing matplotlib happens here."""
    matplotlib: Any = importlib.import_module("matplotlib")
    matplotlib.use("Agg")
    figure: Any = importlib.import_module("matplotlib.figure")
    agg: Any = importlib.import_module("matplotlib.backends.backend_agg")
    ticker: Any = importlib.import_module("matplotlib.ticker")
    dates: Any = importlib.import_module("matplotlib.dates")

    def draw(table: ResultTable) -> bytes:
        shape = shape_of(table)
        assert shape is not None
        drawn = figure.Figure(figsize=FIGURE_INCHES, dpi=DPI)
        agg.FigureCanvasAgg(drawn)
        axes = drawn.add_subplot()
        values = [p.values[0] for p in shape.points]
        if shape.type == "line":
            xs = [dt.date.fromisoformat(str(p.x)) for p in shape.points]
            axes.plot(xs, values, marker="o", markersize=3, linewidth=1.6, color="#4c78a8")
            axes.xaxis.set_major_formatter(dates.DateFormatter("%b %Y"))
        else:
            axes.bar([str(p.x) for p in shape.points], values, color="#4c78a8")
            axes.tick_params(axis="x", labelrotation=45)
            for label in axes.get_xticklabels():
                label.set_horizontalalignment("right")
        _label(axes, shape, ticker)
        drawn.tight_layout()
        buffer = io.BytesIO()
        drawn.savefig(buffer, format="png")
        return buffer.getvalue()

    return draw


def _label(axes: Any, shape: Shape, ticker: Any) -> None:
    measure = shape.measures[0]
    decimals = 2 if measure.kind is ValueKind.AMOUNT else 0
    axes.yaxis.set_major_formatter(ticker.StrMethodFormatter(f"{{x:,.{decimals}f}}"))
    axes.set_title("Chart", loc="left", fontweight="bold")
    axes.set_xlabel(humanise(shape.x), fontweight="bold")
    axes.set_ylabel(axis_title(measure.name, measure.kind), fontweight="bold")
    axes.grid(axis="y", color="#dddddd")
    axes.set_axisbelow(True)
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)


# ---- install cost -------------------------------------------------------------------------------------------------


def install_cost(name: str, *, download: bool) -> dict[str, Any]:
    """What renderer `name` adds to the project: the distributions (with the version installed), the size they take
    installed, and (with `download`) the size of their wheels for this platform."""
    candidate = CANDIDATES[name]
    others = {canonicalize_name(c.distribution) for c in CANDIDATES.values()}
    project = _closure(r for r in _project_requirements() if canonicalize_name(r.name) not in others)
    adds = sorted(_closure([Requirement(candidate.distribution)]) - project)
    found: dict[str, Any] = {
        "adds": [f"{d} {metadata.version(d)}" for d in adds],
        "installed_mib": round(sum(_installed_bytes(d) for d in adds) / 2**20, 1),
    }
    if download:
        found["wheel_mib"] = round(sum(_wheel_bytes(d) for d in adds) / 2**20, 1)
    return found


def _project_requirements() -> list[Requirement]:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return [Requirement(text) for text in pyproject["project"]["dependencies"]]


def _closure(requirements: Iterable[Requirement]) -> set[str]:
    """The installed distributions these requirements bring, their own requirements followed (markers evaluated for
    this interpreter, extras as asked)."""
    found: set[str] = set()
    pending = list(requirements)
    while pending:
        requirement = pending.pop()
        key = canonicalize_name(requirement.name)
        try:
            needed = metadata.requires(key) or []
        except metadata.PackageNotFoundError:
            continue
        if key in found and not requirement.extras:
            continue
        found.add(key)
        for text in needed:
            child = Requirement(text)
            extras = ["", *sorted(requirement.extras)]
            if child.marker is None or any(child.marker.evaluate({"extra": e}) for e in extras):
                pending.append(child)
    return found


def _installed_bytes(distribution: str) -> int:
    files = metadata.distribution(distribution).files or []
    total = 0
    for file in files:
        path = Path(str(file.locate()))
        if path.is_file():
            total += path.stat().st_size
    return total


def _wheel_bytes(distribution: str) -> int:
    with tempfile.TemporaryDirectory() as folder:
        wanted = f"{distribution}=={metadata.version(distribution)}"
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d", folder]
        subprocess.run([*command, wanted], check=True, capture_output=True, timeout=600)
        return sum(p.stat().st_size for p in Path(folder).iterdir())
