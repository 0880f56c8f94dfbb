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
  no price, never a guessed one; nor does a name longer than `LONGEST_NAME`, and at most
  `REMEMBERED` names' look-ups are kept (an agent or a log names its model: anything);
- a call is priced at the price in force when it is priced (`clock`): the table knows prices that
  changed on a date or that depend on the hour (DeepSeek's off-peak rate) and on the prompt's
  length (tiers); a cost once written in a log is never priced again; a model whose price never
  changes does not ask the clock;
- a model whose price is tokens alone (nearly all) has its four token prices read once as floats,
  its `Price` made once for each band of prompt lengths between its tiers, and charged by
  `Price.cost_usd`, the same arithmetic as the user's own prices (the library's
  takes 200 µs a call; an import prices one per source message); any other is priced by the
  library itself; a test holds the two equal for every model of the table; a name whose price
  never changes keeps its rates (`fixed`), so its next call goes straight to the arithmetic.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from agent_tui.costs.price import Price

if TYPE_CHECKING:
    from genai_prices.types import ModelInfo, Provider

__all__ = ["LONGEST_NAME", "REMEMBERED", "MaintainedPrices"]

LONGEST_NAME = 256
"""A longer model name (an agent or a log may say anything) has no price and costs no search."""

REMEMBERED = 4096
"""The most names whose look-up is remembered: an agent that names a new model on every call
cannot grow the memory; the names past it are looked up each time."""


def _utc_now() -> datetime:
    return datetime.now(UTC)


class MaintainedPrices:
    """Prices from the installed `genai-prices` (see the module's rules).

    Args:
        clock: the moment a call is priced at (now, in UTC, unless a test fixes it).
    """

    __slots__ = ("_clock", "_fixed", "_found")

    def __init__(self, clock: Callable[[], datetime] = _utc_now) -> None:
        self._clock = clock
        self._found: dict[str, tuple[Provider, ModelInfo] | None] = {}
        self._fixed: dict[str, _Banded] = {}  # names whose price never changes: their rates

    def fixed(self, name: str) -> bool:
        """Whether `name` was priced already at token rates that never change (the same tokens
        then always cost the same)."""
        return name in self._fixed

    def model(self, name: str) -> tuple[Provider, ModelInfo] | None:
        """The vendor and model the table has for `name`, or None when it knows none."""
        found = self._found
        if name in found:
            return found[name]
        model = _search(name) if len(name) <= LONGEST_NAME else None
        if len(found) < REMEMBERED:
            found[name] = model
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
        cached, written = cached_tokens or 0, cache_write_tokens or 0
        prompt = max(prompt_tokens, cached + written)  # more cached than prompt: none of it fresh
        fixed = self._fixed.get(model)
        if fixed is not None:
            return fixed.price(prompt).cost_usd(prompt, completion_tokens, cached, written)
        found = self.model(model)
        if found is None:
            return None
        provider, info = found
        prices = info.prices
        now = None
        if type(prices) is list:  # prices that change on a date or with the hour: asked of the clock
            now = self._clock()
            prices = info.get_prices(now)
        banded = _token_rates(prices)
        if banded is not None:
            if now is None and len(self._fixed) < REMEMBERED:
                self._fixed[model] = banded
            return banded.price(prompt).cost_usd(prompt, completion_tokens, cached, written)
        from genai_prices.types import Usage

        usage = Usage(
            input_tokens=prompt,
            cache_read_tokens=cached,
            cache_write_tokens=written,
            output_tokens=completion_tokens,
        )
        try:
            priced = info.calc_price(usage, provider, genai_request_timestamp=now or self._clock())
        except (ValueError, ArithmeticError):  # a price the table cannot apply to these tokens
            return None
        return float(priced.total_price)


Rate = tuple[float, tuple[tuple[int, float], ...]]
"""A price per million tokens: its base, and the tiers (from how many prompt tokens, what price
for all of them) that replace it."""

TokenRates = tuple[Rate, Rate | None, Rate | None, Rate]
"""Input, cache read, cache write and output (a cache price None: `Price`'s rule, input's)."""

_TOKEN_PRICES = ("input_mtok", "cache_read_mtok", "cache_write_mtok", "output_mtok")


class _Banded:
    """A model's four token rates and the `Price` they make for each band of prompt lengths
    between their tiers' starts, each made once (an import prices every source message)."""

    __slots__ = ("_prices", "_starts", "rates")

    def __init__(self, rates: TokenRates) -> None:
        self.rates = rates
        self._starts = sorted({start for rate in rates if rate is not None for start, _ in rate[1]})
        self._prices: dict[int, Price] = {}

    def price(self, prompt: int) -> Price:
        """The price of a call of `prompt` tokens (every tier whose start it is above applies)."""
        band = bisect_left(self._starts, prompt)  # how many starts lie below the prompt
        price = self._prices.get(band)
        if price is None:
            input_rate, read_rate, write_rate, output_rate = self.rates
            price = self._prices[band] = Price(
                _at(input_rate, prompt),
                _at(output_rate, prompt),
                None if read_rate is None else _at(read_rate, prompt),
                None if write_rate is None else _at(write_rate, prompt),
            )
        return price


_rates_of: dict[int, tuple[Any, _Banded | None]] = {}


def _token_rates(prices: Any) -> _Banded | None:
    """The four token prices of a genai-prices `ModelPrice` as plain floats, remembered; None when
    it charges anything else for a text call's tokens (the library's own arithmetic then)."""
    known = _rates_of.get(id(prices))
    if known is not None and known[0] is prices:
        return known[1]
    charged = {key for key, value in vars(prices).items() if value is not None and not key.startswith("_")}
    simple = "input_mtok" in charged and "output_mtok" in charged and charged <= _PLAIN_KEYS
    banded: _Banded | None = None
    if simple:
        input_, read, write, output = (getattr(prices, key, None) for key in _TOKEN_PRICES)
        banded = _Banded((_rate(input_), _rate_or_none(read), _rate_or_none(write), _rate(output)))
    _rates_of[id(prices)] = (prices, banded)
    return banded


_PLAIN_KEYS = frozenset(_TOKEN_PRICES) | {
    "web_searches_kcount",
    "storage_searches_kcount",
    "cache_write_1h_mtok",
}
"""Prices a text call's tokens leave at nothing (searches, the hour-long cache none of our
providers asks for), so the four token prices are the whole of its cost."""


def _rate_or_none(value: Any) -> Rate | None:
    return None if value is None else _rate(value)


def _rate(value: Any) -> Rate:
    tiers = getattr(value, "tiers", None)
    if tiers is None:
        return float(value), ()
    return float(value.base), tuple((int(tier.start), float(tier.price)) for tier in tiers)


def _at(rate: Rate, prompt: int) -> float:
    """`rate` for a call of `prompt` tokens: the highest tier the prompt is above (all its
    tokens at that tier's price, as the vendors charge), else the base."""
    price, tiers = rate
    for start, tier_price in tiers:
        if prompt > start:
            price = tier_price
    return price


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
