"""The Entra ID authority a Teams bot gets its Bot Framework tokens from, over TLS, able to go down for a while.

`FakeBotEntra` is the directory tests' `FakeEntraServer` (the tenant's OpenID configuration and its v2.0 token
endpoint for the client-credentials grant, a certificate signed by a throw-away certificate authority in `ca_file`,
which a test trusts through REQUESTS_CA_BUNDLE) with `go_down()`, after which connections to it are refused, and
`come_back()`, which serves again on the same address, so msal sees a real outage and a real recovery.
"""

from __future__ import annotations

import ssl
from pathlib import Path

from tests.fakes.directory_servers import FakeEntraServer, _Handler, _HTTPServer


class FakeBotEntra(FakeEntraServer):
    def __init__(
        self, certificates: Path, *, tenant: str, client_id: str, client_secret: str, access_token: str
    ) -> None:
        super().__init__(
            certificates, tenant=tenant, client_id=client_id, client_secret=client_secret, access_token=access_token
        )
        self._certificates = certificates
        self._port = int(self._httpd.server_address[1])
        self.down = False

    def go_down(self) -> None:
        """Stop listening: every connection is refused until `come_back`."""
        if not self.down:
            self.stop()
            self.down = True

    def come_back(self) -> None:
        """Listen again on the same port, with the same certificate."""
        if not self.down:
            return
        httpd = _HTTPServer(("127.0.0.1", self._port), _Handler)
        httpd.fake = self
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self._certificates / "server.pem", self._certificates / "server.key")
        httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
        self._httpd = httpd
        self.down = False
        self.start()

    def __exit__(self, *_: object) -> None:
        if not self.down:
            self.stop()
