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
from agent_tui.events.transcript_text import delivery_text, rewind_text, tool_failure_text
from agent_tui.reducer import project_state
from agent_tui.turns.projection import frames_from_log, transition_dict

DumpKind = Literal["events", "transcript", "frames", "state"]


def transcript_lines(events: Iterable[Event]) -> Iterator[dict[str, Any]]:
    """User messages, one assistant line per model call (its deltas joined), one line per tool result."""
    pending: dict[str, Any] | None = None  # the assistant line of the current model call

    def flush() -> Iterator[dict[str, Any]]:
        nonlocal pending
        if pending is not None:
            yield pending
            pending = None

    for event in events:
        kind = event.type
        payload = event.payload
        if kind == "model.delta":
            if pending is None or pending["sessionId"] != event.session_id:
                yield from flush()
                pending = _line(event, "assistant", "")
            pending["text"] += payload["text"]
            continue
        if kind == "context.built":
            yield from flush()
            pending = _line(event, "assistant", "")
        elif kind in ("turn.completed", "session.created", "turn.started"):
            yield from flush()
        elif kind == "user.message":
            yield from flush()
            yield _line(event, "user", payload["content"])
        elif kind == "tool.completed":
            yield from flush()
            yield _line(event, "tool", payload["result"], payload["toolCallId"])
        elif kind == "tool.failed":
            yield from flush()
            yield _line(event, "tool", tool_failure_text(payload), payload["toolCallId"])
        elif kind == "subagent.delivered":
            yield from flush()
            yield _line(event, "user", delivery_text(payload))
        elif kind == "turn.rewound":
            yield from flush()
            yield _line(event, "user", rewind_text(payload))
    yield from flush()


def _line(event: Event, role: str, text: str, tool_call_id: str | None = None) -> dict[str, Any]:
    line: dict[str, Any] = {
        "sessionId": event.session_id,
        "turnId": event.turn_id,
        "role": role,
        "text": text,
    }
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
        for frame in frames_from_log(events):
            out.write(visible_json(orjson.dumps(transition_dict(frame))) + b"\n")
    elif kind == "state":
        state = project_state(events).to_state_dump()
        out.write(visible_json(orjson.dumps(state, option=orjson.OPT_APPEND_NEWLINE)))
    else:  # pragma: no cover - argparse restricts the choices
        raise ValueError(kind)
