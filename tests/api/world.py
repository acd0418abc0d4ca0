"""An installation for the API and MCP tests: one SQLite shop database with a masked customer table, an order
table filtered to the user's city and a payroll table a Busan clerk may not see, and a second database (hr) only
the manager may see. Canary values sit in the masked columns, in a Seoul order and in the hidden tables.

The bot server runs with the API surface in a thread of the test process; stored turns are run in this process
by the turn engine itself (the relay hands each job to a thread running `run_turn`), against a fake model server.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from api.surface import ApiSurface
from bot.server import BotServer
from catalog.analysis import AnalysisOptions
from core.access.tokens import issue
from core.store.embedded import EmbeddedServer
from core.store.repositories import directory
from search.encoders import BiEncoderReranker
from search.service import Encoders
from tests.catalog.analysis_support import Installation, new_installation
from tests.fakes.bot_server import ServerThread
from tests.fakes.model_server import FakeModelServer
from tests.support import default_embedder, isolated_settings
from tests.turn_world import TurnWorld
from workers.catalog_refresh import refresh_source

PHONES = ("010-5512-0001", "010-5512-0002")
EMAILS = ("canary.api@example.kr", "canary.api2@example.kr")
SEOUL_ORDER = "ORD-SEOUL-APICANARY"
SALARY = 7_654_321
HIDDEN_TABLE = "PAY_ROLL"
HIDDEN_DATABASE = "hr"

ROLES = """\
roles:
  clerk:
    grants:
      - database: shop
        deny: ["PAY_*"]
        row_filters:
          ORD_MST: "SHIP_CITY = {user.city}"
        column_masks:
          CUST_MST.TEL_NO: hide
          CUST_MST.EMAIL: redact
      - database: shop_m
        deny: ["PAY_*"]
        row_filters:
          ORD_MST: "SHIP_CITY = {user.city}"
        column_masks:
          CUST_MST.TEL_NO: hide
          CUST_MST.EMAIL: redact
  manager:
    grants:
      - database: shop
      - database: shop_m
      - database: hr
groups:
  - {platform: slack, group: S_CLERK, roles: [clerk]}
  - {platform: slack, group: S_MANAGER, roles: [manager]}
