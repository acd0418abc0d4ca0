"""Fixtures for the Teams tests: the fake Bot Framework connector and the bot's fake Entra ID authority."""

from tests.fakes.teams_fixtures import fake_bot_entra, fake_teams_connector

__all__ = ["fake_bot_entra", "fake_teams_connector"]
