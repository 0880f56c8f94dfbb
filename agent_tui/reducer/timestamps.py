"""Event timestamps as numbers: the only clock the reducer and the dashboard's durations read.

Invariants:
- an event's `ts` is kept as the string the log holds; these functions parse it only when a
  duration is asked for (an answer ending an approval wait, a turn's duration, a live clock);
- results are whole milliseconds computed exactly (no float rounding), never negative for a
  span, and None, never an exception, when a timestamp cannot be read.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

_parse = datetime.fromisoformat
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MS = timedelta(milliseconds=1)


def epoch_ms(ts: str) -> int | None:
    """An event `ts` (`2026-11-29T22:17:03.120Z`) in milliseconds since the epoch; None if unreadable.

    A `ts` without a zone is read as local time.
    """
    try:
        moment = _parse(ts)
    except (ValueError, TypeError):
        return None
    if moment.tzinfo is None:
        moment = moment.astimezone()
    return (moment - _EPOCH) // _ONE_MS


def ms_between(start_ts: str, end_ts: str) -> int | None:
    """Milliseconds from one event `ts` to another (never negative); None if either is unreadable."""
    try:
        # One subtraction of the parsed times: the fold calls this for every answered approval.
        elapsed = _parse(end_ts) - _parse(start_ts)
    except (ValueError, TypeError):  # unreadable, or one with a zone and one without
        start, end = epoch_ms(start_ts), epoch_ms(end_ts)
        if start is None or end is None:
            return None
        return max(0, end - start)
    return max(0, elapsed // _ONE_MS)
