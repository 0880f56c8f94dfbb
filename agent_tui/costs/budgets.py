"""Budgets: what a session's tree may spend, how near it is, and the words for crossing it.

A budget (`BudgetLimit`) is dollars, tokens (prompt plus completion), or both; it counts for the
session it is set on and all its sub-agents. What a tree spent (`BudgetSpend`) is summed from its
model calls' usage. Every layer that judges a budget (the engine that stops a tree, the reducer
and the dashboard that mark it) uses the same arithmetic and the same words from here.

Invariants:
- `budget_state` is `over` once either limit is reached (spent >= limit), `near` from
  `NEAR_SHARE` (80%) of either, else `ok`; no budget is `ok`;
- dollars are never made up: a tree with calls of an unknown price (`BudgetSpend.unpriced`) is judged
  only on the dollars it is known to have spent, and its token limit still holds;
- `over_sentence` says what was spent and what was allowed, the way a person reads it
  (`spent $2.51 of a $2.50 budget`);
- a limit is checked where it enters (`usd_problem`, `tokens_problem`: the flag, the config
  file, the bus, the dashboard's forms all say the same sentence): dollars a finite number above
  0, tokens a whole number (not a bool, not a float) from 1 to `MAX_TOKENS`, which every JSON
  reader holds exactly; `BudgetLimit` itself refuses anything else.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from agent_tui.costs.wording import usd_text

__all__ = [
    "MAX_TOKENS",
    "NEAR_SHARE",
    "BudgetLimit",
    "BudgetSpend",
    "BudgetState",
    "budget_share",
    "budget_state",
    "over_sentence",
    "tokens_problem",
    "usd_problem",
]

NEAR_SHARE = 0.8
"""The share of a budget from which it is `near` (the dashboard marks it, attention fires)."""

MAX_TOKENS = 2**53 - 1
"""The largest token budget: the largest whole number that every JSON reader (a float64 in
JavaScript, a bus peer) holds exactly; a larger one is no limit a model could reach anyway."""

BudgetState = Literal["ok", "near", "over"]


def usd_problem(value: object) -> str | None:
    """What is wrong with `value` as a dollar budget (in words that follow "expected"), or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "a positive number of dollars"
    try:
        good = math.isfinite(value) and value > 0
    except OverflowError:  # an int too large for a float
        good = False
    return None if good else "a positive number of dollars"


def tokens_problem(value: object) -> str | None:
    """What is wrong with `value` as a token budget (in words that follow "expected"), or None."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return "a positive whole number of tokens"
    return f"at most {MAX_TOKENS:,} tokens" if value > MAX_TOKENS else None


@dataclass(frozen=True, slots=True)
class BudgetLimit:
    """Dollars and/or tokens a tree may spend (None: no limit of that kind)."""

    usd: float | None = None
    tokens: int | None = None

    def __post_init__(self) -> None:
        if self.usd is not None and usd_problem(self.usd) is not None:
            raise ValueError(f"a dollar budget must be a positive number, not {self.usd!r}")
        if self.tokens is not None and tokens_problem(self.tokens) is not None:
            raise ValueError(
                f"a token budget must be a positive whole number up to {MAX_TOKENS}, not {self.tokens!r}"
            )

    @property
    def empty(self) -> bool:
        return self.usd is None and self.tokens is None

    @classmethod
    def of(cls, payload: Mapping[str, Any] | None) -> BudgetLimit | None:
        """The budget a log's `budget` / `session.budget` payload states (None: no budget).

        Never raises: a limit that is not a positive number (a foreign or hand-edited log) is
        read as no limit of that kind, a budget that is not an object as none."""
        if not payload or not isinstance(payload, Mapping):
            return None
        usd: Any = payload.get("usd")
        tokens: Any = payload.get("tokens")
        good_usd = float(usd) if usd_problem(usd) is None else None
        good_tokens = int(tokens) if tokens_problem(tokens) is None else None
        limit = cls(good_usd, good_tokens)
        return None if limit.empty else limit

    def payload(self) -> dict[str, float | int]:
        """The log's form (`{"usd": 2.5, "tokens": 500000}`, unset limits left out)."""
        fields: dict[str, float | int] = {}
        if self.usd is not None:
            fields["usd"] = float(self.usd)  # an int of dollars too large for orjson is a float here
        if self.tokens is not None:
            fields["tokens"] = self.tokens
        return fields

    def merged_over(self, base: BudgetLimit | None) -> BudgetLimit:
        """This budget's limits, and `base`'s where this one sets none (flags over config)."""
        if base is None:
            return self
        return BudgetLimit(
            self.usd if self.usd is not None else base.usd,
            self.tokens if self.tokens is not None else base.tokens,
        )


@dataclass(frozen=True, slots=True)
class BudgetSpend:
    """What a tree spent: known dollars, tokens, and whether some calls had no price."""

    usd: float = 0.0
    tokens: int = 0
    unpriced: bool = False

    def __add__(self, other: BudgetSpend) -> BudgetSpend:
        return BudgetSpend(self.usd + other.usd, self.tokens + other.tokens, self.unpriced or other.unpriced)

    @classmethod
    def of(cls, usage: Mapping[str, Any]) -> BudgetSpend:
        """The spend of one `model.usage` payload (its `costUsd`; prompt plus completion tokens)."""
        cost = usage.get("costUsd")
        tokens = int(usage.get("promptTokens") or 0) + int(usage.get("completionTokens") or 0)
        return cls(float(cost) if cost is not None else 0.0, tokens, cost is None)


def budget_state(spent_usd: float, spent_tokens: int, usd: float | None, tokens: int | None) -> BudgetState:
    """`over`, `near` or `ok` of a tree that spent `spent_usd` (the priced part) and
    `spent_tokens` (prompt plus completion) against a budget of `usd` and/or `tokens` (None: no
    limit of that kind). Plain numbers, so any reader of a log can ask (a limit of 0 or less,
    which agent-tui never writes, is spent at once)."""
    share = budget_share(spent_usd, spent_tokens, usd, tokens) or 0.0
    if share >= 1:
        return "over"
    return "near" if share >= NEAR_SHARE else "ok"


def budget_share(spent_usd: float, spent_tokens: int, usd: float | None, tokens: int | None) -> float | None:
    """How much of its budget a tree spent (1.0: all of it), the larger of its dollars' and its
    tokens' shares; None without a budget. A limit of 0 or less is spent at once."""
    shares = [
        spent / limit if limit > 0 else 1.0
        for spent, limit in ((spent_usd, usd), (spent_tokens, tokens))
        if limit is not None
    ]
    return max(shares) if shares else None


def over_sentence(spent: BudgetSpend, budget: BudgetLimit) -> str | None:
    """`spent $2.51 of a $2.50 budget` for the limit that was reached (None: none was)."""
    if budget.usd is not None and spent.usd >= budget.usd:
        return f"spent {usd_text(spent.usd)} of a {usd_text(budget.usd)} budget"
    if budget.tokens is not None and spent.tokens >= budget.tokens:
        return f"spent {spent.tokens:,} tokens of a {budget.tokens:,}-token budget"
    return None
