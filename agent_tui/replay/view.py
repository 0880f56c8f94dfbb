"""The state at one position of a timeline: what the replay screen shows.

Invariants:
- `seek(p)` leaves `state` equal to the reducer's state after the first p events of the
  timeline, except that turns not on screen may be header copies (see
  `agent_tui.replay.checkpoints`); `seek(p, hydrate_all=True)` has no header copies at all;
- a seek costs one checkpoint restore plus at most `timeline.every` events read from disk, or
  only the events between the current position and p when moving forward a little;
- the turns of the selected session that the detail shows in full (`full_turns`) are never
  header copies;
- a `Snapshot` made by the indexing thread (the end of the timeline, already folded) is adopted
  without reading anything.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from agent_tui.events import Event
from agent_tui.reducer import DashboardState, fold_into
from agent_tui.replay.checkpoints import SessionMark, restore
from agent_tui.replay.kinds import CORRUPT
from agent_tui.replay.logfile import decode_trusted
from agent_tui.replay.timeline import Timeline

FULL_TURNS = 3
"""Turns of the selected session made whole on every seek (the current one and the two before
it: what a detail panel usually shows; it asks for more when it shows more)."""


@dataclass(frozen=True)
class Snapshot:
    """The timeline's end as the indexing thread folded it, ready for the screen."""

    generation: int
    position: int
    state: DashboardState
    marks: dict[str, SessionMark]
    lines: dict[int, tuple[int, int]]  # file id → (lines folded, byte offset after them)
    event: Event | None
    timeline: Timeline | None = field(default=None, compare=False, repr=False)
    """The timeline it is the end of (a screen that switches timelines drops another's ends)."""


def end_snapshot(timeline: Timeline) -> Snapshot:
    """The state after every event of `timeline` (call from the thread that indexes it)."""
    with timeline.lock:
        state, marks, lines, event = timeline.end_parts()
        for session_id, mark in marks.items():
            session = state.sessions.get(session_id)
            if session is not None and mark.regular:
                session.turns = mark.archive[: mark.count] + session.turns
        return Snapshot(timeline.generation, timeline.total, state, marks, lines, event, timeline)


class TimelineView:
    """A cursor on a timeline with the state at it.

    Args:
        timeline: the timeline (shared with the thread that indexes and follows it).
        full_turns: how many of the selected session's last turns to show whole.
    """

    def __init__(self, timeline: Timeline, *, full_turns: int = FULL_TURNS) -> None:
        self.timeline = timeline
        self.full_turns = full_turns
        self.position = 0
        self.state = DashboardState()
        self.event: Event | None = None  # the last event applied (None at 0 or on a corrupt line)
        self._marks: dict[str, SessionMark] = {}
        self._whole: set[str] = set()  # sessions rebuilt whole after they became irregular
        self._base = 0  # the position of the checkpoint or snapshot the state grew from
        self._lines: dict[int, tuple[int, int]] = {}
        self._generation = -1
        self._anchor: tuple[int, int] | None = None

    @property
    def generation_seen(self) -> int:
        """The timeline's generation when the view last moved (another means it was rebuilt)."""
        return self._generation

    def anchor(self) -> tuple[int, int] | None:
        """(file id, line) of the event at the cursor when it last moved: where to stay when the
        timeline is rebuilt around it (`Timeline.position_of`)."""
        return self._anchor

    def _note_anchor(self) -> None:
        timeline = self.timeline
        index = self.position - 1
        if 0 <= index < timeline.total:
            file_id = timeline.file_of[index]
            self._anchor = (file_id, timeline.lines_of(file_id, index))
        else:
            self._anchor = None

    def adopt(self, snapshot: Snapshot, selected: str | None = None) -> DashboardState:
        """Show `snapshot` (if it still matches the timeline)."""
        with self.timeline.lock:
            if snapshot.generation != self.timeline.generation:
                return self.seek(snapshot.position, selected)
            self.position = self._base = snapshot.position
            self.state = snapshot.state
            self._marks = snapshot.marks
            self._lines = dict(snapshot.lines)
            self._whole = set()
            self._generation = snapshot.generation
            self.event = snapshot.event
            self._note_anchor()
            self.hydrate(selected)
            return self.state

    def seek(
        self, position: int, selected: str | None = None, *, hydrate_all: bool = False
    ) -> DashboardState:
        """Move to `position` (clamped to what is indexed) and return the state there."""
        timeline = self.timeline
        with timeline.lock:
            position = max(0, min(position, timeline.total))
            every = timeline.every
            number = timeline.checkpoint_before(position)
            from_checkpoint = position - timeline.checkpoints[number].position
            forward = (
                self._generation == timeline.generation
                and self.position <= position
                and position - self.position <= from_checkpoint + every // 4
                and position < self._base + 2 * every
            )
            if not forward:
                self._restore(number)
            if position > self.position:
                self._fold(position)
            elif position != self.position or self.event is None:
                self.position = position
                self.event = timeline.event_at(position - 1) if position else None
            self._note_anchor()
            if hydrate_all:
                for session_id in self.state.sessions:
                    self._hydrate(session_id, 1 << 62)
            else:
                self.hydrate(selected)
            return self.state

    def hydrate(self, session_id: str | None, last: int | None = None) -> None:
        """Make the last `last` (default `full_turns`) turns of `session_id` whole."""
        if session_id is not None:
            with self.timeline.lock:
                self._hydrate(session_id, self.full_turns if last is None else last)

    def _hydrate(self, session_id: str, last: int) -> None:
        mark = self._marks.get(session_id)
        if mark is None or session_id in self._whole or self._generation != self.timeline.generation:
            return  # a rebuilt timeline may have cut the archive these marks share: move first
        end = self._lines.get(mark.file_id, (0, 0))[0]
        self.timeline.hydrator.hydrate(self.state, session_id, mark, last, end)

    def _restore(self, number: int) -> None:
        timeline = self.timeline
        checkpoint = timeline.checkpoints[number]
        self.state = restore(checkpoint, timeline.files, timeline.corrupt_lines, expand=True)
        self._marks = checkpoint.sessions
        self._whole = set()
        self._lines = {
            file_id: (cursor.lines, cursor.offset) for file_id, cursor in enumerate(checkpoint.files)
        }
        self.position = self._base = checkpoint.position
        self._generation = timeline.generation
        self.event = None

    def _fold(self, end: int) -> None:
        """Apply the events from the current position to `end`, read from disk."""
        timeline = self.timeline
        start = self.position
        file_of = timeline.file_of
        kinds = timeline.kinds
        lines = self._lines
        readers = {}
        for file_id in set(file_of[start:end]):
            line, offset = lines.get(file_id, (0, 0))
            count = timeline.lines_of(file_id, end) - line
            readers[file_id] = timeline.files[file_id].iter_lines_at(offset, count)
        state = self.state
        event: Event | None = None

        def events() -> Iterator[Event]:
            nonlocal event
            for index in range(start, end):
                file_id = file_of[index]
                raw = next(readers[file_id])
                line, offset = lines.get(file_id, (0, 0))
                lines[file_id] = (line + 1, offset + len(raw) + 1)
                if kinds[index] == CORRUPT:
                    event = None
                    continue
                event = decode_trusted(raw)
                if event is not None:  # (None: the file changed under us; the follower will notice)
                    yield event

        fold_into(state, events())  # one fold over the run, not one per event
        self.event = event
        self.position = end
        for session_id, index in timeline.irregular_at.items():
            if self._base <= index < end and session_id in state.sessions and session_id not in self._whole:
                state.sessions[session_id].turns = timeline.full_turns(session_id, end)
                self._whole.add(session_id)
