"""`g` in the scrubber: go to a time, a sequence number, or a position.

- `22:17:05`, `22:17`, `22:17:05.877` (the day of the event at the cursor) or a full
  `2026-11-29T22:17:05Z`: the first event at or after that time;
- `57`: the event with sequence 57 of the selected session; `explorer:57` or `sess_ab12:57` of
  the session with that agent name, title or id prefix;
- `#1200`: position 1,200 (that many events applied).

`goto_position` answers with a position, or raises `GotoError` with a sentence for the user.
"""

from __future__ import annotations

import re

from agent_tui.replay.logfile import LogFile
from agent_tui.replay.timeline import Timeline

_TIME = re.compile(r"^(?:(\d{4}-\d{2}-\d{2})[T ])?(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?Z?$")


class GotoError(ValueError):
    """What was typed cannot be found or understood (the message says which)."""


def goto_position(timeline: Timeline, text: str, *, selected: str | None, cursor: int) -> int:
    """The position `text` names (see the module docstring)."""
    text = text.strip()
    if not text:
        raise GotoError("type a time (22:17:05), a sequence (57, explorer:57) or a position (#1200)")
    if text.startswith("#"):
        try:
            return max(0, min(int(text[1:].replace(",", "")), timeline.total))
        except ValueError:
            raise GotoError(f"{text}: a position is # and a number") from None
    match = _TIME.match(text)
    if match is not None:
        return _time_position(timeline, match, cursor)
    who, colon, number = text.rpartition(":")
    if not number.isdigit():
        raise GotoError(f"{text}: not a time, a sequence or a position")
    file = _session_file(timeline, who if colon else None, selected)
    return _sequence_position(timeline, file, int(number))


def _time_position(timeline: Timeline, match: re.Match[str], cursor: int) -> int:
    day, hours, minutes, seconds, millis = match.groups()
    if day is None:
        anchor = timeline.event_at(max(0, cursor - 1)) or timeline.event_at(0)
        if anchor is None:
            raise GotoError("no events yet")
        day = anchor.ts[:10]
    wanted = f"{day}T{int(hours):02d}:{minutes}:{seconds or '00'}.{(millis or '0').ljust(3, '0')}Z"
    # Events are in time order: bisect on the time of the event at each probe.
    low, high = 0, timeline.total
    while low < high:
        middle = (low + high) // 2
        event = timeline.event_at(middle)
        ts = event.ts if event is not None else _ts_before(timeline, middle)
        if ts < wanted:
            low = middle + 1
        else:
            high = middle
    if low >= timeline.total:
        raise GotoError(f"no event at or after {wanted}")
    return low + 1


def _ts_before(timeline: Timeline, index: int) -> str:
    """The time of the nearest good event before `index` (a corrupt line has none of its own)."""
    for earlier in range(index - 1, max(-1, index - 64), -1):
        event = timeline.event_at(earlier)
        if event is not None:
            return event.ts
    return ""


def _session_file(timeline: Timeline, who: str | None, selected: str | None) -> LogFile:
    if who is None:
        if selected is None:
            raise GotoError("select a session first, or type NAME:SEQUENCE")
        file = timeline.file_of_session(selected)
        if file is None:
            raise GotoError(f"{selected}: no log")
        return file
    wanted = who.lower()
    for file in timeline.files:
        names = [name.lower() for name in (file.agent_name, file.title) if name]
        if (file.session_id or "").lower().startswith(wanted) or wanted in names:
            return file
    raise GotoError(f"{who}: no such session")


def _sequence_position(timeline: Timeline, file: LogFile, sequence: int) -> int:
    with timeline.lock:
        lines = timeline.positions_of(file.file_id, timeline.total)
    count = len(lines)
    # Sequence n is line n-1 of a clean log; after a corrupt line, search the lines around it.
    guess = sequence - 1
    candidates = [guess] if 0 <= guess < count else []
    candidates += [line for line in range(max(0, guess - 32), min(count, guess + 33)) if line != guess]
    for line in candidates:
        event = timeline.event_at(lines[line])
        if event is not None and event.sequence == sequence:
            return lines[line] + 1
    last = timeline.event_at(lines[count - 1]) if count else None
    top = last.sequence if last is not None else 0
    raise GotoError(f"{file.path.name}: no sequence {sequence} (it has 1 to {top})")
