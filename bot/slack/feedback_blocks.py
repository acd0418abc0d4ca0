"""Block Kit of answer feedback beyond the 👍/👎 buttons: the modal a 👎 opens to ask what was wrong
(bot/slack/feedback_actions.py), and the messages an admin gets to review a proposed verified example, before and
after the decision (bot/slack/example_review.py). Pure: no SDK, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.plain_text import plain_text
from bot.slack.mrkdwn import FENCE, SlackMessage, code_block, context_block, escape, section_block

FEEDBACK_REASON_VIEW = "feedback_reason"  # callback_id of the modal that asks why an answer was wrong
REASON_BLOCK = "reason"
REASON_ACTION = "reason"


def feedback_reason_view(turn_id: int) -> dict[str, Any]:
    """The modal a 👎 opens: one optional multi-line field for what was wrong. `private_metadata` carries the turn
    (Slack signs the submission, and only the user's own 👎 on that turn takes the reason)."""
    return {
        "type": "modal",
        "callback_id": FEEDBACK_REASON_VIEW,
        "private_metadata": str(turn_id),
        "title": {"type": "plain_text", "text": "What was wrong?"},
        "submit": {"type": "plain_text", "text": "Send"},
        "close": {"type": "plain_text", "text": "Skip"},
        "blocks": [
            {
                "type": "input",
                "block_id": REASON_BLOCK,
                "optional": True,
                "label": {"type": "plain_text", "text": "What should the answer have been? (optional)"},
                "element": {
                    "type": "plain_text_input",
                    "action_id": REASON_ACTION,
                    "multiline": True,
                    "max_length": 2000,
                },
            }
        ],
    }


EXAMPLE_APPROVE = "example_approve"  # action_ids of the buttons on a proposed example (bot/slack/example_review.py)
EXAMPLE_REJECT = "example_reject"
EXAMPLE_BLOCK = "example_review"
SQL_LIMIT = 2500  # characters of an example's SQL shown


@dataclass(frozen=True)
class ExampleShown:
    """What a review message shows of a proposed example (the admin may see every table it reads)."""

    id: int
    database: str
    question: str
    sql: str
    tables: list[str]
    proposed_by: str  # the Slack user id of the asker whose 👍 proposed it, or "" for another platform


def _example_blocks(example: ExampleShown) -> list[dict[str, Any]]:
    who = f"<@{escape(example.proposed_by)}>" if example.proposed_by else "an asker"
    tables = ", ".join(f"{escape(example.database)}.{escape(t)}" for t in example.tables)
    return [
        section_block(
            f":bulb: *Proposed verified example #{example.id}* on *{escape(example.database)}*: {who} marked the "
            "answer to this question as right."
        ),
        section_block("*Question*\n>" + escape(" ".join(example.question.split()))),
        section_block("*SQL*\n" + code_block(escape(example.sql.strip()), SQL_LIMIT + 2 * len(FENCE), "SQL")),
        context_block(
            f"Reads {tables}. Approved, it is shown to the model for similar questions (to those who may see these "
            f"tables) and ranks these tables in search. From a terminal: `tablescout examples approve {example.id}`."
        ),
    ]


def example_review_message(example: ExampleShown) -> SlackMessage:
    """The message an admin gets when a 👍 proposes an example: what it is, with Approve and Reject buttons."""
    buttons = [
        {
            "type": "button",
            "action_id": EXAMPLE_APPROVE,
            "text": {"type": "plain_text", "text": "Approve"},
            "style": "primary",
            "value": str(example.id),
        },
        {
            "type": "button",
            "action_id": EXAMPLE_REJECT,
            "text": {"type": "plain_text", "text": "Reject"},
            "style": "danger",
            "value": str(example.id),
        },
    ]
    blocks = [*_example_blocks(example), {"type": "actions", "block_id": EXAMPLE_BLOCK, "elements": buttons}]
    return SlackMessage(f"Proposed verified example #{example.id} on {example.database}", blocks)


def example_decided_message(example: ExampleShown, line: str) -> SlackMessage:
    """The review message once decided: the buttons replaced by what was decided, by whom (`line`, mrkdwn)."""
    return SlackMessage(
        f"Verified example #{example.id}: {plain_text(line)}", [*_example_blocks(example), context_block(line)]
    )
