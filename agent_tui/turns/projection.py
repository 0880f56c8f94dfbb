"""One projection for live and replay: phase frames are a pure function of the log.

`command_for(event)` is the only mapping from stored events to registry commands. The engine
feeds it every event it stores (so the live sink's frames come from it), and `frames_from_log`
feeds it a log through a fresh registry and sink (so replay's frames come from it too). The two
are therefore equal by construction, and tests check that they are.

Which event moves which phase, and how each stop reason ends a turn, are the tables of
`agent_tui.events.turn_vocabulary` (`phase_for`, `ENDINGS`); this module only turns them into
registry commands: a `turn.completed` is an `End` of its stop reason (with its error code when
its row is a failure), and the registry reads that row for every other word.
"""

from __future__ import annotations

from collections.abc import Iterable

from agent_tui.events import Event
from agent_tui.events.transcript_text import context_tokens_total
from agent_tui.events.turn_vocabulary import ending_for, phase_for
from agent_tui.turns.frames import Frame, FrameError, ResponseMeta, Transition
from agent_tui.turns.registry import (
    Compressing,
    End,
    Running,
    Start,
    TurnCommand,
    TurnRegistry,
)
from agent_tui.turns.sink import EventSink


def command_for(event: Event) -> TurnCommand | None:
    """The registry command a stored event stands for, or None for events that move no phase."""
    phase = phase_for(event)
    if phase is None:
        return None
    if phase == "executing":
        return Running(ResponseMeta(prompt_tokens=context_tokens_total(event.payload["tokens"])))
    if phase == "start":
        return Start()
    if phase == "compress":
        return Compressing()
    stop_reason = event.payload["stopReason"]
    if not ending_for(stop_reason).failed:
        return End(stop_reason)
    code = event.payload.get("errorCode") or "unknown"
    return End(stop_reason, FrameError(code, describe_error(code)))


_ERROR_TEXT = {
    "context_overflow": "the context did not fit the model's window, even compacted",
    "provider_failure": "the model provider failed",
    "store_failure": "the event store failed",
    "unknown": "the turn ended with an unknown error",
}


def describe_error(code: str) -> str:
    return _ERROR_TEXT.get(code, code)


def frames_from_log(events: Iterable[Event]) -> list[Frame]:
    """Replay events (of any number of sessions) through a fresh registry; return the phase frames."""
    sink = EventSink()
    registry = TurnRegistry(sink)
    frames: list[Frame] = []
    sink.subscribe(lambda frame: frames.append(frame) if frame.family == "transition" else None)
    for event in events:
        command = command_for(event)
        if command is None:
            continue
        session_id = event.session_id
        if isinstance(command, Start):
            if not sink.is_attached(session_id):
                sink.attach(session_id)
            registry.claim(session_id, turn_id=event.turn_id or "")
        registry.transition(session_id, command)
    return frames


def transition_dict(frame: Frame) -> dict[str, str]:
    """A phase frame as `replay --dump frames` prints it."""
    body = frame.body
    assert isinstance(body, Transition)
    out = {"sessionId": frame.session_id, "turnId": body.turn_id, "to": body.to}
    if body.reason is not None:
        out["reason"] = body.reason
    return out
