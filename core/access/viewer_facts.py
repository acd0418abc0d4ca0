"""What a table holds for one reader, counted through the same row filters and column masks as their SQL (SPEC §6).

A stored card is profiled from every row. For a reader whose row filter applies to a table, or a view over a
filtered or masked table, its counts and values are not theirs to know; `core.cards.card_view` shows them instead the
figures a reader's own query would give (`TableFacts`), counted by the workers' SQL path, or withholds them where
those cannot be had. `ViewerReads` is that counting, as the services that show cards and candidates receive it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:  # the store's models load SQLAlchemy: not for building the command line
    from core.store.models import SourceTable

#: "codes": the row count and the code lists (what a search candidate shows); "full": every figure a card shows.
FactsDetail = Literal["codes", "full"]


@dataclass(frozen=True)
class ColumnFacts:
    """One column over the rows the reader may read. None: not counted (not asked, or not in time)."""

    filled: int | None = None  # rows where the column is not NULL
    distinct: int | None = None
    low: str | None = None  # smallest and largest value, as the card writes values
    high: str | None = None
    #: The most frequent values with their share of the filled rows, most frequent first (a code column: every
    #: code up to the card's limit).
    frequent: tuple[tuple[str, float], ...] | None = None


@dataclass(frozen=True)
class TableFacts:
    """A table (or view) as one reader's SQL would count it."""

    rows: int | None  # None: it could not be counted in time
    columns: Mapping[str, ColumnFacts] = field(default_factory=dict)
    detail: FactsDetail = "full"


class ViewerReads(Protocol):
    """Counting for one reader: the same SQL path, row filters and masks as their `run_sql`."""

    def table_facts(self, database: str, row: SourceTable, detail: FactsDetail) -> TableFacts | None:
        """The figures of analysed table `row` of `database` for the reader; None when none could be had."""
        ...

    def values_present(self, database: str, row: SourceTable, column: str, values: Sequence[str]) -> set[str]:
        """Those of `values` that some row the reader may read holds in `column` (compared exactly)."""
        ...
