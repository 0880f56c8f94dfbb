"""`OpenAIChatProvider`: any OpenAI-compatible Chat Completions endpoint, streamed, with function tools.

Built on the official `openai` SDK (`AsyncOpenAI`): the SDK owns the HTTP, the SSE parsing and the
typed errors; this module owns the mapping to the provider port. It works against OpenAI itself
and any server that speaks the same API (Ollama, vLLM, llama.cpp's server, LM Studio, OpenRouter,
gateways) through `base_url`.

Invariants:
- text is yielded as it streams; tool calls are assembled by their `index` (a call's id and name
  come first, its arguments in pieces, several calls interleaved) and yielded whole, in index
  order, once the stream has ended; a call's `call_id` is the model's own id;
- arguments that are not a JSON object go on as `tool_arguments.parse_arguments` says (the
  model is told, the turn goes on);
- one `StepDone` ends each call, with the usage of the stream's final chunk
  (`stream_options.include_usage`), cached tokens from `prompt_tokens_details.cached_tokens`;
- a stream that ends without a `finish_reason` is incomplete, never a silent short answer;
- a server that refuses `stream_options` (a 400 naming it: some gateways and older vLLM or
  Azure versions) is asked again without it, at once, and never sent it again; its turns then
  have no usage;
- the SDK's own retries are off: `with_retries` drives them, so each one is seen.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from openai import AsyncOpenAI, AsyncStream, BadRequestError

from agent_tui.engine.provider import ModelMessage, ModelRequest, ProviderChunk, StepDone, TextDelta, ToolCall
from agent_tui.providers.config import ModelSettings
from agent_tui.providers.retry import MalformedChunk
from agent_tui.providers.tool_arguments import parse_arguments
from agent_tui.providers.vendor_provider import VendorProvider


@dataclass
class _PendingCall:
    call_id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    def finish(self) -> ToolCall:
        return ToolCall(self.name, parse_arguments("".join(self.arguments)), self.call_id)


class OpenAIChatProvider(VendorProvider):
    """The provider port over Chat Completions (see `VendorProvider` for the arguments)."""

    name = "openai"
    path = "/chat/completions"
    stream_cls = AsyncStream[object]

    def __init__(self, settings: ModelSettings, **options: Any) -> None:
        super().__init__(settings, **options)
        # OpenAI's own API wants `max_completion_tokens` (its reasoning models refuse
        # `max_tokens`); compatible servers know `max_tokens` far more widely.
        self._max_tokens_field = "max_tokens" if settings.custom_endpoint else "max_completion_tokens"
        self._tools_for: tuple[Mapping[str, Any], ...] | None = None
        self._tools: list[dict[str, Any]] = []
        self._usage_option = True  # False once the server refused `stream_options`

    def _make_client(self, **options: Any) -> AsyncOpenAI:
        return AsyncOpenAI(**options)

    def request_params(self, request: ModelRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": openai_messages(request.messages),
            "stream": True,
        }
        if self._usage_option:
            params["stream_options"] = {"include_usage": True}
        if request.tools:
            params["tools"] = self._tool_params(request.tools)
        if self.settings.max_output_tokens is not None:
            params[self._max_tokens_field] = self.settings.max_output_tokens
        if self.settings.temperature is not None:
            params["temperature"] = self.settings.temperature
        return params

    def _tool_params(self, tools: tuple[Mapping[str, Any], ...]) -> list[dict[str, Any]]:
        if tools is not self._tools_for:  # the engine passes the same tuple every call
            self._tools = [
                {
                    "type": "function",
                    "function": {
                        "name": tool["name"],
                        "description": tool.get("description", ""),
                        "parameters": tool.get("input_schema", {"type": "object", "properties": {}}),
                    },
                }
                for tool in tools
            ]
            self._tools_for = tools
        return self._tools

    def _reader(self) -> _Answer:
        return _Answer()

    async def _post(self, request: ModelRequest) -> AsyncStream[object]:
        try:
            return await super()._post(request)
        except BadRequestError as error:
            if not (self._usage_option and "stream_options" in str(error)):
                raise
            self._usage_option = False
            return await super()._post(request)


class _Answer:
    """What one streamed answer has said so far: its calls, whether it finished, its usage."""

    __slots__ = ("calls", "finished", "model", "usage")

    def __init__(self) -> None:
        self.calls: dict[int, _PendingCall] = {}
        self.finished = False
        self.model: str | None = None
        self.usage: Mapping[str, Any] | None = None

    def read(self, chunk: Any) -> TextDelta | None:
        """Take in one `chat.completion.chunk`; returns the text it adds (None: none)."""
        try:
            if chunk.get("usage"):
                self.usage = chunk["usage"]
            self.model = chunk.get("model") or self.model
            text = None
            for choice in chunk.get("choices") or ():
                if choice.get("index"):  # only one answer is asked for; ignore any other
                    continue
                delta = choice.get("delta")
                if delta:
                    text = delta.get("content") or delta.get("refusal") or text
                    pieces = delta.get("tool_calls")
                    if pieces:
                        _collect(self.calls, pieces)
                if choice.get("finish_reason"):
                    self.finished = True
            return TextDelta(text) if text else None
        except (AttributeError, TypeError, KeyError) as error:
            raise MalformedChunk(f"a chunk not shaped like a chat.completion.chunk ({error})") from None

    def last_chunks(self, fallback_model: str) -> list[ProviderChunk]:
        """The calls in the order the model made them, then the step's end."""
        calls: list[ProviderChunk] = [self.calls[index].finish() for index in sorted(self.calls)]
        return [*calls, self._step_done(fallback_model)]

    def _step_done(self, fallback_model: str) -> StepDone:
        model = self.model or fallback_model
        usage = self.usage
        if not usage:
            return StepDone(model=model)
        details = usage.get("prompt_tokens_details") or {}
        return StepDone(
            model=model,
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            cached_tokens=details.get("cached_tokens"),
        )


def _collect(calls: dict[int, _PendingCall], pieces: Sequence[Any]) -> None:
    for position, piece in enumerate(pieces):
        index = piece.get("index")
        if not isinstance(index, int):
            index = position
        pending = calls.get(index)
        if pending is None:
            pending = calls[index] = _PendingCall()
        if piece.get("id"):
            pending.call_id = piece["id"]
        function = piece.get("function")
        if function:
            name = function.get("name")
            if name and not pending.name:  # some servers repeat the name in every piece
                pending.name = name
            if function.get("arguments"):
                pending.arguments.append(function["arguments"])


def openai_messages(messages: Sequence[ModelMessage]) -> list[dict[str, Any]]:
    """The transcript as Chat Completions messages: each assistant tool call before its result."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            out.append({"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.text})
        elif message.role == "assistant" and message.tool_calls:
            out.append(
                {
                    "role": "assistant",
                    "content": message.text or None,
                    "tool_calls": [
                        {
                            "id": call.call_id or "",
                            "type": "function",
                            "function": {"name": call.tool, "arguments": json.dumps(dict(call.args))},
                        }
                        for call in message.tool_calls
                    ],
                }
            )
        else:
            out.append({"role": message.role, "content": message.text})
    return out
