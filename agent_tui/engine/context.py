"""What a model sees: the transcript, rebuilt from events, and the context-window preflight.

Invariants:
- the transcript is a pure function of the session's events (`TranscriptBuilder.apply`), so a
  live session and one hydrated from its log give the model the same input;
- the model sees tool output and message text, never sequences, ids or envelopes;
- an assistant message ends where `events.assistant_messages` says (any event but a delta or a
  tool call request of the call), as it does for the dashboard, the dump and the console;
- an assistant message carries the tool calls it made (`model.tool_call_requested` of that
  step, with their `toolCallId`s), so the next request has each call before its result;
- token estimates and compaction are deterministic: the same transcript gives the same numbers
  and the same summary, byte for byte;
- the preflight never counts less than the estimate: when the provider reported the prompt
  tokens of the last call, the larger of (that count + an estimate of what was added since) and
  the plain estimate is used, so an estimate that undercounts is corrected and a bogus report
  never lets an overflow through. The report lives only in memory: a hydrated session starts
  from the estimate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from agent_tui.engine.provider import ModelMessage, ToolCall
from agent_tui.events import Event
from agent_tui.events.transcript_text import delivery_text, rewind_text, tool_failure_text

if TYPE_CHECKING:
    from agent_tui.engine.tools.router import ToolRouter

DEFAULT_INSTRUCTIONS = (
    "You are a coding agent working inside one directory. Use the tools to read, search, edit and "
    "run commands there; paths are relative to that directory. Answer briefly when done."
)
InstructionsFor = Callable[[Path, Sequence[Mapping[str, Any]]], str]
"""The system text for a session: a function of its directory and the tools' schemas."""
_PER_MESSAGE = 4
_SUMMARY_ITEM = 160


def estimate_tokens(text: str) -> int:
    """About four characters a token: cheap, deterministic, close enough for a preflight."""
    return (len(text) + 3) // 4


@dataclass(frozen=True)
class TokenEstimate:
    instruction: int
    transcript: int
    tools: int

    @property
    def total(self) -> int:
        return self.instruction + self.transcript + self.tools

    def as_payload(self) -> dict[str, int]:
        return {"instruction": self.instruction, "transcript": self.transcript, "tools": self.tools}


@dataclass(frozen=True)
class ReportedPrompt:
    """What the provider counted for the last call, beside our estimate of what it was given.

    Args:
        prompt_tokens: the provider's count of the whole prompt (instructions, tools, transcript).
        transcript_tokens: `TranscriptBuilder.tokens` when that request was built.
    """

    prompt_tokens: int
    transcript_tokens: int


def _call_chars(call: ToolCall) -> int:
    return len(call.tool) + len(orjson.dumps(call.args))


class TranscriptBuilder:
    """Folds a session's events into the messages a model is given."""

    def __init__(self) -> None:
        self._messages: list[ModelMessage] = []
        self._open_assistant = False
        # The open assistant message's text, in the pieces the deltas brought, and the tool calls
        # of its step. `_messages[-1]` holds them joined only when `_stale` is False: joining on
        # every delta would be quadratic.
        self._parts: list[str] = []
        self._calls: list[ToolCall] = []
        self._stale = False
        self._chars = 0  # characters of all messages and tool calls, kept in step (the preflight's input)
        self.reported: ReportedPrompt | None = None

    @property
    def messages(self) -> list[ModelMessage]:
        """The transcript so far (the builder's own list: read it again after more events)."""
        if self._stale:
            self._join()
        return self._messages

    def _join(self) -> None:
        self._messages[-1] = ModelMessage("assistant", "".join(self._parts), tool_calls=tuple(self._calls))
        self._stale = False

    def record_prompt_tokens(self, prompt_tokens: int, transcript_tokens: int) -> None:
        """Remember the provider's count of the last call's prompt (see `ContextBuilder.preflight`).

        Args:
            prompt_tokens: `StepDone.prompt_tokens` of the call.
            transcript_tokens: `self.tokens` read when that call's request was built.
        """
        self.reported = ReportedPrompt(prompt_tokens, transcript_tokens)

    @property
    def tokens(self) -> int:
        """Estimated tokens of the whole transcript, without re-reading it."""
        return (self._chars + 3) // 4 + _PER_MESSAGE * len(self._messages)

    def apply(self, event: Event) -> None:
        kind = event.type
        payload = event.payload
        if kind == "model.delta":
            text = payload["text"]
            self._chars += len(text)
            if self._open_assistant:
                self._parts.append(text)
                self._stale = True
            else:
                self._messages.append(ModelMessage("assistant", text))
                self._parts = [text]
                self._calls = []
                self._open_assistant = True
            return
        if kind == "model.tool_call_requested":
            call = ToolCall(payload["tool"], payload["args"], payload["toolCallId"])
            self._chars += _call_chars(call)
            if not self._open_assistant:
                self._messages.append(ModelMessage("assistant", ""))
                self._parts = []
                self._calls = []
                self._open_assistant = True
            self._calls.append(call)
            self._join()
            return
        # Any other event ends the open assistant message (`events.assistant_messages`).
        self._open_assistant = False
        if self._stale:
            self._join()
        before = len(self._messages)
        self._apply_other(kind, payload)
        if kind == "context.compacted":
            self._chars = len(payload["summary"])
            self.reported = None
        else:
            self._chars += sum(len(message.text) for message in self._messages[before:])

    def _apply_other(self, kind: str, payload: dict[str, Any]) -> None:
        if kind == "user.message":
            self._messages.append(ModelMessage("user", payload["content"]))
        elif kind == "tool.completed":
            self._messages.append(
                ModelMessage("tool", payload["result"], payload["toolCallId"], payload["tool"])
            )
        elif kind == "tool.failed":
            failure = tool_failure_text(payload)
            self._messages.append(ModelMessage("tool", failure, payload["toolCallId"], payload["tool"]))
        elif kind == "subagent.delivered":
            self._messages.append(ModelMessage("user", delivery_text(payload)))
        elif kind == "turn.rewound":
            self._messages.append(ModelMessage("user", rewind_text(payload)))
        elif kind == "context.compacted":
            self._messages = [ModelMessage("user", payload["summary"])]


