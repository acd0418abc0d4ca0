"""Errors that reach a user: each carries a message meant to be read by a person, not a traceback."""

from __future__ import annotations


class TablescoutError(Exception):
    """Base class for errors whose message is shown to the user as is."""


class ConfigError(TablescoutError):
    """The configuration file or the environment is invalid; nothing was started."""


class StoreError(TablescoutError):
    """The metadata store cannot be reached or is not usable (missing extension, wrong version)."""


class StoreUnavailable(StoreError):
    """The metadata store does not answer now (its server is down, starting or unreachable); trying later may work."""


class SourceError(TablescoutError):
    """A source database cannot be registered or reached."""


class NotFoundError(TablescoutError):
    """A named thing (source, table, user) does not exist."""
