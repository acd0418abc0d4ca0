"""The MCP server (issue 36 item 3) through the official `mcp` client: over streamable HTTP at `/mcp` on the bot
server and over stdio from `tablescout mcp`; every tool and resource against the real store and SQLite source, a
clerk's token reading filtered rows and masked columns, a revoked token refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from sqlalchemy import create_engine, text

from catalog.analysis import AnalysisOptions
from catalog.registration import remove_source
from core.store.models.base import utcnow
from core.store.repositories import api_tokens
from tests.api.world import (
    EMAILS,
    HIDDEN_TABLE,
    PHONES,
    SEOUL_ORDER,
    SHOP_TABLES,
    ApiServer,
    ApiWorld,
    canaries,
    shop_rows,
)
from tests.fakes.model_server import Call, FakeModelServer, Say
from tests.support import MARIADB_SERVER, REPO
from workers.catalog_refresh import refresh_source

TOOLS = {"search_tables", "get_table_card", "run_readonly_sql", "ask", "add_note"}


def over_http(server: ApiServer, token: str, work: Callable[[Client], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        async with http, Client(streamable_http_client(f"{server.url}/mcp", http_client=http)) as client:
            return await work(client)

    return anyio.run(main)


def text_of(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def test_the_client_lists_the_tools_and_calls_each_as_the_clerk(api_server: ApiServer) -> None:
    clerk = api_server.world.token("U_CLERK")
    api_server.model.script([Call("run_sql", {"database": "shop", "sql": "SELECT COUNT(*) FROM ORD_MST"}), Say("done")])

    async def work(client: Client) -> dict[str, Any]:
        listed = await client.list_tools()
        out: dict[str, Any] = {"tools": {t.name: t for t in listed.tools}}
        out["search"] = await client.call_tool("search_tables", {"question": "customer email addresses"})
        out["card"] = await client.call_tool("get_table_card", {"database": "shop", "table": "CUST_MST"})
        out["count"] = await client.call_tool(
            "run_readonly_sql", {"database": "shop", "sql": "SELECT COUNT(*) AS n FROM ORD_MST"}
        )
        out["emails"] = await client.call_tool(
            "run_readonly_sql", {"database": "shop", "sql": "SELECT EMAIL FROM CUST_MST ORDER BY CUST_NO"}
        )
        out["orders"] = await client.call_tool(
            "run_readonly_sql", {"database": "shop", "sql": "SELECT ORD_NO FROM ORD_MST"}
        )
        out["payroll"] = await client.call_tool(
            "run_readonly_sql", {"database": "shop", "sql": "SELECT SUM(SALARY) FROM PAY_ROLL"}
        )
        out["hidden_card"] = await client.call_tool("get_table_card", {"database": "shop", "table": HIDDEN_TABLE})
        out["note"] = await client.call_tool(
            "add_note", {"database": "shop", "tables": ["CUST_MST"], "text": "GRADE is not kept here", "private": True}
        )
        out["ask"] = await client.call_tool("ask", {"question": "How many orders do we have?"})
        resources = await client.list_resources()
        out["resources"] = [str(r.uri) for r in resources.resources]
        out["databases"] = await client.read_resource("tablescout://databases")
        out["summary"] = await client.read_resource("tablescout://databases/shop")
        return out

    out = over_http(api_server, clerk, work)
    assert set(out["tools"]) == TOOLS
    for tool in out["tools"].values():
        assert len(tool.description) > 150, f"{tool.name}: a description a model can act on"
    assert out["tools"]["run_readonly_sql"].annotations.read_only_hint is True

    candidates = out["search"].structured_content["candidates"]
    assert any(c["table"] == "CUST_MST" for c in candidates)
    card = text_of(out["card"])
    assert "masked for you (redact)" in card
    assert "TEL_NO" not in card
    busan = api_server.world.shop_scalar("SELECT COUNT(*) FROM ORD_MST WHERE SHIP_CITY = 'Busan'")
    assert out["count"].structured_content["rows"] == [[busan]]
    assert out["count"].structured_content["policies"], "the row filter is said to apply"
    emails = out["emails"].structured_content
    assert emails["status"] == "ok"
    assert not any(email in json.dumps(emails) for email in EMAILS), "masked values never come back"
    assert SEOUL_ORDER not in json.dumps(out["orders"].structured_content), "the row filter keeps Seoul out"
    assert out["payroll"].structured_content["status"] == "denied"
    assert out["hidden_card"].is_error
    assert HIDDEN_TABLE not in text_of(out["hidden_card"]).replace(f"'{HIDDEN_TABLE}'", "")
    assert out["note"].structured_content["private"] is True
    answer = out["ask"].structured_content
    assert answer["status"] == "answered"
    assert answer["answer"]["sql"][0]["rows"] == [[busan]]
    assert "tablescout://databases" in out["resources"]
    listed = json.loads(out["databases"].contents[0].text)
    assert [d["name"] for d in listed] == ["shop"]
    assert "CUST_MST" in out["summary"].contents[0].text
    everything = json.dumps([text_of(out[k]) for k in ("search", "card", "count", "emails", "orders", "note")])
    assert [c for c in canaries() if c in everything and c != HIDDEN_TABLE] == []


def test_the_manager_reads_what_the_clerk_may_not(api_server: ApiServer) -> None:
    boss = api_server.world.token("U_BOSS")

    async def work(client: Client) -> Any:
        return await client.call_tool(
            "run_readonly_sql", {"database": "shop", "sql": "SELECT TEL_NO, EMAIL FROM CUST_MST ORDER BY CUST_NO"}
        )

    rows = over_http(api_server, boss, work).structured_content["rows"]
    assert rows[0] == [PHONES[0], EMAILS[0]], "without masks the values come back (so the clerk's check can fail)"


def test_a_revoked_token_is_refused_before_the_protocol_starts(api_server: ApiServer) -> None:
    world = api_server.world
    token = world.token("U_CLERK")
    with world.installation.store.transaction() as session:
        api_tokens.revoke(session, api_tokens.all_tokens(session)[-1].id, utcnow())
    reply = api_server.call("POST", "/mcp", token=token, body={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert reply.status == 401
    assert reply.json() == {"error": "this API token was revoked", "code": "unauthorized"}
    assert reply.headers["WWW-Authenticate"] == "Bearer"
    with pytest.raises(Exception):  # noqa: B017, PT011 - the client gives up on the 401 however it words it
        over_http(api_server, token, lambda client: client.list_tools())


def stdio_parameters(world: ApiWorld, token: str) -> StdioServerParameters:
    settings = world.installation.settings
    assert settings.database_url is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLESCOUT_")}
    env |= {
        "TABLESCOUT_HOME": str(settings.home),
        "TABLESCOUT_DATABASE_URL": settings.database_url.get_secret_value(),
        "TABLESCOUT_MULTILINGUAL_VECTORS": "false",
        "TABLESCOUT_TOKEN": token,
    }
    return StdioServerParameters(command=sys.executable, args=["-m", "tablescout", "mcp"], env=env, cwd=str(REPO))


def test_tablescout_mcp_serves_the_tools_over_stdio_as_the_token_user(
    api_world: ApiWorld, fake_anthropic: FakeModelServer
) -> None:
    """Without Redis, `ask` runs the turn in the server's own process, with the configured model."""
    clerk = api_world.token("U_CLERK")
    sql = {"database": "shop", "sql": "SELECT COUNT(*) FROM ORD_MST"}
    fake_anthropic.script([Call("run_sql", sql), Say("done")])
    parameters = stdio_parameters(api_world, clerk)
    assert parameters.env is not None
    parameters.env |= {
        "TABLESCOUT_MODEL": "anthropic:fake-model",
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake_anthropic.url,
    }

    async def main() -> tuple[Any, Any, Any]:
        async with Client(parameters) as client:
            listed = await client.list_tools()
            count = await client.call_tool("run_readonly_sql", sql)
            asked = await client.call_tool("ask", {"question": "How many orders do we have?"})
            return listed, count, asked

    listed, count, asked = anyio.run(main)
    assert {t.name for t in listed.tools} == TOOLS
    busan = api_world.shop_scalar("SELECT COUNT(*) FROM ORD_MST WHERE SHIP_CITY = 'Busan'")
    assert count.structured_content["rows"] == [[busan]]
    assert asked.structured_content["status"] == "answered", text_of(asked)
    assert asked.structured_content["answer"]["sql"][0]["rows"] == [[busan]]


