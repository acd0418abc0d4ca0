"""The rows a search reads for the tables it ranks: whether a table is a view and what a view reads come from columns
the server keeps from the card, so deciding who sees a view reads no card, and they follow the card when it changes."""

from __future__ import annotations

from sqlalchemy import inspect as sa_inspect
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from core.access.permissions import Principal, RoleGrants
from core.config.file import Grant
from core.store.models import Source, SourceTable
from core.store.repositories import search_rows
from tests.store.batch_support import statements

NO_PAY = Principal(
    platform="slack", user_id="U1", roles=(RoleGrants("no_pay", (Grant(database="gen_cols", deny=["PAY_*"]),)),)
)


def test_kind_and_view_reads_follow_the_card_and_decide_who_sees_a_view(session: Session) -> None:
    source = Source(name="gen_cols", engine="sqlite", url_ref="sqlite://")
    session.add(source)
    session.flush()
    base = SourceTable(source_id=source.id, name="ORD_MST", card={"table": "ORD_MST", "kind": "table"})
    view = SourceTable(
        source_id=source.id,
        name="V_ORDERS",
        card={"table": "V_ORDERS", "kind": "view", "reads": [[None, "ORD_MST"]], "columns": [{"name": "X"}] * 50},
    )
    session.add_all([base, view])
    session.flush()
    ids = [base.id, view.id]
    session.expire_all()

    with statements(session) as sent:
        rows, _ = search_rows.tables_and_column_names(session, ids, [])
        assert [NO_PAY.may_see_table("gen_cols", rows[i]) for i in ids] == [True, True]
    assert len(sent) == 1  # deciding read no card: it was never loaded
    assert {"card", "card_text", "facts"} <= sa_inspect(rows[view.id]).unloaded
    assert (rows[view.id].card_kind, rows[view.id].view_reads) == ("view", [[None, "ORD_MST"]])

    session.execute(  # the view now reads a table the role may not see: the server's columns follow the card
        text("UPDATE source_tables SET card = jsonb_set(card, '{reads}', :reads) WHERE id = :id"),
        {"reads": '[[null, "ORD_MST"], [null, "PAY_HIST"]]', "id": view.id},
    )
    session.expire_all()
    rows, _ = search_rows.tables_and_column_names(session, ids, [])
    assert rows[view.id].view_reads == [[None, "ORD_MST"], [None, "PAY_HIST"]]
    assert not NO_PAY.may_see_table("gen_cols", rows[view.id])
    assert Principal.for_operator().may_see_table("gen_cols", rows[view.id])
    kinds = session.execute(select(SourceTable.card_kind).where(SourceTable.id.in_(ids)).order_by(SourceTable.id))
    assert kinds.scalars().all() == ["table", "view"]
