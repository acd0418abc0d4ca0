"""Local fake model servers: the Anthropic Messages API and the OpenAI chat completions API, scripted per test.

The real vendor SDKs talk to these over HTTP, so a test exercises the providers end to end. A test writes what the
model does as provider-neutral steps, so the same script runs against both servers:

    server.script([Call("search_tables", {"question": "orders"}), Say("42 orders shipped.")])
    server.script(lambda exchange: Say(f"you asked: {exchange.user_text}"))

Steps: `Say(text)` (final text; `cut=True` ends it as if the token limit was hit), `Call(tool, arguments)`,
`Calls([(tool, arguments), ...])` (several tool calls in one reply), `Raw(content)` (the reply text verbatim, e.g.
invalid JSON in json mode), `Fail(status, body, headers)` (an HTTP error answer), `Slow(seconds, step)`.
A step function receives an `Exchange`: the neutral view of the request (system text, last user text, the tool results
the request carries, the tools offered, the round within the current question).

The OpenAI server answers in "json mode" when the request has a `response_format`: a `Call` becomes the message
content `{"tool": ..., "arguments": ...}` and a `Say` becomes `{"answer": ...}`; tool results are read back from the
user message ("Result of <tool>: ...").

Every request is recorded (`server.requests`: raw JSON, headers, the neutral view, the answer) for assertions. A fixed
`latency_s` delays every answer, `fail_first(count, status)` makes the next requests fail before the script is
consulted (to watch the SDK's own retries), and `api_key` makes the server demand that key (401 otherwise). Problems
with the script itself (no step left, a step the mode cannot express) answer HTTP 400 and land in `server.problems`.

Run as a process for subprocess tests (a worker, `tablescout ask`):

    python -m tests.fakes.model_server --provider anthropic --script script.json [--port 0]

prints `listening <base url>` and serves until stopped. The script file holds rules; a request uses the first rule
whose `when_user_contains` occurs in the last user text (case-insensitive; a rule without it matches everything), and
takes the rule's step number R, where R is the round within the current question (1 + the model replies since the
user's message), the last step repeating once the rule runs out:

    {"latency_s": 0,
     "fail_first": {"count": 1, "status": 529},
     "rules": [
       {"when_user_contains": "orders",
        "steps": [{"call": "search_tables", "arguments": {"question": "orders"}},
                  {"calls": [{"tool": "open_table_card", "arguments": {"database": "erp", "table": "ORD_MST"}}]},
                  {"say": "42 orders shipped to Busan."}]},
       {"steps": [{"say": "I only know about orders."}]}]}

Other step forms: {"raw": "..."}, {"fail": 500, "body": {...}, "headers": {...}}, {"slow": 2.5, "step": {...}},
{"say": "...", "cut": true}.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar, Self

# --- what a test writes -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Say:
    text: str
    cut: bool = False  # answer as if max_tokens was reached


@dataclass(frozen=True)
class Call:
    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    text: str = ""  # text the model writes before the call (native tool use only)


@dataclass(frozen=True)
class Calls:
    calls: Sequence[tuple[str, Mapping[str, Any]]]
    text: str = ""


@dataclass(frozen=True)
class Raw:
    content: str  # the reply's text exactly as given


@dataclass(frozen=True)
class Fail:
    status: int
    body: Any = None  # None: the vendor's usual error body for the status
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Slow:
    seconds: float
    step: Step


Step = Say | Call | Calls | Raw | Fail | Slow


@dataclass(frozen=True)
class Exchange:
    """The provider-neutral view of one request, given to step functions and recorded."""

    system: str
    user_text: str  # the text of the latest user message that has text (the question), tool results excluded
    tool_results: dict[str, str]  # tool name -> result content, carried by the request's last message
    tool_errors: frozenset[str]  # the tools whose result is marked as an error
    tools: tuple[str, ...]  # the tools offered
    round: int  # 1 + the model replies since the user's question
    request_number: int  # 1-based, counting every request this server received
    json_mode: bool = False
    prefill: str = ""  # the assistant's reply so far, which the server continues (llama.cpp's assistant prefill)


class ScriptedModel:
    """The model's behaviour: a list of steps played in order, or a function of the request."""

    def __init__(self, steps: Sequence[Step] | Callable[[Exchange], Step | None]) -> None:
        self._function = steps if callable(steps) else None
        self._steps: list[Step] = [] if callable(steps) else list(steps)
        self._lock = threading.Lock()

    @property
    def remaining(self) -> int:
        """Steps not played yet (0 for a function-driven model)."""
        return len(self._steps)

    def next_step(self, exchange: Exchange) -> Step | None:
        if self._function is not None:
            return self._function(exchange)
        with self._lock:
            return self._steps.pop(0) if self._steps else None

    @classmethod
    def from_rules(cls, script: Mapping[str, Any]) -> ScriptedModel:
        """The rule-based model of a script file (see the module doc)."""
        rules = [
            (rule.get("when_user_contains"), [step_from_json(s) for s in rule["steps"]]) for rule in script["rules"]
        ]
        for needle, steps in rules:
            if not steps:
                raise ValueError(f"rule {needle!r} has no steps")

        def choose(exchange: Exchange) -> Step | None:
            for needle, steps in rules:
                if needle is None or str(needle).lower() in exchange.user_text.lower():
                    return steps[min(exchange.round, len(steps)) - 1]
            return None

        return cls(choose)


