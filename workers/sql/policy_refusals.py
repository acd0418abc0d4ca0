"""The refusals of the row-filter and column-mask rewrite (`workers.sql.row_filters`): its two errors, and the
messages it refuses a view or a misconfigured filter with. Every message is safe to show the user."""

from __future__ import annotations

from catalog.sql_tables import TableName


class PolicyRefused(Exception):
    """The query cannot be run with the user's row filters and masks; `str(exc)` is safe to show."""


class PolicyDenied(PolicyRefused):
    """The query asks for what the user's masks keep from them (it computes with a masked column)."""


def view_refused(name: TableName) -> str:
    """The refusal of a view that reads filtered or masked data and cannot be read through its definition."""
    return (
        f"refused: view {name.written} reads data that is filtered or masked for you and cannot be read with "
        "your filters; query the tables it reads instead"
    )


def config_problem(table: str) -> str:
    """The refusal of a query on `table` whose row filter cannot be applied as configured (the log says why)."""
    return (
        f"refused: the row filter for table {table} cannot be applied (a configuration problem); "
        "tell the user to ask the operator to check tablescout.yaml"
    )
