"""Fixtures for the Slack surface tests: the fake Slack Web API."""

from __future__ import annotations

from tests.fakes.slack_fixtures import fake_slack

__all__ = ["fake_slack"]
