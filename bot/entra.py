"""Application tokens from Microsoft Entra ID (the OAuth client-credentials grant), for Microsoft Graph and the Bot
Framework connector; the one module that imports msal.

The authority is the one the operator names (`{TABLESCOUT_ENTRA_LOGIN_URL}/{tenant}`), and nothing is asked anywhere
else: msal's instance discovery, which looks an unknown host up at login.microsoftonline.com (and drops its port),
is off, so the tenant's OpenID configuration and its token endpoint are read from the authority itself. The public
cloud, a national cloud, a proxy in front of Entra ID and an air-gapped authority therefore work alike. msal demands
HTTPS; a private certificate authority is trusted through the standard REQUESTS_CA_BUNDLE variable and a proxy
through HTTPS_PROXY, both read by msal's HTTP library. Tokens stay in msal's in-memory cache until shortly before
they expire, so one `EntraApp` asks the authority once an hour, not once a message.
"""

from __future__ import annotations

import threading
from typing import Any

import msal  # type: ignore[import-untyped]  # msal ships no type information

from core.errors import TablescoutError

#: OAuth error codes that say the authority is having trouble, not that it refuses the app.
TRANSIENT_OAUTH_ERRORS = frozenset({"temporarily_unavailable", "server_error"})


class EntraTokenError(TablescoutError):
    """No token: `transient` when asking again later may succeed (the authority is unreachable or overloaded),
    False when it refused the app or the authority is unusable as configured."""

    def __init__(self, message: str, *, transient: bool) -> None:
        super().__init__(message)
        self.transient = transient


class EntraApp:
    """One app registration's client-credential tokens from one authority."""

    def __init__(self, client_id: str, client_secret: str, authority: str, *, timeout_s: float) -> None:
        self.client_id = client_id
        self.authority = authority.rstrip("/")
        self._secret = client_secret
        self._timeout_s = timeout_s
        self._app: Any = None
        self._lock = threading.Lock()

    def result(self, scope: str) -> dict[str, Any]:
        """msal's answer for `scope` (an `access_token`, or an `error` with its description and codes).

        Raises ValueError when the authority is malformed or has no OpenID configuration for the tenant, OSError
        (requests' errors) when it cannot be reached or answers 5xx.
        """
        result: dict[str, Any] = self._msal().acquire_token_for_client(scopes=[scope])
        return result

    def token(self, scope: str) -> str:
        """An access token for `scope`; EntraTokenError, with a one-line reason, when there is none."""
        try:
            result = self.result(scope)
        except OSError as exc:  # requests' errors: no connection, a timeout, TLS, a 5xx answer
            reason = f"Entra ID at {self.authority} could not be reached: {_first_line(exc)}"
            raise EntraTokenError(reason, transient=True) from exc
        except ValueError as exc:
            reason = f"cannot use the Entra ID authority {self.authority}: {_first_line(exc)}"
            raise EntraTokenError(reason, transient=False) from exc
        token = result.get("access_token")
        if isinstance(token, str) and token:
            return token
        error = str(result.get("error") or "no access token")
        description = _first_line(result.get("error_description") or "")
        detail = f"{error}: {description}" if description else error
        raise EntraTokenError(
            f"Entra ID at {self.authority} gave no token for app {self.client_id} ({detail})",
            transient=error in TRANSIENT_OAUTH_ERRORS,
        )

    def forget(self) -> None:
        """Drop the cached tokens (a service refused one): the next `token` asks the authority again."""
        with self._lock:
            self._app = None

    def _msal(self) -> Any:
        # Creating the application reads the tenant's OpenID configuration; when that fails nothing is kept, so the
        # next call tries again.
        with self._lock:
            if self._app is None:
                self._app = msal.ConfidentialClientApplication(
                    self.client_id,
                    client_credential=self._secret,
                    authority=self.authority,
                    instance_discovery=False,
                    timeout=self._timeout_s,
                )
            return self._app


def _first_line(value: object) -> str:
    text = str(value).strip()
    return text.splitlines()[0] if text else type(value).__name__
