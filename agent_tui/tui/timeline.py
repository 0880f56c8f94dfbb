"""The replay timeline: recorded events in one order, and the dashboard state at any position.

Invariants:
- events of several session logs are ordered by (ts, sessionId, sequence), so a replay of a
  sessions directory reads like the run did;
- position `n` means "the first n events applied": `state_at(n)` equals
  `project_state(events[:n])`, built with `apply_event` from the nearest checkpoint (a
  `DashboardState.copy()` every `CHECKPOINT_EVERY` events), or by folding on from the current
  position when that is closer, so scrubbing costs at most a few thousand folds;
- a log that stops making sense (a corrupt line, a broken sequence) keeps every event before the
  bad line; the error names `file:line` and that file is not read further;
- this module knows nothing of Textual (the screen drives it; the loader runs it in a thread).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable
from pathlib import Path

from agent_tui.events import Event
from agent_tui.reducer import DashboardState, apply_event
from agent_tui.store import EventLogDecodeError, JsonlEventLog

CHECKPOINT_EVERY = 2_000
"""A checkpoint (a copy of the state) is kept every this-many events."""

Progress = Callable[[str, int, int], None]
"""`progress(stage, done, total)`: how far loading got (stage is "reading" or "indexing")."""

_PROGRESS_EVERY = 5_000


def event_order(event: Event) -> tuple[str, str, int]:
    """The timeline's sort key: (ts, sessionId, sequence)."""
    return (event.ts, event.session_id, event.sequence)


class LogReader:
    """One session log, read once and then again as it grows.

    Args:
        path: the `.jsonl` file (it may not exist yet, or be empty).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.log = JsonlEventLog(path)
        self.lines = 0
        self.last_sequence = 0
        self.error: str | None = None

    def line_count(self) -> int:
        """Complete lines on disk as of now (cheap: counts newlines)."""
        self.log.refresh()
        return len(self.log)

    def read_all(self, progress: Callable[[int], None] | None = None) -> list[Event]:
        """Every event up to the end of the file, or up to the first bad line."""
        events: list[Event] = []
        try:
            for event in self.log.replay():
                events.append(event)
                if progress is not None and len(events) % _PROGRESS_EVERY == 0:
                    progress(len(events))
        except EventLogDecodeError as error:
            self.error = str(error)
        except OSError as error:
            self.error = f"{self.path}: {error.strerror or error}"
        self.lines = len(events)
        self.last_sequence = events[-1].sequence if events else 0
        return events

    def read_new(self) -> list[Event]:
        """Events appended since the last read (none once the log has gone bad)."""
        if self.error is not None:
            return []
        new: list[Event] = []
        try:
            count = self.line_count()
            for number in range(self.lines, count):
                event = self.log.read(number)
                expected = self.last_sequence + 1
                if event.sequence != expected:
                    raise EventLogDecodeError(
                        self.path,
                        number + 1,
                        f"sequence {event.sequence} follows {self.last_sequence} (expected {expected})",
                    )
                new.append(event)
                self.lines = number + 1
                self.last_sequence = event.sequence
        except EventLogDecodeError as error:
            self.error = str(error)
        except OSError as error:
            self.error = f"{self.path}: {error.strerror or error}"
        return new


class ReplayTimeline:
    """Events in timeline order plus checkpoints; answers "what did the dashboard show at n?"."""

    def __init__(self, events: Iterable[Event] = ()) -> None:
        self.events: list[Event] = sorted(events, key=event_order)
        self._keys = [event_order(event) for event in self.events]
        self._checkpoints: list[DashboardState] = [DashboardState()]
        self._state = DashboardState()
        self._position = 0

    @property
    def total(self) -> int:
        return len(self.events)

    def event_at(self, position: int) -> Event | None:
        """The last event applied at `position` (None at 0)."""
        return self.events[position - 1] if 0 < position <= len(self.events) else None

    def position_of(self, event: Event | None) -> int:
        """The position right after `event` (0 for None): where a cursor on it stays."""
        if event is None:
            return 0
        return bisect_right(self._keys, event_order(event))

    def state_at(self, position: int, progress: Progress | None = None) -> DashboardState:
        """The state after the first `position` events (clamped to 0..total).

        The returned state belongs to the timeline: read it, do not change it; it stays valid
        until the next call.
        """
        position = max(0, min(position, len(self.events)))
        if position == self._position:
            return self._state
        start = self._position
        base = self._nearest_checkpoint(position)
        if not (start < position and start >= base * CHECKPOINT_EVERY):
            start = base * CHECKPOINT_EVERY
            self._state = self._checkpoints[base].copy()
        self._fold(start, position, progress)
        return self._state

    def _nearest_checkpoint(self, position: int) -> int:
        return min(position // CHECKPOINT_EVERY, len(self._checkpoints) - 1)

    def _fold(self, start: int, end: int, progress: Progress | None) -> None:
        state = self._state
        events = self.events
        checkpoints = self._checkpoints
        for index in range(start, end):
            if index % CHECKPOINT_EVERY == 0 and index // CHECKPOINT_EVERY == len(checkpoints):
                checkpoints.append(state.copy())
            apply_event(state, events[index])
            if progress is not None and index % _PROGRESS_EVERY == 0:
                progress("indexing", index - start, end - start)
        self._position = end

    def extend(self, new: Iterable[Event]) -> int:
        """Add events read later (follow mode). Returns the first position whose event changed.

        New events usually sort after every known one; one that sorts earlier (a log that
        appeared late) is inserted in order, and the checkpoints after it are dropped.
        """
        batch = sorted(new, key=event_order)
        if not batch:
            return len(self.events)
        first_key = event_order(batch[0])
        if not self._keys or first_key >= self._keys[-1]:
            changed = len(self.events)
            self.events.extend(batch)
            self._keys.extend(event_order(event) for event in batch)
            return changed
        changed = len(self.events)
        for event in batch:
            key = event_order(event)
            index = bisect_right(self._keys, key)
            self._keys.insert(index, key)
            self.events.insert(index, event)
            changed = min(changed, index)
        keep = changed // CHECKPOINT_EVERY + 1
        del self._checkpoints[keep:]
        if self._position > changed:
            self._state = self._checkpoints[-1].copy()
            self._position = (len(self._checkpoints) - 1) * CHECKPOINT_EVERY
        return changed


def load_timeline(
    readers: list[LogReader], progress: Progress | None = None
) -> tuple[ReplayTimeline, list[str]]:
    """Read every log, order the events, and fold them once (building every checkpoint).

    Returns:
        The timeline (its current position is the end) and one `file:line: reason` per bad log.
    """
    totals = [reader.line_count() for reader in readers]
    grand_total = sum(totals)
    events: list[Event] = []
    for reader in readers:
        before = len(events)

        def report(count: int, before: int = before) -> None:
            if progress is not None:
                progress("reading", before + count, grand_total)

        events += reader.read_all(report)
        report(len(events) - before)
    timeline = ReplayTimeline(events)
    timeline.state_at(timeline.total, progress)
    if progress is not None:
        progress("indexing", timeline.total, timeline.total)
    return timeline, [reader.error for reader in readers if reader.error is not None]
