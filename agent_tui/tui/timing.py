"""How times read on the dashboard: durations, clock times, and a turn's timing line.

Every time shown comes from event timestamps (through the reducer), and "now" is passed in: the
live dashboard passes the wall clock, a recorded view the time of its newest event, and a caller
that has no "now" passes None (a running turn then shows no live duration). So the same events
give the same words, live or replayed; only a running turn's clock moves.
"""

from __future__ import annotations

from datetime import datetime

from agent_tui.reducer import SessionView, TurnView, epoch_ms


def format_duration(ms: int | None) -> str:
    """`850 ms` → `0s`, `42 s` → `42s`, `3 min 5 s` → `3m05s`, `2 h 3 min` → `2h03m`."""
    if ms is None:
        return "?"
    seconds = max(0, ms) // 1000
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours}h{minutes:02d}m"
    return f"{hours // 24}d{hours % 24:02d}h"


def format_clock(ts: str, now_ms: int | None = None, *, dated: bool | None = None) -> str:
    """An event `ts` in local time: `14:02:11` on the day of `now_ms`, else `Nov 28 14:02`;
    `dated` chooses (`True`: `Nov 28 14:02`, `False`: `14:02:11`) whatever the day."""
    try:
        moment = datetime.fromisoformat(ts).astimezone()
    except ValueError:
        return "?"
    if dated is not None:
        return moment.strftime("%b %d %H:%M") if dated else moment.strftime("%H:%M:%S")
    if now_ms is not None:
        today = datetime.fromtimestamp(now_ms / 1000).astimezone().date()
        if moment.date() != today:
            return moment.strftime("%b %d %H:%M")
    return moment.strftime("%H:%M:%S")


def elapsed_ms(turn: TurnView, now_ms: int | None) -> int | None:
    """The turn's duration: from start to end, or (running) to `now_ms`."""
    return turn.duration_ms if turn.ended_ts is not None else waited_ms(turn.started_ts, now_ms)


def waited_ms(asked_ts: str, now_ms: int | None) -> int | None:
    """How long a request asked at `asked_ts` has waited by `now_ms`."""
    start = epoch_ms(asked_ts)
    if start is None or now_ms is None:
        return None
    return max(0, now_ms - start)


def oldest_wait(session: SessionView, now_ms: int | None) -> str:
    """How long the session's oldest waiting request has waited by `now_ms`: ` 42s` (empty when
    nothing waits, or there is no "now")."""
    oldest = min((view.asked_ts for view in session.pending.values()), default=None)
    waited = waited_ms(oldest, now_ms) if oldest is not None else None
    return f" {format_duration(waited)}" if waited is not None else ""


def turn_timing(turn: TurnView, now_ms: int | None, waiting_since: str | None = None) -> str:
    """`started 14:02:11 · running 1m12s · 20s waiting for approval` (or `took 3m05s`).

    `waiting_since`: the ask ts of a request of this turn still waiting (its wait so far counts).
    """
    bits = [f"started {format_clock(turn.started_ts, now_ms)}"] if turn.started_ts else []
    duration = elapsed_ms(turn, now_ms)
    if turn.ended_ts is None:
        bits.append(f"running {format_duration(duration)}" if duration is not None else "running")
    elif duration is not None:
        bits.append(f"took {format_duration(duration)}")
    waited = turn.approval_wait_ms
    if waiting_since is not None:
        waited += waited_ms(waiting_since, now_ms) or 0
    if waited >= 1000:  # a wait under a second is an answer, not a wait
        bits.append(f"{format_duration(waited)} waiting for approval")
    return " · ".join(bits)


def now_epoch_ms() -> int:
    """The wall clock, in the reducer's unit."""
    return int(datetime.now().timestamp() * 1000)
