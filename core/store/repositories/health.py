"""Whether the metadata store answers: the bot server's health check (`/healthz`)."""

from __future__ import annotations

from sqlalchemy import Engine, text


def ping(engine: Engine) -> None:
    """Run a trivial statement on a connection of its own; raises whatever the driver raises when the store does
    not answer."""
    with engine.connect() as connection:
        connection.execute(text("SELECT 1"))
