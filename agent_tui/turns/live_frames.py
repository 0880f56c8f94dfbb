"""`LiveFrames`: the live frame stream as a listener of stored events, for whoever wants frames.

The phase frames are a projection of the log (`projection.command_for`, the same that
`frames_from_log` replays); the registry sends them as the engine feeds it each stored event.
What a live reader needs on top is an attachment per turn and the steer input as it arrives;
this listener gives both from the stored events alone, so no turn driver handles frames.

Invariants:
- hearing `turn.started` attaches the turn's session to the sink (a fresh stream per turn,
  replacing the last turn's), before the registry sends the turn's `start` frame (the engine
  tells listeners before it moves the registry);
- hearing a steered `user.message` sends the `user_input` runtime event with its input id, its
  text and its turn;
- it never raises, and it writes nothing: frames are never stored.
"""

from __future__ import annotations

from agent_tui.events import Event
from agent_tui.events.frames import RuntimeEvent
from agent_tui.turns.sink import EventSink


class LiveFrames:
    """Subscribe it to the engine (`SessionEngine.subscribe`) to send live frames to `sink`."""

    __slots__ = ("sink",)

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink

    def __call__(self, event: Event) -> None:
        kind = event.type
        if kind == "turn.started":
            self.sink.attach(event.session_id)
        elif kind == "user.message" and event.payload.get("steered"):
            payload = event.payload
            data = {"inputId": payload.get("inputId"), "text": payload["content"], "turnId": event.turn_id}
            self.sink.emit(event.session_id, RuntimeEvent("user_input", data))
