"""A Slack message holding text no store accepts (a NUL character, an unpaired surrogate) is stored cleaned and
answered, never refused with HTTP 500 and lost."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import CHANNEL, ChatStack, event_payload
from tests.e2e.test_slack_chat import QUESTION, _answered, mention, new_ts
from tests.workers.turns.scripts import ORDERS_2024, search_then_query
from tests.workers.turns.worker_support import wait_until

pytestmark = pytest.mark.timeout(300)


def test_a_mention_with_a_nul_and_a_lone_surrogate_is_stored_and_answered(chat_stack: ChatStack) -> None:
    stack = chat_stack
    stack.model.script(search_then_query(QUESTION, "erp", "ORD_MST", ORDERS_2024, "{value} orders."))
    ts = new_ts()
    text = "How many orders\x00 were placed in 2024? \ud83d"  # JSON carries them as \u0000 and \ud83d
    response = stack.post_slack(event_payload(mention(text, ts), "Ev_UNSTORABLE_1"))
    assert response.status_code == 200, response.text
    wait_until(lambda: bool(_answered(stack, ts)), 90, "the answer in the thread")
    [turn] = stack.turns_in(CHANNEL, ts)
    assert turn["status"] == "answered"
    assert f"{stack.world.erp_scalar(ORDERS_2024)} orders." in _answered(stack, ts)[0]
    first = stack.model.requests[0].exchange
    assert "How many orders were placed in 2024? \ufffd" in first.user_text
