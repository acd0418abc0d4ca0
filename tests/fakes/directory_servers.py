"""Local fake identity directories: the Slack Web API user-group methods, an Entra ID token authority and Microsoft
Graph groups, so slack_sdk, msal and the Graph client run for real against them.

- `FakeSlackServer`: `usergroups.list` and `usergroups.users.list` under `/api/` (GET query, form or JSON POST, as
  slack_sdk sends them), and `team.profile.get` (the custom profile fields) and `users.profile.get` (a member's
  standard and custom fields keyed by field id, as Slack answers them); a bearer token checked on every call
  (`ok: false, error: invalid_auth` otherwise), a token that can be revoked after N calls, a scope that one method
  lacks, and one-shot 429 answers with Retry-After.
- `FakeEntraServer` (HTTPS, as msal demands): the tenant's OpenID configuration and the v2.0 token endpoint for the
  client-credentials grant; its certificate authority is in `ca_file` (point REQUESTS_CA_BUNDLE at it).
  `fail_tokens(answer, times)` makes the token endpoint answer something else for a while (a 500, a proxy's HTML
  page, a token answer without a token, an answer slower than the client waits), `fail_discovery` the OpenID
  configuration.
- `FakeGraphServer`: `GET /v1.0/groups` and `/v1.0/groups/{id}/transitiveMembers/microsoft.graph.user` with
  `$select` (a selected property a user lacks is null, onPremisesExtensionAttributes always has its 15 keys, as
  Graph answers), `$top` and `@odata.nextLink` pages of at most `page_size` items, nested groups expanded, a bearer
  token checked, failures injected with Retry-After, and a switch that makes every call answer 403.

Every server records what it received (`requests`) for assertions; tests change the directory between syncs through
the servers' plain attributes and methods.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import ssl
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self
from urllib.parse import parse_qs, urlencode, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass
class Received:
    method: str  # HTTP method
    path: str
    params: dict[str, str]  # query string and form or JSON body, flattened
    headers: dict[str, str]  # lower-case names


@dataclass
class Answer:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None  # sent as it is instead of `body` as JSON (a proxy's HTML page, a truncated answer)
    content_type: str = "application/json; charset=utf-8"
    delay_s: float = 0.0  # seconds before answering (longer than the client's timeout: a timeout)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeServer


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _handle(self, method: str) -> None:
        parts = urlsplit(self.path)
        params = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if raw:
            if (self.headers.get("content-type") or "").startswith("application/json"):
                params.update({k: str(v) for k, v in json.loads(raw).items()})
            else:
                params.update({k: v[-1] for k, v in parse_qs(raw.decode(), keep_blank_values=True).items()})
        received = Received(method, parts.path, params, {k.lower(): v for k, v in self.headers.items()})
        answer = self.server.fake.record_and_answer(received)
        if answer.delay_s:
            time.sleep(answer.delay_s)
        payload = answer.raw if answer.raw is not None else json.dumps(answer.body).encode()
        try:
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.content_type)
            self.send_header("Content-Length", str(len(payload)))
            for name, value in answer.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting (a timeout test)
            self.close_connection = True

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")


class FakeServer:
    """An HTTP server on 127.0.0.1 in a background thread that records each request before answering it."""

    scheme = "http"

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.lock = threading.Lock()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name=type(self).__name__, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    @property
    def origin(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self._httpd.server_address[1]}"

    def record_and_answer(self, received: Received) -> Answer:
        with self.lock:
            self.requests.append(received)
            return self.answer(received)

    def answer(self, received: Received) -> Answer:
        raise NotImplementedError

    def calls_to(self, path_part: str) -> list[Received]:
        return [r for r in self.requests if path_part in r.path]


def _bearer(received: Received) -> str | None:
    value = received.headers.get("authorization", "")
    return value.removeprefix("Bearer ").strip() if value.startswith("Bearer ") else None


# --- Slack --------------------------------------------------------------------------------------------------------


@dataclass
class SlackGroup:
    handle: str
    name: str
    users: list[str]
    disabled: bool = False


@dataclass
class SlackProfile:
    """A member's profile: standard fields by name (`title`, `email`, `real_name`) and custom field values by the
    id of a field in `FakeSlackServer.profile_fields`."""

    standard: dict[str, str] = field(default_factory=dict)
    custom: dict[str, str] = field(default_factory=dict)


@dataclass
class SlackProfileField:
    id: str
    label: str
    type: str = "text"
    is_hidden: bool = False


class FakeSlackServer(FakeServer):
    """The Slack Web API's user-group methods for one workspace."""

    def __init__(self, token: str, *, team_id: str = "T0TABLESCOUT") -> None:
        super().__init__()
        self.token = token
        self.team_id = team_id
        self.groups: dict[str, SlackGroup] = {}
        self.profiles: dict[str, SlackProfile] = {}  # users.profile.get; a user without one is `user_not_found`
        self.profile_fields: list[SlackProfileField] = []  # team.profile.get
        self._rate_limits: dict[str, list[int]] = {}
        self._revoke_after: int | None = None
        self.missing_scope: str | None = None  # set: every method answers `missing_scope` needing it
        self.missing_scopes: dict[str, str] = {}  # method → the scope it answers `missing_scope` for

    @property
    def url(self) -> str:
        """The Web API base, for TABLESCOUT_SLACK_API_URL."""
        return f"{self.origin}/api/"

    def rate_limit_next(self, method: str, retry_after: int = 1) -> None:
        """The next call of `method` answers 429 with this Retry-After."""
        with self.lock:
            self._rate_limits.setdefault(method, []).append(retry_after)

    def revoke_token_after(self, calls: int) -> None:
        """The token stops working after this many more successful calls (answers `token_revoked`)."""
        with self.lock:
            self._revoke_after = calls

    def answer(self, received: Received) -> Answer:
        method = received.path.removeprefix("/api/")
        waits = self._rate_limits.get(method)
        if waits:
            return Answer(429, {"ok": False, "error": "ratelimited"}, {"Retry-After": str(waits.pop(0))})
        token = _bearer(received)
        if token is None:
            return Answer(200, {"ok": False, "error": "not_authed"})
        if token != self.token:
            return Answer(200, {"ok": False, "error": "invalid_auth"})
        needed = self.missing_scope or self.missing_scopes.get(method)
        if needed is not None:
            return Answer(200, {"ok": False, "error": "missing_scope", "needed": needed})
        if self._revoke_after is not None:
            if self._revoke_after <= 0:
                return Answer(200, {"ok": False, "error": "token_revoked"})
            self._revoke_after -= 1
        include_disabled = received.params.get("include_disabled", "").lower() in ("1", "true")
        if method == "usergroups.list":
            listed = [self._group_json(gid, g) for gid, g in self.groups.items() if include_disabled or not g.disabled]
            return Answer(200, {"ok": True, "usergroups": listed})
        if method == "usergroups.users.list":
            group = self.groups.get(received.params.get("usergroup", ""))
            if group is None:
                return Answer(200, {"ok": False, "error": "no_such_subteam"})
            return Answer(200, {"ok": True, "users": list(group.users)})
        if method == "team.profile.get":
            return Answer(200, {"ok": True, "profile": {"fields": [self._field_json(f) for f in self.profile_fields]}})
        if method == "users.profile.get":
            profile = self.profiles.get(received.params.get("user", ""))
            if profile is None:
                return Answer(200, {"ok": False, "error": "user_not_found"})
            return Answer(200, {"ok": True, "profile": self._profile_json(profile)})
        return Answer(200, {"ok": False, "error": "unknown_method"})

    @staticmethod
    def _field_json(spec: SlackProfileField) -> dict[str, Any]:
        return {
            "id": spec.id,
            "label": spec.label,
            "type": spec.type,
            "hint": "",
            "ordering": 0,
            "options": None,
            "possible_values": None,
            "is_hidden": 1 if spec.is_hidden else 0,
        }

    @staticmethod
    def _profile_json(profile: SlackProfile) -> dict[str, Any]:
        body: dict[str, Any] = {
            "title": "",
            "phone": "",
            "skype": "",
            "real_name": "",
            "display_name": "",
            "status_text": "",
            "status_emoji": "",
        }
        body.update(profile.standard)
        # Slack answers an empty list, not an object, for a member with no custom field set.
        body["fields"] = {k: {"value": v, "alt": ""} for k, v in profile.custom.items()} if profile.custom else []
        return body

    def _group_json(self, group_id: str, group: SlackGroup) -> dict[str, Any]:
        return {
            "id": group_id,
            "team_id": self.team_id,
            "is_usergroup": True,
            "name": group.name,
            "handle": group.handle,
            "description": "",
            "date_create": 1_700_000_000,
            "date_delete": 1_700_100_000 if group.disabled else 0,
            "user_count": len(group.users),
        }


