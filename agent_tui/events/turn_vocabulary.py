"""How a turn moves and how it ends, said once for every layer.

Invariants this module guarantees:
- `PHASE_OF_EVENT` is the only mapping from a stored event's type to a turn phase:
  `turn.started` → start, `context.built` → executing, `context.compacted` → compress,
  `turn.completed` → end, any other type → none. The projection of events to phase frames
  (`events.frames.transition_for`) reads it, and every phase shown is such a frame;
- `ENDINGS` is the only table from a `turn.completed{stopReason}` to what every layer calls that
  ending: the turn state machine's terminal state (which is also the session status the
  dashboard and `sessions` show), the registry's state, the end frame's reason, how a
  sub-agent's result is delivered to its parent (and what `wait_agent` answers), what the
  registry's `wait` answers, the dashboard's line under the turn and its tone, whether a
  `run --prompt` succeeded, and the ACP stop reason `agent-tui acp` answers. Those words are
  produced at the edges from its rows and nowhere else (tests/test_turn_vocabulary.py checks
  that each edge follows a changed row and that no module restates one), so a new stop reason
  is one new row here;
- `TurnEnd` is the one value a turn's ending travels as, from whoever ends a turn (the engine's
  model loop, an ACP agent, an importer) to the writer that records `turn.completed`; the other
  layers' words come from its `ending` row, never from a restated mapping.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from agent_tui.events.model import StopReason, TurnErrorCode, Usage

Phase = Literal["start", "executing", "compress", "end"]
RunState = Literal["idle", "running", "completed", "cancelled", "failed"]
"""A turn's run state (the turn state machine's states)."""
TerminalRunState = Literal["completed", "cancelled", "failed"]
RegistryState = Literal["running", "complete", "interrupt", "error"]
EndReasonKind = Literal["done", "maxSteps", "aborted", "error"]
DeliveryStatus = Literal["completed", "failed"]
WaitOutcome = Literal["completed", "failed", "timeout"]
"""What waiting for a turn answers: how it ended, or that the wait's limit passed first."""
EndTone = Literal["warning", "error"]
AcpStopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]

PHASE_OF_EVENT: dict[str, Phase] = {
    "turn.started": "start",
    "context.built": "executing",
    "context.compacted": "compress",
    "turn.completed": "end",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Ending:
    """One way a turn ends, in each layer's words.

    - `run_state`: the turn state machine's terminal state; also the session's status;
    - `registry_state`: the turn registry's state (`TurnRegistry.state`);
    - `end_reason`: the reason of the phase frame `end`;
    - `delivery`: the status a sub-agent's result is delivered with (`subagent.delivered`), which
      is also what `wait_agent` answers for it;
    - `wait_outcome`: what `TurnRegistry.wait` answers once the turn ended;
    - `delivered_note`: what the parent reads instead of the sub-agent's last answer (its error
      code is added after a colon); None: the last answer itself;
    - `end_line`: the dashboard's line under a turn that ended this way (its error code added),
      None for none; `end_tone`: how that line and the turn's message are shown (None: muted);
    - `answered`: the turn ended with its answer (`run --prompt` exits 0);
    - `acp_stop_reason`: what `agent-tui acp` answers a prompt with; None: a JSON-RPC error.
    """

    stop_reason: StopReason
    run_state: TerminalRunState
    registry_state: RegistryState
    end_reason: EndReasonKind
    delivery: DeliveryStatus
    wait_outcome: WaitOutcome
    delivered_note: str | None
    end_line: str | None
    end_tone: EndTone | None
    answered: bool
    acp_stop_reason: AcpStopReason | None

    @property
    def failed(self) -> bool:
        """The turn failed: it carries an error code (`turn.completed.errorCode`, the end frame's)."""
        return self.run_state == "failed"


ENDINGS: dict[str, Ending] = {
    "final": Ending(
        stop_reason="final",
        run_state="completed",
        registry_state="complete",
        end_reason="done",
        delivery="completed",
        wait_outcome="completed",
        delivered_note=None,
        end_line=None,
        end_tone=None,
        answered=True,
        acp_stop_reason="end_turn",
    ),
    "max_steps": Ending(
        stop_reason="max_steps",
        run_state="completed",
        registry_state="complete",
        end_reason="maxSteps",
        delivery="completed",
        wait_outcome="completed",
        delivered_note=None,
        end_line="stopped at the step limit",
        end_tone="warning",
        answered=False,
        acp_stop_reason="max_turn_requests",
    ),
    "cancelled": Ending(
        stop_reason="cancelled",
        run_state="cancelled",
        registry_state="interrupt",
        end_reason="aborted",
        delivery="failed",
        wait_outcome="failed",
        delivered_note="stopped before it finished",
        end_line="turn cancelled",
        end_tone="warning",
        answered=False,
        acp_stop_reason="cancelled",
    ),
    "error": Ending(
        stop_reason="error",
        run_state="failed",
        registry_state="error",
        end_reason="error",
        delivery="failed",
        wait_outcome="failed",
        delivered_note="failed",
        end_line="turn failed",
        end_tone="error",
        answered=False,
        acp_stop_reason=None,
    ),
}

RUNNING_REGISTRY_STATE: RegistryState = "running"
"""The registry's state of a turn that has not ended (claimed, or under way)."""


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
        failed = ENDINGS[self.stop_reason].failed
        if failed != (self.error_code is not None):
            raise ValueError(
                f"a turn ending {self.stop_reason!r} "
                + ("needs an error code" if failed else "has no error code")
            )

    @property
    def ending(self) -> Ending:
        """This ending in every layer's words."""
        return ENDINGS[self.stop_reason]

    def payload(self) -> dict[str, object]:
        """The `turn.completed` payload for this ending (fields that are unset are left out)."""
        usage = self.usage.fields() if self.usage is not None else None
        known = given(errorCode=self.error_code, usage=usage, message=self.message)
        return {"stopReason": self.stop_reason, **known}

    @classmethod
    def final(cls, usage: Usage | None = None) -> TurnEnd:
        return cls("final", usage=usage)

    @classmethod
    def cancelled(cls, message: str | None = None, usage: Usage | None = None) -> TurnEnd:
        return cls("cancelled", message=message, usage=usage)

    @classmethod
    def failed(cls, code: TurnErrorCode, message: str | None = None, usage: Usage | None = None) -> TurnEnd:
        return cls("error", error_code=code, message=message, usage=usage)


def given(**fields: Any) -> dict[str, Any]:
    """The fields that are known (`None`: left out of a payload), in the order given."""
    return {name: value for name, value in fields.items() if value is not None}
