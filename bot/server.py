"""The bot server (`tablescout serve`, SPEC §1 and §8): one aiohttp process serving `/slack/events`,
`/api/messages` (Teams) and `/healthz`, optionally holding a Slack Socket Mode connection instead of
`/slack/events`.

Every message is stored (turn and job, one transaction) before the platform gets its acknowledgement; the outbox
relay thread then publishes the job to the workers' Redis queue by task name. The server never runs turns.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from aiohttp import web
from celery import Celery

from bot import result_files
from bot.feedback import answer_clicked, reason_given
from bot.intake import Accepted, IncomingMessage, accept
from bot.json_shape import MalformedBody, json_object
from bot.relay import Relay
from bot.slack.app import SlackInbound
from bot.teams.activity import TeamsFeedback, TeamsMessage
from bot.teams.adapter import build_adapter, process_inbound
from bot.teams.poster import TeamsDeliveryError, TeamsPoster
from core.config.settings import Settings
from core.errors import ConfigError
from core.store.database import Store
from core.store.repositories import health

log = logging.getLogger(__name__)

PLATFORMS = ("slack", "teams")
#: Threads for storing messages (Slack listeners run in them) and for replies that need no turn.
STORE_THREADS = 16
MAX_BODY_BYTES = 1 << 20


def celery_sender(settings: Settings) -> Any:
    """A Celery client for publishing jobs by task name (the bot never imports the workers' code)."""
    if settings.redis_url is None:
        raise ConfigError("the bot server hands turns to workers through Redis: set TABLESCOUT_REDIS_URL")
    client = Celery("tablescout-bot", broker=settings.redis_url.get_secret_value(), set_as_current=False)
    client.conf.update(task_serializer="json", accept_content=["json"], broker_connection_retry_on_startup=True)

    def send(name: str, args: Sequence[Any]) -> None:
        client.send_task(name, args=list(args))

    return send


class Surface(Protocol):
    """A surface served beside the chat platforms (the HTTP API and the MCP server, `api.surface`): it adds its
    routes to the application and reports each turn it stores, which the relay then publishes like a chat turn's."""

    name: str

    def install(self, app: web.Application, on_stored: Callable[[int], None]) -> None: ...


class BotServer:
    """The chat surfaces a configuration enables, and any other `Surface`, around one store and one relay."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        *,
        slack_socket_mode: bool = False,
        teams_testing: bool = False,
        platforms: Collection[str] | None = None,
        send: Any = None,
        others: Sequence[Surface] = (),
    ) -> None:
        """`platforms` limits the server to some chat platforms ("slack", "teams"); a platform named there must be
        configured. Without it, every configured platform is served. `others` are served beside them."""
        self.settings = settings
        self.store = store
        self.others = list(others)
        unknown = sorted(set(platforms or ()) - set(PLATFORMS))
        if unknown:
            raise ConfigError(f"unknown platform(s) {', '.join(unknown)}; choose from {', '.join(PLATFORMS)}")
        serve_slack = "slack" in platforms if platforms else bool(settings.slack_bot_token or slack_socket_mode)
        serve_teams = "teams" in platforms if platforms else bool(settings.teams_app_id or teams_testing)
        if slack_socket_mode and not serve_slack:
            raise ConfigError("--slack-socket-mode was given but Slack is not among the platforms to serve")
        if not (serve_slack or serve_teams or self.others):
            raise ConfigError(
                "nothing to serve: set SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET for Slack (or SLACK_APP_TOKEN with "
                "--slack-socket-mode), or TABLESCOUT_TEAMS_APP_ID and TABLESCOUT_TEAMS_APP_PASSWORD for Teams"
            )
        self.relay = Relay(store, send or celery_sender(settings))
        self.executor = ThreadPoolExecutor(STORE_THREADS, thread_name_prefix="tablescout-bot")
        self.slack: SlackInbound | None = None
        self.slack_socket_mode = slack_socket_mode
        self._socket: Any = None
        if serve_slack:
            self.slack = SlackInbound(
                settings, store, on_stored=self._stored, background=self.executor, socket_mode=slack_socket_mode
            )
        self.teams_adapter: Any = None
        self.teams_poster: TeamsPoster | None = None
        if serve_teams:
            self.teams_adapter = build_adapter(settings, testing=teams_testing)
            self.teams_poster = TeamsPoster(settings, testing=teams_testing)

    def surfaces(self) -> dict[str, str]:
        slack = "off" if self.slack is None else ("socket mode" if self.slack_socket_mode else "http")
        shown = {"slack": slack, "teams": "on" if self.teams_adapter is not None else "off"}
        return shown | {other.name: "on" for other in self.others}

    # --- lifecycle --------------------------------------------------------------------------------------------------

    def web_app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY_BYTES)
        app.router.add_get("/healthz", self.healthz)
        if self.slack is not None and not self.slack_socket_mode:
            app.router.add_post("/slack/events", self.slack_events)
        if self.teams_adapter is not None:
            app.router.add_post("/api/messages", self.teams_messages)
            app.router.add_get(result_files.ROUTE, result_files.ResultFiles(self.store, self.executor))
        for other in self.others:
            other.install(app, self._stored)
        app.on_startup.append(self._start)
        app.on_cleanup.append(self._stop)
        return app

    async def _start(self, _: web.Application) -> None:
        self.relay.start()
        self.relay.kick()  # jobs stored while no server ran
        if self.slack is not None and self.slack_socket_mode:
            self._socket = self.slack.socket_mode()
            await asyncio.to_thread(self._socket.connect)
            log.info("Slack Socket Mode connected")

    async def _stop(self, _: web.Application) -> None:
        if self._socket is not None:
            await asyncio.to_thread(self._socket.close)
        self.relay.stop()
        self.executor.shutdown(wait=True)

    def _stored(self, turn_id: int) -> None:
        log.info("turn %s stored", turn_id)
        self.relay.kick()

    # --- routes -----------------------------------------------------------------------------------------------------

    async def healthz(self, _: web.Request) -> web.Response:
        """200 while the store answers; 503 when it does not. An invalid edit of the configuration file makes the
        status "degraded", still 200: the server keeps working on the last valid configuration, and a restart would
        not help (a new process refuses to start on the invalid file)."""
        config = await asyncio.to_thread(self._config_health)
        try:
            await asyncio.to_thread(health.ping, self.store.engine)
        except Exception as exc:
            log.warning("health check: metadata store unreachable: %s", exc)
            body = {"status": "unavailable", "store": "unreachable", "config": config} | self.surfaces()
            return web.json_response(body, status=503)
        status = "ok" if config["state"] == "ok" else "degraded"
        return web.json_response({"status": status, "store": "ok", "config": config} | self.surfaces())

    def _config_health(self) -> dict[str, Any]:
        try:
            return self.settings.config_state().health()
        except ConfigError as exc:  # never valid in this process (it was not started through load_settings)
            return {"state": "invalid", "path": str(self.settings.config_path), "error": str(exc)}

    async def slack_events(self, request: web.Request) -> web.Response:
        assert self.slack is not None
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return _too_large("/slack/events")
        headers = {name: request.headers.getall(name) for name in set(request.headers.keys())}
        loop = asyncio.get_running_loop()
        reply = await loop.run_in_executor(self.executor, self.slack.handle_http, body, request.query_string, headers)
        response = web.Response(status=reply.status, text=reply.body)
        for name, values in reply.headers.items():
            if name.lower() in ("content-type", "content-length"):
                continue
            for value in values:
                response.headers.add(name, value)
        content_type = reply.headers.get("content-type") or reply.headers.get("Content-Type")
        if content_type:
            response.content_type = str(content_type[0]).split(";")[0]
        return response

    async def teams_messages(self, request: web.Request) -> web.Response:
        try:
            body = json_object(await request.read(), "the body")
        except web.HTTPRequestEntityTooLarge:
            return _too_large("/api/messages")
        except MalformedBody as exc:
            return _malformed_activity(str(exc))
        received: list[tuple[TeamsMessage, Accepted]] = []

        files_url = result_files.public_base(request, self.settings)  # where the card's "all rows" links point

        async def on_message(message: TeamsMessage) -> None:
            incoming = IncomingMessage(
                platform="teams",
                event_id=message.activity_id,
                workspace_id=message.tenant_id or "",
                channel_id=message.conversation_id,
                thread_id=message.thread_id or "",
                user_id=message.user_aad_object_id or message.user_id,
                text=message.text,
                private=message.personal,
                reference=message.reference | {result_files.REFERENCE_KEY: files_url},
            )
            loop = asyncio.get_running_loop()
            accepted = await loop.run_in_executor(self.executor, self._accept, incoming)
            received.append((message, accepted))

        async def on_feedback(click: TeamsFeedback) -> None:
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(self.executor, self._teams_feedback, click)

        try:
            await process_inbound(
                self.teams_adapter, body, request.headers.get("Authorization", ""), on_message, on_feedback
            )
        except PermissionError as exc:
            return web.json_response({"error": str(exc)}, status=401)
        except ValueError as exc:  # MalformedBody, or what msrest could not read
            return _malformed_activity(str(exc))
        for message, accepted in received:
            if accepted.turn_id is not None and not accepted.duplicate:
                self._stored(accepted.turn_id)
            elif accepted.reply and self.teams_poster is not None:
                try:
                    await self.teams_poster.post_text(message.reference, accepted.reply)
                except TeamsDeliveryError as exc:
                    log.warning("could not reply in Teams conversation %s: %s", message.conversation_id, exc)
        return web.Response(status=200)

    def _teams_feedback(self, click: TeamsFeedback) -> None:
        """A 👍/👎 from Teams' feedback loop, with the reason its form asked for (Teams asks on both)."""
        with self.store.transaction() as session:
            clicked = answer_clicked(
                session,
                platform="teams",
                channel_id=click.conversation_id,
                message_id=click.message_id,
                user_id=click.user_id,
                rating=click.rating,
            )
            if clicked is not None and click.reason and clicked.rating == "bad":
                reason_given(
                    session, turn_id=clicked.turn_id, platform="teams", user_id=click.user_id, reason=click.reason
                )
        if clicked is None:
            log.info("Teams feedback on activity %s, which is no answer of ours; ignored", click.message_id)

    def _accept(self, message: IncomingMessage) -> Accepted:
        with self.store.transaction() as session:
            accepted = accept(session, message, self.settings.file)
        if accepted.duplicate:
            log.info("%s event %s delivered again; already stored", message.platform, message.event_id)
        return accepted


def _too_large(route: str) -> web.Response:
    log.warning("refused a request to %s over %d bytes", route, MAX_BODY_BYTES)
    return web.json_response({"error": f"the body is over {MAX_BODY_BYTES} bytes"}, status=413)


def _malformed_activity(reason: str) -> web.Response:
    log.warning("refused a Teams activity: %s", reason)
    return web.json_response({"error": reason}, status=400)


def serve(
    settings: Settings,
    store: Store,
    *,
    host: str,
    port: int,
    slack_socket_mode: bool,
    platforms: Collection[str] | None = None,
    others: Sequence[Surface] = (),
) -> None:
    """Run the bot server until interrupted."""
    server = BotServer(settings, store, slack_socket_mode=slack_socket_mode, platforms=platforms, others=others)
    surfaces = ", ".join(f"{name}: {state}" for name, state in server.surfaces().items())
    print(f"tablescout bot server on http://{host}:{port} ({surfaces}); /healthz for health", flush=True)
    web.run_app(server.web_app(), host=host, port=port, print=None, access_log=None)
