"""Slack over Socket Mode (SLACK_APP_TOKEN): bolt's handler, with each envelope's payload checked before bolt sees
it, as a signed HTTP body is (bot/slack/request_checks.py)."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.adapter.socket_mode import SocketModeHandler

from bot.json_shape import MalformedBody
from bot.slack.request_checks import check_payload

log = logging.getLogger(__name__)


class CheckedSocketModeHandler(SocketModeHandler):
    """bolt's Socket Mode handler, with each Events API and interactive envelope's payload checked first
    (bot/slack/request_checks.py): one Slack would never send is acknowledged, so it is not delivered again, and
    logged; nothing is stored."""

    def handle(self, client: Any, req: Any) -> None:
        if req.type in ("events_api", "interactive"):
            try:
                check_payload(req.payload)
            except MalformedBody as exc:
                log.warning("refused a Slack Socket Mode %s envelope %s: %s", req.type, req.envelope_id, exc)
                client.send_socket_mode_response({"envelope_id": req.envelope_id})
                return
        super().handle(client, req)