class ContextBuilder:
    """Assembles each model call's input and decides whether it fits.

    Args:
        instructions: the system text every call starts with.
        tool_schemas: what the model is told about the tools (counts toward the window).
    """

    def __init__(
        self, instructions: str = DEFAULT_INSTRUCTIONS, tool_schemas: Sequence[Mapping[str, Any]] = ()
    ) -> None:
        self.instructions = instructions
        self.tool_schemas = tuple(tool_schemas)
        self._instruction_tokens = estimate_tokens(instructions) + _PER_MESSAGE
        self._tool_tokens = (
            estimate_tokens(orjson.dumps(list(self.tool_schemas)).decode()) if tool_schemas else 0
        )

    def estimate(self, messages: Iterable[ModelMessage]) -> TokenEstimate:
        transcript = sum(len(message.text) for message in messages)
        count = len(messages) if isinstance(messages, Sequence) else sum(1 for _ in messages)
        return self.estimate_tokens((transcript + 3) // 4 + _PER_MESSAGE * count)

    def estimate_tokens(self, transcript_tokens: int) -> TokenEstimate:
        return TokenEstimate(self._instruction_tokens, transcript_tokens, self._tool_tokens)

    def preflight(self, transcript: TranscriptBuilder) -> TokenEstimate:
        """The tokens the next call will send, for the check against the model's window.

        Without a report from the provider this is the estimate. With one (the last call's prompt
        tokens, `TranscriptBuilder.record_prompt_tokens`), it is that count plus the estimate of
        what the transcript gained since, when that is larger; the surplus is put on the
        transcript, so `instruction` and `tools` stay the estimates they always are.
        """
        current = transcript.tokens
        estimate = self.estimate_tokens(current)
        reported = transcript.reported
        if reported is None:
            return estimate
        measured = reported.prompt_tokens + max(0, current - reported.transcript_tokens)
        if measured <= estimate.total:
            return estimate
        return self.estimate_tokens(measured - self._instruction_tokens - self._tool_tokens)

    def request_messages(self, messages: Sequence[ModelMessage]) -> tuple[ModelMessage, ...]:
        return (ModelMessage("system", self.instructions), *messages)

    def compact(self, messages: Sequence[ModelMessage]) -> str:
        """A deterministic summary that replaces the whole transcript.

        It keeps the latest user request whole (the model must still know what to do), and one
        clipped line for each earlier message, newest first, while they fit a fixed budget.
        """
        latest_user = next((m.text for m in reversed(messages) if m.role == "user"), "")
        lines = [f"[compacted {len(messages)} earlier messages]", f"Current request: {latest_user}"]
        budget = 2_000
        earlier: list[str] = []
        for message in reversed(messages):
            label = message.role if message.tool is None else f"tool {message.tool}"
            text = " ".join(message.text.split())
            if len(text) > _SUMMARY_ITEM:
                text = text[: _SUMMARY_ITEM - 1] + "…"
            line = f"- {label}: {text}"
            if budget - len(line) < 0:
                break
            budget -= len(line)
            earlier.append(line)
        if earlier:
            lines.append("Recent history (newest last):")
            lines.extend(reversed(earlier))
        return "\n".join(lines)


class ContextBuilders:
    """The `ContextBuilder` of each tool set (and each directory, when the instructions are a
    function of it): a session's model calls are assembled by the one of its directory and its
    tree's tools; all are rebuilt when the engine's own tools change.

    Args:
        instructions: one text for every session, or a function of a session's directory and
            the tools' schemas, asked once per directory and tool set.
        router: the engine's tools.
    """

    def __init__(self, instructions: str | InstructionsFor, router: ToolRouter) -> None:
        self.instructions = instructions
        self.router = router
        self._built: dict[tuple[Path | None, int | None], tuple[ToolRouter, ContextBuilder]] = {}
        self._schemas: tuple[Mapping[str, Any], ...] | None = None

    def get(self, cwd: Path | None = None, router: ToolRouter | None = None) -> ContextBuilder:
        """What assembles each model call of a session working in `cwd` with the tools of
        `router` (the engine's when None)."""
        router = router or self.router
        schemas = tuple(router.schemas())
        if router is self.router and schemas != self._schemas:
            self._built.clear()
            self._schemas = schemas
        instructions = self.instructions
        key = (cwd if callable(instructions) else None, id(router) if router is not self.router else None)
        found = self._built.get(key)
        if found is None or found[0] is not router:
            text = instructions(cwd or Path.cwd(), schemas) if callable(instructions) else instructions
            found = self._built[key] = (router, ContextBuilder(text, schemas))
        return found[1]

    def forget(self, router: ToolRouter) -> None:
        """Drop the builders of a tree's tools that were closed."""
        self._built = {key: kept for key, kept in self._built.items() if kept[0] is not router}
