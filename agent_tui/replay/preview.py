"""A first look at the end of the logs, before the timeline has indexed them.

`preview_end` folds each log's first line (its `session.created`: name, parent) and its last
lines from a turn start on, in timestamp order: the sessions, their tree, their current turns and
the turns just before them are as the full fold will show them; the turn and event counts cover
only the lines read. It reads a bounded number of bytes at the end of each log, whatever its size, and
needs no index (it is what shows while the logs are counted and indexed).
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_tui.events import Event
from agent_tui.reducer import DashboardState, project_state
from agent_tui.replay.logfile import LogFile, decode_line

PREVIEW_EVENTS = 4_000
"""About how many lines a preview reads, over all files."""
_MIN_PER_FILE = 100
_BYTES_PER_LINE = 320  # a typical line; the preview reads the last count×this bytes


def preview_end(files: Sequence[LogFile], budget: int = PREVIEW_EVENTS) -> DashboardState:
    """The end of every log in `files`, folded from a bounded tail of each (see the docstring)."""
    per_file = max(_MIN_PER_FILE, budget // max(1, len(files)))
    picked: list[tuple[str, int, int, Event]] = []
    for file in files:
        picked += _tail(file, per_file)
    picked.sort(key=lambda item: item[:3])
    return project_state(event for *_key, event in picked)


def _tail(file: LogFile, count: int) -> list[tuple[str, int, int, Event]]:
    try:
        head, lines = file.read_tail(count * _BYTES_PER_LINE)
    except OSError:
        return []
    events = _decode(lines)
    start = next((k for k, event in enumerate(events) if event.type == "turn.started"), 0)
    created = [event for event in _decode([head]) + events[:start] if event.type == "session.created"]
    kept = created[:1] + events[start:]
    return [(event.ts, file.file_id, event.sequence, event) for event in kept]


def _decode(lines: list[bytes]) -> list[Event]:
    out = []
    for line in lines:
        decoded = decode_line(line)
        if type(decoded) is not str:
            out.append(decoded)
    return out  # type: ignore[return-value]
