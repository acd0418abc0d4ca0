"""A source for column-mask and row-filter tests of everything but the SQL itself (issue 20 item 4): a customer
table whose phone numbers are hidden from a Busan sales role, e-mails redacted and grades nulled, an order table
filtered to the user's city, and a call log whose only key to customers is the hidden phone column.
Canary values are planted in the masked columns and in an order outside Busan; analysed and indexed on SQLite."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from catalog.analysis import AnalysisOptions
from core.store.embedded import EmbeddedServer
from core.store.repositories import directory
from search.encoders import BiEncoderReranker
from search.service import Encoders
from tests.catalog.analysis_support import new_installation
from tests.support import default_embedder, isolated_settings
from tests.turn_world import TurnWorld
from workers.catalog_refresh import refresh_source

PHONES = ("010-7731-0001", "010-7731-0002", "010-7731-0003")
EMAILS = ("canary.one@example.kr", "canary.two@example.kr")
GRADES = ("VIP", "GEN")
SEOUL_ORDER = "ORD-SEOUL-CANARY"
SEOUL_AMOUNT = 99_999  # the largest order amount, and outside Busan
ORDERS = 40  # Busan and Seoul alternate; the last one is the Seoul canary

ROLES = """\
roles:
  busan_sales:
    grants:
      - database: masked
        allow: ["*"]
        row_filters:
          ORD_MST: "SHIP_CITY = {user.city}"
        column_masks:
          CUST_MST.TEL_NO: hide
          CUST_MST.EMAIL: redact
          CUST_MST.GRADE_CD: "null"
  everything:
    grants:
      - database: masked
  hashed:
    grants:
      - database: masked
        column_masks:
          CUST_MST.CUST_NM: hash
          CUST_MST.EMAIL: hash
groups:
  - {platform: slack, group: S_BUSAN, roles: [busan_sales]}
  - {platform: slack, group: S_ALL, roles: [everything]}
  - {platform: slack, group: S_HASH, roles: [hashed]}
default_role: everything
"""
USERS = {"U_BUSAN": ("S_BUSAN", {"city": "Busan"}), "U_ALL": ("S_ALL", {}), "U_HASH": ("S_HASH", {})}


def canaries() -> list[str]:
    return ["7731-", *EMAILS, SEOUL_ORDER, str(SEOUL_AMOUNT), f"{SEOUL_AMOUNT:,}"]


def _build(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.executescript(
            """
            CREATE TABLE CUST_MST (CUST_NO VARCHAR(8) PRIMARY KEY, CUST_NM VARCHAR(40), TEL_NO VARCHAR(20),
                                   EMAIL VARCHAR(60), GRADE_CD VARCHAR(3));
            CREATE TABLE ORD_MST (ORD_NO VARCHAR(20) PRIMARY KEY, CUST_NO VARCHAR(8) REFERENCES CUST_MST(CUST_NO),
                                  SHIP_CITY VARCHAR(20), ORD_AMT INTEGER);
            CREATE TABLE CALL_LOG (CALL_ID INTEGER PRIMARY KEY, TEL_NO VARCHAR(20) REFERENCES CUST_MST(TEL_NO),
                                   CALL_MIN INTEGER);
            """
        )
        for i in range(12):
            conn.execute(
                "INSERT INTO CUST_MST VALUES (?, ?, ?, ?, ?)",
                (f"C{i:03d}", f"Customer {i}", PHONES[i % 3], EMAILS[i % 2], GRADES[i % 2]),
            )
        for i in range(ORDERS - 1):
            city = ("Busan", "Seoul")[i % 2]
            conn.execute("INSERT INTO ORD_MST VALUES (?, ?, ?, ?)", (f"ORD-{i:04d}", f"C{i % 12:03d}", city, 100 + i))
        conn.execute("INSERT INTO ORD_MST VALUES (?, 'C000', 'Seoul', ?)", (SEOUL_ORDER, SEOUL_AMOUNT))
        for i in range(30):
            conn.execute("INSERT INTO CALL_LOG VALUES (?, ?, ?)", (i, PHONES[i % 3], i % 7))


@dataclass
class MaskWorld:
    world: TurnWorld
    database: str = "masked"


@pytest.fixture(scope="session")
def mask_world(store_server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MaskWorld]:
    home = tmp_path_factory.mktemp("mask-home")
    installation = new_installation(store_server, home)
    path = tmp_path_factory.mktemp("mask-sqlite") / "masked.sqlite"
    _build(path)
    installation.add("masked", f"sqlite:///{path}")
    config = home / "tablescout.yaml"
    config.write_text(config.read_text() + ROLES)
    assert installation.settings.database_url is not None
    installation.settings = isolated_settings(home, database_url=installation.settings.database_url.get_secret_value())
    embedder = default_embedder()
    report = refresh_source(installation.settings, installation.store, "masked", AnalysisOptions(), embedder=embedder)
    assert report.analysis.error is None
    now = datetime.now(UTC)
    with installation.store.transaction() as session:
        for user, (group_id, attributes) in USERS.items():
            member = directory.upsert_user(
                session, platform="slack", user_id=user, synced_at=now, attributes=attributes
            )
            group = directory.upsert_group(session, platform="slack", group_id=group_id, synced_at=now)
            directory.replace_members(session, group, [member])
    yield MaskWorld(TurnWorld(installation, Encoders(embedder, BiEncoderReranker(embedder)), path))
    installation.store.close()
