"""The bot server's aiohttp application run on 127.0.0.1 from a thread of the test process, and a tiny HTTP client
for posting to it."""

from __future__ import annotations

import asyncio
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass

from aiohttp import web


class ServerThread:
    """An aiohttp application served on 127.0.0.1 from its own event loop thread."""

    def __init__(self, app: web.Application) -> None:
        self.loop = asyncio.new_event_loop()
        self.runner = web.AppRunner(app)
        self.thread = threading.Thread(target=self.loop.run_forever, name="bot-server", daemon=True)
        self.port = 0

    def start(self) -> ServerThread:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(30)
        return self

    async def _start(self) -> None:
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(self.runner.addresses[0][1])

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@dataclass(frozen=True)
class Reply:
    status_code: int
    text: str


def post(url: str, body: str, headers: dict[str, str]) -> Reply:
    request = urllib.request.Request(url, data=body.encode(), headers=headers, method="POST")  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - the local test server
            return Reply(response.status, response.read().decode())
    except urllib.error.HTTPError as exc:
        return Reply(exc.code, exc.read().decode())