default_role: clerk
"""
USERS = {"U_CLERK": ("S_CLERK", {"city": "Busan"}), "U_BOSS": ("S_MANAGER", {})}


def canaries() -> list[str]:
    return ["5512-", *EMAILS, SEOUL_ORDER, str(SALARY), HIDDEN_TABLE]


SHOP_TABLES = (
    "CREATE TABLE CUST_MST (CUST_NO VARCHAR(8) PRIMARY KEY, CUST_NM VARCHAR(40), TEL_NO VARCHAR(20), "
    "EMAIL VARCHAR(60))",
    "CREATE TABLE ORD_MST (ORD_NO VARCHAR(24) PRIMARY KEY, CUST_NO VARCHAR(8) REFERENCES CUST_MST(CUST_NO), "
    "SHIP_CITY VARCHAR(20), ORD_AMT INTEGER)",
    "CREATE TABLE PAY_ROLL (EMP_NO VARCHAR(8) PRIMARY KEY, SALARY INTEGER)",
)


def shop_rows() -> dict[str, list[tuple[Any, ...]]]:
    customers = [(f"C{i:03d}", f"Customer {i}", PHONES[i % 2], EMAILS[i % 2]) for i in range(8)]
    orders = [(f"ORD-{i:04d}", f"C{i % 8:03d}", ("Busan", "Seoul")[i % 2], 100 + i) for i in range(19)]
    orders.append((SEOUL_ORDER, "C000", "Seoul", 99999))
    return {"CUST_MST": customers, "ORD_MST": orders, "PAY_ROLL": [("E001", SALARY), ("E002", 4_000_000)]}


def build_shop(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        for statement in SHOP_TABLES:
            conn.execute(statement)
        for table, rows in shop_rows().items():
            marks = ", ".join("?" * len(rows[0]))
            conn.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)


def build_hr(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE STAFF (EMP_NO VARCHAR(8) PRIMARY KEY, EMP_NM VARCHAR(40))")
        conn.execute("INSERT INTO STAFF VALUES ('E001', 'Kim')")


@dataclass
class ApiWorld:
    world: TurnWorld
    shop_path: Path

    @property
    def installation(self) -> Installation:
        return self.world.installation

    def token(self, user: str, *, expires: str = "90d", rate: int = 600) -> str:
        with self.installation.store.transaction() as session:
            issued = issue(
                session,
                self.installation.settings.file,
                user=f"slack:{user}",
                name="test",
                expires=expires,
                rate_per_minute=rate,
                created_by="operator:test",
            )
            return issued.secret

    def shop_scalar(self, sql: str) -> Any:
        with sqlite3.connect(self.shop_path) as conn:
            return conn.execute(sql).fetchone()[0]


@pytest.fixture(scope="session")
def api_world(store_server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiWorld]:
    home = tmp_path_factory.mktemp("api-home")
    installation = new_installation(store_server, home)
    data = tmp_path_factory.mktemp("api-sqlite")
    build_shop(data / "shop.sqlite")
    build_hr(data / "hr.sqlite")
    installation.add("shop", f"sqlite:///{data / 'shop.sqlite'}")
    installation.add(HIDDEN_DATABASE, f"sqlite:///{data / 'hr.sqlite'}")
    config = home / "tablescout.yaml"
    config.write_text(config.read_text() + ROLES)
    assert installation.settings.database_url is not None
    installation.settings = isolated_settings(home, database_url=installation.settings.database_url.get_secret_value())
    embedder = default_embedder()
    for name in ("shop", HIDDEN_DATABASE):
        report = refresh_source(installation.settings, installation.store, name, AnalysisOptions(), embedder=embedder)
        assert report.analysis.error is None
    now = datetime.now(UTC)
    with installation.store.transaction() as session:
        for user, (group_id, attributes) in USERS.items():
            member = directory.upsert_user(
                session, platform="slack", user_id=user, synced_at=now, attributes=attributes
            )
            group = directory.upsert_group(session, platform="slack", group_id=group_id, synced_at=now)
            directory.replace_members(session, group, [member])
    world = TurnWorld(installation, Encoders(embedder, BiEncoderReranker(embedder)), data / "shop.sqlite")
    yield ApiWorld(world, data / "shop.sqlite")
    installation.store.close()


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    text: str

    def json(self) -> Any:
        return json.loads(self.text)


@dataclass
class ApiServer:
    world: ApiWorld
    model: FakeModelServer
    thread: ServerThread
    bot: BotServer

    @property
    def url(self) -> str:
        return self.thread.url

    def call(
        self, method: str, path: str, token: str | None = None, body: Any = None, raw: bytes | None = None
    ) -> Reply:
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        request = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)  # noqa: S310
        try:
            with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - the local test server
                return Reply(response.status, dict(response.headers), response.read().decode())
        except urllib.error.HTTPError as exc:
            return Reply(exc.code, dict(exc.headers), exc.read().decode())


@pytest.fixture
def api_server(api_world: ApiWorld, fake_anthropic: FakeModelServer) -> Iterator[ApiServer]:
    """The bot server with only the API surface; its relay runs each stored turn in a thread of this process."""
    env = api_world.world.environment(fake_anthropic)

    def send(_task: str, args: Any) -> None:
        threading.Thread(target=api_world.world.run, args=(env, int(args[0])), daemon=True).start()

    settings = env.settings
    bot = BotServer(
        settings, api_world.installation.store, send=send, others=[ApiSurface(settings, api_world.installation.store)]
    )
    thread = ServerThread(bot.web_app()).start()
    try:
        yield ApiServer(api_world, fake_anthropic, thread, bot)
    finally:
        thread.stop()
