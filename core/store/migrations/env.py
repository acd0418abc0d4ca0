"""Alembic environment: migrations run on the connection `core.store.migrate` hands over."""

from __future__ import annotations

from alembic import context

from core.store.models import Base

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through `tablescout init` (core.store.migrate), which provides the connection")

context.configure(connection=connection, target_metadata=Base.metadata, compare_type=True)
with context.begin_transaction():
    context.run_migrations()
