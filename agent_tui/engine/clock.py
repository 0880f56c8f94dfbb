"""Timestamps and ids for stored events.

Invariants:
- `utc_now()` is UTC with milliseconds (`2026-11-29T22:17:03.120Z`), the log's `ts` format;
  it formats the seconds once per second, since the engine stamps tens of thousands of events
  a second;
- `new_id(prefix)` is `prefix_` plus 12 random hex digits: unique enough for sessions, turns,
  tool calls and permission requests, and never derived from anything secret.
"""

from __future__ import annotations

import secrets
import time

_MILLIS = tuple(f".{milli:03d}Z" for milli in range(1000))
_second_cache: tuple[int, str] = (-1, "")


def utc_now() -> str:
    """UTC time with milliseconds, e.g. `2026-11-29T22:17:03.120Z`."""
    global _second_cache
    second, milli = divmod(time.time_ns() // 1_000_000, 1000)
    cached_second, text = _second_cache
    if cached_second != second:
        text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        _second_cache = (second, text)
    return text + _MILLIS[milli]


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(6)}"
