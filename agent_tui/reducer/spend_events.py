"""How usage and budgets change the views: each model call's spend, each turn's, and the totals.

Invariants:
- a `model.usage` adds its call's `Spend` at once to its turn (`TurnView.usage`, the running
  sum), its session (`SessionView.spend`) and the day of its `ts` (`DashboardState.spend_by_day`,
  keyed `YYYY-MM-DD` in the log's UTC), so the totals move as each model call ends;
- a `turn.completed` that carries usage makes that the turn's usage, and moves the session's and
  the day's totals by the difference from what its calls already added: a log with both counts
  each token once, a log with only the turn's total (written before `model.usage` existed)
  still counts it;
- the budget is the values of the latest `session.created.budget`/`session.budget`, recorded as
  they are (enforcing it is the engine's);
- like every handler but a delta's or a tool request's, these end the assistant message being
  streamed.
"""

from __future__ import annotations

from typing import Any

from agent_tui.events import Event
from agent_tui.reducer.spend import NO_SPEND, Spend, spend_of
from agent_tui.reducer.turn_writes import Handler, close_assistant, close_last, turn_for
from agent_tui.reducer.views import DashboardState, SessionView, TurnView


def _add_spend(state: DashboardState, session: SessionView, ts: str, spend: Spend) -> None:
    session.spend = session.spend.plus(spend)
    by_day = state.spend_by_day
    day = ts[:10]
    by_day[day] = by_day.get(day, NO_SPEND).plus(spend)


def _on_model_usage(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = turn_for(state, session, event)
    close_assistant(turn)
    spend = spend_of(event.payload)
    turn.usage = spend if turn.usage is None else turn.usage.plus(spend)
    _add_spend(state, session, event.ts, spend)


def settle_turn_usage(
    state: DashboardState, session: SessionView, turn: TurnView, usage: dict[str, Any], ts: str
) -> None:
    """A `turn.completed` reported the turn's usage: it becomes the turn's, and the totals move
    by what its `model.usage` events had not added already."""
    total = spend_of(usage)
    added = turn.usage
    turn.usage = total
    if added is None:  # no `model.usage` before it (an older log): all of it is new
        if total != NO_SPEND:
            _add_spend(state, session, ts, total)
    elif total != added:
        _add_spend(state, session, ts, total.minus(added))


def record_budget(session: SessionView, budget: dict[str, Any] | None) -> None:
    """The session's budget is now `budget` (None or empty: none)."""
    budget = budget or {}
    session.budget_usd = budget.get("usd")
    session.budget_tokens = budget.get("tokens")


def _on_session_budget(state: DashboardState, session: SessionView, event: Event) -> None:
    close_last(session)
    record_budget(session, event.payload)


SPEND_HANDLERS: dict[str, Handler] = {
    "model.usage": _on_model_usage,
    "session.budget": _on_session_budget,
}
