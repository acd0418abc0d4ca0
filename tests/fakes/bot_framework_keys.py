"""A fake of the Bot Framework's token signing: an OpenID metadata document and its JSON Web Key Set, served on
127.0.0.1, and a way to sign channel tokens as the Bot Framework signs the ones it sends a bot.

Point `TABLESCOUT_TEAMS_OPENID_METADATA_URL` at `keys.metadata_url`; botbuilder's real JWT validation then fetches
the keys from here and checks signature, issuer, audience (the app id), expiry, endorsement of the channel id and
the `serviceurl` claim against the activity.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

ISSUER = "https://api.botframework.com"


def new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class FakeBotFrameworkKeys:
    def __init__(self, endorsements: tuple[str, ...] = ("msteams",)) -> None:
        self.key = new_key()
        self.kid = uuid.uuid4().hex
        self.endorsements = list(endorsements)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def metadata_url(self) -> str:
        return f"{self.url}/v1/.well-known/openidconfiguration"

    def jwks(self) -> dict[str, Any]:
        jwk = json.loads(RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [jwk | {"kid": self.kid, "use": "sig", "endorsements": self.endorsements}]}

    def token(
        self,
        app_id: str,
        service_url: str,
        *,
        issuer: str = ISSUER,
        lifetime_s: int = 3600,
        key: rsa.RSAPrivateKey | None = None,
    ) -> str:
        now = int(time.time())
        claims = {
            "iss": issuer,
            "aud": app_id,
            "serviceurl": service_url,
            "nbf": now - 60,
            "iat": now - 60,
            "exp": now + lifetime_s,
        }
        return jwt.encode(claims, key or self.key, algorithm="RS256", headers={"kid": self.kid})

    def __enter__(self) -> Self:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.startswith("/v1/.well-known/openidconfiguration"):
                    body = {
                        "issuer": ISSUER,
                        "authorization_endpoint": f"{fake.url}/authorize",
                        "jwks_uri": f"{fake.url}/v1/keys",
                        "id_token_signing_alg_values_supported": ["RS256"],
                        "token_endpoint_auth_methods_supported": ["private_key_jwt"],
                    }
                elif self.path.startswith("/v1/keys"):
                    body = fake.jwks()
                else:
                    self.send_error(404)
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
