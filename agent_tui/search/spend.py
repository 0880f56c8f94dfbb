"""What one log spent, folded by the search index as it reads the log (`SearchIndex.spend`).

A history of logs is listed from each log's head and last turn; what the turns before spent is
asked of the index, which reads every log once and then only what each one gained.

Invariants:
- the fold is the reducer's (`reducer.spend_events`): a `model.usage` adds its call's spend to
  its turn, the log's total and the day of its `ts`; a `turn.completed` carrying usage moves
  them by the difference from what its calls added (a log with both counts each token once, an
  old log with turn totals alone still counts them). The whole log's `LogSpend` equals the
  reducer's session spend and days (tests hold them equal);
- it is kept incrementally: its state (totals, days, the running usage of the turns not
  completed yet, the latest `session.budget`) is one JSON text in the index's row of the log,
  so a grown log folds only its new lines and a log read again from its start starts over;
- an event whose usage has not the reducer's shape is passed over (the reducer would refuse it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from agent_tui.reducer.earlier_spend import EarlierSpend
from agent_tui.reducer.spend import NO_SPEND, Spend, spend_of


@dataclass
class LogSpend:
    """What a log spent so far, and what its next lines need to go on folding."""

    total: Spend = NO_SPEND
    days: dict[str, Spend] = field(default_factory=dict)
    open_turns: dict[str, Spend] = field(default_factory=dict)
    """The running usage of each turn not completed yet."""
    last_turn: str = ""
    budget: tuple[float | None, int | None] | None = None
    """The latest `session.budget` (None: the log sets none after its head)."""

    def add(self, event: dict[str, Any]) -> None:
        """Fold one event of `reducer.earlier_spend.EARLIER_TYPES` (a decoded line of the log, in
        order); see the module's rules."""
        kind = event["type"]
        turn = event.get("turnId") or self.last_turn
        payload = event["payload"]
        try:
            if kind == "model.usage":
                spend = spend_of(payload)
                self.open_turns[turn] = self.open_turns.get(turn, NO_SPEND).plus(spend)
                self._count(event["ts"], spend)
            elif kind == "turn.completed":
                added = self.open_turns.pop(turn, NO_SPEND)
                usage = payload.get("usage")
                if usage is not None and spend_of(usage) != added:
                    self._count(event["ts"], spend_of(usage).minus(added))
            elif kind == "session.budget":
                self.budget = (payload.get("usd"), payload.get("tokens"))
                return
            self.last_turn = turn
        except (KeyError, TypeError, ValueError, AttributeError):  # not the reducer's shape
            return

    def _count(self, ts: str, spend: Spend) -> None:
        self.total = self.total.plus(spend)
        day = ts[:10]
        self.days[day] = self.days.get(day, NO_SPEND).plus(spend)

    def as_earlier(self) -> EarlierSpend:
        """The whole log's spend, per day, and its latest budget."""
        return EarlierSpend(self.total, tuple(sorted(self.days.items())), self.budget)

    def dumps(self) -> str:
        fields = [self.total, self.days, self.open_turns, self.last_turn, self.budget]
        return orjson.dumps(fields, default=tuple).decode()  # (a `Spend` as its fields)

    @classmethod
    def loads(cls, text: str | None) -> LogSpend:
        """The state `dumps` wrote (a fresh one for None or an empty text)."""
        if not text:
            return cls()
        total, days, open_turns, last_turn, budget = orjson.loads(text)
        return cls(
            Spend(*total),
            {day: Spend(*spend) for day, spend in days.items()},
            {turn: Spend(*spend) for turn, spend in open_turns.items()},
            last_turn,
            tuple(budget) if budget is not None else None,
        )
