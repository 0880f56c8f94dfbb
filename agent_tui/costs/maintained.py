"""The maintained price table: `genai-prices` (kept by the pydantic team), as its installed release ships it.

Invariants:
- `genai_prices` is imported on the first price asked of it, never when agent-tui starts: a
  dashboard, a replay or a hook that prices nothing does not pay for its table;
- prices are never fetched from the network: only the snapshot inside the installed package is
  read (its background updater, `UpdatePrices`, is never started); newer prices come with a newer
  release of the package (`pip install -U genai-prices`), which is how a user asks for them;
- a model is found by its name as written, then, for `VENDOR/MODEL`, as `MODEL` of that vendor,
  then as the bare `MODEL`; the vendor is otherwise the one the table's own rules give the name,
  so a model served through an OpenAI-compatible endpoint (`deepseek-chat`, `gemini-2.5-flash`
  through a custom base URL) is priced as its maker prices it; a name the table does not know has
  no price, never a guessed one;
- a call is priced at the price in force when it is priced (`clock`): the table knows prices that
  changed on a date or that depend on the hour (DeepSeek's off-peak rate) and on the prompt's
  length (tiers); a cost once written in a log is never priced again.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from genai_prices.types import ModelInfo, Provider

__all__ = ["MaintainedPrices"]


def _utc_now() -> datetime:
    return datetime.now(UTC)


class MaintainedPrices:
    """Prices from the installed `genai-prices` (see the module's rules).

    Args:
        clock: the moment a call is priced at (now, in UTC, unless a test fixes it).
    """

    __slots__ = ("_clock", "_found")

    def __init__(self, clock: Callable[[], datetime] = _utc_now) -> None:
        self._clock = clock
        self._found: dict[str, tuple[Provider, ModelInfo] | None] = {}

    def model(self, name: str) -> tuple[Provider, ModelInfo] | None:
        """The vendor and model the table has for `name`, or None when it knows none."""
        found = self._found
        if name in found:
            return found[name]
        model = found[name] = _search(name)
        return model

    def cost_usd(
        self,
        model: str,
        prompt_tokens: int,
        completion_tokens: int,
        cached_tokens: int | None = None,
        cache_write_tokens: int | None = None,
    ) -> float | None:
        """What a call of `model` costs now, or None. `prompt_tokens` counts every prompt token,
        the cached and cache-written ones included, as genai-prices' `input_tokens` does; a count
        of those larger than the prompt (Codex's logs have them) leaves no fresh input, as
        `Price.cost_usd` reads it."""
        found = self.model(model)
        if found is None:
            return None
        from genai_prices.types import Usage

        provider, info = found
        cached, written = cached_tokens or 0, cache_write_tokens or 0
        usage = Usage(  # a log that counts more cached tokens than prompt ones: none of it fresh
            input_tokens=max(prompt_tokens, cached + written),
            cache_read_tokens=cached,
            cache_write_tokens=written,
            output_tokens=completion_tokens,
        )
        try:
            priced = info.calc_price(usage, provider, genai_request_timestamp=self._clock())
        except (ValueError, ArithmeticError):  # a price the table cannot apply to these tokens
            return None
        return float(priced.total_price)


def _search(name: str) -> tuple[Provider, ModelInfo] | None:
    from genai_prices.data_snapshot import get_snapshot

    snapshot = get_snapshot()
    tries: list[tuple[str, str | None]] = [(name, None)]
    vendor, slash, bare = name.rpartition("/")
    if slash and bare:
        tries += [(bare, vendor.rsplit("/", 1)[-1]), (bare, None)]
    for ref, provider_id in tries:
        found = _find(snapshot, ref, provider_id)
        if found is not None:
            return found
    return None


def _find(snapshot: Any, ref: str, provider_id: str | None) -> tuple[Provider, ModelInfo] | None:
    try:
        provider, info = snapshot.find_provider_model(ref, None, provider_id, None)
    except LookupError:
        return None
    return provider, info
