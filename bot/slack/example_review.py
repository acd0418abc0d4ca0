"""Reviewing proposed verified examples from Slack (registered on the bolt app by bot/slack/app.py).

When the asker's 👍 proposes an example (bot/feedback.py), each Slack admin who may see every table it reads gets
a direct message from the app with the question, the SQL, the tables and Approve / Reject buttons. A click is a
signed `block_actions` request; it is acknowledged at once and decided in the background (approving embeds the
question): the clicker must have an admin role and may see every table the example reads, else only they are told
so (an ephemeral message) and nothing changes. The decision is recorded as `tablescout examples approve|reject
--user slack:ID` records it (bot/feedback.py `review_example`), and the message's buttons are replaced by what was
decided and by whom. An example someone reviewed already is left as it is; the message says how it was decided.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import Any

from bot.feedback import Reviewed, example_reviewers, review_example
from bot.slack.client import SlackDeliveryError
from bot.slack.feedback_blocks import (
    EXAMPLE_APPROVE,
    EXAMPLE_REJECT,
    ExampleShown,
    example_decided_message,
    example_review_message,
)
from bot.slack.mrkdwn import escape
from bot.slack.web import SlackPoster
from core.config.file import ConfigFile
from core.store.database import Store
from core.store.models import VerifiedExample
from core.store.repositories import feedback as feedback_repo

log = logging.getLogger(__name__)

REFUSED = (
    "Only an admin who may see every table this example reads can approve or reject it. "
    "Ask whoever runs tablescout if you should."
)
DELETED = "This example was deleted meanwhile."


def shown(example: VerifiedExample) -> ExampleShown:
    by_slack = example.proposed_by_platform == "slack"
    return ExampleShown(
        id=example.id,
        database=example.database,
        question=example.question,
        sql=example.sql,
        tables=list(example.tables),
        proposed_by=example.proposed_by if by_slack else "",
    )


def decision_line(reviewed: Reviewed, user: str) -> str:
    if reviewed.outcome == "approved":
        return f":white_check_mark: Approved by <@{escape(user)}>."
    if reviewed.outcome == "rejected":
        return f":x: Rejected by <@{escape(user)}>."
    by = reviewed.reviewed_by or "someone"
    platform, _, who = by.partition(":")
    named = f"<@{escape(who)}>" if platform == "slack" and who else escape(by)
    return f"Already {reviewed.status} by {named}."


class ExampleReview:
    def __init__(
        self,
        store: Store,
        config: Callable[[], ConfigFile],
        poster: SlackPoster,
        embed: Callable[[str], Sequence[float]],
        background: Executor,
    ) -> None:
        self.store = store
        self.config = config
        self.poster = poster
        self.embed = embed
        self.background = background

    # --- a new proposal -------------------------------------------------------------------------------------------

    def proposed(self, example_id: int) -> None:
        """Tell the admins about a new proposal (in the background: the click that made it is answered first)."""
        self.background.submit(self._notify, example_id)

    def _notify(self, example_id: int) -> None:
        try:
            with self.store.transaction() as session:
                example = feedback_repo.get_example(session, example_id)
                if example is None or example.status != "proposed":
                    return
                reviewers = example_reviewers(session, self.config(), "slack", example)
                message = example_review_message(shown(example))
            if not reviewers:
                log.info("example %s proposed; no Slack admin may review it (tablescout examples list)", example_id)
            for user in reviewers:
                try:
                    self.poster.post_message(user, message)
                except SlackDeliveryError as exc:
                    log.warning("could not tell admin %s about example %s: %s", user, example_id, exc)
        except Exception:  # the proposal is stored; the CLI lists it either way
            log.exception("could not tell the admins about example %s", example_id)

    # --- a click on Approve or Reject -----------------------------------------------------------------------------

    def on_click(self, ack: Callable[..., Any], body: dict[str, Any]) -> None:
        ack()
        self.background.submit(self._decide, body)

    def _decide(self, body: dict[str, Any]) -> None:
        action = (body.get("actions") or [{}])[0]
        decision = {EXAMPLE_APPROVE: "approve", EXAMPLE_REJECT: "reject"}.get(str(action.get("action_id") or ""))
        user = str((body.get("user") or {}).get("id") or "")
        channel = str((body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id") or "")
        ts = str((body.get("container") or {}).get("message_ts") or (body.get("message") or {}).get("ts") or "")
        try:
            example_id = int(str(action.get("value") or ""))
        except ValueError:
            example_id = 0
        if decision is None or not example_id or not user or not channel:
            log.warning("example review click without decision, example, user or channel; ignored")
            return
        try:
            with self.store.transaction() as session:
                reviewed = review_example(
                    session,
                    self.config(),
                    platform="slack",
                    user_id=user,
                    example_id=example_id,
                    decision=decision,
                    embed=self.embed,
                )
                example = feedback_repo.get_example(session, example_id)
                view = shown(example) if example is not None else None
            if reviewed.outcome == "refused":
                self.poster.post_ephemeral(channel, user, REFUSED)
                log.info("example %s: %s may not review it; refused", example_id, user)
                return
            if ts and view is not None:
                self.poster.update_message(channel, ts, example_decided_message(view, decision_line(reviewed, user)))
            elif reviewed.outcome == "missing":
                self.poster.post_ephemeral(channel, user, DELETED)
            log.info("example %s: %s by slack:%s", example_id, reviewed.outcome, user)
        except SlackDeliveryError as exc:  # the decision is stored; only the message did not change
            log.warning("example %s: could not update the review message: %s", example_id, exc)
        except Exception:
            log.exception("example %s: the review click failed", example_id)
