"""The turn registry and the event sink: liveness, stopping, waiting, phase frames.

The contract, in prose: docs/frames-and-registry.md.

Imports only `agent_tui.events` from the rest of `agent_tui`; the engine and the dashboard import
from here.
"""

from agent_tui.events.frames import (
    EndReasonKind,
    Fatal,
    Frame,
    FrameBody,
    FrameError,
    FrameFamily,
    Phase,
    ResponseMeta,
    RuntimeEvent,
    Transition,
    family_of,
    is_turn_end,
)
from agent_tui.events.turn_vocabulary import WaitOutcome
from agent_tui.turns.registry import (
    Attached,
    Compressing,
    End,
    EndReason,
    Fail,
    NoActiveTurn,
    PendingInput,
    Running,
    Start,
    StopHandle,
    SubmitResult,
    TurnCommand,
    TurnRecord,
    TurnRegistry,
    TurnState,
)
from agent_tui.turns.sink import EventSink, FrameListener, FrameStream

__all__ = [
    "Attached",
    "Compressing",
    "End",
    "EndReason",
    "EndReasonKind",
    "EventSink",
    "Fail",
    "Fatal",
    "Frame",
    "FrameBody",
    "FrameError",
    "FrameFamily",
    "FrameListener",
    "FrameStream",
    "NoActiveTurn",
    "PendingInput",
    "Phase",
    "ResponseMeta",
    "Running",
    "RuntimeEvent",
    "Start",
    "StopHandle",
    "SubmitResult",
    "Transition",
    "TurnCommand",
    "TurnRecord",
    "TurnRegistry",
    "TurnState",
    "WaitOutcome",
    "family_of",
    "is_turn_end",
]
