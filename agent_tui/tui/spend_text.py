"""How money, tokens and budgets read on the dashboard: `$0.42`, `<$0.01`, `12.3k tok`,
`price unknown`, `$0.42 (tree $1.87)`, `▲ 82%`.

Rules every view follows (pure functions of the reducer's `Spend`s, no widget here):
- a cost is never made up: a spend none of whose tokens had a price reads as its tokens and
  "price unknown" (where room is short, as its tokens alone: `12.3k tok`); one priced only in
  part, or counted from part of its log so far (a long history's list before its scan), reads
  `≥$0.42`, at least that much;
- dollars: `$0.00` for nothing, `<$0.01` under half a cent, cents below $1,000, whole dollars
  (`$1,234`) from there;
- tokens: `950`, `1.2k`, `12.3k`, `123k`, `1.2M`;
- a budget's share is the larger of its dollars' and its tokens' (a budget of both stops at the
  first it reaches); whether it is near or over is the engine's judgement (`budget_state`, near
  from 80%), and the mark reads `▲ 82%` near it and `▲ over` past it, so it says what it means
  without its colour.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import NamedTuple

from agent_tui.ports import budget_share as spend_share
from agent_tui.ports import budget_state, tokens_problem
from agent_tui.reducer import Spend


def usd_text(usd: float) -> str:
    """`$0.00`, `<$0.01`, `$0.42`, `$12.40`, `$1,234`."""
    if usd <= 0:
        return "$0.00"
    if usd < 0.005:
        return "<$0.01"
    if usd < 1000:
        return f"${usd:,.2f}"
    return f"${usd:,.0f}"


def tokens_text(tokens: int) -> str:
    """`950`, `1.2k`, `12.3k`, `123k`, `1.2M`, `12.3M`, `123M`."""
    for size, unit in ((1_000_000, "M"), (1_000, "k")):
        if tokens >= size:
            value = tokens / size
            if value >= 100:
                return f"{value:.0f}{unit}"
            text = f"{value:.1f}"
            return (text[:-2] if text.endswith(".0") else text) + unit
    return str(tokens)


def spent(spend: Spend) -> bool:
    """Whether anything was spent at all."""
    return spend.tokens > 0 or spend.cost_usd > 0


def cost_brief(spend: Spend, *, partial: bool = False) -> str:
    """A spend in a few cells: `$0.42`, `≥$0.42` (priced in part, or `partial`: counted from
    part of the log so far), `12.3k tok` (no price; `≥12.3k tok` partial)."""
    known = spend.known_cost_usd
    if known is None:
        return ("≥" if partial else "") + f"{tokens_text(spend.tokens)} tok"
    return ("" if spend.fully_priced and not partial else "≥") + usd_text(known)


def cost_words(spend: Spend) -> str:
    """A spend in words: `$0.42 · 12.3k tok` (`$0.42` for a cost reported without tokens),
    `12.3k tok · price unknown`, or (priced in part)
    `≥$0.42 · 12.3k tok, 2.1k of them price unknown`."""
    tokens = f"{tokens_text(spend.tokens)} tok"
    known = spend.known_cost_usd
    if known is None:
        return f"{tokens} · price unknown"
    if spend.fully_priced:
        # An agent may report its cost and no tokens: then the dollars are all there is to say.
        return f"{usd_text(known)} · {tokens}" if spend.tokens else usd_text(known)
    return f"≥{usd_text(known)} · {tokens}, {tokens_text(spend.unpriced_tokens)} of them price unknown"


class TreeCost(NamedTuple):
    """A tree line's cost: `full` when there is room, `short` when there is not."""

    full: str
    short: str


def tree_cost(
    own: Spend, tree: Spend, *, partial: bool = False, tree_partial: bool = False
) -> TreeCost | None:
    """`$0.42 (tree $1.87)` for an agent whose sub-agents spent too (short: `Σ$1.87`, the tree's
    total), `$0.42` for one alone; None when nothing was spent. `partial`: the agent's own
    figure counts part of its log so far (`≥$0.42`); `tree_partial`: some of its tree's does."""
    if not spent(tree):
        return None
    if tree == own and partial == tree_partial:
        brief = cost_brief(own, partial=partial)
        return TreeCost(brief, brief)
    whole = cost_brief(tree, partial=tree_partial)
    return TreeCost(f"{cost_brief(own, partial=partial)} (tree {whole})", f"Σ{whole}")


def budget_share(tree: Spend, usd: float | None, tokens: int | None) -> float | None:
    """How much of its budget a tree has spent (1.0: all of it), None without a budget."""
    return spend_share(tree.cost_usd, tree.tokens, usd, tokens)


def tree_budget_state(tree: Spend, usd: float | None, tokens: int | None) -> str:
    """`ok`, `near` or `over`: the engine's own judgement of a tree's spend against its budget."""
    return budget_state(tree.cost_usd, tree.tokens, usd, tokens)


def budget_mark(tree: Spend, usd: float | None, tokens: int | None) -> str | None:
    """`▲ 82%` near the budget, `▲ over` past it, None otherwise (or without a budget)."""
    state = tree_budget_state(tree, usd, tokens)
    share = budget_share(tree, usd, tokens)
    if state == "ok" or share is None:
        return None
    return "▲ over" if state == "over" else f"▲ {min(int(share * 100), 99)}%"


def budget_text(usd: float | None, tokens: int | None) -> str:
    """`$2.50`, `500k tok`, or `$2.50 or 500k tok`."""
    parts = []
    if usd is not None:
        parts.append(usd_text(usd))
    if tokens is not None:
        parts.append(f"{tokens_text(tokens)} tok")
    return " or ".join(parts)


class BudgetInputError(ValueError):
    """What is wrong with a typed budget, in one sentence."""


def parse_usd(text: str) -> float | None:
    """A typed dollar budget (`2.50`, `$2.50`, `2,500`); None when empty (no dollar limit)."""
    cleaned = text.strip().removeprefix("$").replace(",", "").strip()
    if not cleaned:
        return None
    try:
        value = float(cleaned)
    except ValueError:
        raise BudgetInputError(f"{text.strip()!r} is not an amount of dollars (like 2.50)") from None
    if not value > 0 or not math.isfinite(value):
        raise BudgetInputError("a dollar budget is more than $0 (leave it empty for none)")
    return value


def parse_tokens(text: str) -> int | None:
    """A typed token budget (`500000`, `500k`, `1.5M`, `500_000`); None when empty."""
    cleaned = text.strip().replace(",", "").replace("_", "").lower()
    if not cleaned:
        return None
    scale = {"k": 1_000, "m": 1_000_000}.get(cleaned[-1], 1)
    number = cleaned[:-1] if scale != 1 else cleaned
    try:
        value = Decimal(number) * scale  # exact: `1.1k` is 1100, not 1100.0000000000002
    except ArithmeticError:  # not a number, or past Decimal's range once scaled
        raise BudgetInputError(f"{text.strip()!r} is not a number of tokens (like 500k)") from None
    if not value.is_finite():
        raise BudgetInputError(f"{text.strip()!r} is not a number of tokens (like 500k)")
    if value != value.to_integral_value():
        raise BudgetInputError(f"{text.strip()!r} is not a whole number of tokens (like 500k)")
    if value < 1:
        raise BudgetInputError("a token budget is at least 1 token (leave it empty for none)")
    tokens = int(min(value, Decimal(2**64)))  # never a huge int: past 2**64 it is over the limit all the same
    if tokens_problem(tokens) is not None:
        raise BudgetInputError(f"a token budget is {tokens_problem(tokens)} (leave it empty for none)")
    return tokens
