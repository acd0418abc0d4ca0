"""A view that reads filtered or masked tables, read through its own definition (SPEC §6, §7).

The engine would run a view's definition on the tables as they are, so a view behind which a row filter or column
mask applies is replaced by its definition, whose own table references the row-filter rewrite then treats like the
query's: `(WITH ts_v(<the view's columns>) AS (<definition>) SELECT * FROM ts_v) AS <alias>`. Definitions come from
the engine (`catalog.view_definitions`); a materialized view, or a definition that cannot be read or parsed, is
refused rather than read unfiltered.
"""

from __future__ import annotations

from sqlglot import exp

VIEW_ALIAS = "ts_v"


def inlined(definition: exp.Query, columns: list[str], alias: exp.TableAlias) -> exp.Subquery:
    """`(WITH ts_v(columns) AS (definition) SELECT * FROM ts_v) AS alias`."""
    cte = exp.CTE(
        this=definition,
        alias=exp.TableAlias(
            this=exp.to_identifier(VIEW_ALIAS), columns=[exp.to_identifier(c, quoted=True) for c in columns]
        ),
    )
    outer = exp.Select(expressions=[exp.Star()]).from_(exp.Table(this=exp.to_identifier(VIEW_ALIAS)))
    outer.set("with_", exp.With(expressions=[cte]))
    return exp.Subquery(this=outer, alias=alias)
