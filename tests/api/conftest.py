"""The API test installation and server (tests/api/world.py), for every test here."""

from tests.api.world import api_server, api_world

__all__ = ["api_server", "api_world"]
