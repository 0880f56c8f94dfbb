"""A model's price: US dollars per million tokens of each kind, and what a call's tokens cost at it.

Invariants:
- token counts follow the log's usage: `prompt_tokens` counts every prompt token, cached ones
  and ones written to the cache included; each part is charged at its own price (a missing
  `cached_input` or `cache_write` price is `input`'s); more cached and written tokens than
  prompt ones leave no fresh input, never a negative one.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Price"]

_PER = 1_000_000


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None

    def cost_usd(
        self,
        prompt_tokens: int,
        completion_tokens: int,
        cached_tokens: int | None = None,
        cache_write_tokens: int | None = None,
    ) -> float:
        """What a call's tokens cost (the prompt's cached and cache-written parts at theirs)."""
        cached = cached_tokens or 0
        written = cache_write_tokens or 0
        fresh = max(prompt_tokens - cached - written, 0)
        cached_price = self.input if self.cached_input is None else self.cached_input
        write_price = self.input if self.cache_write is None else self.cache_write
        return (
            fresh * self.input
            + cached * cached_price
            + written * write_price
            + completion_tokens * self.output
        ) / _PER
