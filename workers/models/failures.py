"""Turning a failed model call into a ModelError or ModelTimeout whose message is safe to log and to store.

The providers call these with what their SDK reported; nothing here depends on a vendor SDK. Messages name the
endpoint and the HTTP status, never the API key (it is masked wherever it appears, and a rejected key is reported
without the server's text, which for some servers quotes the key back). Those messages are for the operator; a
chat user reads the error's `user_message`: the service is not answering (unreachable, overloaded, failing, too
slow), or it refused the request (key, permission, model name: the operator's to fix).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from workers.models.deadline import CallDeadline
from workers.models.types import MODEL_REFUSED, ContextExceeded, ModelError, ModelTimeout

_MAX_DETAIL = 300
#: How servers say that the request does not fit the context window: llama.cpp ("exceeds the available context
#: size"), OpenAI and vLLM ("maximum context length"), Anthropic ("prompt is too long").
_CONTEXT_EXCEEDED = re.compile(
    r"exceeds? the (?:available|training) context|maximum context length|context[_ ]length[_ ]exceeded|"
    r"prompt is too long|exceed_context_size",
    re.IGNORECASE,
)


def mask_secret(text: str, secret: str | None) -> str:
    """`text` with every occurrence of `secret` (and of its long inner part) replaced by ***."""
    if not secret:
        return text
    masked = text.replace(secret, "***")
    if len(secret) >= 12:
        masked = masked.replace(secret[4:-4], "***")
    return masked


def _detail(text: str | None, secret: str | None) -> str:
    if not text:
        return ""
    cleaned = " ".join(mask_secret(text, secret).split())
    return cleaned if len(cleaned) <= _MAX_DETAIL else cleaned[: _MAX_DETAIL - 1] + "…"


def status_failure(
    *, vendor: str, endpoint: str, status: int, api_message: str | None, secret: str | None, key_variable: str
) -> ModelError:
    """The error for an HTTP error answer (after the SDK's own retries)."""
    if status in (400, 413) and api_message and _CONTEXT_EXCEEDED.search(api_message):
        return ContextExceeded(
            f"the conversation outgrew the context window of the model at {endpoint}: {_detail(api_message, secret)}"
        )
    if status == 401:
        return ModelError(
            f"{vendor} at {endpoint} rejected the API key (HTTP 401); check {key_variable}", user_message=MODEL_REFUSED
        )
    if status == 403:
        return ModelError(
            f"{vendor} at {endpoint} refused the request (HTTP 403): {_detail(api_message, secret)}",
            user_message=MODEL_REFUSED,
        )
    if status == 404:
        return ModelError(
            f"{vendor} at {endpoint} answered HTTP 404 (unknown model or wrong base URL): "
            f"{_detail(api_message, secret)}",
            user_message=MODEL_REFUSED,
        )
    if status == 429:
        return ModelError(
            f"{vendor} at {endpoint} is rate limiting requests (HTTP 429): {_detail(api_message, secret)}"
        )
    if status == 529 or status >= 500:
        return ModelError(f"{vendor} at {endpoint} is unavailable (HTTP {status}): {_detail(api_message, secret)}")
    return ModelError(f"{vendor} at {endpoint} answered HTTP {status}: {_detail(api_message, secret)}")


def deadline_failure(deadline: CallDeadline, *, vendor: str, endpoint: str, timeout_s: float) -> ModelError | None:
    """The error when the deadline, not the server, ended the call; None when the deadline played no part."""
    if deadline.expired:
        return ModelTimeout(f"{vendor} at {endpoint} did not answer within {timeout_s:.1f} s")
    if deadline.transport_error is not None:
        return ModelError(f"cannot reach {vendor} at {endpoint}: {deadline.transport_error}")
    return None


def timeout_failure(*, vendor: str, endpoint: str, timeout_s: float) -> ModelTimeout:
    return ModelTimeout(f"{vendor} at {endpoint} did not answer within {timeout_s:.1f} s")


def connection_failure(*, vendor: str, endpoint: str, cause: BaseException | None, secret: str | None) -> ModelError:
    reason = _detail(str(cause), secret) if cause is not None else ""
    return ModelError(f"cannot reach {vendor} at {endpoint}" + (f": {reason}" if reason else ""))


def display_endpoint(base_url: str) -> str:
    """The base URL as shown in messages: scheme, host, port and path, without credentials or query."""
    parsed = urlsplit(base_url)
    host = parsed.hostname or ""
    port = f":{parsed.port}" if parsed.port else ""
    return f"{parsed.scheme}://{host}{port}{parsed.path}".rstrip("/") if parsed.scheme else base_url
