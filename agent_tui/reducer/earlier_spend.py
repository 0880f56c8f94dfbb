"""What a session's earlier turns spent, for a session folded from its head and last turn only.

A long history is listed from each log's first line and last turn (the dashboard is drawn before
any log is read whole); what the turns before spent is the whole log's spend (the search index
keeps it, `search.logs_spend`) less its folded part's (`CatalogEntry.tail_spend`), so the
session's total, its day's and its tree's are the whole log's, not its last turn's.

Invariants:
- the spend of events is worked out by the fold itself (`apply_event` on a scratch state), so
  a call counts as it would in a full fold (a turn's total after its calls once, an old log's
  turn total alone still counted) and on the day it ended;
- what is added for a folded part that starts inside a turn (a turn longer than the tail read)
  counts that turn once: the whole log's fold less the part's (the turn's total settles it in
  both); the budget set before is added only when the part sets none (the latest is in force);
- `usage_events` tells an `EarlierSpend` as the events the spend listeners count (a
  `model.usage` per day, a `session.budget`): never stored, they fold to the same spend;
- an `EarlierSpend` is a value: added to a state once per folded session (adding it twice
  counts it twice; its holder keeps count).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agent_tui.reducer.spend import NO_SPEND, Spend

if TYPE_CHECKING:  # the search index keeps `EarlierSpend`s without the fold and the event models
    from agent_tui.events import Event
    from agent_tui.reducer.views import DashboardState

__all__ = [
    "EARLIER_TYPES",
    "EarlierSpend",
    "add_earlier_spend",
    "earlier_spend",
    "usage_events",
]

EARLIER_TYPES = frozenset({"turn.started", "model.usage", "turn.completed", "session.budget"})
"""The events of earlier turns that say what they spent (and the budget set meanwhile)."""


@dataclass(frozen=True)
class EarlierSpend:
    """What a session's earlier turns spent: in all, per UTC day, and the budget they last set
    (None: they set none)."""

    spend: Spend
    by_day: tuple[tuple[str, Spend], ...]
    budget: tuple[float | None, int | None] | None

    def minus(self, part: EarlierSpend | None) -> EarlierSpend:
        """What this spent beyond `part` (a fold of some of the same events, the later ones),
        in all and per day; this one's budget unless `part` sets one (then that is in force)."""
        if part is None:
            return self
        days = dict(part.by_day)
        by_day = tuple((day, spend.minus(days.get(day, NO_SPEND))) for day, spend in self.by_day)
        return EarlierSpend(
            self.spend.minus(part.spend), by_day, self.budget if part.budget is None else None
        )


def earlier_spend(session_id: str, earlier: Iterable[Event]) -> EarlierSpend | None:
    """What the session's `earlier` events (see the module's rules) spent; None if they hold
    nothing of the session's."""
    from agent_tui.reducer.fold import apply_event
    from agent_tui.reducer.views import DashboardState

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


def usage_events(session_id: str, found: EarlierSpend) -> list[Event]:
    """`found` told as the events that the listeners counting spend from events take (the
    engine's budgets, attention): per day, a `model.usage` of its priced part and one of its
    unpriced tokens (no `costUsd`, as `spend_of` reads them), then its `session.budget`.
    Never stored; `earlier_spend` of them is `found`."""
    from agent_tui.events import Event

    told: list[tuple[str, str, dict[str, Any]]] = []
    for day, spend in found.by_day:
        ts, unpriced = f"{day}T00:00:00.000Z", spend.unpriced_tokens
        priced = {
            "step": 0,
            "promptTokens": spend.prompt_tokens - unpriced,
            "completionTokens": spend.completion_tokens,
        }
        priced |= {"cachedTokens": spend.cached_tokens, "cacheWriteTokens": spend.cache_write_tokens}
        told.append(("model.usage", ts, priced | {"costUsd": spend.cost_usd}))
        if unpriced:
            told.append(("model.usage", ts, {"step": 0, "promptTokens": unpriced, "completionTokens": 0}))
    if found.budget is not None:
        usd, tokens = found.budget
        told.append(("session.budget", "1970-01-01T00:00:00.000Z", {"usd": usd, "tokens": tokens}))
    return [
        Event(
            id=f"earlier_{n}",
            session_id=session_id,
            turn_id=None,
            sequence=0,
            ts=ts,
            type=kind,
            payload=payload,
        )
        for n, (kind, ts, payload) in enumerate(told)
    ]
