"""The Anthropic Messages API provider (native tool use); the one module that imports the `anthropic` SDK.

Neutral messages become Messages API content blocks (assistant `tool_use`, user `tool_result` with `is_error`) and the
reply comes back as a ModelReply. The system prompt and the tool definitions are marked cacheable (`cache_control`),
since every round of a turn repeats them. The SDK's retries are the only retry layer; `call_deadline` keeps a call
with its retries within `timeout_s`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anthropic
from anthropic.types import (
    Message as AnthropicMessage,
)
from anthropic.types import (
    MessageParam,
    TextBlockParam,
    ToolParam,
    ToolResultBlockParam,
    ToolUseBlockParam,
)

from workers.models.deadline import call_deadline, deadline_http_client
from workers.models.failures import (
    connection_failure,
    deadline_failure,
    display_endpoint,
    status_failure,
    timeout_failure,
)
from workers.models.types import Message, ModelReply, ToolCallRequest, ToolSpec, Usage

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_TOKENS = 2048
_VENDOR = "the Anthropic API"
_KEY_VARIABLE = "ANTHROPIC_API_KEY"
_EMPTY_RESULT = "(no output)"


class AnthropicProvider:
    """Claude models through the Messages API, with native tool use."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        max_retries: int = anthropic.DEFAULT_MAX_RETRIES,
    ) -> None:
        if not model:
            raise ValueError("an Anthropic model name is required")
        self.model = model
        self.label = f"anthropic:{model}"
        self.small_model = False
        self.max_tokens = max_tokens
        self._api_key = api_key
        self._base_url = base_url or DEFAULT_BASE_URL
        self._endpoint = display_endpoint(self._base_url)
        self._client = anthropic.Anthropic(
            api_key=api_key,
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
        """One Messages API call (with the SDK's retries) that ends within `timeout_s`. The Messages API of the
        installed SDK takes no sampling temperature, so `temperature` is not sent (the guided path that asks for one
        is for small local models)."""
        request_messages = [_message_param(message) for message in messages]
        system_blocks: list[TextBlockParam] = (
            [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}] if system else []
        )
        tool_params = _tool_params(tools)
        with call_deadline(timeout_s) as deadline:
            try:
                response = self._client.messages.create(
                    model=self.model,
                    max_tokens=self.max_tokens,
                    system=system_blocks if system_blocks else anthropic.omit,
                    messages=request_messages,
                    tools=tool_params if tool_params else anthropic.omit,
                    timeout=max(timeout_s, 0.001),
                )
            except anthropic.APIStatusError as exc:
                cut_short = deadline_failure(deadline, vendor=_VENDOR, endpoint=self._endpoint, timeout_s=timeout_s)
                if cut_short is not None:
                    raise cut_short from None
                raise status_failure(
                    vendor=_VENDOR,
                    endpoint=self._endpoint,
                    status=exc.status_code,
                    api_message=exc.api_message or _body_text(exc.body),
                    secret=self._api_key,
                    key_variable=_KEY_VARIABLE,
                ) from None
            except anthropic.APITimeoutError:
                raise timeout_failure(vendor=_VENDOR, endpoint=self._endpoint, timeout_s=timeout_s) from None
            except anthropic.APIConnectionError as exc:
                raise connection_failure(
                    vendor=_VENDOR, endpoint=self._endpoint, cause=exc.__cause__, secret=self._api_key
                ) from None
            except anthropic.AnthropicError as exc:
                raise connection_failure(
                    vendor=_VENDOR, endpoint=self._endpoint, cause=exc, secret=self._api_key
                ) from None
        return _reply(response)

    def close(self) -> None:
        self._client.close()


def _tool_params(tools: Sequence[ToolSpec]) -> list[ToolParam]:
    params: list[ToolParam] = [
        {"name": tool.name, "description": tool.description, "input_schema": tool.parameters} for tool in tools
    ]
    if params:
        # One breakpoint after the last tool caches all tool definitions (they precede the system prompt).
        params[-1]["cache_control"] = {"type": "ephemeral"}
    return params


def _message_param(message: Message) -> MessageParam:
    if message.role == "assistant":
        assistant_blocks: list[TextBlockParam | ToolUseBlockParam] = []
        if message.text:
            assistant_blocks.append({"type": "text", "text": message.text})
        for call in message.tool_calls:
            assistant_blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments})
        return {"role": "assistant", "content": assistant_blocks}
    # The API wants a user message's tool results before any text.
    user_blocks: list[ToolResultBlockParam | TextBlockParam] = []
    for result in message.tool_results:
        block: ToolResultBlockParam = {
            "type": "tool_result",
            "tool_use_id": result.call_id,
            "content": result.content or _EMPTY_RESULT,
        }
        if result.is_error:
            block["is_error"] = True
        user_blocks.append(block)
    if message.text or not user_blocks:
        user_blocks.append({"type": "text", "text": message.text})
    return {"role": "user", "content": user_blocks}


def _reply(response: AnthropicMessage) -> ModelReply:
    texts: list[str] = []
    calls: list[ToolCallRequest] = []
    for block in response.content:
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "tool_use":
            arguments = block.input if isinstance(block.input, dict) else {}
            calls.append(ToolCallRequest(id=block.id, name=block.name, arguments=dict(arguments)))
    if response.stop_reason == "max_tokens":
        # A reply cut by max_tokens may end inside a tool call whose arguments are incomplete: run none of them.
        stop_reason, calls = "max_tokens", []
    elif calls:
        stop_reason = "tool_use"
    else:
        stop_reason = "end"
    usage = response.usage
    input_tokens = usage.input_tokens + (usage.cache_creation_input_tokens or 0) + (usage.cache_read_input_tokens or 0)
    return ModelReply(
        text="".join(texts),
        tool_calls=tuple(calls),
        stop_reason=stop_reason,
        usage=Usage(input_tokens=input_tokens, output_tokens=usage.output_tokens),
        model=str(response.model),
    )


def _body_text(body: Any) -> str | None:
    return None if body is None else str(body)
