"""Connectors: reading a source database's catalog and samples of its rows, read-only and under a timeout.

`open_connector(url)` picks the implementation by the URL's backend: SQLite, MariaDB/MySQL and PostgreSQL have their
own (engine statistics, spread sampling); any other engine SQLAlchemy can reach gets the generic one.
"""

from __future__ import annotations

from sqlalchemy import URL

from catalog.connectors.base import (
    ColumnInfo,
    Connector,
    ForeignKeyInfo,
    Sample,
    TableInfo,
    TableKind,
    TableRef,
    TypeFamily,
)
from catalog.connectors.errors import SourceTimeout
from catalog.connectors.generic import GenericConnector
from catalog.connectors.mysql import MysqlConnector
from catalog.connectors.postgres import PostgresConnector
from catalog.connectors.sqlite import SqliteConnector

_BY_BACKEND: dict[str, type[GenericConnector]] = {
    "sqlite": SqliteConnector,
    "mysql": MysqlConnector,
    "mariadb": MysqlConnector,
    "postgresql": PostgresConnector,
}


def open_connector(url: URL, *, statement_timeout_s: float = 10.0) -> Connector:
    """Connect to the source at `url` (placeholders already expanded) and return its connector.

    Connects once before returning, so an unreachable source fails here with a SourceError whose message never
    holds the password. Every statement the connector runs is cancelled after `statement_timeout_s` seconds
    (SourceTimeout) on SQLite, MariaDB/MySQL and PostgreSQL; the caller closes the connector.
    """
    implementation = _BY_BACKEND.get(url.get_backend_name(), GenericConnector)
    return implementation(url, statement_timeout_s=statement_timeout_s)


__all__ = [
    "ColumnInfo",
    "Connector",
    "ForeignKeyInfo",
    "GenericConnector",
    "MysqlConnector",
    "PostgresConnector",
    "Sample",
    "SourceTimeout",
    "SqliteConnector",
    "TableInfo",
    "TableKind",
    "TableRef",
    "TypeFamily",
    "open_connector",
]
