"""`tablescout health bot|worker`: probes for container health checks and Kubernetes.

Each exits 0 and prints one line when the process it asks about is healthy, and exits 1 with the reason on stderr
otherwise. `bot` asks the bot server's `/healthz` (which answers 200 only while the metadata store is reachable);
`worker` asks a Celery worker through the broker, by default the worker of this host (`celery@HOSTNAME`, the
name `tablescout worker` gives itself), so it fails when that worker's consumer no longer answers or its turns are
not ready (the encoders and model client not loaded yet, or failed to load: workers.startup). Both print
"degraded" (and still exit 0) when the process runs on the last valid configuration because an edit of the
configuration file is invalid: the line says why.
"""

from __future__ import annotations

import json
import socket
from typing import Annotated, Any

import typer

from core.errors import TablescoutError
from tablescout.cli.context import console, settings

app = typer.Typer(
    help="Health probes for containers: exit 0 when healthy, 1 with the reason otherwise.", no_args_is_help=True
)

DEFAULT_BOT_URL = "http://127.0.0.1:3000/healthz"


class UnhealthyError(TablescoutError):
    """The probed process did not answer as a healthy one does."""


@app.command("bot")
def bot(
    url: Annotated[str, typer.Option("--url", help="The bot server's health endpoint.")] = DEFAULT_BOT_URL,
    timeout: Annotated[float, typer.Option("--timeout", min=0.1, max=120, help="Seconds to wait.")] = 5.0,
) -> None:
    """Ask the bot server's /healthz; healthy when it answers 200."""
    import urllib.error  # here, not at the top: no other command needs an HTTP client
    import urllib.request

    if not url.startswith(("http://", "https://")):
        raise UnhealthyError(f"--url must be an http:// or https:// URL, not {url!r}")
    # A probe talks to its own pod; an HTTP(S)_PROXY in the environment must not route it elsewhere.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        request = urllib.request.Request(url, method="GET")  # noqa: S310 - the scheme is checked above
        with opener.open(request, timeout=timeout) as response:
            body = response.read(4096).decode("utf-8", "replace")
            status = response.status
    except urllib.error.HTTPError as exc:
        detail = exc.read(512).decode("utf-8", "replace").strip()
        raise UnhealthyError(f"{url} answered {exc.code}" + (f": {_one_line(detail)}" if detail else "")) from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        raise UnhealthyError(f"{url} did not answer: {reason}") from exc
    if status != 200:
        raise UnhealthyError(f"{url} answered {status}: {_one_line(body)}")
    problem = _config_problem(_json_object(body).get("config"))
    if problem is not None:
        console.print(f"bot degraded: {problem}", highlight=False)
        return
    console.print(f"bot healthy: {_one_line(body)}", highlight=False)


@app.command("worker")
def worker(
    node: Annotated[
        str | None, typer.Option("--node", help="The worker to ping (default: celery@ this host's name).")
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", min=0.1, max=120, help="Seconds to wait for the reply.")] = (
        5.0
    ),
) -> None:
    """Ping a Celery worker through the broker; healthy when it replies within the timeout."""
    config = settings(check_file=False)  # the probe only needs the broker; the worker reports on the file
    if config.redis_url is None:
        raise UnhealthyError("TABLESCOUT_REDIS_URL is not set; a worker takes its jobs from Redis")
    name = node or f"celery@{socket.gethostname()}"
    from celery import Celery
    from kombu.exceptions import OperationalError

    from workers.health import HEALTH_COMMAND

    client = Celery("tablescout-probe", broker=config.redis_url.get_secret_value(), set_as_current=False)
    client.conf.update(accept_content=["json"], broker_connection_retry_on_startup=True)
    try:
        replies = client.control.broadcast(HEALTH_COMMAND, destination=[name], reply=True, timeout=timeout)
    except OperationalError as exc:
        raise UnhealthyError(f"the broker cannot be reached: {exc}") from exc
    finally:
        client.close()
    answered = {node_name: reply for entry in replies for node_name, reply in entry.items()}
    if name not in answered:
        raise UnhealthyError(f"worker {name} did not answer a ping within {timeout:g} s")
    reply = answered[name] if isinstance(answered[name], dict) else {}
    turns = reply.get("turns")
    if isinstance(turns, dict) and turns.get("state") != "ready":
        why = f": {turns['error']}" if turns.get("error") else ""
        raise UnhealthyError(_one_line(f"worker {name} is not ready to run turns ({turns.get('state')}){why}"))
    problem = _config_problem(reply.get("config"))
    if problem is not None:
        console.print(f"worker degraded: {name} answered, but {problem}", highlight=False)
        return
    console.print(f"worker healthy: {name} answered {json.dumps(reply)}", highlight=False)


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _config_problem(config: object) -> str | None:
    """What a health answer says about an invalid configuration file, in one line; None when it is fine.

    Degraded is still healthy to a probe (exit 0): the process keeps serving on the last valid configuration, and
    restarting it would not help, since a new process refuses to start on the invalid file."""
    if not isinstance(config, dict) or config.get("state") != "invalid":
        return None
    path = config.get("path") or "the configuration file"
    loaded = config.get("loaded_at")
    # The error's lines start with the file's path (`PATH:LINE: key: problem`); it is said once already.
    error = str(config.get("error") or "").removeprefix("invalid configuration:").replace(f"{path}:", "line ")
    keeps = f"the configuration loaded at {loaded} stays in use" if loaded else "no valid configuration is in use"
    return _one_line(f"{keeps} until {path} is fixed: {error}")


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= 500 else line[:497] + "..."