def step_from_json(data: Mapping[str, Any]) -> Step:
    """A step from its JSON form in a script file."""
    if "say" in data:
        return Say(str(data["say"]), cut=bool(data.get("cut", False)))
    if "call" in data:
        return Call(str(data["call"]), dict(data.get("arguments", {})), text=str(data.get("text", "")))
    if "calls" in data:
        return Calls(
            [(str(c["tool"]), dict(c.get("arguments", {}))) for c in data["calls"]], text=str(data.get("text", ""))
        )
    if "raw" in data:
        return Raw(str(data["raw"]))
    if "fail" in data:
        return Fail(int(data["fail"]), data.get("body"), dict(data.get("headers", {})))
    if "slow" in data:
        return Slow(float(data["slow"]), step_from_json(data["step"]))
    raise ValueError(f"unknown step {dict(data)!r}; expected say, call, calls, raw, fail or slow")


# --- what the servers record --------------------------------------------------------------------------------------


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]  # lower-case names
    raw: dict[str, Any]
    exchange: Exchange
    status: int = 0
    response: dict[str, Any] | None = None
    received_at: float = field(default_factory=time.monotonic)

    @property
    def answer(self) -> dict[str, Any]:
        """The JSON the server answered with."""
        assert self.response is not None, "the request has not been answered"
        return self.response


class _ScriptProblem(Exception):
    pass


# --- the servers --------------------------------------------------------------------------------------------------


