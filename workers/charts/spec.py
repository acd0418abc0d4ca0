"""The Vega-Lite v5 spec that draws a `Shape`: `vega_lite(shape, title)`.

The rows are inlined (`data.values`, one object per point in drawing order, keyed by the result's column names as
`fields` gives them), so the spec alone redraws the chart in any Vega-Lite client. A time series is a line with
points: ISO dates on a UTC time scale (a date means the same day wherever it is drawn), years as whole numbers never
grouped (`2024`), months and quarters in their calendar order. A breakdown is bars sorted by the first measure,
highest first. Axis titles say what each axis holds and its unit (`workers.charts.labels`); numbers read as
everywhere else: counts grouped (`4,750`), amounts with two decimals (`1,234.50`), other measures grouped and
rounded.

Two measures of one kind share an axis (folded into one `value` field, a colour each, a legend); of different kinds
(a count and an amount) each gets its own axis, left and right, titled in its line's colour.
"""

from __future__ import annotations

import json
import re
from typing import Any

from core.answer.values import ValueKind
from workers.charts.labels import axis_title, daily, humanise, monthly
from workers.charts.shape import Measure, Shape

VEGA_LITE_MAJOR = 5
SCHEMA = f"https://vega.github.io/schema/vega-lite/v{VEGA_LITE_MAJOR}.json"
WIDTH = 600
#: Room for one upright label (11 px text) on an axis of many categories, and from how many they stand upright.
STEP = 16
UPRIGHT_FROM = 30
HEIGHT = 300
COLOURS = ("#4c78a8", "#f58518")
#: How the chart looks wherever it is drawn: plain, readable at Slack's and Teams' preview sizes.
CONFIG: dict[str, Any] = {
    "font": "Liberation Sans, Arial, Helvetica, sans-serif",
    "background": "white",
    "padding": 12,
    "title": {"fontSize": 15, "anchor": "start", "offset": 12},
    "axis": {"labelFontSize": 11, "titleFontSize": 12, "titlePadding": 8, "labelLimit": 160},
    "legend": {"labelFontSize": 11, "titleFontSize": 11, "orient": "top"},
    "view": {"stroke": None},
}
_FOLDED = ("measure", "value")
_UNSAFE = re.compile(r"[.\[\]'\"\\]")


def vega_lite(shape: Shape, title: str) -> dict[str, Any]:
    """The spec drawing `shape` under `title`."""
    spec: dict[str, Any] = {
        "$schema": SCHEMA,
        "title": title,
        "width": width(shape),
        "height": HEIGHT,
        "data": {"values": records(shape)},
        "config": CONFIG,
    }
    measures = shape.measures
    if len(measures) == 1:
        return spec | {
            "mark": _mark(shape, 0),
            "encoding": {"x": x_encoding(shape), "y": y_encoding(shape, measures[0])},
        }
    if measures[0].kind == measures[1].kind:
        return spec | _folded(shape)
    return spec | _two_axes(shape)


def records(shape: Shape) -> list[dict[str, Any]]:
    """The points as Vega-Lite's inline data: `{x column: value, measure column: value, ...}` each."""
    keys = fields(shape)
    return [
        {keys[shape.x]: point.x} | {keys[m.name]: point.values[i] for i, m in enumerate(shape.measures)}
        for point in shape.points
    ]


def fields(shape: Shape) -> dict[str, str]:
    """Each column of `shape` → its field in the spec's data: the column's name, with the characters Vega-Lite reads
    as a path (dots, brackets, quotes, backslashes) replaced by `_` (its escapes are not honoured everywhere: a
    folded `sum(o\\.amount)` draws nothing), and a number added where two names would meet."""
    found: dict[str, str] = {}
    for column in [shape.x, *(m.name for m in shape.measures)]:
        key = _UNSAFE.sub("_", column) or "_"
        while key in found.values():
            key += "_"
        found[column] = key
    return found


def number_format(kind: ValueKind) -> str:
    """The d3 format of a measure's axis: counts grouped whole numbers, amounts two decimals, others rounded."""
    if kind is ValueKind.COUNT:
        return ",d"
    if kind is ValueKind.AMOUNT:
        return ",.2f"
    return ",.2~f"


