"""The turn registry and the event sink: liveness, stopping, waiting, phase frames.

The contract, in prose: docs/frames-and-registry.md.

Imports only `agent_tui.events` from the rest of `agent_tui`; the engine and the dashboard import
from here. The frames themselves are events' vocabulary: import them from `agent_tui.events.frames`.
"""

from agent_tui.turns.registry import (
    Attached,
    Compressing,
    End,
    EndReason,
    NoActiveTurn,
    PendingInput,
    Running,
    Start,
    TurnRegistry,
)
from agent_tui.turns.sink import EventSink, FrameListener

__all__ = [
    "Attached",
    "Compressing",
    "End",
    "EndReason",
    "EventSink",
    "FrameListener",
    "NoActiveTurn",
    "PendingInput",
    "Running",
    "Start",
    "TurnRegistry",
]
