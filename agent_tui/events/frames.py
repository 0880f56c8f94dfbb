"""The frames a session's sink carries (phase transitions, runtime events, fatal errors), and the
one projection of a stored event to its phase frame.

Invariants this module guarantees:
- `transition_for(event)` is the only mapping from a stored event to the phase frame it stands
  for (which event moves which phase is `phase_for`, how a stop reason ends a turn is `ENDINGS`).
  The registry's commands are made from it (`turns.projection.command_for`), so the live sink's
  frames come from it, and the dashboard's reducer applies it to the events it folds (replay,
  attached dashboards, stored sessions): one projection, so every phase shown is a frame;
- every frame is an immutable value (frozen dataclasses; a `RuntimeEvent`'s data is a read-only
  mapping), so a frame handed to one reader cannot be changed under another;
- a `Frame`'s `family` always names the type of its `body` (`transition` ↔ `Transition`,
  `event` ↔ `RuntimeEvent`, `fatal` ↔ `Fatal`); a mismatch raises `ValueError`;
- a `Transition` carries a `reason` exactly when it goes `to="end"`, and an `error` only with
  `reason="error"`, mirroring the registry's two axes (state, and reason on terminal states only).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

from agent_tui.events.model import Event
from agent_tui.events.transcript_text import context_tokens_total
from agent_tui.events.turn_vocabulary import PHASE_OF_EVENT, EndReasonKind, Phase, ending_for

__all__ = ["EndReasonKind", "Phase"]  # re-exported: where a frame moves a turn, and why it ended

FrameFamily = Literal["transition", "event", "fatal"]


@dataclass(frozen=True, slots=True)
class FrameError:
    """An error as it travels on the frame stream: a stable code and one readable sentence."""

    code: str
    message: str


@dataclass(frozen=True, slots=True)
class ResponseMeta:
    """What the model call that opened an `executing` phase reported (model name, usage)."""

    model: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Transition:
    """A phase frame: the turn `turn_id` moved to phase `to`.

    Args:
        to: the phase entered.
        turn_id: the turn this phase belongs to.
        reason: why the turn ended; required for `to="end"`, forbidden otherwise.
        error: the failure; only with `reason="error"`.
        responded: model/usage meta; only meaningful on `executing`.
    """

    to: Phase
    turn_id: str
    reason: EndReasonKind | None = None
    error: FrameError | None = None
    responded: ResponseMeta | None = None

    def __post_init__(self) -> None:
        if (self.to == "end") != (self.reason is not None):
            raise ValueError(f"a transition to {self.to!r} cannot carry reason {self.reason!r}")
        if self.error is not None and self.reason != "error":
            raise ValueError(f"an error rides only on reason 'error', not {self.reason!r}")


@dataclass(frozen=True, slots=True)
class RuntimeEvent:
    """Anything the runtime tells the stream that is not a phase: a steer echo, a stored event.

    Examples: `RuntimeEvent("user_input", {"inputId": ..., "text": ..., "turnId": ...})`, or
    `RuntimeEvent("event", {...})` wrapping one stored log event.
    """

    kind: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # A read-only copy: the caller's dict may change later, the frame must not.
        object.__setattr__(self, "data", MappingProxyType(dict(self.data)))


@dataclass(frozen=True, slots=True)
class Fatal:
    """The session's runtime cannot go on (for example the event store failed)."""

    code: str
    message: str


FrameBody: TypeAlias = Transition | RuntimeEvent | Fatal

_FAMILY_OF: dict[type, FrameFamily] = {
    Transition: "transition",
    RuntimeEvent: "event",
    Fatal: "fatal",
}


def family_of(body: FrameBody) -> FrameFamily:
    """The family a frame body belongs to.

    Raises:
        TypeError: `body` is not a `Transition`, `RuntimeEvent` or `Fatal`.
    """
    try:
        return _FAMILY_OF[type(body)]
    except KeyError:
        raise TypeError(f"not a frame body: {body!r}") from None


@dataclass(frozen=True, slots=True)
class Frame:
    """One item of a session's frame stream."""

    session_id: str
    family: FrameFamily
    body: FrameBody

    def __post_init__(self) -> None:
        if family_of(self.body) != self.family:
            raise ValueError(f"family {self.family!r} does not match {type(self.body).__name__}")

    @classmethod
    def of(cls, session_id: str, body: FrameBody) -> Frame:
        """A frame whose family is read off its body."""
        return cls(session_id, family_of(body), body)


def is_turn_end(frame: Frame) -> bool:
    """True for a transition frame to `end`: the last frame of a turn's stream."""
    return isinstance(frame.body, Transition) and frame.body.to == "end"


def transition_for(event: Event) -> Transition | None:
    """The phase frame a stored event stands for, or None for events that move no phase."""
    phase = PHASE_OF_EVENT.get(event.type)
    if phase is None:
        return None
    turn_id = event.turn_id or ""
    if phase == "executing":
        meta = ResponseMeta(prompt_tokens=context_tokens_total(event.payload["tokens"]))
        return Transition("executing", turn_id, responded=meta)
    if phase != "end":
        return Transition(phase, turn_id)
    ending = ending_for(event.payload["stopReason"])
    if not ending.failed:
        return Transition("end", turn_id, ending.end_reason)
    code = event.payload.get("errorCode") or "unknown"
    return Transition("end", turn_id, ending.end_reason, FrameError(code, describe_error(code)))


_ERROR_TEXT = {
    "context_overflow": "the context did not fit the model's window, even compacted",
    "provider_failure": "the model provider failed",
    "store_failure": "the event store failed",
    "unknown": "the turn ended with an unknown error",
}


def describe_error(code: str) -> str:
    return _ERROR_TEXT.get(code, code)