def x_encoding(shape: Shape) -> dict[str, Any]:
    """The x channel: a UTC time scale, whole-number years, months or quarters in order, or categories sorted by
    the first measure, highest first."""
    base: dict[str, Any] = {"field": fields(shape)[shape.x], "title": humanise(shape.x)}
    if shape.axis == "temporal":
        return base | {"type": "temporal", "scale": {"type": "utc"}, "axis": _time_labels(shape)}
    if shape.axis == "year":
        years = {"format": "d", "tickMinStep": 1, "labelOverlap": True}
        return base | {"type": "quantitative", "scale": {"zero": False, "nice": False}, "axis": years}
    order = [point.x for point in shape.points]
    kind = "nominal" if shape.axis == "category" else "ordinal"
    return base | {"type": kind, "sort": order, "axis": {"labelAngle": _label_angle(order), "labelOverlap": False}}


def y_encoding(shape: Shape, measure: Measure, *, colour: str | None = None) -> dict[str, Any]:
    """The y channel of one measure of `shape`, with its title and number format (and its axis in `colour`, on a
    chart with two axes)."""
    axis: dict[str, Any] = {"format": number_format(measure.kind)}
    if measure.kind is ValueKind.COUNT:
        axis["tickMinStep"] = 1
    if colour:
        axis["titleColor"] = colour
    title = axis_title(measure.name, measure.kind)
    return {"field": fields(shape)[measure.name], "type": "quantitative", "title": title, "axis": axis}


def _mark(shape: Shape, index: int) -> dict[str, Any]:
    colour = COLOURS[index]
    if shape.type == "bar" and index == 0:
        return {"type": "bar", "color": colour}
    return {"type": "line", "point": {"color": colour}, "color": colour, "strokeWidth": 2}


def _folded(shape: Shape) -> dict[str, Any]:
    """Two measures of one kind on one axis: folded into `measure`/`value`, a colour and a legend entry each."""
    first, second = shape.measures
    keys = fields(shape)
    names = [keys[first.name], keys[second.name]]
    labels = {name: axis_title(m.name, m.kind) for name, m in zip(names, shape.measures, strict=True)}
    legend = " : ".join(f"datum.label === {json.dumps(n)} ? {json.dumps(t)}" for n, t in labels.items())
    y = y_encoding(shape, first) | {"field": _FOLDED[1], "title": " / ".join(labels.values())}
    colour = {
        "field": _FOLDED[0],
        "type": "nominal",
        "title": None,
        "sort": names,
        "scale": {"domain": names, "range": list(COLOURS)},
        "legend": {"labelExpr": f"{legend} : datum.label"},
    }
    encoding: dict[str, Any] = {"x": x_encoding(shape), "y": y, "color": colour}
    if shape.type == "bar":
        encoding["xOffset"] = {"field": _FOLDED[0], "sort": names}
        mark: dict[str, Any] = {"type": "bar"}
    else:
        mark = {"type": "line", "point": True, "strokeWidth": 2}
    return {"transform": [{"fold": names, "as": list(_FOLDED)}], "mark": mark, "encoding": encoding}


def _two_axes(shape: Shape) -> dict[str, Any]:
    """Two measures of different kinds: one layer each, with its own y axis titled in its colour."""
    layers = [
        {"mark": _mark(shape, i), "encoding": {"y": y_encoding(shape, m, colour=COLOURS[i])}}
        for i, m in enumerate(shape.measures)
    ]
    return {"encoding": {"x": x_encoding(shape)}, "layer": layers, "resolve": {"scale": {"y": "independent"}}}


def _time_labels(shape: Shape) -> dict[str, Any]:
    """Months read `Mar 2024`, days `2024-03-05`; times keep Vega's own labels. On a UTC scale Vega formats in UTC
    (a `formatType` of `utc` would drop the format altogether)."""
    axis: dict[str, Any] = {"labelOverlap": True}
    if monthly(shape):
        return axis | {"format": "%b %Y"}
    if daily(shape):
        return axis | {"format": "%Y-%m-%d"}
    return axis


def width(shape: Shape) -> int:
    """The plot's width: `WIDTH`, or wider where each of many bars or named points needs room for its label (every
    one is labelled: a bar without its name says nothing)."""
    if shape.axis in ("temporal", "year"):
        return WIDTH
    return max(WIDTH, STEP * len(shape.points))


def _label_angle(labels: list[str | int]) -> int:
    """Labels lie flat when a few short ones fit, slant when more, and stand upright when many."""
    longest = max((len(str(label)) for label in labels), default=0)
    if len(labels) * max(longest, 4) * 7 <= WIDTH:
        return 0
    return -45 if len(labels) <= UPRIGHT_FROM else -90
