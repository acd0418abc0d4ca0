"""Chart renderer benchmark: vl-convert (a Vega-Lite spec to PNG, Vega running in an embedded JavaScript engine, no
browser) against matplotlib (the Agg backend), for the charts an answer carries (`workers.charts`).

Two charts, each drawn the same size by both (about 1,250 by 700 px): a line of 60 months of counts and 20 bars of
amounts by city. vl-convert draws the spec `workers.charts` ships (`workers.charts.render.png`); matplotlib draws
the same points with the same titles, axis titles and number formats. Each renderer runs in a fresh process, so the
import of the library and the first render (vl-convert starts its JavaScript engine, matplotlib loads its fonts)
are reported apart from the steady renders: p50/p95 over `--renders` renders of each chart after three warm-ups.
The install cost is the wheels `pip download --no-deps` fetches for the renderer and for each dependency it adds
that the project does not already need, and the size they take installed. The target: p95 at most 300 ms for the
60-point chart.

Run:  python -m bench.chart_render [--renders 40] [--images DIR] [--no-download]
      (writes bench/results/chart_render.json and .md; --images keeps the PNGs to look at)
"""

from __future__ import annotations

import argparse
import importlib
import json
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.chart_render_parts import (
    CANDIDATES,
    bar_table,
    install_cost,
    line_table,
    matplotlib_drawer,
)
from bench.harness import Timer, current_run, md_table, p50_p95, write_results
from core.answer.model import ResultTable
from workers.charts.shape import Shape, shape_of
from workers.charts.spec import vega_lite

RENDERS = 40
WARM_UPS = 3
TARGET_MS = 300.0
NAME = "chart_render"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--renders", type=int, default=RENDERS, help="timed renders of each chart")
    parser.add_argument("--images", type=Path, help="a folder to keep the PNGs in, to look at")
    parser.add_argument("--no-download", action="store_true", help="skip the wheel sizes (no pip download)")
    parser.add_argument("--child", choices=sorted(CANDIDATES), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(_measure(args.child, args.renders, args.images)))
        return
    current_run()
    measured = {name: _in_fresh_process(name, args.renders, args.images) for name in CANDIDATES}
    costs = {name: install_cost(name, download=not args.no_download) for name in CANDIDATES}
    data = {"target_p95_ms": TARGET_MS, "renders": args.renders, "renderers": measured, "install": costs}
    write_results(NAME, data, _markdown(measured, costs, args.renders))
    print((Path("bench/results") / f"{NAME}.md").read_text(encoding="utf-8"))


def _in_fresh_process(name: str, renders: int, images: Path | None) -> dict[str, Any]:
    command = [sys.executable, "-m", "bench.chart_render", "--child", name, "--renders", str(renders)]
    if images is not None:
        command += ["--images", str(images.resolve())]
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=1800)
    if done.returncode != 0:
        return {"error": (done.stderr or done.stdout).strip().splitlines()[-1:]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _measure(name: str, renders: int, images: Path | None) -> dict[str, Any]:
    """In this fresh process: import the renderer, then time the first and the steady renders of both charts."""
    with Timer() as imported:
        try:
            draw = _drawer(name)
        except ImportError as exc:
            return {"error": f"not installed: {exc}"}
    found: dict[str, Any] = {"version": CANDIDATES[name].version(), "import_ms": round(imported.seconds * 1000, 1)}
    for chart, table in (("line_60", line_table()), ("bar_20", bar_table())):
        with Timer() as first:
            image = draw(table)
        for _ in range(WARM_UPS):
            draw(table)
        times = []
        for _ in range(renders):
            with Timer() as one:
                draw(table)
            times.append(one.seconds * 1000)
        found[chart] = {"first_ms": round(first.seconds * 1000, 1), **p50_p95(times), **_png_facts(image)}
        if images is not None:
            images.mkdir(parents=True, exist_ok=True)
            (images / f"{name}_{chart}.png").write_bytes(image)
    found["max_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return found


def _drawer(name: str) -> Callable[[Any], bytes]:
    """A function drawing a result table to PNG with renderer `name`; importing the renderer is what is timed."""
    if name == "vl-convert":
        render: Any = importlib.import_module("workers.charts.render")  # workers.charts.shape and .spec are in already
        return lambda table: bytes(render.png(vega_lite(_shape(table), "Chart")))
    return matplotlib_drawer()


def _shape(table: ResultTable) -> Shape:
    shape = shape_of(table)
    assert shape is not None, "the benchmark's tables are a series and a breakdown"
    return shape


def _png_facts(image: bytes) -> dict[str, Any]:
    width, height = int.from_bytes(image[16:20], "big"), int.from_bytes(image[20:24], "big")
    return {"png_px": f"{width}x{height}", "png_kib": round(len(image) / 1024, 1)}


def _markdown(measured: dict[str, Any], costs: dict[str, Any], renders: int) -> str:
    lines = [
        "# Chart renderers",
        "",
        "vl-convert (Vega-Lite spec → PNG, no browser) against matplotlib (Agg), each in a fresh process: the import,",
        f"the first render, then p50/p95 of {renders} renders after {WARM_UPS} warm-ups (`bench/chart_render.py`).",
        f"Target: p95 at most {TARGET_MS:.0f} ms for the 60-point line.",
        "",
    ]
    rows = []
    for name, found in measured.items():
        if "error" in found:
            rows.append([name, f"error: {found['error']}", "", "", "", "", "", ""])
            continue
        for chart in ("line_60", "bar_20"):
            one = found[chart]
            rows.append(
                [
                    f"{name} {found['version']}",
                    chart,
                    found["import_ms"],
                    one["first_ms"],
                    one["p50"],
                    one["p95"],
                    f"{one['png_px']}, {one['png_kib']} KiB",
                    found["max_rss_mib"],
                ]
            )
    header = ["renderer", "chart", "import ms", "first ms", "p50 ms", "p95 ms", "PNG", "max RSS MiB"]
    lines += md_table(header, rows)
    lines += [
        "",
        "Install cost (wheels for linux x86_64, CPython 3.11; dependencies the project already needs left out):",
        "",
    ]
    install_rows = [
        [name, ", ".join(cost["adds"]), cost.get("wheel_mib", "not downloaded"), cost["installed_mib"]]
        for name, cost in costs.items()
    ]
    lines += md_table(["renderer", "packages added", "wheels MiB", "installed MiB"], install_rows)
    lines += ["", _verdict(measured)]
    return "\n".join(lines)


def _verdict(measured: dict[str, Any]) -> str:
    line = measured.get("vl-convert", {}).get("line_60", {})
    if "p95" not in line:
        return "vl-convert could not be measured."
    meets = line["p95"] <= TARGET_MS
    return (
        f"vl-convert's 60-point p95 is {line['p95']} ms: it {'meets' if meets else 'misses'} the {TARGET_MS:.0f} ms "
        f"target{', so it renders the charts (its spec also goes to other clients)' if meets else ''}."
    )


if __name__ == "__main__":
    main()
