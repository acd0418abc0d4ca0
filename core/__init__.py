"""Shared foundation of tablescout, by concern.

- `core.config`: settings from the environment and the operator's configuration file, and its live reload.
- `core.store`: the metadata store (PostgreSQL with pgvector), its models, repositories and migrations.
- `core.access`: who may see which database, table, row and column: roles, row filters, column masks.
- `core.cards`: a table card and a database summary as one reader may see them.
- `core.text`: identifier splitting, name words and text the store can hold.
- `core.errors`, `core.interrupts`: the error types every room raises and the signals a command line obeys.

Every other package imports `core`; `core` imports none of them.
"""
