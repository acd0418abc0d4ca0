"""Application tokens from Microsoft Entra ID (the OAuth client-credentials grant), for Microsoft Graph and the Bot
Framework connector; the one module that imports msal.

The authority is the one the operator names (`{TABLESCOUT_ENTRA_LOGIN_URL}/{tenant}`), and nothing is asked anywhere
else: msal's instance discovery, which looks an unknown host up at login.microsoftonline.com (and drops its port),
is off, so the tenant's OpenID configuration and its token endpoint are read from the authority itself. The public
cloud, a national cloud, a proxy in front of Entra ID and an air-gapped authority therefore work alike. msal demands
HTTPS; a private certificate authority is trusted through the standard REQUESTS_CA_BUNDLE variable and a proxy
through HTTPS_PROXY, both read by msal's HTTP library. Tokens stay in msal's in-memory cache until shortly before
they expire, so one `EntraApp` asks the authority once an hour, not once a message.

Whatever goes wrong comes out of `EntraApp.token` as one `EntraTokenError`, never as msal's or requests' own
exceptions: `transient` when asking again later may succeed (the authority unreachable, too slow, answering 5xx, or
answering something that is not a token answer), False when the authority refused the app (`refusal` holds its
OAuth error) or cannot be used as configured (a malformed authority, an unknown tenant). A failed call leaves
nothing cached: msal would otherwise replay a 5xx for a minute (its throttling) or keep a malformed token until it
expires, and the callers retry with their own bounded backoff (bot/teams/adapter.py, bot/delivery.py,
bot/directory/graph_sync.py).
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from typing import Any

import msal  # type: ignore[import-untyped]  # msal ships no type information
import requests

from core.errors import TablescoutError

log = logging.getLogger(__name__)

#: OAuth error codes that say the authority is having trouble, not that it refuses the app.
TRANSIENT_OAUTH_ERRORS = frozenset({"temporarily_unavailable", "server_error"})


@dataclass(frozen=True)
class TokenRefusal:
    """The authority's OAuth error answer (RFC 6749 §5.2): `error`, its description, Entra's AADSTS codes."""

    error: str
    description: str
    codes: tuple[int, ...] = ()


class EntraTokenError(TablescoutError):
    """No token. `detail` is the cause in one line (without the authority); `transient` when asking again later may
    succeed; `refusal` when the authority answered with an OAuth error."""

    def __init__(self, message: str, *, detail: str, transient: bool, refusal: TokenRefusal | None = None) -> None:
        super().__init__(message)
        self.detail = detail
        self.transient = transient
        self.refusal = refusal


class EntraApp:
    """One app registration's client-credential tokens from one authority."""

    def __init__(self, client_id: str, client_secret: str, authority: str, *, timeout_s: float) -> None:
        self.client_id = client_id
        self.authority = authority.rstrip("/")
        self._secret = client_secret
        self._timeout_s = timeout_s
        self._app: Any = None
        self._lock = threading.Lock()

    def token(self, scope: str) -> str:
        """An access token for `scope`; EntraTokenError, with a one-line reason, when there is none."""
        try:
            return self._token(scope)
        except EntraTokenError:
            self.forget()
            raise

    def forget(self) -> None:
        """Drop the cached tokens (a service refused one): the next `token` asks the authority again."""
        with self._lock:
            self._app = None

    def _token(self, scope: str) -> str:
        app = self._msal()
        try:
            result = app.acquire_token_for_client(scopes=[scope])
        except msal.exceptions.MsalServiceError as exc:  # a 5xx answer (msal says "HTTP Error: 500")
            raise self._error(f"failed the token request ({_first_line(exc)})") from exc
        except requests.Timeout as exc:
            raise self._error(f"did not answer the token request within {self._timeout_s:g} s") from exc
        except OSError as exc:  # requests' other errors: no connection, TLS
            raise self._error(f"could not be reached: {_first_line(exc)}") from exc
        except Exception as exc:  # msal reads the answer without checking its shape (a list, a string, bad numbers)
            log.warning("Entra ID at %s: unreadable token answer: %s: %s", self.authority, type(exc).__name__, exc)
            raise self._error(f"gave an unreadable token answer ({_unreadable(exc)})") from exc
        if not isinstance(result, dict):
            raise self._error("gave an unreadable token answer (not a JSON object)")
        token = result.get("access_token")
        if isinstance(token, str) and token:
            return token
        if "error" not in result:
            raise self._error("gave a token answer without an access token")
        refusal = TokenRefusal(
            error=str(result.get("error") or "no access token"),
            description=_first_line(result.get("error_description") or ""),
            codes=tuple(c for c in result.get("error_codes") or () if isinstance(c, int)),
        )
        detail = f"{refusal.error}: {refusal.description}" if refusal.description else refusal.error
        raise EntraTokenError(
            f"Entra ID at {self.authority} gave no token for app {self.client_id} ({detail})",
            detail=detail,
            transient=refusal.error in TRANSIENT_OAUTH_ERRORS,
            refusal=refusal,
        )

    def _msal(self) -> Any:
        # Creating the application reads the tenant's OpenID configuration; when that fails nothing is kept, so the
        # next call tries again.
        with self._lock:
            if self._app is None:
                try:
                    self._app = msal.ConfidentialClientApplication(
                        self.client_id,
                        client_credential=self._secret,
                        authority=self.authority,
                        instance_discovery=False,
                        timeout=self._timeout_s,
                    )
                except msal.exceptions.MsalServiceError as exc:  # the OpenID configuration answered 5xx
                    raise self._error(f"failed the OpenID configuration request ({_first_line(exc)})") from exc
                except requests.Timeout as exc:
                    raise self._error(f"did not answer within {self._timeout_s:g} s") from exc
                except OSError as exc:
                    raise self._error(f"could not be reached: {_first_line(exc)}") from exc
                except json.JSONDecodeError as exc:  # a proxy's error page instead of the configuration
                    raise self._error("gave an unreadable OpenID configuration (not JSON)") from exc
                except ValueError as exc:  # a malformed authority, an unknown tenant (4xx)
                    detail = _first_line(exc)
                    raise EntraTokenError(
                        f"cannot use the Entra ID authority {self.authority}: {detail}", detail=detail, transient=False
                    ) from exc
                except Exception as exc:  # a configuration of the wrong shape
                    log.warning(
                        "Entra ID at %s: unreadable OpenID configuration: %s: %s",
                        self.authority,
                        type(exc).__name__,
                        exc,
                    )
                    raise self._error(f"gave an unreadable OpenID configuration ({_unreadable(exc)})") from exc
            return self._app

    def _error(self, detail: str) -> EntraTokenError:
        """A failure that asking again later may not have (the authority unreachable, overloaded or garbled)."""
        return EntraTokenError(f"Entra ID at {self.authority} {detail}", detail=detail, transient=True)


def _unreadable(exc: Exception) -> str:
    return "not JSON" if isinstance(exc, json.JSONDecodeError) else "JSON, but not shaped like one"


def _first_line(value: object) -> str:
    text = str(value).strip()
    return text.splitlines()[0] if text else type(value).__name__
