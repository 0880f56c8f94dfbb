"""The model port: what the engine sends a model and what a model streams back.

A provider is any object with `max_context_tokens` and `stream(request)`, an async iterator of
`TextDelta`, `ToolCall` and (at most one, last) `StepDone`. A provider that cannot answer raises
`ProviderFailure` (any other exception is treated the same way: a turn never crashes on a model).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol


@dataclass(frozen=True)
class Message:
    """One entry of the transcript a model sees. Tool output comes back as `role="tool"`."""

    role: Literal["system", "user", "assistant", "tool"]
    text: str
    tool_call_id: str | None = None
    tool: str | None = None


@dataclass(frozen=True)
class ModelRequest:
    session_id: str
    turn_id: str
    step: int
    messages: tuple[Message, ...]
    tools: tuple[Mapping[str, Any], ...] = ()
    agent_name: str | None = None


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ToolCall:
    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StepDone:
    model: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


ProviderChunk = TextDelta | ToolCall | StepDone


class ProviderFailure(RuntimeError):
    """The model could not answer (network, rate limit, a scripted `fail`)."""


class ModelProvider(Protocol):
    max_context_tokens: int

    def stream(self, request: ModelRequest) -> AsyncIterator[ProviderChunk]: ...
