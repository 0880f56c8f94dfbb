"""The per-turn state machine.

Invariants:
- the only legal moves are `idle → running` and `running → completed | cancelled | failed`;
  every other move raises `IllegalTransition` and leaves the state unchanged;
- terminal states have no way out: the next turn gets a new `TurnFsm`.
"""

from __future__ import annotations

from typing import Literal

TurnPhase = Literal["idle", "running", "completed", "cancelled", "failed"]

_LEGAL: dict[str, frozenset[str]] = {
    "idle": frozenset({"running"}),
    "running": frozenset({"completed", "cancelled", "failed"}),
    "completed": frozenset(),
    "cancelled": frozenset(),
    "failed": frozenset(),
}

STOP_REASON_PHASE: dict[str, TurnPhase] = {
    "final": "completed",
    "max_steps": "completed",
    "cancelled": "cancelled",
    "error": "failed",
}


class IllegalTransition(RuntimeError):
    """A move the turn state machine does not allow."""

    def __init__(self, source: str, target: str) -> None:
        super().__init__(f"illegal turn transition {source} → {target}")
        self.source = source
        self.target = target


class TurnFsm:
    """`idle → running → completed | cancelled | failed`."""

    __slots__ = ("_state",)

    def __init__(self) -> None:
        self._state: TurnPhase = "idle"

    @property
    def state(self) -> TurnPhase:
        return self._state

    @property
    def is_terminal(self) -> bool:
        return not _LEGAL[self._state]

    def move(self, target: TurnPhase) -> None:
        if target not in _LEGAL[self._state]:
            raise IllegalTransition(self._state, target)
        self._state = target

    def start(self) -> None:
        self.move("running")

    def finish(self, stop_reason: str) -> None:
        """Move to the terminal state a `turn.completed{stopReason}` stands for."""
        self.move(STOP_REASON_PHASE[stop_reason])
