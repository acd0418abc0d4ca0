"""Pytest fixture for the fake Slack Web API (tests/fakes/slack_server.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.slack_server import FakeSlack


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    """A started fake Slack Web API: base URL (for TABLESCOUT_SLACK_API_URL) `fake_slack.url`, bot token
    `fake_slack.token`."""
    with FakeSlack() as server:
        yield server