# --- Entra ID -----------------------------------------------------------------------------------------------------


def write_test_certificates(directory: Path) -> tuple[Path, Path, Path]:
    """A certificate authority and a server certificate for 127.0.0.1 signed by it: (ca, cert, key) PEM files."""
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "tablescout test CA")])
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(ca_ski, critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.IPv4Address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    directory.mkdir(parents=True, exist_ok=True)
    ca_file, cert_file, key_file = directory / "ca.pem", directory / "server.pem", directory / "server.key"
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return ca_file, cert_file, key_file


DISCOVERY_PATH = "v2.0/.well-known/openid-configuration"  # under /{tenant}/
TOKEN_PATH = "oauth2/v2.0/token"


class FakeEntraServer(FakeServer):
    """A tenant's authority: OpenID discovery and the client-credentials token endpoint, over HTTPS."""

    scheme = "https"

    def __init__(
        self, certificates: Path, *, tenant: str, client_id: str, client_secret: str, access_token: str
    ) -> None:
        super().__init__()
        self.tenant = tenant
        self.client_id = client_id
        self.client_secret = client_secret
        self.access_token = access_token
        self._failures: dict[str, tuple[Answer, int | None]] = {}  # endpoint → answer instead, times left
        self.ca_file, cert_file, key_file = write_test_certificates(certificates)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_file, key_file)
        self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)

    @property
    def url(self) -> str:
        """The login base, for TABLESCOUT_ENTRA_LOGIN_URL."""
        return self.origin

    def answer(self, received: Received) -> Answer:
        tenant, _, rest = received.path.lstrip("/").partition("/")
        if tenant != self.tenant:
            return Answer(
                400, {"error": "invalid_tenant", "error_description": f"AADSTS90002: Tenant '{tenant}' not found."}
            )
        base = f"{self.origin}/{tenant}"
        failure = self._failure(rest)
        if failure is not None:
            return failure
        if rest == DISCOVERY_PATH:
            return Answer(
                200,
                {
                    "issuer": f"{base}/v2.0",
                    "authorization_endpoint": f"{base}/oauth2/v2.0/authorize",
                    "token_endpoint": f"{base}/oauth2/v2.0/token",
                    "device_authorization_endpoint": f"{base}/oauth2/v2.0/devicecode",
                    "jwks_uri": f"{base}/discovery/v2.0/keys",
                    "response_types_supported": ["code", "id_token", "token"],
                    "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
                },
            )
        if rest == TOKEN_PATH and received.method == "POST":
            return self._token(received.params)
        return Answer(404, {"error": "not_found"})

    def fail_tokens(self, answer: Answer | None, times: int | None = None) -> None:
        """The token endpoint answers `answer` instead of a token: the next `times` requests, or every one until
        this is called with None."""
        self._fail(TOKEN_PATH, answer, times)

    def fail_discovery(self, answer: Answer | None, times: int | None = None) -> None:
        """The same for the tenant's OpenID configuration."""
        self._fail(DISCOVERY_PATH, answer, times)

    def _fail(self, endpoint: str, answer: Answer | None, times: int | None) -> None:
        with self.lock:
            if answer is None:
                self._failures.pop(endpoint, None)
            else:
                self._failures[endpoint] = (answer, times)

    def _failure(self, endpoint: str) -> Answer | None:
        found = self._failures.get(endpoint)
        if found is None:
            return None
        answer, left = found
        if left is not None:
            if left <= 1:
                del self._failures[endpoint]
            else:
                self._failures[endpoint] = (answer, left - 1)
        return answer

    def _token(self, form: Mapping[str, str]) -> Answer:
        if form.get("grant_type") != "client_credentials":
            return Answer(400, {"error": "unsupported_grant_type"})
        if form.get("client_id") != self.client_id:
            return Answer(
                400,
                {
                    "error": "unauthorized_client",
                    "error_description": "AADSTS700016: Application not found in the directory.",
                    "error_codes": [700016],
                },
            )
        if form.get("client_secret") != self.client_secret:
            return Answer(
                401,
                {
                    "error": "invalid_client",
                    "error_description": "AADSTS7000215: Invalid client secret provided.",
                    "error_codes": [7000215],
                },
            )
        return Answer(
            200,
            {"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": self.access_token},
        )

    def token_requests(self) -> list[Received]:
        return self.calls_to("/oauth2/v2.0/token")


