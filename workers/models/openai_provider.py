"""The OpenAI-compatible chat completions provider; the one module that imports the `openai` SDK.

Two ways to get tool calls out of a model:
- "native": function `tools` in the request, `tool_calls` in the reply, results as `role: tool` messages;
- "json": for small local models (llama.cpp, vLLM, Ollama) that never emit tool calls. The request carries no tools; a
  `json_schema` response format constrains the reply to one tool call or the final answer (see json_replies), or, with
  `grammars` (llama.cpp's server) and one tool offered that has a grammar, a GBNF `grammar` for the same reply format
  with the tool's argument under its own grammar (the guided path's SQL: `workers.sql.sql_grammar`); where that reply
  can only be the call, its fixed start is written as the assistant's reply so far (a prompt pass instead of a decoding
  step per token) and the grammar covers the rest. The system prompt explains the format, and tool results go back as
  user text. With `tools_first` (small local models) the answer is offered only once run_sql has returned rows (or said
  "no permission", or failed three times; where run_sql is not offered, once any tool has run) since the user's message,
  because a small model otherwise answers a data question with a number it made up; the reply right after run_sql
  returned rows must be the answer; a tool other than run_sql is not offered again right after it was called; before a
  card is open there is one search and no join path; run_sql is offered once a card is open, and search_tables and
  list_tables are not offered then, nor a second join path or a fourth card; run_sql is not offered right after it
  refused a statement that had already failed. Such a model otherwise writes SQL on guessed names, or goes round
  searching, opening cards and rerunning the same SQL instead of answering (see json_replies.next_tools). `small_model`
  marks a small model (brief tool results, answers checked for made-up numbers: ModelProvider.small_model).

Replies that cannot be used are errors, not silent empty replies: tool-call arguments that are not a JSON object, and
in json mode a reply outside the format, raise ModelError. Call ids the server leaves out (or repeats) are generated.
The base URL is honoured (`OPENAI_BASE_URL`), and a local server needs no API key. The SDK's retries are the only
retry layer; `call_deadline` keeps a call with its retries within `timeout_s`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

import openai
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionMessageParam,
)
from openai.types.shared_params import ResponseFormatJSONSchema

from workers.models import json_replies
from workers.models.deadline import call_deadline, deadline_http_client
from workers.models.failures import (
    connection_failure,
    deadline_failure,
    display_endpoint,
    status_failure,
    timeout_failure,
)
from workers.models.types import MODEL_UNREADABLE, Message, ModelError, ModelReply, ToolCallRequest, ToolSpec, Usage

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MAX_TOKENS = 2048
#: The key sent to a local server that needs none (the SDK insists on some key).
LOCAL_API_KEY = "local"
ToolsMode = Literal["native", "json"]
_VENDOR = "the OpenAI-compatible endpoint"
_KEY_VARIABLE = "OPENAI_API_KEY"


class OpenAIProvider:
    """A model behind an OpenAI-compatible chat completions endpoint, with native or JSON-constrained tool calls."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        tools_mode: ToolsMode = "native",
        max_tokens: int = DEFAULT_MAX_TOKENS,
        max_retries: int = openai.DEFAULT_MAX_RETRIES,
        tools_first: bool = False,
        small_model: bool = False,
        grammars: bool = False,
        label: str | None = None,
    ) -> None:
        if not model:
            raise ValueError("an OpenAI-compatible model name is required")
        if tools_mode not in ("native", "json"):
            raise ValueError(f"tools_mode must be 'native' or 'json', not {tools_mode!r}")
        self.model = model
        self.label = label or f"openai:{model}"
        self.tools_mode: ToolsMode = tools_mode
        self.tools_first = tools_first
        self.small_model = small_model
        #: The server reads llama.cpp's `grammar` field: a tool's grammar constrains its call (ToolSpec.grammar).
        self.grammars = grammars
        self.max_tokens = max_tokens
        self._api_key = api_key or None
        self._base_url = base_url or DEFAULT_BASE_URL
        self._endpoint = display_endpoint(self._base_url)
        self._client = openai.OpenAI(
            api_key=api_key or LOCAL_API_KEY,
            base_url=self._base_url,
            max_retries=max_retries,
            http_client=deadline_http_client(),
        )

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        timeout_s: float,
        temperature: float | None = None,
    ) -> ModelReply:
        """One chat completion (with the SDK's retries) that ends within `timeout_s`."""
        sampling = openai.omit if temperature is None else temperature
        if self.tools_mode == "json":
            return self._complete_json(system, messages, tools, timeout_s=timeout_s, temperature=sampling)
        request_messages = _native_messages(system, messages)
        tool_params: list[ChatCompletionFunctionToolParam] = [
            {
                "type": "function",
                "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
            }
            for tool in tools
        ]
        response = self._create(
            timeout_s,
            messages=request_messages,
            tools=tool_params if tool_params else openai.omit,
            temperature=sampling,
        )
        choice = _first_choice(response)
        text = choice.message.content or ""
        if choice.finish_reason == "length":
            # A reply cut by the token limit may end inside a tool call whose arguments are incomplete: run none.
            return ModelReply(text=text, stop_reason="max_tokens", usage=_usage(response), model=response.model)
        calls = _native_calls(choice.message.tool_calls or [])
        return ModelReply(
            text=text,
            tool_calls=calls,
            stop_reason="tool_use" if calls else "end",
            usage=_usage(response),
            model=response.model,
        )

    def _complete_json(
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec], *, timeout_s: float, temperature: Any
    ) -> ModelReply:
        instructions = json_replies.reply_instructions(tools, tools_first=self.tools_first)
        full_system = f"{system}\n\n{instructions}" if system else instructions
        may_answer = not self.tools_first or json_replies.may_answer(messages, tools)
        callable_now = json_replies.next_tools(messages, tools) if self.tools_first else list(tools)
        prefill = json_replies.call_prefill(callable_now, answer=may_answer) if self.grammars else None
        grammar = (
            json_replies.call_grammar(callable_now, answer=may_answer, prefilled=prefill is not None)
            if self.grammars
            else None
        )
        request_messages = _json_mode_messages(full_system, messages)
        if prefill is not None:  # the reply so far: the server continues it (llama.cpp's assistant prefill)
            request_messages.append({"role": "assistant", "content": prefill})
        constraint: dict[str, Any]
        if grammar is not None:  # the same reply format, with the tool's argument under its own grammar
            constraint = {"extra_body": {"grammar": grammar}}
        else:
            response_format: ResponseFormatJSONSchema = {
                "type": "json_schema",
                "json_schema": {
                    "name": json_replies.SCHEMA_NAME,
                    "strict": True,
                    "schema": json_replies.reply_schema(callable_now, answer=may_answer),
                },
            }
            constraint = {"response_format": response_format}
        response = self._create(
            timeout_s,
            messages=request_messages,
            temperature=temperature,
            **constraint,
        )
        choice = _first_choice(response)
        content = choice.message.content
        if prefill is not None and not (content or "").startswith(prefill):
            content = prefill + (content or "")  # a server that returns the continuation alone
        try:
            text, calls = json_replies.parse_reply(content, tools)
        except ModelError:
            if choice.finish_reason == "length":
                return ModelReply(text="", stop_reason="max_tokens", usage=_usage(response), model=response.model)
            raise
        return ModelReply(
            text=text,
            tool_calls=calls,
            stop_reason="tool_use" if calls else "end",
            usage=_usage(response),
            model=response.model,
        )

    def _create(self, timeout_s: float, **request: Any) -> ChatCompletion:
        with call_deadline(timeout_s) as deadline:
            try:
                response: ChatCompletion = self._client.chat.completions.create(
                    model=self.model,
                    max_tokens=self.max_tokens,
                    timeout=max(timeout_s, 0.001),
                    **request,
                )
            except openai.APIStatusError as exc:
                cut_short = deadline_failure(deadline, vendor=_VENDOR, endpoint=self._endpoint, timeout_s=timeout_s)
                if cut_short is not None:
                    raise cut_short from None
                raise status_failure(
                    vendor=_VENDOR,
                    endpoint=self._endpoint,
                    status=exc.status_code,
                    api_message=_error_message(exc.body),
                    secret=self._api_key,
                    key_variable=_KEY_VARIABLE,
                ) from None
            except openai.APITimeoutError:
                raise timeout_failure(vendor=_VENDOR, endpoint=self._endpoint, timeout_s=timeout_s) from None
            except openai.APIConnectionError as exc:
                raise connection_failure(
                    vendor=_VENDOR, endpoint=self._endpoint, cause=exc.__cause__, secret=self._api_key
                ) from None
            except openai.OpenAIError as exc:
                raise connection_failure(
                    vendor=_VENDOR, endpoint=self._endpoint, cause=exc, secret=self._api_key
                ) from None
        return response

    def close(self) -> None:
        self._client.close()


