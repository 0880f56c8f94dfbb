"""One projection for live and replay: phase frames are a pure function of the log.

`events.frames.transition_for(event)` is the only mapping from a stored event to its phase
frame; `command_for(event)` is that frame as a registry command. The engine feeds every event it
stores through `command_for` (so the live sink's frames come from it), `frames_from_log` feeds a
log through a fresh registry and sink (so `replay --dump frames` comes from it), and the
dashboard's reducer applies `transition_for` itself to what it folds. They are therefore equal
by construction, and tests check that they are.
"""

from __future__ import annotations

from collections.abc import Iterable

from agent_tui.events import Event
from agent_tui.events.frames import Frame, Transition, transition_for
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
    frame = transition_for(event)
    if frame is None:
        return None
    to = frame.to
    if to == "executing":
        return Running(frame.responded)
    if to == "start":
        return Start()
    if to == "compress":
        return Compressing()
    return End(event.payload["stopReason"], frame.error)


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
        registry.transition(session_id, command, event.turn_id)
    return frames


def transition_dict(frame: Frame) -> dict[str, str]:
    """A phase frame as `replay --dump frames` prints it."""
    body = frame.body
    assert isinstance(body, Transition)
    out = {"sessionId": frame.session_id, "turnId": body.turn_id, "to": body.to}
    if body.reason is not None:
        out["reason"] = body.reason
    return out
