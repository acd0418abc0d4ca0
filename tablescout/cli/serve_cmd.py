"""`tablescout serve`: the bot server for Slack and Teams (SPEC §8), with the HTTP API (`/api/v1/`) and the MCP
server (`/mcp`) beside them. It stores each message or API question as a turn and hands it to the workers through
Redis; run `tablescout worker` beside it."""

from __future__ import annotations

import logging
from typing import Annotated

import typer

from tablescout.cli.context import current_store, settings


def serve(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")] = 3000,
    slack_socket_mode: Annotated[
        bool,
        typer.Option("--slack-socket-mode", help="Take Slack events over a Socket Mode connection (SLACK_APP_TOKEN)."),
    ] = False,
    platform: Annotated[
        list[str] | None,
        typer.Option(
            "--platform",
            help="Serve only this chat platform, slack or teams (repeatable; default: every configured one).",
        ),
    ] = None,
) -> None:
    """Serve /slack/events, /api/messages (Teams), the HTTP API under /api/v1/, MCP at /mcp, and /healthz."""
    # Imported here, not at the top: the bot server loads the Slack and Bot Framework SDKs, the API the MCP SDK.
    from api.surface import ApiSurface
    from bot.server import serve as run_server

    config = settings()
    with current_store(config) as store:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        run_server(
            config,
            store,
            host=host,
            port=port,
            slack_socket_mode=slack_socket_mode,
            platforms=platform,
            others=[ApiSurface(config, store)],
        )
