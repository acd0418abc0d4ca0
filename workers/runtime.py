"""What a worker process opens once and shares between its turns: settings, store, encoders, model provider.

Opened lazily on the first job (so importing the app stays cheap) and closed when the process shuts down.
"""

from __future__ import annotations

import logging
import os
import socket
import threading

from core.errors import ConfigError, TablescoutError
from core.settings import Settings, load_settings
from core.store import migrate
from core.store.database import Store, open_store
from core.store.repositories import turns as turn_repo
from search.encoders import BiEncoderReranker, CrossEncoderReranker, Reranker, shared_embedder
from search.service import Encoders
from workers.models.registry import describe_model_setup, provider_from_settings
from workers.turns.engine import TurnEnvironment

log = logging.getLogger(__name__)
_lock = threading.Lock()
_environment: TurnEnvironment | None = None


def encoders_for(settings: Settings) -> Encoders:
    embedder = shared_embedder(settings.embedding_model)
    reranker: Reranker = (
        CrossEncoderReranker(settings.reranker_model) if settings.reranker_model else BiEncoderReranker(embedder)
    )
    return Encoders(embedder, reranker)


def owner_label() -> str:
    """Who holds a turn's lease: host, process and thread, unique among live workers."""
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


def open_environment(settings: Settings, store: Store | None = None) -> TurnEnvironment:
    """A turn environment for `settings`; refuses to start without a configured model."""
    provider = provider_from_settings(settings)
    if provider is None:
        raise ConfigError("no model is configured; " + describe_model_setup())
    opened = store or open_store(settings)
    migrate.require_current(opened.engine)
    return TurnEnvironment(
        settings=settings, store=opened, encoders=encoders_for(settings), provider=provider, owner=owner_label()
    )


def environment() -> TurnEnvironment:
    """The process's environment, opened on first use; the owner label names the calling thread."""
    global _environment
    with _lock:
        if _environment is None:
            _environment = open_environment(load_settings())
        env = _environment
    return TurnEnvironment(
        settings=env.settings, store=env.store, encoders=env.encoders, provider=env.provider, owner=owner_label()
    )


def fail_turn(turn_id: int, message: str) -> None:
    """Record a turn as failed when this process cannot run turns at all (best effort: logs when even that fails)."""
    try:
        store = open_store(load_settings())
    except TablescoutError as exc:
        log.error("turn %s: cannot record the failure either: %s", turn_id, exc)
        return
    try:
        with store.transaction() as session:
            turn_repo.fail_unstarted(session, turn_id, message)
    finally:
        store.close()


def close() -> None:
    global _environment
    with _lock:
        if _environment is not None:
            _environment.store.close()
            _environment = None
