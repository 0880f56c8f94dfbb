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
- the SDK's own retries are off: `with_retries` drives them, so each one is seen.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from openai import AsyncOpenAI

from agent_tui.engine.provider import Message, ModelRequest, ProviderChunk, StepDone, TextDelta, ToolCall
from agent_tui.providers.config import NO_KEY, ModelSettings
from agent_tui.providers.retry import Redactor, RetryPolicy, StreamIncomplete, with_retries
from agent_tui.providers.tool_arguments import parse_arguments


@dataclass
class _PendingCall:
    call_id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    def finish(self) -> ToolCall:
        return ToolCall(self.name, parse_arguments("".join(self.arguments)), self.call_id)


class OpenAIChatProvider:
    """The provider port over Chat Completions.

    Args:
        settings: the resolved model settings (model, base URL, limits).
        api_key: the key (read from the environment by the factory); None for an endpoint that
            needs none.
        policy: retries and timeouts.
        http_client: an `httpx2.AsyncClient` to use instead of the SDK's (tests, benchmarks).
    """

    name = "openai"

    def __init__(
        self,
        settings: ModelSettings,
        *,
        api_key: str | None,
        policy: RetryPolicy | None = None,
        http_client: Any = None,
    ) -> None:
        self.settings = settings
        self.model = settings.model
        self.max_context_tokens = settings.prompt_budget
        self.policy = policy or RetryPolicy()
        self._redact = Redactor([api_key])
        self._client = AsyncOpenAI(
            api_key=api_key or NO_KEY,
            base_url=settings.base_url,
            max_retries=0,
            timeout=self.policy.timeout(),
            http_client=http_client,
        )
        # OpenAI's own API wants `max_completion_tokens` (its reasoning models refuse
        # `max_tokens`); compatible servers know `max_tokens` far more widely.
        self._max_tokens_field = "max_tokens" if settings.custom_endpoint else "max_completion_tokens"
        self._tools_for: tuple[Mapping[str, Any], ...] | None = None
        self._tools: list[dict[str, Any]] = []

    async def aclose(self) -> None:
        await self._client.close()

    def stream(self, request: ModelRequest) -> AsyncIterator[ProviderChunk]:
        return with_retries(
            lambda: self._attempt(request), vendor=self.name, policy=self.policy, redact=self._redact
        )

    def request_params(self, request: ModelRequest) -> dict[str, Any]:
        """The body of the request for `request` (what the server is sent)."""
        params: dict[str, Any] = {
            "model": self.model,
            "messages": openai_messages(request.messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
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

    async def _attempt(self, request: ModelRequest) -> AsyncIterator[ProviderChunk]:
        response = await self._client.chat.completions.create(**self.request_params(request))
        try:
            calls: dict[int, _PendingCall] = {}
            finished = False
            model: str | None = None
            usage: Any = None
            async for chunk in response:
                if chunk.usage is not None:
                    usage = chunk.usage
                model = chunk.model or model
                for choice in chunk.choices:
                    if choice.index:  # only one answer is asked for; ignore any other
                        continue
                    delta = choice.delta
                    if delta is not None:
                        text = delta.content or delta.refusal
                        if text:
                            yield TextDelta(text)
                        if delta.tool_calls:
                            _collect(calls, delta.tool_calls)
                    if choice.finish_reason:
                        finished = True
            if not finished:
                raise StreamIncomplete("the stream ended before the model finished its answer")
            for index in sorted(calls):
                yield calls[index].finish()
            yield _step_done(model or self.model, usage)
        finally:
            await response.close()


def _collect(calls: dict[int, _PendingCall], pieces: Sequence[Any]) -> None:
    for position, piece in enumerate(pieces):
        index = piece.index if isinstance(piece.index, int) else position
        pending = calls.get(index)
        if pending is None:
            pending = calls[index] = _PendingCall()
        if piece.id:
            pending.call_id = piece.id
        function = piece.function
        if function is not None:
            if function.name and not pending.name:  # some servers repeat the name in every piece
                pending.name = function.name
            if function.arguments:
                pending.arguments.append(function.arguments)


def _step_done(model: str, usage: Any) -> StepDone:
    if usage is None:
        return StepDone(model=model)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    return StepDone(
        model=model,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        cached_tokens=cached,
    )


def openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
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
