"""A private Redis server per test process, so parallel test processes (and tests that restart Redis) never share
a broker: each pytest process (each xdist worker) starts its own `redis-server` on a free loopback port."""

from __future__ import annotations

import atexit
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import redis


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """A `redis-server` child process that keeps nothing on disk; it can be stopped and started again on its port."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="ts-redis-"))
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def start(self, timeout_s: float = 10.0) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed; the tests need it")
        options = ["--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(
            [binary, *options, "--dir", str(self.dir), "--databases", "16"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=0.5)
                client.ping()
                client.close()
                return
            except redis.RedisError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not answer on port {self.port} within {timeout_s}s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.process = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


_shared: RedisServer | None = None


def redis_url(db: int) -> str:
    """The URL of database `db` on this test process's own Redis server (started on first use)."""
    global _shared
    if _shared is None:
        _shared = RedisServer()
        _shared.start()
        atexit.register(_shared.close)
    return f"{_shared.url}/{db}"
