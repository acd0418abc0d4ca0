"""Charts of results: whether a result is a series over time or a breakdown by a category (`shape`), the Vega-Lite
spec that draws it (`spec`), what a person reads about it (`labels`: axis titles, alt text), and the PNG rendered in
the worker process (`render.chart_for`). Depends only on `core`."""
