"""What a session's earlier turns spent, for a session folded from its head and last turn only.

A long history is listed from each log's first line and last turn (the dashboard is drawn before
any log is read whole); what the turns before spent is then told apart, once the log has been
read (whole by the engine, or its spend lines alone by the replay's list), so the session's
total, its day's and its tree's are the whole log's, not its last turn's.

Invariants:
- the spend of `earlier` is worked out by the fold itself (`apply_event` on a scratch state), so
  a call counts as it would in a full fold (a turn's total after its calls once, an old log's
  turn total alone still counted) and on the day it ended;
- `earlier` holds events from before the part already folded, and a `session.budget` among
  them only when none came later (the latest budget is the one in force): `is_earlier` is that
  rule, for whoever picks the events from a log;
- what is added for a folded part that starts inside a turn (a turn longer than the tail read)
  counts that turn once: `spend_before` is the fold of the earlier events and the part's,
  less the part's alone (the turn's total settles it in both);
- an `EarlierSpend` is a value: added to a state once per folded session (adding it twice
  counts it twice; its holder keeps count).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agent_tui.events import Event
from agent_tui.reducer.fold import apply_event
from agent_tui.reducer.spend import NO_SPEND, Spend
from agent_tui.reducer.views import DashboardState

__all__ = [
    "EARLIER_TYPES",
    "EarlierSpend",
    "absorb_earlier_spend",
    "add_earlier_spend",
    "earlier_spend",
    "is_earlier",
    "spend_before",
]

EARLIER_TYPES = frozenset({"turn.started", "model.usage", "turn.completed", "session.budget"})
"""The events of earlier turns that say what they spent (and the budget set meanwhile)."""


def is_earlier(event: Event, tail_from: int | None, budget_later: bool) -> bool:
    """Whether `event`, of a log whose folded part starts at sequence `tail_from` (None: no part
    folded, nothing is earlier) and sets a budget (`budget_later`), belongs to `earlier`."""
    if tail_from is None or event.sequence >= tail_from or event.type not in EARLIER_TYPES:
        return False
    return not (budget_later and event.type == "session.budget")


@dataclass(frozen=True)
class EarlierSpend:
    """What a session's earlier turns spent: in all, per UTC day, and the budget they last set
    (None: they set none)."""

    spend: Spend
    by_day: tuple[tuple[str, Spend], ...]
    budget: tuple[float | None, int | None] | None

    def minus(self, part: EarlierSpend | None) -> EarlierSpend:
        """What this spent beyond `part` (a fold of some of the same events), in all and per
        day; this one's budget."""
        if part is None:
            return self
        days = dict(part.by_day)
        by_day = tuple((day, spend.minus(days.get(day, NO_SPEND))) for day, spend in self.by_day)
        return EarlierSpend(self.spend.minus(part.spend), by_day, self.budget)


def earlier_spend(session_id: str, earlier: Iterable[Event]) -> EarlierSpend | None:
    """What the session's `earlier` events (see the module's rules) spent; None if they hold
    nothing of the session's."""
    scratch = DashboardState()
    budgeted = False
    for event in earlier:
        if event.type in EARLIER_TYPES and event.session_id == session_id:
            apply_event(scratch, event)
            budgeted = budgeted or event.type == "session.budget"
    past = scratch.sessions.get(session_id)
    if past is None:
        return None
    budget = (past.budget_usd, past.budget_tokens) if budgeted else None
    return EarlierSpend(past.spend, tuple(scratch.spend_by_day.items()), budget)


def spend_before(session_id: str, earlier: Iterable[Event], folded: Iterable[Event]) -> EarlierSpend | None:
    """What the session spent before its `folded` part (the tail the state already holds):
    the fold of `earlier` and the part's spend events, less the part's alone, so a part that
    starts inside a turn counts that turn once (see the module's rules)."""
    part = [event for event in folded if event.type in EARLIER_TYPES]
    whole = earlier_spend(session_id, [*earlier, *part])
    return whole.minus(earlier_spend(session_id, part)) if whole is not None else None


def add_earlier_spend(state: DashboardState, session_id: str, found: EarlierSpend) -> None:
    """Add `found` to the session's total and the days' in `state` (and its budget, if set)."""
    session = state.sessions.get(session_id)
    if session is None:
        return
    session.spend = session.spend.plus(found.spend)
    by_day = state.spend_by_day
    for day, spend in found.by_day:
        by_day[day] = by_day.get(day, NO_SPEND).plus(spend)
    if found.budget is not None:
        session.budget_usd, session.budget_tokens = found.budget


def absorb_earlier_spend(
    state: DashboardState, session_id: str, earlier: Iterable[Event], folded: Iterable[Event] = ()
) -> None:
    """Add to `state` what the session spent before its `folded` part (`spend_before`)."""
    if session_id not in state.sessions:
        return
    found = spend_before(session_id, earlier, folded)
    if found is not None:
        add_earlier_spend(state, session_id, found)
