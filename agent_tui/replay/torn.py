"""A log that ends in a torn line, as a reader tells the user about it.

A torn final line (bytes after the last newline: a process died in the middle of a write) is
never an event, so readers leave it out; but they say so, once, as
`FILE:LINE: a torn final line (N bytes without a newline) was left out`, so that a turn that
shows as running forever has its reason next to it.

Only a reader that is done with a file may call its tail torn: while a log is followed, the
bytes after its last newline may be a line still being written, and they wait for their newline.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from agent_tui.reducer import DashboardState
from agent_tui.replay.logfile import LogFile
from agent_tui.store import LineIndex


@dataclass(frozen=True)
class TornTail:
    """The torn last line of a log: which file, its 1-based line number, how many bytes."""

    path: Path
    line_number: int
    size: int

    def describe(self) -> str:
        return (
            f"{self.path}:{self.line_number}: a torn final line "
            f"({self.size} bytes without a newline) was left out"
        )


def torn_tail(index: LineIndex) -> TornTail | None:
    """The torn tail of the file `index` counts (looking at what was appended first), or None."""
    index.extend()
    if not index.has_torn_tail:
        return None
    return TornTail(index.path, index.line_count + 1, index.size - index.complete_bytes())


def torn_tails(paths: Iterable[Path]) -> list[TornTail]:
    """The torn tails of `paths`, in their order (an unreadable file is left to its reader)."""
    found = []
    for path in paths:
        try:
            tail = torn_tail(LineIndex(path))
        except OSError:
            continue
        if tail is not None:
            found.append(tail)
    return found


def torn_tail_notices(files: Iterable[LogFile], end: DashboardState) -> list[str]:
    """What the scrubber says of each indexed log that ends in a torn line, given the state at
    the timeline's end: where the line is, and whether the session's last turn was left running
    by it (it never gets its `turn.completed`, so it would show as running forever)."""
    notices = []
    for file in files:
        if file.index is None:
            continue  # unreadable: reported as such
        try:
            tail = torn_tail(file.index)
        except OSError:
            continue
        if tail is None:
            continue
        session = end.sessions.get(file.session_id or "")
        turns = session.turns if session is not None else []
        unfinished = bool(turns) and turns[-1].stop_reason is None
        why = "; the log ends there: its last turn never completed" if unfinished else ""
        notices.append(tail.describe() + why)
    return notices
