"""The Slack listeners for answer feedback, registered on the bolt app by bot/slack/app.py: a click on the 👍/👎
buttons under an answer (a signed `block_actions` request) is stored for that answer's turn and the clicking user;
a 👎 opens a modal asking what was wrong, whose signed `view_submission` stores the reason.

The turn is found from the channel and ts of the message the buttons are on (the answer message the outbox
recorded), never from anything the click payload claims.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from bot.feedback import answer_clicked, reason_given
from bot.slack.feedback_blocks import REASON_ACTION, REASON_BLOCK, feedback_reason_view
from core.store.database import Store

log = logging.getLogger(__name__)


class FeedbackActions:
    """`on_proposed(example_id)` is called after a click proposed a new verified example (the admins' review)."""

    def __init__(self, store: Store, on_proposed: Callable[[int], None] | None = None) -> None:
        self.store = store
        self.on_proposed = on_proposed

    def on_click(self, ack: Callable[..., Any], body: dict[str, Any], client: Any) -> None:
        ack()
        actions = body.get("actions") or [{}]
        rating = str(actions[0].get("value") or "")
        channel = str((body.get("channel") or {}).get("id") or "")
        message_ts = str((body.get("container") or {}).get("message_ts") or (body.get("message") or {}).get("ts"))
        user = str((body.get("user") or {}).get("id") or "")
        with self.store.transaction() as session:
            clicked = answer_clicked(
                session, platform="slack", channel_id=channel, message_id=message_ts, user_id=user, rating=rating
            )
        if clicked is None:
            log.info("feedback on Slack message %s in %s, which is no answer of ours; ignored", message_ts, channel)
            return
        if clicked.example_id is not None and clicked.proposed:
            log.info("turn %s: the asker's 👍 proposes verified example %s", clicked.turn_id, clicked.example_id)
            if self.on_proposed is not None:
                self.on_proposed(clicked.example_id)
        trigger = body.get("trigger_id")
        if clicked.rating == "bad" and trigger:
            try:
                client.views_open(trigger_id=str(trigger), view=feedback_reason_view(clicked.turn_id))
            except Exception as exc:  # the 👎 is stored; a reason is optional
                log.warning("could not open the feedback modal for turn %s: %s", clicked.turn_id, exc)

    def on_reason(self, ack: Callable[..., Any], body: dict[str, Any]) -> None:
        ack()
        view = body.get("view") or {}
        user = str((body.get("user") or {}).get("id") or "")
        try:
            turn_id = int(str(view.get("private_metadata") or ""))
        except ValueError:
            log.warning("feedback reason without a turn; ignored")
            return
        values = ((view.get("state") or {}).get("values") or {}).get(REASON_BLOCK) or {}
        reason = str((values.get(REASON_ACTION) or {}).get("value") or "")
        with self.store.transaction() as session:
            reason_given(session, turn_id=turn_id, platform="slack", user_id=user, reason=reason)
