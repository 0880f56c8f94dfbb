"""`OpenedSessions`: the finished stored sessions a workbench read whole on demand, least
recently used first.

A project's history of thousands of finished sessions is listed from each log's head and last
turn; the engine reads a finished session's log whole only when the user opens it or acts on it
(a follow-up, a budget, a rewind). This names those sessions in the order they were last used,
so the workbench lets go of the oldest and the engine's memory is bounded by the bound, not by
the history.

Invariants:
- it holds session ids only: what an opened session holds lives in the engine, and the
  workbench that lets one go (`SessionEngine.forget_session`) reads it again when it is used;
- `over(kept)` takes out, oldest first, as many sessions beyond `bound` as are not in `kept`
  (the workbench keeps a session with a turn running in it or below it); so the ids held exceed
  the bound only while some of them are kept that way.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection

__all__ = ["OPENED_BOUND", "OpenedSessions"]

OPENED_BOUND = 12
"""How many finished sessions opened on demand the engine keeps read (the most recently used)."""


class OpenedSessions:
    """Session ids opened on demand, the least recently used first.

    Args:
        bound: how many are kept when the oldest can go.
    """

    def __init__(self, bound: int = OPENED_BOUND) -> None:
        self.bound = bound
        self._order: OrderedDict[str, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._order

    def use(self, session_id: str) -> None:
        """The session was opened or acted on now (the most recently used)."""
        self._order[session_id] = None
        self._order.move_to_end(session_id)

    def drop(self, session_id: str) -> None:
        """Forget the session (closed, or let go of)."""
        self._order.pop(session_id, None)

    def over(self, kept: Collection[str]) -> list[str]:
        """Take out the oldest sessions beyond the bound, but none of `kept`; returns them,
        oldest first."""
        excess = len(self._order) - self.bound
        gone: list[str] = []
        for session_id in list(self._order):
            if excess <= 0:
                break
            if session_id not in kept:
                del self._order[session_id]
                gone.append(session_id)
                excess -= 1
        return gone