def _native_messages(system: str, messages: Sequence[Message]) -> list[ChatCompletionMessageParam]:
    out: list[ChatCompletionMessageParam] = []
    if system:
        out.append({"role": "system", "content": system})
    for message in messages:
        if message.role == "assistant":
            tool_calls: list[ChatCompletionMessageFunctionToolCallParam] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                }
                for call in message.tool_calls
            ]
            if tool_calls:
                out.append({"role": "assistant", "content": message.text or None, "tool_calls": tool_calls})
            else:
                out.append({"role": "assistant", "content": message.text})
            continue
        # Tool results must directly follow the assistant message that asked for them.
        for result in message.tool_results:
            content = f"Error: {result.content}" if result.is_error else result.content
            out.append({"role": "tool", "tool_call_id": result.call_id, "content": content})
        if message.text or not message.tool_results:
            out.append({"role": "user", "content": message.text})
    return out


def _json_mode_messages(system: str, messages: Sequence[Message]) -> list[ChatCompletionMessageParam]:
    out: list[ChatCompletionMessageParam] = [{"role": "system", "content": system}]
    for message in messages:
        if message.role == "assistant":
            out.append({"role": "assistant", "content": json_replies.assistant_json(message.text, message.tool_calls)})
            continue
        parts = []
        if message.tool_results:
            parts.append(json_replies.tool_results_text(message.tool_results))
        if message.text or not parts:
            parts.append(message.text)
        out.append({"role": "user", "content": "\n\n".join(parts)})
    return out


