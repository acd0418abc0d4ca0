"""A local fake of the Bot Framework connector service, the REST API a bot uses to talk back to Teams.

botbuilder's real connector client posts here when an activity's (or stored reference's) `serviceUrl` is the
fake's `url`. Implemented:

    POST /v3/conversations/{conversationId}/activities              send into a conversation
    POST /v3/conversations/{conversationId}/activities/{replyToId}  reply to an activity
    PUT  /v3/conversations/{conversationId}/activities/{activityId} update an activity the bot sent

Every request is recorded (`connector.requests`: method, path, conversation id, activity id, body, status answered);
every activity created or updated is kept by id (`connector.messages`, the latest version of each;
`connector.created` lists the ids POSTs created, in order).
`fail_next(status, times, method=None, retry_after=None)` makes the next matching requests fail with `status` (and
an optional Retry-After header) before anything is created or changed, as Teams does for 429 and 412;
`fail_after_create(status, times)` creates the posted activity and still answers `status`, as a gateway error
after the connector accepted a message looks to the bot. An unknown activity id on PUT answers 404.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import unquote

_ROUTE = re.compile(r"^/v3/conversations/(?P<conversation>[^/]+)/activities(?:/(?P<activity>[^/]+))?/?$")


@dataclass
class RecordedRequest:
    method: str
    path: str
    conversation_id: str
    activity_id: str | None
    body: dict[str, Any]
    headers: dict[str, str]
    status: int = 0


@dataclass
class _Failure:
    status: int
    remaining: int
    method: str | None
    retry_after: float | None
    after_create: bool


class FakeTeamsConnector:
    """The fake connector; use as a context manager (`with FakeTeamsConnector() as connector:`)."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.messages: dict[str, dict[str, Any]] = {}
        self.created: list[str] = []  # ids of the activities POSTs created, in order
        self._failures: list[_Failure] = []
        self._lock = threading.Lock()
        self._next_id = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "the fake connector is not started"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/"

    def fail_next(
        self, status: int, times: int = 1, *, method: str | None = None, retry_after: float | None = None
    ) -> None:
        """The next `times` requests (of `method`, if given) answer `status` without creating or changing anything."""
        with self._lock:
            self._failures.append(_Failure(status, times, method, retry_after, after_create=False))

    def fail_after_create(self, status: int, times: int = 1) -> None:
        """The next `times` POSTs create their activity and still answer `status` (an error after acceptance)."""
        with self._lock:
            self._failures.append(_Failure(status, times, "POST", None, after_create=True))

    def handle(
        self, method: str, path: str, body: dict[str, Any], headers: dict[str, str]
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        match = _ROUTE.match(path.split("?", 1)[0])
        if match is None:
            return 404, {"error": {"code": "NotFound", "message": path}}, {}
        conversation = unquote(match.group("conversation"))
        target = unquote(match.group("activity")) if match.group("activity") else None
        record = RecordedRequest(method, path, conversation, target, body, headers)
        with self._lock:
            self.requests.append(record)
            failure = self._take_failure(method)
            if failure is not None and not failure.after_create:
                record.status = failure.status
                extra = {"Retry-After": f"{failure.retry_after:g}"} if failure.retry_after is not None else {}
                return failure.status, {"error": {"code": "Injected", "message": str(failure.status)}}, extra
            if method == "POST":
                self._next_id += 1
                new_id = f"act-{self._next_id}"
                stored = dict(body, id=new_id, conversation=body.get("conversation") or {"id": conversation})
                if target is not None:
                    stored["replyToId"] = target
                self.messages[new_id] = stored
                self.created.append(new_id)
                if failure is not None:
                    record.status = failure.status
                    return failure.status, {"error": {"code": "Injected", "message": "after create"}}, {}
                record.status = 201
                return 201, {"id": new_id}, {}
            if method == "PUT" and target is not None:
                if target not in self.messages:
                    record.status = 404
                    return 404, {"error": {"code": "ActivityNotFound", "message": target}}, {}
                self.messages[target] = dict(body, id=target)
                record.status = 200
                return 200, {"id": target}, {}
            record.status = 405
            return 405, {"error": {"code": "MethodNotAllowed", "message": method}}, {}

    def _take_failure(self, method: str) -> _Failure | None:
        for failure in self._failures:
            if failure.remaining > 0 and (failure.method is None or failure.method == method):
                failure.remaining -= 1
                return failure
        return None

    def __enter__(self) -> Self:
        connector = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else {}
                except json.JSONDecodeError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                status, answer, extra = connector.handle(self.command, self.path, body, dict(self.headers.items()))
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in extra.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            do_POST = do_PUT = do_GET = do_DELETE = _serve

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
