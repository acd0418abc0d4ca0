"""What a worker process opens once and shares between its turns: settings, store, encoders, model provider.

Opened lazily on the first job (so importing the app stays cheap) and closed when the process shuts down.
"""

from __future__ import annotations

import logging
import os
import socket
import threading

from bot.outbound import Outbounds
from core.config.settings import Settings, load_settings
from core.errors import ConfigError, TablescoutError
from core.store import migrate
from core.store.database import Store, open_store
from core.store.repositories import turns as turn_repo
from search.encoders import BiEncoderReranker, CrossEncoderReranker, Reranker, embedder_for
from search.multilingual import multilingual_for
from search.refinement import static_embedder_for
from search.service import Encoders
from workers.models.registry import describe_model_setup, provider_from_settings
from workers.turns.state import TurnEnvironment

log = logging.getLogger(__name__)
_lock = threading.Lock()
_environment: TurnEnvironment | None = None
_outbounds: Outbounds | None = None
_store: Store | None = None


def encoders_for(settings: Settings) -> Encoders:
    """The embedder the settings choose (search.encoders.embedder_for, shared in the process), a reranker and the
    multilingual embedder for questions in other scripts (search.multilingual) and the fast one for chunks not yet
    refined (search.refinement; both loaded on first use)."""
    embedder = embedder_for(settings)
    reranker: Reranker = (
        CrossEncoderReranker(settings.reranker_model) if settings.reranker_model else BiEncoderReranker(embedder)
    )
    return Encoders(embedder, reranker, multilingual_for(settings), static_embedder_for(settings))


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


def _shared_store(settings: Settings) -> Store:
    global _store
    if _store is None:
        opened = open_store(settings)
        try:
            migrate.require_current(opened.engine)
        except TablescoutError:
            opened.close()
            raise
        _store = opened
    elif _store.embedded is not None and not _store.embedded.running():
        # The embedded server died (killed, out of memory): the next job to ask (the beat's sweep, every few
        # seconds) starts it again, rather than every job failing until some command happens to start it.
        _store.revive()
    return _store


def store() -> Store:
    """The process's metadata store, opened on first use (by a turn or by a chat delivery)."""
    with _lock:
        return _shared_store(_environment.settings if _environment is not None else load_settings())


def revive_store() -> None:
    """Bring the process's store back after it went away under a job (StoreUnavailable while it does not answer)."""
    with _lock:
        if _store is not None:
            _store.revive()


def environment() -> TurnEnvironment:
    """The process's environment, opened on first use; the owner label names the calling thread."""
    global _environment
    with _lock:
        if _environment is None:
            settings = load_settings()
            _environment = open_environment(settings, _shared_store(settings))
        env = _environment
    return TurnEnvironment(
        settings=env.settings, store=env.store, encoders=env.encoders, provider=env.provider, owner=owner_label()
    )


def outbounds() -> Outbounds:
    """The process's chat clients (Slack, Teams), made on first use."""
    global _outbounds
    with _lock:
        if _outbounds is None:
            _outbounds = Outbounds(_environment.settings if _environment is not None else load_settings())
        return _outbounds


def fail_turn(turn_id: int, message: str) -> None:
    """Record a turn as failed when this process cannot run turns at all (best effort: logs when even that fails)."""
    try:
        with store().transaction() as session:
            turn_repo.fail_unstarted(session, turn_id, message)
    except TablescoutError as exc:
        log.error("turn %s: cannot record the failure either: %s", turn_id, exc)


def close() -> None:
    global _environment, _outbounds, _store
    with _lock:
        _environment = None
        if _store is not None:
            _store.close()
            _store = None
        if _outbounds is not None:
            _outbounds.close()
            _outbounds = None
