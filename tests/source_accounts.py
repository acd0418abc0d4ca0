"""Scratch source databases on the real MariaDB and PostgreSQL servers, with accounts that have chosen privileges.

`mariadb_accounts({"reader": ["GRANT SELECT ON {db}.* TO {user}"]})` creates a database with one table `T` and one
account per key, runs each account's statements (`{db}` is the quoted database, `{user}` the quoted account), and
yields the URL of each account; everything is dropped afterwards. `postgres_accounts` does the same with roles.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import create_engine, text

from tests.support import MARIADB_SERVER, POSTGRES_SERVER


@contextmanager
def mariadb_accounts(accounts: dict[str, list[str]]) -> Iterator[dict[str, str]]:
    suffix = uuid.uuid4().hex[:8]
    name = f"ts_acct_{suffix}"
    users = {key: f"ts_{key[:10]}_{suffix}" for key in accounts}
    roles: list[str] = []
    server = create_engine(MARIADB_SERVER, isolation_level="AUTOCOMMIT")
    try:
        with server.connect() as conn:
            conn.execute(text(f"CREATE DATABASE `{name}`"))
            conn.execute(text(f"CREATE TABLE `{name}`.T (ID INT PRIMARY KEY, AMOUNT INT)"))
            for key, statements in accounts.items():
                conn.execute(text(f"CREATE USER '{users[key]}'@'%'"))
                for statement in statements:
                    if statement.startswith("CREATE ROLE "):
                        roles.append(statement.removeprefix("CREATE ROLE ").format(suffix=suffix))
                    conn.execute(text(statement.format(db=f"`{name}`", user=f"'{users[key]}'@'%'", suffix=suffix)))
        yield {key: f"mysql://{user}@127.0.0.1:3306/{name}" for key, user in users.items()}
    finally:
        with server.connect() as conn:
            for user in users.values():
                conn.execute(text(f"DROP USER IF EXISTS '{user}'@'%'"))
            for role in roles:
                conn.execute(text(f"DROP ROLE IF EXISTS {role}"))
            conn.execute(text(f"DROP DATABASE IF EXISTS `{name}`"))
        server.dispose()


@contextmanager
def postgres_accounts(accounts: dict[str, list[str]]) -> Iterator[dict[str, str]]:
    suffix = uuid.uuid4().hex[:8]
    name = f"ts_acct_{suffix}"
    roles = {key: f"ts_{key[:10]}_{suffix}" for key in accounts}
    server = create_engine(POSTGRES_SERVER, isolation_level="AUTOCOMMIT")
    database = create_engine(POSTGRES_SERVER.rsplit("/", 1)[0] + f"/{name}", isolation_level="AUTOCOMMIT")
    try:
        with server.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        with database.connect() as conn:
            conn.execute(text("CREATE TABLE t (id int PRIMARY KEY, amount int)"))
            for key, statements in accounts.items():
                conn.execute(text(f"CREATE ROLE {roles[key]} LOGIN"))
                for statement in statements:
                    conn.execute(text(statement.format(user=roles[key])))
        yield {key: f"postgresql://{role}@127.0.0.1:5432/{name}" for key, role in roles.items()}
    finally:
        database.dispose()
        with server.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            for role in roles.values():
                conn.execute(text(f"DROP ROLE IF EXISTS {role}"))
        server.dispose()


def mariadb_admin(statement: str) -> None:
    """Run one statement as root (to change an account's grants during a test)."""
    server = create_engine(MARIADB_SERVER, isolation_level="AUTOCOMMIT")
    try:
        with server.connect() as conn:
            conn.execute(text(statement))
    finally:
        server.dispose()
