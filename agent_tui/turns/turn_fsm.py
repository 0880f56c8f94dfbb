"""The per-turn state machine: the one owner of a turn's run state.

Invariants:
- the only legal moves are `idle → running` and `running → completed | cancelled | failed`;
  every other move raises `IllegalTransition` and leaves the state unchanged;
- terminal states have no way out: the next turn gets a new `TurnFsm`;
- the registry moves it (from the commands the stored events stand for) and everything else
  reads it: the engine asks `is_terminal` to know whether a turn is still live, the registry
  derives its own `running | complete | interrupt | error` state from it.
"""

from __future__ import annotations

from agent_tui.events.turn_vocabulary import RunState, ending_for

_LEGAL: dict[str, frozenset[str]] = {
    "idle": frozenset({"running"}),
    "running": frozenset({"completed", "cancelled", "failed"}),
    "completed": frozenset(),
    "cancelled": frozenset(),
    "failed": frozenset(),
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
        self._state: RunState = "idle"

    @property
    def state(self) -> RunState:
        return self._state

    @property
    def is_terminal(self) -> bool:
        return not _LEGAL[self._state]

    def move(self, target: RunState) -> None:
        if target not in _LEGAL[self._state]:
            raise IllegalTransition(self._state, target)
        self._state = target

    def start(self) -> None:
        self.move("running")

    def finish(self, stop_reason: str) -> None:
        """Move to the terminal state a `turn.completed{stopReason}` stands for."""
        self.move(ending_for(stop_reason).run_state)
