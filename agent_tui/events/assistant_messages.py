"""Where an assistant message ends: the one rule every reader of a conversation folds by.

An assistant message is what one model call said. It opens at the call's first `model.delta`
or `model.tool_call_requested`, and every delta and tool call request that follows belongs to
it, text after a tool call included (a model may stream text after asking for a tool). It ends
at the first event of the session of any other type: a permission question, a tool starting or
its result, the next `context.built`, a user message, a delivery, a compaction, a retry, a
source record, `turn.completed` (a cancelled turn's text ends there), or another turn's start.

Invariants:
- `continues_message(kind)` is that rule; the engine's transcript (what the model sees), the
  reducer (the dashboard's transcript), `replay --dump transcript` and the headless console
  all fold by it, so the four cut a conversation into the same messages;
- a message's text is its deltas joined; a message with no delta (a call that only asked for
  tools) has no text (`said` is False), one whose only delta is empty (a final answer without
  text) has the empty text and `said` True;
- `AssistantMessages` keeps one open message per session, so sessions whose events interleave
  (live, or several logs merged) never end each other's messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_tui.events.model import Event

__all__ = ["MESSAGE_PARTS", "AssistantMessage", "AssistantMessages", "continues_message"]

MESSAGE_PARTS = frozenset({"model.delta", "model.tool_call_requested"})
"""The event types that belong to the assistant message being written; any other ends it."""


def continues_message(kind: str) -> bool:
    """Whether an event of type `kind` belongs to the open assistant message (else it ends it)."""
    return kind in MESSAGE_PARTS


@dataclass(slots=True)
class AssistantMessage:
    """One model call's message: its text, its tool call requests' payloads, where it began."""

    session_id: str
    turn_id: str | None
    parts: list[str] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    said: bool = False  # at least one delta (maybe empty)

    @property
    def text(self) -> str:
        return "".join(self.parts)


class AssistantMessages:
    """The open assistant message of each session, folded by `continues_message`."""

    __slots__ = ("_open",)

    def __init__(self) -> None:
        self._open: dict[str, AssistantMessage] = {}

    def feed(self, event: Event) -> AssistantMessage | None:
        """Fold one event; returns the message it ended (its session's), if any."""
        kind = event.type
        session_id = event.session_id
        if kind in MESSAGE_PARTS:
            message = self._open.get(session_id)
            if message is None:
                message = self._open[session_id] = AssistantMessage(session_id, event.turn_id)
            if kind == "model.delta":
                message.parts.append(event.payload["text"])
                message.said = True
            else:
                message.calls.append(event.payload)
            return None
        return self._open.pop(session_id, None)

    def finish(self) -> list[AssistantMessage]:
        """The messages still open (the events ran out), in the order they opened; forgets them."""
        messages = list(self._open.values())
        self._open.clear()
        return messages
