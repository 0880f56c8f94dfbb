"""How money and its gaps are said: `$0.42`, `$0.0016`, `price unknown`, one wording everywhere.

Invariants:
- an amount is never rounded to a misleading zero: below a cent it keeps four decimals (below
  a hundredth of a cent it says `<$0.0001`), and a
  spend with tokens but no price says `price unknown`, never `$0.00`;
- a spend that is only partly priced says so (`$0.42 + price unknown`), so a total is never
  mistaken for the whole when some model's price was not known.
"""

from __future__ import annotations

__all__ = ["PRICE_UNKNOWN", "cost_text", "usd_text"]

PRICE_UNKNOWN = "price unknown"


def usd_text(amount: float) -> str:
    """Dollars: `$1,234.50`, `$0.42`, `$0.015` and `$0.0016` (under ten cents, up to four
    decimals), `<$0.0001`, `$0.00` (nothing)."""
    if 0 < amount < 0.0001:
        return "<$0.0001"
    if amount >= 0.1 or amount == 0:
        return f"${amount:,.2f}"
    text = f"{amount:.4f}".rstrip("0")
    if len(text.split(".")[1]) < 2:
        text = f"{amount:.2f}"
    return f"${text}"


def cost_text(known_usd: float | None, unpriced_tokens: int) -> str:
    """What a spend cost: its known dollars, `price unknown` when none of it had a price, and
    `+ price unknown` when part of it had none.

    Args:
        known_usd: the priced part's dollars (None: nothing had a price).
        unpriced_tokens: tokens of the spend that had no price.
    """
    if known_usd is None:
        return PRICE_UNKNOWN
    if unpriced_tokens:
        return f"{usd_text(known_usd)} + {PRICE_UNKNOWN}"
    return usd_text(known_usd)
