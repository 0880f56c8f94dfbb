"""Prices per million tokens, and what a call's tokens cost at them.

Invariants:
- the prices agent-tui ships with are the maintained table of `genai-prices` (`maintained.py`:
  read lazily, never fetched at run time); the user's `[prices."MODEL"]` entries, a table's own
  `prices`, come first: they replace a maintained model's price or add a model;
- `PriceTable.lookup` finds a model among the table's own prices by its name as written, then
  without a provider prefix (`anthropic/claude-sonnet-4`), a date suffix (`-20250929`,
  `-2025-04-14`) or `-latest`; never by a looser match (`o3-pro` is not `o3`); a model none of
  them has is priced by the maintained table, by its own rules (`maintained.py`); an unknown model
  has no price, never a guessed one;
- a table is not changed once made (`with_overrides` makes another): what a model name finds is
  remembered, so pricing a call (an import prices one per source message) is one dict look-up
  and, for a maintained model, the table's arithmetic; the cost of a call whose price cannot
  change (the table's own, or a maintained one that does not ask the clock) is remembered by
  its model and tokens (at most `REMEMBERED_COSTS` of them), so the same usage is priced once;
- token counts follow the log's usage: `promptTokens` counts every prompt token, cached ones
  (`cachedTokens`) and ones written to the cache (`cacheWriteTokens`) included; each part is
  charged at its own price (a missing `cached_input` or `cache_write` price is `input`'s).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from agent_tui.costs.maintained import REMEMBERED, MaintainedPrices
from agent_tui.costs.price import Price

__all__ = [
    "PRICE_KEYS",
    "REMEMBERED_COSTS",
    "Price",
    "PriceTable",
    "price_from",
    "price_value",
    "shipped_prices",
]

REMEMBERED_COSTS = 1 << 14
"""The most (model, tokens) costs remembered: a log whose every call differs cannot grow the memory."""

_UNSET: Any = object()

_DATE_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$")


@dataclass(frozen=True, slots=True)
class PriceTable:
    """Models' prices: the table's own (the user's), then the maintained table's when it has one."""

    prices: Mapping[str, Price]
    maintained: MaintainedPrices | None = None
    _found: dict[str, Price | None] = field(default_factory=dict, init=False, repr=False, compare=False)
    _costs: dict[tuple[Any, ...], float | None] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def lookup(self, model: str | None) -> Price | None:
        """The table's own price of `model` (the user's), or None when it has none (see the
        module's rules; the maintained table is asked by `cost_usd`)."""
        if not model:
            return None
        found = self._found
        if model in found:
            return found[model]
        price = self._search(model)
        if len(found) < REMEMBERED:  # a stream of made-up names cannot grow it
            found[model] = price
        return price

    def _search(self, model: str) -> Price | None:
        for name in _names_of(model):
            if (price := self.prices.get(name)) is not None:
                return price
        return None

    def cost_usd(
        self,
        model: str | None,
        prompt_tokens: int,
        completion_tokens: int,
        cached_tokens: int | None = None,
        cache_write_tokens: int | None = None,
    ) -> float | None:
        """What a call of `model` cost, or None when its price is not known."""
        key = (model, prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens)
        costs = self._costs
        cost = costs.get(key, _UNSET)
        if cost is not _UNSET:
            return cost
        price = self.lookup(model)
        if price is not None:
            cost = price.cost_usd(prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens)
        elif self.maintained is None or not model:
            return None
        else:
            cost = self.maintained.cost_usd(
                model, prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens
            )
            if not self.maintained.fixed(model):  # a price that changes with the clock
                return cost
        if len(costs) < REMEMBERED_COSTS:
            costs[key] = cost
        return cost

    def with_overrides(self, overrides: Mapping[str, Price]) -> PriceTable:
        """This table with `overrides` (the user's config) replacing or adding models."""
        if not overrides:
            return self
        return PriceTable({**self.prices, **overrides}, self.maintained)


def _names_of(model: str) -> list[str]:
    """The names a model is looked up by, most exact first."""
    names = [model]
    bare = model.rsplit("/", 1)[-1]
    if bare != model:
        names.append(bare)
    undated = _DATE_SUFFIX.sub("", bare)
    if undated != bare:
        names.append(undated)
    return names


PRICE_KEYS = ("input", "cached_input", "cache_write", "output")
"""The keys of a model's price entry (dollars per million tokens)."""


def price_value(key: str, value: Any) -> float:
    """One price entry's value, checked: raises ValueError naming what is wrong."""
    if key not in PRICE_KEYS:
        raise ValueError(f"unknown key {key!r} (known: {', '.join(PRICE_KEYS)})")
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < float("inf"):
        raise ValueError(f"{key} must be a number of dollars per million tokens, not {value!r}")
    return float(value)


def price_from(values: Mapping[str, Any]) -> Price:
    """A `Price` from a table's entry (`input`, `output`, optional `cached_input`,
    `cache_write`); raises ValueError naming what is missing or not a number."""
    checked = {key: price_value(key, value) for key, value in values.items()}
    for required in ("input", "output"):
        if required not in checked:
            raise ValueError(f"{required} is missing")
    return Price(
        input=checked["input"],
        output=checked["output"],
        cached_input=checked.get("cached_input"),
        cache_write=checked.get("cache_write"),
    )


@cache
def shipped_prices() -> PriceTable:
    """The prices agent-tui ships with: the maintained table (`genai-prices`), nothing of its own."""
    return PriceTable({}, MaintainedPrices())
