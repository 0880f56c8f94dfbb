"""`Spend`: tokens and dollars summed over model calls, the value every cost total is made of.

A turn's usage, a session's total, a tree's and a day's are all `Spend`s, added the same way.

Invariants:
- a `Spend` is immutable (a named tuple), so views share it freely and copies of the state
  never need to copy it;
- `cost_usd` is the sum of the costs the log recorded; tokens whose usage had no `costUsd` (a
  model the price table does not know) are counted in `unpriced_tokens` and never priced here:
  `known_cost_usd` is None when nothing of the spend had a price, so "price unknown" is never
  shown as a made-up $0;
- `spend_of(usage)` reads a `model.usage` or a `turn.completed.usage` payload alike; `plus` and
  `minus` are field by field, so a turn's total replacing its calls' running sum moves every
  total by exactly the difference (nothing is counted twice).
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["NO_SPEND", "Spend", "spend_of"]


class Spend(NamedTuple):
    """Tokens (prompt ones include the cached and cache-written ones) and their known cost."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    """The dollars of the priced part (the sum of the log's `costUsd`s)."""
    unpriced_tokens: int = 0
    """Prompt plus completion tokens of the usage that carried no cost (price unknown)."""

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens (what a token budget counts)."""
        return self.prompt_tokens + self.completion_tokens

    @property
    def fully_priced(self) -> bool:
        """Whether every token of this spend had a price."""
        return self.unpriced_tokens == 0

    @property
    def known_cost_usd(self) -> float | None:
        """The priced part's dollars; None when tokens were spent and none of them had a price."""
        if self.unpriced_tokens and self.unpriced_tokens == self.tokens:
            return None
        return self.cost_usd

    # Fields unpacked, and the sum made with `_new_spend` (`tuple.__new__`) rather than
    # `Spend(...)`: a named tuple's attribute reads and its generated `__new__` cost more than
    # the sums, and the fold adds spends at every usage and every turn's end.
    def plus(self, other: Spend) -> Spend:
        prompt, completion, cached, written, cost, unpriced = self
        prompt2, completion2, cached2, written2, cost2, unpriced2 = other
        return _new_spend(
            Spend,
            (
                prompt + prompt2,
                completion + completion2,
                cached + cached2,
                written + written2,
                cost + cost2,
                unpriced + unpriced2,
            ),
        )

    def minus(self, other: Spend) -> Spend:
        prompt, completion, cached, written, cost, unpriced = self
        prompt2, completion2, cached2, written2, cost2, unpriced2 = other
        return _new_spend(
            Spend,
            (
                prompt - prompt2,
                completion - completion2,
                cached - cached2,
                written - written2,
                cost - cost2,
                unpriced - unpriced2,
            ),
        )


_new_spend = tuple.__new__


NO_SPEND = Spend()
"""Nothing spent yet."""


def spend_of(usage: dict[str, Any]) -> Spend:
    """The spend of one usage payload (`model.usage`, or `turn.completed.usage`)."""
    prompt = usage["promptTokens"]
    completion = usage["completionTokens"]
    get = usage.get
    cost = get("costUsd")
    return _new_spend(
        Spend,
        (
            prompt,
            completion,
            get("cachedTokens") or 0,
            get("cacheWriteTokens") or 0,
            cost if cost is not None else 0.0,
            0 if cost is not None else prompt + completion,
        ),
    )
