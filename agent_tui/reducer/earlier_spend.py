"""What a session's earlier turns spent, for a session folded from its head and last turn only.

A long history is listed from each log's first line and last turn (the dashboard is drawn before
any log is read whole); what the turns before spent is then told apart, once the log has been
read, so the session's total, its day's and its tree's are the whole log's, not its last turn's.

Invariants:
- the spend of `earlier` is worked out by the fold itself (`apply_event` on a scratch state), so
  a call counts as it would in a full fold (a turn's total after its calls once, an old log's
  turn total alone still counted) and on the day it ended;
- `earlier` holds events from before the part already folded, and a `session.budget` among
  them only when none came later (the latest budget is the one in force).
"""

from __future__ import annotations

from collections.abc import Iterable

from agent_tui.events import Event
from agent_tui.reducer.fold import apply_event
from agent_tui.reducer.spend import NO_SPEND
from agent_tui.reducer.views import DashboardState

__all__ = ["EARLIER_TYPES", "absorb_earlier_spend"]

EARLIER_TYPES = frozenset({"turn.started", "model.usage", "turn.completed", "session.budget"})
"""The events of earlier turns that say what they spent (and the budget set meanwhile)."""


def absorb_earlier_spend(state: DashboardState, session_id: str, earlier: Iterable[Event]) -> None:
    """Add to `state` what the session's `earlier` events (see the module's rules) spent."""
    session = state.sessions.get(session_id)
    if session is None:
        return
    scratch = DashboardState()
    budgeted = False
    for event in earlier:
        if event.type in EARLIER_TYPES and event.session_id == session_id:
            apply_event(scratch, event)
            budgeted = budgeted or event.type == "session.budget"
    past = scratch.sessions.get(session_id)
    if past is None:
        return
    session.spend = session.spend.plus(past.spend)
    by_day = state.spend_by_day
    for day, spend in scratch.spend_by_day.items():
        by_day[day] = by_day.get(day, NO_SPEND).plus(spend)
    if budgeted:
        session.budget_usd, session.budget_tokens = past.budget_usd, past.budget_tokens
