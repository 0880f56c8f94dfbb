"""`agent-tui replay --dump`: deterministic, UI-free views of recorded sessions.

The same input gives the same bytes: nothing here reads a clock, and every view is a function of
the events in (session id, sequence) order. Every line is JSON whose control characters are
escapes (`visible_json`), so a log's escape sequences reach a terminal as text, never as commands;
the decoded values are the log's own, byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO, Literal

import orjson

from agent_tui.events import Event, visible_json
from agent_tui.events.assistant_messages import AssistantMessages
from agent_tui.events.transcript_text import delivery_text, rewind_text, tool_failure_text

DumpKind = Literal["events", "transcript", "frames", "state"]


def transcript_lines(events: Iterable[Event]) -> Iterator[dict[str, Any]]:
    """User messages, one assistant line per model call that said something (its deltas joined,
    cut where `events.assistant_messages` says a message ends), one line per tool result."""
    messages = AssistantMessages()
    for event in events:
        ended = messages.feed(event)
        if ended is not None and ended.said:
            yield _line(ended.session_id, ended.turn_id, "assistant", ended.text)
        kind = event.type
        payload = event.payload
        if kind == "user.message":
            yield _line(event.session_id, event.turn_id, "user", payload["content"])
        elif kind == "tool.completed":
            yield _line(event.session_id, event.turn_id, "tool", payload["result"], payload["toolCallId"])
        elif kind == "tool.failed":
            text = tool_failure_text(payload)
            yield _line(event.session_id, event.turn_id, "tool", text, payload["toolCallId"])
        elif kind == "subagent.delivered":
            yield _line(event.session_id, event.turn_id, "user", delivery_text(payload))
        elif kind == "turn.rewound":
            yield _line(event.session_id, event.turn_id, "user", rewind_text(payload))
    for message in messages.finish():
        if message.said:
            yield _line(message.session_id, message.turn_id, "assistant", message.text)


def _line(
    session_id: str, turn_id: str | None, role: str, text: str, tool_call_id: str | None = None
) -> dict[str, Any]:
    line: dict[str, Any] = {"sessionId": session_id, "turnId": turn_id, "role": role, "text": text}
    if tool_call_id is not None:
        line["toolCallId"] = tool_call_id
    return line


def write_dump(kind: DumpKind, events: Iterable[Event], out: BinaryIO) -> None:
    """Write one dump view of `events` to `out` (bytes)."""
    if kind == "events":
        for event in events:
            out.write(visible_json(event.to_json()) + b"\n")
    elif kind == "transcript":
        for line in transcript_lines(events):
            out.write(visible_json(orjson.dumps(line)) + b"\n")
    elif kind == "frames":
        # Each view imports its own floor when asked for: a script's one dump of a big log should
        # not pay the start-up of the others (the turn registry behind the frames' projection).
        from agent_tui.turns.projection import frames_from_log, transition_dict

        for frame in frames_from_log(events):
            out.write(visible_json(orjson.dumps(transition_dict(frame))) + b"\n")
    elif kind == "state":
        from agent_tui.reducer import project_state
        from agent_tui.reducer.collector import collector_paused

        # The collector stays off until the state is written and gone: turned back on between the
        # fold and the dump, its first pass would scan everything the fold built, only to free it.
        with collector_paused():
            state = project_state(events).to_state_dump()
            out.write(visible_json(orjson.dumps(state, option=orjson.OPT_APPEND_NEWLINE)))
            del state
    else:  # pragma: no cover - argparse restricts the choices
        raise ValueError(kind)
