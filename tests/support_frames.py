"""A frame's body as the one kind the test expects, so a test reads its fields with their types.

`as_transition` and `as_event` fail (naming the frame) when the body is another kind: a test that
expected a phase and got an event says so, rather than raising `AttributeError` on a field.
"""

from __future__ import annotations

from agent_tui.events.frames import Frame, RuntimeEvent, Transition


def as_transition(frame: Frame) -> Transition:
    """The frame's body, which must be a phase transition."""
    assert isinstance(frame.body, Transition), frame
    return frame.body


def as_event(frame: Frame) -> RuntimeEvent:
    """The frame's body, which must be a runtime event (not a phase, not a fatal)."""
    assert isinstance(frame.body, RuntimeEvent), frame
    return frame.body
