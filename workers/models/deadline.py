"""One model call's overall deadline, enforced underneath the vendor SDK in its HTTP transport.

Both vendor SDKs retry on their own (timeouts, connection errors, 408/409/429/5xx) and give every attempt the full
request timeout, so a call with retries can run several times longer than the time the turn has left. The SDK's
retries stay the only retry layer; this module only makes them respect the deadline:

- every attempt's connect/read/write/pool timeouts are clamped to the time left;
- the response body is read inside the transport, so a slow body counts against the same clamp;
- when an attempt fails (retryable status or a transport error) and the SDK's next wait plus a useful attempt no longer
  fits into the time left, the transport tells the SDK not to retry (`x-should-retry: false`, a header both SDKs
  obey); a transport error that must not be retried becomes a synthetic error response for the same reason, and the
  reason is kept on the `CallDeadline` so the provider can raise `ModelTimeout` or a clear `ModelError`.

The deadline travels in a context variable set by `call_deadline()`, so one client serves many threads and calls.
"""

from __future__ import annotations

import email.utils
import json
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import httpx2
from httpx2._utils import get_environment_proxies

#: The SDKs' backoff when a response names no wait: 0.5 s doubling per retry, at most 8 s (the jitter only shortens it).
_INITIAL_RETRY_DELAY_S = 0.5
_MAX_RETRY_DELAY_S = 8.0
#: A retry that would have less than this left for its own attempt is not worth starting.
DEFAULT_MIN_ATTEMPT_S = 1.0
#: Below this, an attempt is not started at all.
_EXPIRED_S = 0.02


@dataclass
class CallDeadline:
    """The deadline of one model call and what the transport learnt while enforcing it."""

    expires_at: float  # time.monotonic()
    min_attempt_s: float = DEFAULT_MIN_ATTEMPT_S
    attempts: int = 0
    #: The deadline cut an attempt short or kept one from starting.
    expired: bool = False
    #: A transport error (no HTTP response) ended the call because no retry fitted into the time left.
    transport_error: str | None = None

    def remaining(self) -> float:
        return self.expires_at - time.monotonic()

    def retry_fits(self, wait_s: float) -> bool:
        return self.remaining() - wait_s >= self.min_attempt_s


_current: ContextVar[CallDeadline | None] = ContextVar("tablescout_model_call_deadline", default=None)


@contextmanager
def call_deadline(timeout_s: float, *, min_attempt_s: float = DEFAULT_MIN_ATTEMPT_S) -> Iterator[CallDeadline]:
    """Every request a deadline client sends inside this block ends within `timeout_s` of entering it."""
    state = CallDeadline(expires_at=time.monotonic() + max(timeout_s, 0.0), min_attempt_s=min_attempt_s)
    token = _current.set(state)
    try:
        yield state
    finally:
        _current.reset(token)


def retry_wait_bound(headers: httpx2.Headers | None, retries_taken: int) -> float:
    """The longest the SDKs sleep before their next attempt: the server's Retry-After, else capped backoff."""
    if headers is not None:
        waited = _retry_after_seconds(headers)
        if waited is not None and waited > 0:
            return waited
    return min(_INITIAL_RETRY_DELAY_S * math.pow(2.0, min(retries_taken, 30)), _MAX_RETRY_DELAY_S)


def _retry_after_seconds(headers: httpx2.Headers) -> float | None:
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) / scale
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    parsed = email.utils.parsedate_tz(value)
    if parsed is None:
        return None
    return float(email.utils.mktime_tz(parsed) - time.time())


def _sdk_would_retry(response: httpx2.Response) -> bool:
    flag = response.headers.get("x-should-retry")
    if flag is not None:
        return flag == "true"
    return response.status_code in (408, 409, 429) or response.status_code >= 500


def _synthetic_failure(request: httpx2.Request, status: int, kind: str, message: str) -> httpx2.Response:
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return httpx2.Response(
        status,
        headers={"x-should-retry": "false", "content-type": "application/json"},
        content=json.dumps(body).encode(),
        request=request,
    )


class DeadlineTransport(httpx2.BaseTransport):
    """Wraps a transport so that requests sent inside `call_deadline()` respect its deadline (see module doc)."""

    def __init__(self, inner: httpx2.BaseTransport) -> None:
        self._inner = inner

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        state = _current.get()
        if state is None:
            return self._inner.handle_request(request)
        retries_taken = state.attempts
        state.attempts += 1
        remaining = state.remaining()
        if remaining <= _EXPIRED_S:
            state.expired = True
            return _synthetic_failure(request, 408, "timeout_error", "the model call ran out of time")
        _clamp_timeouts(request, remaining)
        try:
            response = self._inner.handle_request(request)
            try:
                response.read()
            except BaseException:
                response.close()
                raise
        except httpx2.TimeoutException as exc:
            if state.remaining() <= _EXPIRED_S or not state.retry_fits(retry_wait_bound(None, retries_taken)):
                state.expired = True
                return _synthetic_failure(request, 408, "timeout_error", f"the model call ran out of time ({exc})")
            raise
        except httpx2.TransportError as exc:
            if not state.retry_fits(retry_wait_bound(None, retries_taken)):
                state.transport_error = str(exc) or type(exc).__name__
                return _synthetic_failure(request, 503, "connection_error", state.transport_error)
            raise
        if (
            not response.is_success
            and _sdk_would_retry(response)
            and not state.retry_fits(retry_wait_bound(response.headers, retries_taken))
        ):
            response.headers["x-should-retry"] = "false"
        return response

    def close(self) -> None:
        self._inner.close()


def _clamp_timeouts(request: httpx2.Request, remaining: float) -> None:
    configured = request.extensions.get("timeout") or {}
    clamped: dict[str, float] = {}
    for key in ("connect", "read", "write", "pool"):
        value = configured.get(key)
        clamped[key] = remaining if value is None else min(float(value), remaining)
    request.extensions = {**request.extensions, "timeout": clamped}


def deadline_http_client() -> httpx2.Client:
    """An HTTP client for a vendor SDK whose every route (direct, or an environment proxy) honours `call_deadline()`.

    Like the SDKs' own default client: 10 minutes default timeout (each call passes its own), 5 s to connect,
    redirects followed, proxies from the environment (HTTPS_PROXY, NO_PROXY, ...).
    """
    mounts: dict[str, httpx2.BaseTransport | None] = {
        pattern: None if proxy is None else DeadlineTransport(httpx2.HTTPTransport(proxy=proxy))
        for pattern, proxy in get_environment_proxies().items()
    }
    return httpx2.Client(
        transport=DeadlineTransport(httpx2.HTTPTransport()),
        mounts=mounts,
        timeout=httpx2.Timeout(600.0, connect=5.0),
        follow_redirects=True,
    )
