"""Fixtures for the Teams tests: the fake Bot Framework connector."""

from tests.fakes.teams_fixtures import fake_teams_connector

__all__ = ["fake_teams_connector"]
