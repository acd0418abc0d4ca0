"""`tablescout health bot|worker`, the probes of the image, compose and the chart: against the real bot server and a
real Celery worker on Redis."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from core.store.embedded import EmbeddedServer
from tests.conftest import create_scratch_database
from tests.deploy.tooling import clean_env, run_command
from tests.redis_server import redis_url
from tests.support import REPO

REDIS_URL = redis_url(9)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def health(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_command(["tablescout", "health", *args], clean_env(TABLESCOUT_HOME=str(home), COLUMNS="200", **env))


def wait_until(check: object, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.3)
    raise AssertionError(f"not ready within {seconds} s")


# --- bot -----------------------------------------------------------------------------------------------------------


@pytest.fixture
def bot_server(home: Path, store_server: EmbeddedServer) -> Iterator[str]:
    """`tablescout serve` for Teams, on a migrated store of its own; yields its /healthz URL."""
    url = create_scratch_database(store_server.url, "ts_health").render_as_string(hide_password=False)
    env = clean_env(
        TABLESCOUT_HOME=str(home),
        TABLESCOUT_DATABASE_URL=url,
        TABLESCOUT_REDIS_URL=REDIS_URL,
        TABLESCOUT_TEAMS_APP_ID="00000000-0000-4000-8000-000000000001",
        TABLESCOUT_TEAMS_APP_PASSWORD="not-used-here",
    )
    assert run_command(["tablescout", "init"], env).returncode == 0
    port = free_port()
    argv = [sys.executable, "-m", "tablescout", "serve", "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(argv, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: _listening(port) or process.poll() is not None, 60)
        assert process.poll() is None, process.stdout.read().decode() if process.stdout else ""
        yield f"http://127.0.0.1:{port}/healthz"
    finally:
        process.terminate()
        process.wait(timeout=30)


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_bot_probe_passes_against_the_real_server(home: Path, bot_server: str) -> None:
    result = health(home, "bot", "--url", bot_server)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("bot healthy: ")
    assert json.loads(result.stdout.removeprefix("bot healthy: "))["store"] == "ok"


def test_bot_probe_says_when_the_server_keeps_the_last_valid_configuration(home: Path, bot_server: str) -> None:
    config = home / "tablescout.yaml"
    config.write_text(config.read_text() + "default_role: nobody\n")
    result = health(home, "bot", "--url", bot_server)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("bot degraded: the configuration loaded at ")
    assert f"stays in use until {config} is fixed: " in result.stdout
    assert "default_role: role 'nobody' is not defined under roles" in result.stdout


class _Unhealthy(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b'{"status": "unavailable", "store": "unreachable"}'
        self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


def test_bot_probe_fails_on_503_with_the_reason(home: Path) -> None:
    """What /healthz answers while the store is down (bot/server.py), served here by a stand-in."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Unhealthy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = health(home, "bot", "--url", f"http://127.0.0.1:{server.server_port}/healthz")
    finally:
        server.shutdown()
    assert result.returncode == 1
    assert "answered 503" in result.stderr
    assert "unreachable" in result.stderr


def test_bot_probe_fails_when_nothing_listens(home: Path) -> None:
    result = health(home, "bot", "--url", f"http://127.0.0.1:{free_port()}/healthz", "--timeout", "2")
    assert result.returncode == 1
    assert "did not answer" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_bot_probe_refuses_other_schemes(home: Path) -> None:
    result = health(home, "bot", "--url", "file:///etc/passwd")
    assert result.returncode == 1
    assert "http:// or https://" in result.stderr


def test_bot_probe_ignores_proxies(home: Path, bot_server: str) -> None:
    """A probe talks to its own pod even where HTTP_PROXY is set for the model API."""
    result = health(home, "bot", "--url", bot_server, HTTP_PROXY="http://127.0.0.1:9", http_proxy="http://127.0.0.1:9")
    assert result.returncode == 0, result.stderr


# --- worker --------------------------------------------------------------------------------------------------------


@pytest.fixture
def celery_worker(home: Path, store_server: EmbeddedServer) -> Iterator[str]:
    """A real Celery worker of tablescout's app on Redis, under a node name of its own, with a migrated store and a
    model configured (it loads the turns' encoders and model client before it answers); yields the name."""
    node = f"health-{uuid.uuid4().hex[:8]}@{socket.gethostname()}"
    url = create_scratch_database(store_server.url, "ts_health_worker").render_as_string(hide_password=False)
    env = clean_env(
        TABLESCOUT_HOME=str(home),
        TABLESCOUT_REDIS_URL=REDIS_URL,
        TABLESCOUT_DATABASE_URL=url,
        TABLESCOUT_MODEL="anthropic:not-called",
        ANTHROPIC_API_KEY="not-used-here",
        ANTHROPIC_BASE_URL=f"http://127.0.0.1:{free_port()}",
    )
    assert run_command(["tablescout", "init"], env).returncode == 0
    argv = [sys.executable, "-m", "celery", "--app=workers.app", "worker", "--pool=solo", f"--hostname={node}"]
    argv += ["--without-gossip", "--without-mingle", "--loglevel=warning", "--queues=health-probe-test"]
    process = subprocess.Popen(argv, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: health(home, "worker", "--node", node, "--timeout", "1", **_redis()).returncode == 0, 90)
        yield node
    finally:
        process.terminate()
        process.wait(timeout=30)


def _redis() -> dict[str, str]:
    return {"TABLESCOUT_REDIS_URL": REDIS_URL}


def test_worker_probe_passes_when_the_worker_answers(home: Path, celery_worker: str) -> None:
    result = health(home, "worker", "--node", celery_worker, **_redis())
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"worker healthy: {celery_worker} answered ")
    answer = json.loads(result.stdout.strip().removeprefix(f"worker healthy: {celery_worker} answered "))
    assert answer["ok"] == "pong"
    assert answer["config"]["state"] == "ok"
    assert answer["config"]["path"] == str(home / "tablescout.yaml")
    assert answer["turns"]["state"] == "ready"  # encoders and model client loaded at start


def test_worker_probe_says_when_the_worker_keeps_the_last_valid_configuration(home: Path, celery_worker: str) -> None:
    (home / "tablescout.yaml").write_text("roles:\n  staff: {}\ngroups:\n  - platform: slak\n")
    result = health(home, "worker", "--node", celery_worker, **_redis())
    assert result.returncode == 0, result.stderr  # a restart would not help: it keeps serving
    line = result.stdout.strip()
    assert line.startswith(f"worker degraded: {celery_worker} answered, but the configuration loaded at ")
    assert f"stays in use until {home / 'tablescout.yaml'} is fixed: " in line
    assert "groups.0.platform" in line


def test_worker_probe_fails_for_a_worker_that_does_not_answer(home: Path, celery_worker: str) -> None:
    # another worker answering on the same broker does not make this host's worker healthy
    result = health(home, "worker", "--timeout", "1", **_redis())
    assert result.returncode == 1
    assert f"worker celery@{socket.gethostname()} did not answer a ping within 1 s" in result.stderr


def test_worker_probe_fails_when_the_broker_is_down(home: Path) -> None:
    result = health(home, "worker", "--timeout", "1", TABLESCOUT_REDIS_URL=f"redis://127.0.0.1:{free_port()}/0")
    assert result.returncode == 1
    assert "the broker cannot be reached" in result.stderr


def test_worker_probe_needs_the_broker_url(home: Path) -> None:
    result = health(home, "worker")
    assert result.returncode == 1
    assert "TABLESCOUT_REDIS_URL is not set" in result.stderr