def test_tablescout_mcp_refuses_to_start_with_a_revoked_token(api_world: ApiWorld) -> None:
    token = api_world.token("U_CLERK")
    with api_world.installation.store.transaction() as session:
        api_tokens.revoke(session, api_tokens.all_tokens(session)[-1].id, utcnow())
    parameters = stdio_parameters(api_world, token)
    done = subprocess.run(
        [parameters.command, *parameters.args],
        env=parameters.env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 1
    assert "TABLESCOUT_TOKEN: this API token was revoked" in done.stderr
    assert done.stdout == ""


@pytest.fixture
def mariadb_shop(api_world: ApiWorld) -> Iterator[str]:
    """The shop's tables in a scratch MariaDB database, registered and analysed as `shop_m` for one test."""
    name = f"ts_api_{uuid.uuid4().hex[:8]}"
    server = create_engine(MARIADB_SERVER)
    with server.begin() as conn:
        conn.execute(text(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4"))
    url = f"mysql+pymysql://root@127.0.0.1:3306/{name}"
    source = create_engine(url)
    with source.begin() as conn:
        for statement in SHOP_TABLES:
            conn.exec_driver_sql(statement)
        for table, rows in shop_rows().items():
            marks = ", ".join(["%s"] * len(rows[0]))
            conn.exec_driver_sql(f"INSERT INTO {table} VALUES ({marks})", rows)
    source.dispose()
    installation = api_world.installation
    installation.add("shop_m", url, allow_privileged=True)  # root is a superuser
    embedder = api_world.world.encoders.embedder
    refresh_source(installation.settings, installation.store, "shop_m", AnalysisOptions(), embedder=embedder)
    try:
        yield "shop_m"
    finally:
        remove_source(installation.settings, installation.store, "shop_m")
        with server.begin() as conn:
            conn.execute(text(f"DROP DATABASE IF EXISTS `{name}`"))
        server.dispose()


@pytest.mark.mariadb
def test_a_mariadb_source_filters_and_masks_for_the_clerk_too(api_server: ApiServer, mariadb_shop: str) -> None:
    clerk = api_server.world.token("U_CLERK")

    async def work(client: Client) -> list[Any]:
        queries = [
            "SELECT COUNT(*) FROM ORD_MST",
            "SELECT EMAIL FROM CUST_MST ORDER BY CUST_NO",
            "SELECT TEL_NO FROM CUST_MST",
            "SELECT ORD_NO FROM ORD_MST",
        ]
        return [await client.call_tool("run_readonly_sql", {"database": mariadb_shop, "sql": q}) for q in queries]

    count, emails, phones, orders = (r.structured_content for r in over_http(api_server, clerk, work))
    busan = api_server.world.shop_scalar("SELECT COUNT(*) FROM ORD_MST WHERE SHIP_CITY = 'Busan'")
    assert count["rows"] == [[busan]]
    assert emails["status"] == "ok"
    assert len(emails["rows"]) == 8
    assert not any(email in json.dumps(emails) for email in EMAILS)
    assert phones["status"] != "ok"
    assert PHONES[0] not in json.dumps(phones)
    assert SEOUL_ORDER not in json.dumps(orders)