def _first_choice(response: ChatCompletion) -> Any:
    if not response.choices:
        raise ModelError("the model endpoint answered without any choice", user_message=MODEL_UNREADABLE)
    return response.choices[0]


def _native_calls(tool_calls: Sequence[Any]) -> tuple[ToolCallRequest, ...]:
    calls: list[ToolCallRequest] = []
    seen: set[str] = set()
    for call in tool_calls:
        if getattr(call, "type", "function") != "function":
            continue
        name = call.function.name
        raw = call.function.arguments or "{}"
        try:
            arguments = json.loads(raw)
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            shown = raw if len(raw) <= 200 else raw[:199] + "…"
            raise ModelError(
                f"the model called {name} with arguments that are not a JSON object: {shown!r}",
                user_message=MODEL_UNREADABLE,
            )
        call_id = call.id if call.id and call.id not in seen else json_replies.new_call_id()
        seen.add(call_id)
        calls.append(ToolCallRequest(id=call_id, name=name, arguments=arguments))
    return tuple(calls)


def _usage(response: ChatCompletion) -> Usage:
    if response.usage is None:
        return Usage()
    return Usage(input_tokens=response.usage.prompt_tokens, output_tokens=response.usage.completion_tokens)


def _error_message(body: object) -> str | None:
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return None if body is None else str(body)
