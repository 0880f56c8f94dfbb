"""The per-turn state machine: the one owner of a turn's run state.

Invariants:
- the only legal moves are `idle → running` and `running → completed | cancelled | failed`;
  every other move raises `IllegalTransition` and leaves the state unchanged;
- terminal states have no way out: the next turn gets a new `TurnFsm`;
- `finish(stop_reason)` moves to the terminal state of that stop reason's row of `ENDINGS` and
  keeps the row (`ending`, None while the turn has not ended), for the layers that read the
  ending's other words off the turn;
- the registry moves it (from the commands the stored events stand for) and everything else
  reads it: the engine asks `is_terminal` to know whether a turn is still live, the registry
  reads its own state and its wait outcome off `ending`.
"""

from __future__ import annotations

from agent_tui.events.turn_vocabulary import Ending, RunState, ending_for

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

    __slots__ = ("_ending", "_state")

    def __init__(self) -> None:
        self._state: RunState = "idle"
        self._ending: Ending | None = None

    @property
    def state(self) -> RunState:
        return self._state

    @property
    def is_terminal(self) -> bool:
        return not _LEGAL[self._state]

    @property
    def ending(self) -> Ending | None:
        """How the turn ended, in every layer's words; None while it has not."""
        return self._ending

    def move(self, target: RunState) -> None:
        """One legal move; a turn that ends goes through `finish`, which also keeps its ending."""
        if target not in _LEGAL[self._state]:
            raise IllegalTransition(self._state, target)
        self._state = target

    def start(self) -> None:
        self.move("running")

    def finish(self, stop_reason: str) -> None:
        """Move to the terminal state a `turn.completed{stopReason}` stands for."""
        ending = ending_for(stop_reason)
        self.move(ending.run_state)
        self._ending = ending
