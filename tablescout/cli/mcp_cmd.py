"""`tablescout mcp`: the MCP server over stdio, for desktop assistants and IDE agents (docs/api.md).

It acts with the API token in `TABLESCOUT_TOKEN`, checked at start and again on every call. Asked questions are
stored as turns and run by the workers behind `TABLESCOUT_REDIS_URL`, or in this process when it is not set.
Standard output carries the protocol; messages go to standard error.
"""

from __future__ import annotations

import logging

from core.errors import ConfigError
from tablescout.cli.context import current_store, settings

#: How long past the turn deadline the `ask` tool waits for the answer.
ASK_MARGIN_S = 30.0


def mcp() -> None:
    """Serve the MCP tools (search_tables, get_table_card, run_readonly_sql, ask, add_note) over stdio."""
    # Imported here, not at the top: the MCP SDK, search and the SQL executor load only for this command.
    import anyio

    from api.errors import ApiError
    from api.gateway import Gateway
    from api.mcp_server import build_server
    from api.turns import Dispatch, PublishNow, RunHere, TurnDesk

    config = settings()
    if config.token is None:
        raise ConfigError("set TABLESCOUT_TOKEN to an API token (an operator makes one with `tablescout token create`)")
    header = f"Bearer {config.token.get_secret_value()}"
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    with current_store(config) as store:
        gateway = Gateway(config, store)
        try:
            gateway.authenticate(header)
        except ApiError as exc:
            raise ConfigError(f"TABLESCOUT_TOKEN: {exc}") from exc
        dispatch: Dispatch
        if config.redis_url is None:
            dispatch = RunHere(config, store)
        else:
            from workers.app import app

            dispatch = PublishNow(store, lambda name, args: app.send_task(name, args=list(args)))
        desk = TurnDesk(gateway, dispatch)
        server = build_server(
            desk, lambda: gateway.authenticate(header), ask_wait_s=config.turn_deadline_s + ASK_MARGIN_S
        )
        anyio.run(server.run_stdio_async)