# --- Microsoft Graph ----------------------------------------------------------------------------------------------


@dataclass
class GraphGroup:
    display_name: str
    mail_nickname: str | None
    members: list[str]  # user ids or ids of nested groups


@dataclass
class GraphUser:
    display_name: str
    mail: str | None = None
    #: Other user properties by their Graph name (`department`, `city`, `employeeId`, ...); extension attributes
    #: by `extensionAttribute1` ... `extensionAttribute15`, served inside onPremisesExtensionAttributes.
    properties: dict[str, str] = field(default_factory=dict)

    def as_json(self, user_id: str) -> dict[str, Any]:
        body: dict[str, Any] = {"@odata.type": "#microsoft.graph.user", "id": user_id}
        body.update({"displayName": self.display_name, "mail": self.mail})
        extensions: dict[str, str | None] = {f"extensionAttribute{n}": None for n in range(1, 16)}
        for name, value in self.properties.items():
            if name in extensions:
                extensions[name] = value
            else:
                body[name] = value
        body["onPremisesExtensionAttributes"] = extensions
        return body


class FakeGraphServer(FakeServer):
    """Microsoft Graph v1.0 groups and transitive user members, in pages of `page_size`."""

    def __init__(self, *, access_token: str, page_size: int = 100) -> None:
        super().__init__()
        self.access_token = access_token
        self.page_size = page_size
        self.groups: dict[str, GraphGroup] = {}
        self.users: dict[str, GraphUser] = {}
        self.forbidden = False
        self._failures: list[tuple[int, str | None]] = []

    @property
    def url(self) -> str:
        """The API base, for TABLESCOUT_GRAPH_API_URL."""
        return f"{self.origin}/v1.0"

    def fail_next(self, status: int, retry_after: str | None = None) -> None:
        """The next request answers `status` (with this Retry-After, if given), before the token is checked."""
        with self.lock:
            self._failures.append((status, retry_after))

    def answer(self, received: Received) -> Answer:
        if self._failures:
            status, retry_after = self._failures.pop(0)
            headers = {"Retry-After": retry_after} if retry_after is not None else {}
            return Answer(status, _graph_error("TooManyRequests" if status == 429 else "ServiceUnavailable"), headers)
        if _bearer(received) != self.access_token:
            return Answer(401, _graph_error("InvalidAuthenticationToken"))
        if self.forbidden:
            return Answer(403, _graph_error("Authorization_RequestDenied"))
        parts = received.path.removeprefix("/v1.0/").split("/")
        if parts == ["groups"]:
            items = [
                {"id": gid, "displayName": g.display_name, "mailNickname": g.mail_nickname}
                for gid, g in self.groups.items()
            ]
        elif len(parts) == 4 and parts[0] == "groups" and parts[2:] == ["transitiveMembers", "microsoft.graph.user"]:
            if parts[1] not in self.groups:
                return Answer(404, _graph_error("Request_ResourceNotFound"))
            items = [self.users[uid].as_json(uid) for uid in self._transitive_users(parts[1])]
        else:
            return Answer(404, _graph_error("Request_ResourceNotFound"))
        selected = received.params.get("$select")
        if selected:
            keep = ["@odata.type", *selected.split(",")]
            items = [{k: item.get(k) for k in keep if k in item or not k.startswith("@")} for item in items]
        return self._page(received, items)

    def _transitive_users(self, group_id: str) -> list[str]:
        found: list[str] = []
        seen_groups: set[str] = set()
        pending = [group_id]
        while pending:
            current = pending.pop(0)
            if current in seen_groups:
                continue
            seen_groups.add(current)
            for member in self.groups[current].members:
                if member in self.groups:
                    pending.append(member)
                elif member in self.users and member not in found:
                    found.append(member)
        return found

    def _page(self, received: Received, items: list[dict[str, Any]]) -> Answer:
        size = min(self.page_size, int(received.params.get("$top") or 100))
        start = int(received.params.get("$skiptoken") or 0)
        body: dict[str, Any] = {"@odata.context": f"{self.url}/$metadata", "value": items[start : start + size]}
        if start + size < len(items):
            params = {k: v for k, v in received.params.items() if k != "$skiptoken"}
            params["$skiptoken"] = str(start + size)
            body["@odata.nextLink"] = f"{self.origin}{received.path}?{urlencode(params, safe='$,')}"
        return Answer(200, body)


def _graph_error(code: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": f"{code} (fake Microsoft Graph)", "innerError": {}}}
