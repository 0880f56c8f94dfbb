"""The model port: what the engine sends a model and what a model streams back.

A provider is any object with `max_context_tokens` and `stream(request)`, an async iterator of
`TextDelta`, `ToolCall`, `Retrying` and (at most one, last) `StepDone`. A provider that cannot
answer raises `ProviderFailure` (any other exception is treated the same way: a turn never
crashes on a model).

Invariants an adapter keeps:
- `Retrying` is only ever yielded before the first `TextDelta`/`ToolCall` of a call, and before
  the adapter waits `delay_ms` and asks again: what the engine has stored is never repeated;
- a `ToolCall` is yielded whole (its arguments parsed), with the model's own id in `call_id`
  when the model gave one;
- `ProviderFailure`'s message is what the server said, made safe to store: never an API key.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol


@dataclass(frozen=True)
class ToolCall:
    """A tool the model asks for. `call_id` is the model's own id for it (None: the model gave none)."""

    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)
    call_id: str | None = None


@dataclass(frozen=True)
class ModelMessage:
    """One entry of the transcript a model sees (the dashboard's own is `reducer.TranscriptEntry`).

    Tool output comes back as `role="tool"` with the `tool_call_id` it answers; an assistant
    message carries the `tool_calls` it made (with the ids the results refer to).
    """

    role: Literal["system", "user", "assistant", "tool"]
    text: str
    tool_call_id: str | None = None
    tool: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True)
class ModelRequest:
    session_id: str
    turn_id: str
    step: int
    messages: tuple[ModelMessage, ...]
    tools: tuple[Mapping[str, Any], ...] = ()
    agent_name: str | None = None


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class StepDone:
    """The call ended. Token counts are the provider's own, when it reported them.

    `prompt_tokens` counts the whole prompt (cached and cache-written tokens included);
    `cached_tokens` is the part of it the provider served from its prompt cache, and
    `cache_write_tokens` the part it wrote to the cache (Anthropic charges for writing; OpenAI
    does not report it).
    """

    model: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    cache_write_tokens: int | None = None


@dataclass(frozen=True)
class Retrying:
    """The call failed in a way worth another try: the adapter waits `delay_ms`, then asks again.

    `attempt` counts the retries of this call (1 for the first retry); `reason` says why, in a
    few words a person can read (`429 rate limited`, `connection refused`).
    """

    attempt: int
    delay_ms: int
    reason: str


ProviderChunk = TextDelta | ToolCall | Retrying | StepDone


class ProviderFailure(RuntimeError):
    """The model could not answer (network, rate limit, a scripted `fail`).

    Args:
        message: what went wrong, in the server's words where it gave some (never a key).
        status_code: the HTTP status, when the failure was an HTTP answer.
    """

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code


class ModelProvider(Protocol):
    max_context_tokens: int

    def stream(self, request: ModelRequest) -> AsyncIterator[ProviderChunk]: ...