class FakeModelServer:
    """Common machinery: an HTTP server on 127.0.0.1 in a background thread, request recording, failures, latency."""

    provider: ClassVar[str]
    path: ClassVar[str]

    def __init__(
        self,
        model: ScriptedModel | None = None,
        *,
        latency_s: float = 0.0,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.model = model or ScriptedModel([])
        self.latency_s = latency_s
        self.api_key = api_key
        self.requests: list[RecordedRequest] = []
        self.problems: list[str] = []
        self._injected: list[Fail] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _HTTPServer((host, port), _Handler)
        self._httpd.fake = self
        self._thread: threading.Thread | None = None

    # lifecycle
    def start(self) -> Self:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name=f"fake-{self.provider}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        raise NotImplementedError

    # scripting
    def script(self, steps: Sequence[Step] | Callable[[Exchange], Step | None]) -> ScriptedModel:
        self.model = ScriptedModel(steps)
        return self.model

    def fail_first(
        self, count: int, status: int = 529, *, headers: Mapping[str, str] | None = None, body: Any = None
    ) -> None:
        """The next `count` requests answer `status` before the script is consulted."""
        with self._lock:
            self._injected.extend(Fail(status, body, dict(headers or {})) for _ in range(count))

    @property
    def exchanges(self) -> list[Exchange]:
        return [r.exchange for r in self.requests]

    # request handling (called by the handler thread)
    def _answer(
        self, path: str, headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        with self._lock:
            number = len(self.requests) + 1
            exchange = self.neutral_view(body, number)
            record = RecordedRequest(path=path, headers=headers, raw=body, exchange=exchange)
            self.requests.append(record)
            injected = self._injected.pop(0) if self._injected else None
        if self.latency_s > 0:
            self._stopping.wait(self.latency_s)
        status, payload, extra = self._respond(record, injected)
        record.status, record.response = status, payload
        return status, payload, extra

    def _respond(self, record: RecordedRequest, injected: Fail | None) -> tuple[int, dict[str, Any], dict[str, str]]:
        if path_error := self._check_path(record.path):
            return 404, self.error_body(404, path_error), {}
        if self.api_key is not None and self.presented_key(record.headers) != self.api_key:
            return 401, self.error_body(401, self.bad_key_message(self.presented_key(record.headers))), {}
        step: Step | None = injected
        if step is None:
            try:
                step = self.model.next_step(record.exchange)
            except Exception as exc:
                return self._problem(f"the step function failed on request {record.exchange.request_number}: {exc!r}")
        if step is None:
            return self._problem(f"the scripted model has no step for request {record.exchange.request_number}")
        while isinstance(step, Slow):
            if self._stopping.wait(step.seconds):
                return 503, self.error_body(503, "the fake server is stopping"), {}
            step = step.step
        if isinstance(step, Fail):
            body = (
                step.body if step.body is not None else self.error_body(step.status, f"scripted failure {step.status}")
            )
            return step.status, body, dict(step.headers)
        try:
            return 200, self.render(step, record), {}
        except _ScriptProblem as exc:
            return self._problem(str(exc))

    def _problem(self, message: str) -> tuple[int, dict[str, Any], dict[str, str]]:
        with self._lock:
            self.problems.append(message)
        return 400, self.error_body(400, message), {}

    def _check_path(self, path: str) -> str | None:
        return None if path.split("?", 1)[0] == self.path else f"unknown path {path}"

    # provider-specific parts
    def neutral_view(self, body: dict[str, Any], number: int) -> Exchange:
        raise NotImplementedError

    def render(self, step: Step, record: RecordedRequest) -> dict[str, Any]:
        raise NotImplementedError

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        raise NotImplementedError

    def presented_key(self, headers: Mapping[str, str]) -> str:
        raise NotImplementedError

    def bad_key_message(self, presented: str) -> str:
        raise NotImplementedError


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeModelServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30  # an idle keep-alive connection's thread ends after this
    server: _HTTPServer

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        data = self.rfile.read(length) if length else b""
        try:
            body = json.loads(data or b"{}")
        except ValueError:
            self._send(400, {"error": {"message": "the request body is not JSON"}}, {})
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        status, payload, extra = self.server.fake._answer(self.path, headers, body)
        self._send(status, payload, extra)

    def _send(self, status: int, payload: dict[str, Any], extra: Mapping[str, str]) -> None:
        encoded = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(encoded)))
            for name, value in extra.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(encoded)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (its timeout); nothing to answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _estimate_tokens(value: object) -> int:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return max(1, len(text) // 4)


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", "")) for part in content if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


# --- Anthropic ----------------------------------------------------------------------------------------------------

_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class FakeAnthropicServer(FakeModelServer):
    """`POST /v1/messages` as the Anthropic API answers it. Prompt caching is imitated: a request whose system
    prompt carries `cache_control` reports its tools and system prompt as cache writes the first time and as cache
    reads after that."""

    provider = "anthropic"
    path = "/v1/messages"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._cached_prefixes: set[str] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def neutral_view(self, body: dict[str, Any], number: int) -> Exchange:
        messages = body.get("messages") or []
        names: dict[str, str] = {}
        for message in messages:
            if message.get("role") == "assistant" and isinstance(message.get("content"), list):
                for block in message["content"]:
                    if isinstance(block, dict) and block.get("type") == "tool_use":
                        names[str(block.get("id"))] = str(block.get("name"))
        results: dict[str, str] = {}
        errors: set[str] = set()
        last = messages[-1] if messages else {}
        if last.get("role") == "user" and isinstance(last.get("content"), list):
            for block in last["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    name = names.get(str(block.get("tool_use_id")), str(block.get("tool_use_id")))
                    results[name] = _text_of(block.get("content"))
                    if block.get("is_error"):
                        errors.add(name)
        question_at, user_text = -1, ""
        for index in range(len(messages) - 1, -1, -1):
            if messages[index].get("role") == "user" and (text := _text_of(messages[index].get("content"))):
                question_at, user_text = index, text
                break
        replies = sum(1 for m in messages[question_at + 1 :] if m.get("role") == "assistant")
        return Exchange(
            system=_text_of(body.get("system", "")),
            user_text=user_text,
            tool_results=results,
            tool_errors=frozenset(errors),
            tools=tuple(str(t.get("name")) for t in body.get("tools") or []),
            round=replies + 1,
            request_number=number,
        )

    def render(self, step: Step, record: RecordedRequest) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        stop_reason = "end_turn"
        if isinstance(step, Say):
            content.append({"type": "text", "text": step.text})
            stop_reason = "max_tokens" if step.cut else "end_turn"
        elif isinstance(step, Raw):
            content.append({"type": "text", "text": step.content})
        elif isinstance(step, Call | Calls):
            calls = [(step.tool, step.arguments)] if isinstance(step, Call) else list(step.calls)
            if step.text:
                content.append({"type": "text", "text": step.text})
            for tool, arguments in calls:
                content.append(
                    {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:24]}", "name": tool, "input": dict(arguments)}
                )
            stop_reason = "tool_use"
        else:
            raise _ScriptProblem(f"step {step!r} cannot be rendered")
        return {
            "id": f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": record.raw.get("model", "claude-fake"),
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": self._usage(record.raw, content),
        }

    def _usage(self, body: dict[str, Any], content: list[dict[str, Any]]) -> dict[str, Any]:
        total = _estimate_tokens({"system": body.get("system"), "tools": body.get("tools"), "m": body.get("messages")})
        system = body.get("system")
        cacheable = isinstance(system, list) and any(isinstance(b, dict) and b.get("cache_control") for b in system)
        written = read = 0
        if cacheable:
            prefix = json.dumps({"tools": body.get("tools"), "system": system}, sort_keys=True)
            prefix_tokens = min(_estimate_tokens(prefix), total - 1)
            with self._lock:
                seen = prefix in self._cached_prefixes
                self._cached_prefixes.add(prefix)
            read, written = (prefix_tokens, 0) if seen else (0, prefix_tokens)
        return {
            "input_tokens": total - written - read,
            "output_tokens": _estimate_tokens(content),
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
        }

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = _ANTHROPIC_ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": message}}

    def presented_key(self, headers: Mapping[str, str]) -> str:
        # The API takes the key as x-api-key or as a bearer token (what recent SDKs send).
        return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ").strip()

    def bad_key_message(self, presented: str) -> str:
        return "invalid x-api-key"


# --- OpenAI -------------------------------------------------------------------------------------------------------

_RESULT_HEADER = re.compile(r"^Result of (\S+?)( \(error\))?:\n", re.MULTILINE)


class FakeOpenAIServer(FakeModelServer):
    """`POST /v1/chat/completions` as OpenAI-compatible servers answer it, with native tool calls or, when the
    request has a `response_format`, JSON message content."""

    provider = "openai"
    path = "/v1/chat/completions"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def neutral_view(self, body: dict[str, Any], number: int) -> Exchange:
        messages = body.get("messages") or []
        json_mode = "response_format" in body or "grammar" in body  # a llama.cpp grammar for the JSON reply
        prefill = ""
        if json_mode and messages and messages[-1].get("role") == "assistant":  # a reply to continue, not a reply
            prefill, messages = _text_of(messages[-1].get("content")), messages[:-1]
        names: dict[str, str] = {}
        for message in messages:
            for call in message.get("tool_calls") or []:
                names[str(call.get("id"))] = str((call.get("function") or {}).get("name"))
        results: dict[str, str] = {}
        errors: set[str] = set()
        # Native results: the `tool` messages at the end. JSON mode: the "Result of ..." text of the last user message.
        for message in reversed(messages):
            if message.get("role") != "tool":
                break
            name = names.get(str(message.get("tool_call_id")), str(message.get("tool_call_id")))
            text = _text_of(message.get("content"))
            results[name] = text.removeprefix("Error: ")
            if text.startswith("Error: "):
                errors.add(name)
        question_at, user_text = -1, ""
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if message.get("role") != "user":
                continue
            text = _text_of(message.get("content"))
            if index == len(messages) - 1:
                question = self._question_part(text, results, errors)
            else:
                question = self._question_part(text, {}, set())
            if question:
                question_at, user_text = index, question
                break
        replies = sum(1 for m in messages[question_at + 1 :] if m.get("role") == "assistant")
        if prefill:
            tools = tuple(re.findall(r'"tool": "([^"]+)"', prefill))
        elif json_mode:
            tools = self._json_mode_tools(body)
        else:
            tools = tuple(str((t.get("function") or {}).get("name")) for t in body.get("tools") or [])
        system = "\n\n".join(_text_of(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
        return Exchange(
            system=system,
            user_text=user_text,
            tool_results=results,
            tool_errors=frozenset(errors),
            tools=tools,
            round=replies + 1,
            request_number=number,
            json_mode=json_mode,
            prefill=prefill,
        )

    @staticmethod
    def _question_part(text: str, results: dict[str, str], errors: set[str]) -> str:
        """The user's own words in a user message; tool results written as "Result of <tool>:" are collected."""
        headers = list(_RESULT_HEADER.finditer(text))
        if not headers or headers[0].start() != 0:
            return text
        for position, header in enumerate(headers):
            end = headers[position + 1].start() if position + 1 < len(headers) else len(text)
            results[header.group(1)] = text[header.end() : end].rstrip("\n")
            if header.group(2):
                errors.add(header.group(1))
        return ""

    @staticmethod
    def _json_mode_tools(body: dict[str, Any]) -> tuple[str, ...]:
        if "grammar" in body:  # the tool a grammar's root calls (workers.models.json_replies.call_grammar)
            return tuple(re.findall(r'\\"tool\\": \\"([^\\"]+)\\"', str(body["grammar"]).split("\n")[0]))
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
        names = []
        for option in schema.get("anyOf") or schema.get("oneOf") or []:
            tool = ((option.get("properties") or {}).get("tool")) or {}
            if "const" in tool:
                names.append(str(tool["const"]))
            elif tool.get("enum"):
                names.append(str(tool["enum"][0]))
        return tuple(names)

    def render(self, step: Step, record: RecordedRequest) -> dict[str, Any]:
        json_mode = record.exchange.json_mode
        message: dict[str, Any] = {"role": "assistant", "content": None}
        finish_reason = "stop"
        if isinstance(step, Raw):
            message["content"] = step.content
        elif isinstance(step, Say):
            content = json.dumps({"answer": step.text}) if json_mode else step.text
            if step.cut:
                content, finish_reason = (content[: max(1, len(content) // 2)] if json_mode else content), "length"
            message["content"] = content
        elif isinstance(step, Call | Calls):
            calls = [(step.tool, step.arguments)] if isinstance(step, Call) else list(step.calls)
            if json_mode:
                if len(calls) != 1:
                    raise _ScriptProblem(f"json mode replies carry one tool call; the step has {len(calls)}")
                tool, arguments = calls[0]
                message["content"] = json.dumps({"tool": tool, "arguments": dict(arguments)})
            else:
                message["content"] = step.text or None
                message["tool_calls"] = [
                    {
                        "id": f"call_{uuid.uuid4().hex[:24]}",
                        "type": "function",
                        "function": {"name": tool, "arguments": json.dumps(dict(arguments))},
                    }
                    for tool, arguments in calls
                ]
                finish_reason = "tool_calls"
        else:
            raise _ScriptProblem(f"step {step!r} cannot be rendered")
        prompt_tokens = _estimate_tokens({"m": record.raw.get("messages"), "t": record.raw.get("tools")})
        completion_tokens = _estimate_tokens(message)
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": record.raw.get("model", "fake-model"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kinds = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error"}
        codes = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}
        kind = kinds.get(status, "rate_limit_error" if status == 429 else "server_error")
        return {"error": {"message": message, "type": kind, "param": None, "code": codes.get(status)}}

    def presented_key(self, headers: Mapping[str, str]) -> str:
        return headers.get("authorization", "").removeprefix("Bearer ").strip()

    def bad_key_message(self, presented: str) -> str:
        # Quotes the key back, as some servers do, so tests can prove the provider never shows it.
        return f"Incorrect API key provided: {presented}. You can find your API key in your account settings."


SERVERS: dict[str, type[FakeModelServer]] = {"anthropic": FakeAnthropicServer, "openai": FakeOpenAIServer}


def serve_script(
    provider: str, script: Mapping[str, Any], *, port: int = 0, api_key: str | None = None
) -> FakeModelServer:
    """A started server playing a rule-based script (the file format in the module doc)."""
    server = SERVERS[provider](
        ScriptedModel.from_rules(script), latency_s=float(script.get("latency_s", 0.0)), api_key=api_key, port=port
    )
    failures = script.get("fail_first")
    if failures:
        server.fail_first(
            int(failures.get("count", 1)), int(failures.get("status", 529)), headers=failures.get("headers") or {}
        )
    return server.start()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fakes.model_server", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument("--provider", choices=sorted(SERVERS), required=True)
    parser.add_argument("--script", type=Path, required=True, help="a JSON script file (rules)")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed)")
    parser.add_argument("--api-key", default=None, help="demand this API key")
    args = parser.parse_args(argv)
    server = serve_script(args.provider, json.loads(args.script.read_text()), port=args.port, api_key=args.api_key)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    print(f"listening {server.url}", flush=True)
    try:
        while not stop.wait(0.5):
            pass
    finally:
        server.stop()
        if server.problems:
            print("\n".join(f"problem: {p}" for p in server.problems), file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
