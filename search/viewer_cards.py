"""The cards of the tables a search found, as the asking principal may see them (`core.cards.card_view`): built once
each, when first asked."""

from __future__ import annotations

from typing import Any

from core.access.permissions import Principal
from core.access.viewer_facts import ViewerReads
from core.cards.card_view import card_for_principal
from core.store.models import SourceTable
from search.candidates import card_head


class ViewerCards:
    """Cards of the tables search found, as the principal may see them (`core.cards.card_view`), built when first asked:
    for ranking without the principal's own counts, for the candidates shown with them."""

    def __init__(
        self,
        principal: Principal,
        rows: dict[int, SourceTable],
        names: dict[int, str],
        reads: ViewerReads | None,
    ) -> None:
        self.principal = principal
        self.rows = rows
        self.names = names
        self.reads = reads
        self.built: dict[int, dict[str, Any]] = {}

    def __getitem__(self, table_id: int) -> dict[str, Any]:
        """The card of `table_id` (one of `rows`) as the principal may see it, without their own counts."""
        if table_id not in self.built:
            row = self.rows[table_id]
            self.built[table_id] = card_for_principal(self.principal, self.names[row.source_id], dict(row.card or {}))
        return self.built[table_id]

    def shown(self, table_id: int) -> dict[str, Any]:
        """The card as shown with a candidate: with the principal's own codes where `reads` has them."""
        row = self.rows[table_id]
        database = self.names[row.source_id]
        facts = self.reads.table_facts(database, row, "codes") if self.reads is not None else None
        if facts is None:
            return self[table_id]
        return card_for_principal(self.principal, database, dict(row.card or {}), facts)

    def head(self, table_id: int) -> str:
        """The head of the card as the principal sees it (`search.candidates.card_head`), for reranking."""
        return card_head(self[table_id], self.rows[table_id].name)
