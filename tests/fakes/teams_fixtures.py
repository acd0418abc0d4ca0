"""Pytest fixture for the fake Bot Framework connector; a test folder's conftest.py imports it to use it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.teams_connector import FakeTeamsConnector


@pytest.fixture
def fake_teams_connector() -> Iterator[FakeTeamsConnector]:
    """A started fake connector; activities whose serviceUrl is `fake_teams_connector.url` reach it."""
    with FakeTeamsConnector() as connector:
        yield connector
