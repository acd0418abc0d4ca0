"""What a turn sends the store: no reads for the first model call beyond what it needs, one insert per round, and
ordinals that continue where an earlier attempt stopped."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event, select, update
from sqlalchemy.engine import Engine

from core.store.models import Round, Turn
from tests.fakes.model_server import Call, Exchange, FakeModelServer, Say, Step
from tests.turn_world import TurnWorld


@contextmanager
def sent_statements(engine: Engine) -> Iterator[list[str]]:
    """Statements this thread sends through `engine`, in order."""
    sent: list[str] = []
    me = threading.get_ident()

    def seen(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if threading.get_ident() == me:
            sent.append(" ".join(statement.split()))

    event.listen(engine, "before_cursor_execute", seen)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", seen)


def test_a_turn_writes_each_round_once_and_reads_no_ordinal_on_its_first_attempt(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer
) -> None:
    engine = turn_world.installation.store.engine
    before_first_call: list[int] = []
    seen: dict[str, list[str]] = {}

    def script(exchange: Exchange) -> Step:
        if exchange.round == 1:
            before_first_call.append(len(seen["log"]))
            return Call("list_tables", {"database": "erp", "pattern": "ORD*"})
        return Say("ORD_MST holds the orders.")

    fake_anthropic.script(script)
    turn_id = turn_world.submit("Which table holds the orders?")
    with sent_statements(engine) as log:
        seen["log"] = log
        outcome = turn_world.run(turn_world.environment(fake_anthropic), turn_id)
    assert outcome.outcome == "finished"
    turn_updates = [s for s in log[: before_first_call[0]] if s.startswith("UPDATE turns")]
    assert len(turn_updates) == 1  # the claim's lease and the first model call's time, in one update
    assert not any("max(rounds.ordinal)" in s for s in log)
    assert sum(s.startswith("INSERT INTO rounds") for s in log) == 2
    assert sum(s.startswith("UPDATE rounds") for s in log) == 1  # the tool round's end; the last is inserted whole
    with turn_world.installation.store.transaction() as session:
        rounds = session.scalars(select(Round).where(Round.turn_id == turn_id).order_by(Round.ordinal)).all()
        assert [(r.ordinal, r.stop_reason) for r in rounds] == [(1, "tool_use"), (2, "end")]
        assert all(r.input_tokens and r.output_tokens and r.finished_at for r in rounds)
        first_end, last_end = rounds[0].finished_at, rounds[1].finished_at
        assert first_end is not None
        assert last_end is not None
        assert rounds[0].started_at <= first_end <= rounds[1].started_at <= last_end


def test_a_later_attempt_numbers_its_rounds_after_the_earlier_ones(
    turn_world: TurnWorld, fake_anthropic: FakeModelServer
) -> None:
    fake_anthropic.script([Say("first attempt's answer")])
    turn_id = turn_world.submit("Which table holds the orders?")
    turn_world.run(turn_world.environment(fake_anthropic), turn_id)
    with turn_world.installation.store.transaction() as session:  # as if the sweep queued it again
        session.execute(update(Turn).where(Turn.id == turn_id).values(status="queued", answer=None))
    fake_anthropic.script([Say("second attempt's answer")])
    turn_world.run(turn_world.environment(fake_anthropic), turn_id)
    with turn_world.installation.store.transaction() as session:
        ordinals = session.scalars(select(Round.ordinal).where(Round.turn_id == turn_id).order_by(Round.ordinal))
        assert list(ordinals) == [1, 2]
        assert session.get(Turn, turn_id).attempts == 2  # type: ignore[union-attr]
