"""A log that ends in a torn line, as a reader tells the user about it.

A torn final line (bytes after the last newline: a process died in the middle of a write) is
never an event, so readers leave it out; but they say so, once, as
`FILE:LINE: a torn final line (N bytes without a newline) was left out`, so that a turn that
shows as running forever has its reason next to it.

Only a reader that is done with a file may call its tail torn: while a log is followed, the
bytes after its last newline may be a line still being written, and they wait for their newline.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from agent_tui.reducer import DashboardState
from agent_tui.replay.logfile import LogFile
from agent_tui.store import JsonlEventLog, LineIndex, TornLine


def left_out(torn: TornLine) -> str:
    """How a reader says it left `torn` out."""
    return f"{torn.path}:{torn.line_number}: a torn final line ({torn.size} bytes without a newline) was left out"


def torn_line(index: LineIndex) -> TornLine | None:
    """The torn tail of the file `index` counts (looking at what was appended first), or None."""
    index.extend()
    return index.torn_line()


def torn_lines(logs: Iterable[JsonlEventLog]) -> list[TornLine]:
    """The torn tails of `logs`, in their order (an unreadable file is left to its reader).

    A log whose last byte is a newline has none, and is not indexed to learn it (a replay, done
    with the log, would otherwise read the whole file a second time)."""
    found = []
    for log in logs:
        try:
            tail = None if _ends_cleanly(log.path) else torn_line(log.index)
        except OSError:
            continue
        if tail is not None:
            found.append(tail)
    return found


def _ends_cleanly(path: Path) -> bool:
    """Whether the file at `path` is empty or ends in a newline (missing: it has no torn tail)."""
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            if size == 0:
                return True
            handle.seek(size - 1)
            return handle.read(1) == b"\n"
    except FileNotFoundError:
        return True


def torn_tail_notices(files: Iterable[LogFile], end: DashboardState) -> list[str]:
    """What the scrubber says of each indexed log that ends in a torn line, given the state at
    the timeline's end: where the line is, and whether the session's last turn was left running
    by it (it never gets its `turn.completed`, so it would show as running forever)."""
    notices = []
    for file in files:
        if file.index is None:
            continue  # unreadable: reported as such
        try:
            tail = torn_line(file.index)
        except OSError:
            continue
        if tail is None:
            continue
        session = end.sessions.get(file.session_id or "")
        turns = session.turns if session is not None else []
        unfinished = bool(turns) and turns[-1].stop_reason is None
        why = "; the log ends there: its last turn never completed" if unfinished else ""
        notices.append(left_out(tail) + why)
    return notices
