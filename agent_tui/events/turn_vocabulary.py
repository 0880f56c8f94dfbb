"""How a turn moves and how it ends, said once for every layer.

Invariants this module guarantees:
- `phase_for(event)` is the only mapping from a stored event to a turn phase: `turn.started` →
  start, `context.built` → executing, `context.compacted` → compress, `turn.completed` → end,
  anything else → None. The registry's frames, the reducer and replay all ask it;
- `ENDINGS` is the only table from a `turn.completed{stopReason}` to what every layer calls that
  ending: the turn state machine's terminal state (which is also the session status the
  dashboard shows), the registry's state, the end frame's reason, and how a sub-agent's result
  is delivered to its parent. A new stop reason is one new row here;
- `TurnEnd` is the one value a turn's ending travels as, from whoever ends a turn (the engine's
  model loop, an ACP agent, an importer) to the writer that records `turn.completed`; the other
  layers' words come from its `ending` row, never from a restated mapping.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agent_tui.events.model import Event, StopReason, TurnErrorCode, Usage

Phase = Literal["start", "executing", "compress", "end"]
RunState = Literal["idle", "running", "completed", "cancelled", "failed"]
"""A turn's run state (the turn state machine's states)."""
TerminalRunState = Literal["completed", "cancelled", "failed"]
RegistryState = Literal["running", "complete", "interrupt", "error"]
EndReasonKind = Literal["done", "maxSteps", "aborted", "error"]
DeliveryStatus = Literal["completed", "failed"]

PHASE_OF_EVENT: dict[str, Phase] = {
    "turn.started": "start",
    "context.built": "executing",
    "context.compacted": "compress",
    "turn.completed": "end",
}


def phase_for(event: Event) -> Phase | None:
    """The phase a stored event moves its turn into, or None for events that move no phase."""
    return PHASE_OF_EVENT.get(event.type)


@dataclass(frozen=True, slots=True)
class Ending:
    """One way a turn ends, in each layer's words."""

    stop_reason: StopReason
    run_state: TerminalRunState
    registry_state: RegistryState
    end_reason: EndReasonKind
    delivery: DeliveryStatus


ENDINGS: dict[str, Ending] = {
    "final": Ending("final", "completed", "complete", "done", "completed"),
    "max_steps": Ending("max_steps", "completed", "complete", "maxSteps", "completed"),
    "cancelled": Ending("cancelled", "cancelled", "interrupt", "aborted", "failed"),
    "error": Ending("error", "failed", "error", "error", "failed"),
}

REGISTRY_STATE_OF_RUN_STATE: dict[RunState, RegistryState] = {
    "idle": "running",  # claimed, not started yet: the session is taken
    "running": "running",
    "completed": "complete",
    "cancelled": "interrupt",
    "failed": "error",
}


def ending_for(stop_reason: str) -> Ending:
    """The row of `ENDINGS` for a stop reason (KeyError for one the log format does not know)."""
    return ENDINGS[stop_reason]


@dataclass(frozen=True, slots=True)
class TurnEnd:
    """How one turn ended: what `turn.completed` records, as one value.

    `error_code` is set exactly when `stop_reason` is "error"; `message` is the words a person
    reads (a failure's reason, a cancel's cause), `usage` the tokens the turn spent, if known.
    """

    stop_reason: StopReason
    error_code: TurnErrorCode | None = None
    message: str | None = None
    usage: Usage | None = None

    def __post_init__(self) -> None:
        if (self.stop_reason == "error") != (self.error_code is not None):
            raise ValueError(
                f"a turn ending {self.stop_reason!r} "
                + ("needs an error code" if self.stop_reason == "error" else "has no error code")
            )

    @property
    def ending(self) -> Ending:
        """This ending in every layer's words."""
        return ENDINGS[self.stop_reason]

    def payload(self) -> dict[str, object]:
        """The `turn.completed` payload for this ending (fields that are unset are left out)."""
        payload: dict[str, object] = {"stopReason": self.stop_reason}
        if self.error_code is not None:
            payload["errorCode"] = self.error_code
        usage = self.usage
        if usage is not None:  # by hand, not `model_dump`: an import writes one per turn
            spent = {"promptTokens": usage.promptTokens, "completionTokens": usage.completionTokens}
            if usage.cachedTokens is not None:
                spent["cachedTokens"] = usage.cachedTokens
            payload["usage"] = spent
        if self.message is not None:
            payload["message"] = self.message
        return payload

    @classmethod
    def final(cls, usage: Usage | None = None) -> TurnEnd:
        return cls("final", usage=usage)

    @classmethod
    def cancelled(cls, message: str | None = None, usage: Usage | None = None) -> TurnEnd:
        return cls("cancelled", message=message, usage=usage)

    @classmethod
    def failed(cls, code: TurnErrorCode, message: str | None = None, usage: Usage | None = None) -> TurnEnd:
        return cls("error", error_code=code, message=message, usage=usage)
