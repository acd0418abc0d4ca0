"""Read-only Slack Web API calls (directory sync reads user groups and users with them: bot/directory/slack_sync.py).

Unlike a delivery, a read is also retried on 5xx answers, and its failure says whether Slack answered at all.
"""

from __future__ import annotations

from typing import Any

from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_handlers import ServerErrorRetryHandler

from bot.slack.client import web_client
from core.errors import TablescoutError


class SlackReadError(TablescoutError):
    """A read call failed: `error` is Slack's error code (None when Slack was not reached or answered no JSON),
    `status` the HTTP status, `data` Slack's answer (never holds the token), `unreachable` when no answer came."""

    def __init__(
        self,
        message: str,
        *,
        error: str | None = None,
        status: int | None = None,
        data: dict[str, Any] | None = None,
        unreachable: bool = False,
    ) -> None:
        super().__init__(message)
        self.error = error
        self.status = status
        self.data = data or {}
        self.unreachable = unreachable


def read_api(token: str, api_url: str | None, method: str, **params: Any) -> dict[str, Any]:
    """One read-only Web API call (e.g. `usergroups.list`), retried on connection errors, 5xx answers and 429s."""
    client = web_client(token, api_url)
    client.retry_handlers.append(ServerErrorRetryHandler(max_retry_count=2))
    try:
        response = client.api_call(method, http_verb="GET", params=params)
    except SlackApiError as exc:
        data = exc.response.data if isinstance(exc.response.data, dict) else {}
        error = str(data.get("error") or f"HTTP {exc.response.status_code}")
        raise SlackReadError(
            f"Slack answered {method} with {error}", error=error, status=exc.response.status_code, data=data
        ) from None
    except (SlackClientError, OSError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise SlackReadError(
            f"cannot reach the Slack Web API at {client.base_url}: {reason}", unreachable=True
        ) from None
    except ValueError:
        raise SlackReadError(
            f"the Slack Web API at {client.base_url} answered {method} with something other than JSON"
        ) from None
    if not isinstance(response.data, dict):
        raise SlackReadError(f"the Slack Web API answered {method} with an unexpected body")
    return response.data
