"""`AnthropicMessagesProvider`: Claude through the Messages API, streamed, with `tool_use`.

Built on the official `anthropic` SDK (`AsyncAnthropic`): the SDK owns the HTTP, the SSE parsing
and the typed errors (an `error` event inside the stream included); this module owns the mapping
to the provider port.

Invariants:
- text is yielded as its `text_delta`s arrive; a `tool_use` block's `input_json_delta` pieces are
  joined and the call is yielded whole when its block stops, with the block's id as `call_id`;
- the transcript is sent as alternating user/assistant turns: tool results (with the id of the
  `tool_use` they answer) open the user turn that follows the assistant's calls, text that
  arrived meanwhile follows them, and empty text blocks (which the API refuses) are left out;
- the system prompt and the newest message carry a prompt-cache marker, so a long agent loop
  reads its unchanged prefix from the cache; `StepDone.prompt_tokens` is the whole prompt
  (`input_tokens` + cache reads + cache writes), `cached_tokens` the cache reads and
  `cache_write_tokens` the cache writes (`cache_creation_input_tokens`);
- a stream that ends without `message_stop` is incomplete, never a silent short answer;
- the SDK's own retries are off: `with_retries` drives them, so each one is seen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from anthropic import AsyncAnthropic, AsyncStream

from agent_tui.engine.provider import ModelMessage, ModelRequest, StepDone, TextDelta, ToolCall
from agent_tui.providers.config import DEFAULT_ANTHROPIC_MAX_OUTPUT
from agent_tui.providers.retry import MalformedChunk
from agent_tui.providers.tool_arguments import parse_arguments
from agent_tui.providers.vendor_provider import VendorProvider

_CACHE = {"type": "ephemeral"}


class AnthropicMessagesProvider(VendorProvider):
    """The provider port over the Messages API (see `VendorProvider` for the arguments)."""

    name = "anthropic"
    path = "/v1/messages"
    stream_cls = AsyncStream[object]

    def _make_client(self, **options: Any) -> AsyncAnthropic:
        return AsyncAnthropic(**options)

    def request_params(self, request: ModelRequest) -> dict[str, Any]:
        system = "\n\n".join(m.text for m in request.messages if m.role == "system" and m.text)
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.settings.max_output_tokens or DEFAULT_ANTHROPIC_MAX_OUTPUT,
            "messages": anthropic_messages(request.messages),
            "stream": True,
        }
        if system:
            params["system"] = [{"type": "text", "text": system, "cache_control": _CACHE}]
        if request.tools:
            params["tools"] = [
                {
                    "name": tool["name"],
                    "description": tool.get("description", ""),
                    "input_schema": tool.get("input_schema", {"type": "object", "properties": {}}),
                }
                for tool in request.tools
            ]
        if self.settings.temperature is not None:
            params["temperature"] = self.settings.temperature
        return params

    def _reader(self) -> _Message:
        return _Message()


class _Message:
    """What one streamed message has said so far: its open tool blocks, usage, whether it stopped."""

    __slots__ = ("finished", "model", "tools", "usage")

    def __init__(self) -> None:
        self.tools: dict[int, tuple[str | None, str, list[str]]] = {}
        self.usage: dict[str, int] = {}
        self.model: str | None = None
        self.finished = False

    def read(self, event: Any) -> TextDelta | ToolCall | None:
        """Take in one stream event; returns the chunk it completes, if any."""
        try:
            kind = event["type"]
            if kind == "content_block_delta":
                delta = event["delta"]
                if delta["type"] == "text_delta":
                    return TextDelta(delta["text"]) if delta["text"] else None
                if delta["type"] == "input_json_delta" and event["index"] in self.tools:
                    self.tools[event["index"]][2].append(delta["partial_json"])
            elif kind == "content_block_start":
                block = event["content_block"]
                if block["type"] == "tool_use":
                    self.tools[event["index"]] = (block.get("id"), block["name"], [])
                elif block["type"] == "text" and block.get("text"):
                    return TextDelta(block["text"])
            elif kind == "content_block_stop":
                pending = self.tools.pop(event["index"], None)
                if pending is not None:
                    call_id, name, pieces = pending
                    return ToolCall(name, parse_arguments("".join(pieces)), call_id)
            elif kind == "message_start":
                self.model = event["message"].get("model")
                self._add_usage(event["message"].get("usage"))
            elif kind == "message_delta":
                self._add_usage(event.get("usage"))
            elif kind == "message_stop":
                self.finished = True
            return None
        except (AttributeError, TypeError, KeyError) as error:
            raise MalformedChunk(f"an event not shaped like the Messages stream's ({error!r})") from None

    def _add_usage(self, reported: Mapping[str, Any] | None) -> None:
        """Usage counts are cumulative: the latest value of each field wins."""
        for name in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            value = reported.get(name) if reported else None
            if isinstance(value, int):
                self.usage[name] = value

    def last_chunks(self, fallback_model: str) -> tuple[StepDone]:
        """The step's end (each call was yielded when its block stopped)."""
        return (self._step_done(fallback_model),)

    def _step_done(self, fallback_model: str) -> StepDone:
        model = self.model or fallback_model
        usage = self.usage
        if "input_tokens" not in usage and "output_tokens" not in usage:
            return StepDone(model=model)
        cached = usage.get("cache_read_input_tokens")
        written = usage.get("cache_creation_input_tokens")
        prompt = usage.get("input_tokens", 0) + (cached or 0) + (written or 0)
        return StepDone(
            model=model,
            prompt_tokens=prompt,
            completion_tokens=usage.get("output_tokens"),
            cached_tokens=cached,
            cache_write_tokens=written,
        )


def anthropic_messages(messages: Sequence[ModelMessage]) -> list[dict[str, Any]]:
    """The transcript as Messages turns (system text goes separately; see `request_params`)."""
    turns: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})

    for message in messages:
        if message.role == "system":
            continue
        if message.role == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id or "",
                "content": message.text,
            }
            add("user", [block])
        elif message.role == "assistant":
            blocks: list[dict[str, Any]] = []
            if message.text.strip():
                blocks.append({"type": "text", "text": message.text})
            blocks.extend(
                {"type": "tool_use", "id": call.call_id or "", "name": call.tool, "input": dict(call.args)}
                for call in message.tool_calls
            )
            add("assistant", blocks)
        elif message.text.strip():
            add("user", [{"type": "text", "text": message.text}])
    if turns and turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": [{"type": "text", "text": "(continue)"}]})
    if turns:
        last = turns[-1]["content"][-1]
        turns[-1]["content"][-1] = {**last, "cache_control": _CACHE}
    return turns
