"""A fake of Slack's Socket Mode: `apps.connections.open` on the fake Web API hands out a ws:// URL of this server,
which sends `hello` and then the envelopes a test queued, and records the acknowledgements it gets back.

slack_sdk's built-in Socket Mode client connects without TLS to any port other than 443, so the real client (and
slack-bolt's SocketModeHandler on top of it) runs unchanged against it.
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from typing import Any, Self

from aiohttp import WSMsgType, web

from tests.fakes.bot_server import ServerThread
from tests.fakes.slack_server import FakeSlack, SlackCall


class FakeSocketMode:
    def __init__(self, slack: FakeSlack) -> None:
        self.slack = slack
        self.acks: dict[str, dict[str, Any]] = {}
        self.connections = 0
        self._envelopes: asyncio.Queue[dict[str, Any]] | None = None
        self._lock = threading.Lock()
        app = web.Application()
        app.router.add_get("/link", self._socket)
        self.server = ServerThread(app)

    def __enter__(self) -> Self:
        self.server.start()
        self._envelopes = asyncio.run_coroutine_threadsafe(self._queue(), self.server.loop).result(5)
        self.slack.register("apps.connections.open", self._open)
        return self

    def __exit__(self, *_: object) -> None:
        self.server.stop()

    async def _queue(self) -> asyncio.Queue[dict[str, Any]]:
        return asyncio.Queue()

    def _open(self, _call: SlackCall) -> dict[str, Any]:
        return {"url": f"ws://127.0.0.1:{self.server.port}/link"}

    def send_event(self, payload: dict[str, Any]) -> str:
        """Queue an Events API payload for the connected client; returns its envelope id."""
        envelope_id = str(uuid.uuid4())
        envelope = {
            "envelope_id": envelope_id,
            "type": "events_api",
            "accepts_response_payload": False,
            "retry_attempt": 0,
            "retry_reason": "",
            "payload": payload,
        }
        assert self._envelopes is not None
        self.server.loop.call_soon_threadsafe(self._envelopes.put_nowait, envelope)
        return envelope_id

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        with self._lock:
            self.connections += 1
        await socket.send_json({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A0FAKE"}})
        assert self._envelopes is not None
        sender = asyncio.create_task(self._send(socket, self._envelopes))
        try:
            async for message in socket:
                if message.type == WSMsgType.TEXT:
                    data = json.loads(message.data)
                    if "envelope_id" in data:
                        with self._lock:
                            self.acks[str(data["envelope_id"])] = data
        finally:
            sender.cancel()
        return socket

    async def _send(self, socket: web.WebSocketResponse, queue: asyncio.Queue[dict[str, Any]]) -> None:
        while True:
            envelope = await queue.get()
            await socket.send_json(envelope)
