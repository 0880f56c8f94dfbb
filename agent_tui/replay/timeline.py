"""The lazy replay timeline: where each event of many logs sits in one order, without the events.

Invariants:
- position `p` means "the first p events applied"; event `i` (0-based) is line
  `lines_of(file_of[i])` of its file: the timeline keeps, per event, its file (4 bytes), its kind
  (1 byte) and per file the event index of each line (4 bytes), plus the sparse line index of
  each file: never the events themselves;
- the order is the merge order of `agent_tui.replay.merge` (timestamp, causal, stable) and never
  reorders one file's lines;
- every `every` events there is a `Checkpoint` (see `agent_tui.replay.checkpoints`; the spacing
  widens once there are many logs): the state at any position is the nearest checkpoint at or
  before it plus the events after it, read from disk again, and equals `project_state` of the
  first p events;
- a corrupt line keeps its place (kind `CORRUPT`, a failure mark, `FILE:LINE: reason` in
  `errors`) and folds as nothing: the events after it replay;
- indexing (`index_some`) and following (`poll`) change the timeline under `lock`, a few thousand
  events at a time, so a reader (the screen) never waits long; this module knows nothing of
  Textual.

Following: new logs in the watched directory join; appended complete lines are merged in; an
event that arrives more than `LATE_SLACK_MS` older than the newest one shown, or a file that was
truncated or replaced, makes the timeline index again from the checkpoint before it (events less
late than that keep the order they arrived in).

It runs a little over our usual length: indexing and following write the same arrays under the
same lock, and splitting them would put that lock's rules in two places.
"""

from __future__ import annotations

import os
import threading
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from agent_tui.events import Event
from agent_tui.reducer import DashboardState, TurnView, apply_event, fold_into
from agent_tui.replay.checkpoints import (
    Checkpoint,
    Hydrator,
    SessionMark,
    SessionTrack,
    fold_session,
    make_checkpoint,
    restore,
)
from agent_tui.replay.kinds import CORRUPT, KIND_NAMES, MARK_OF_KIND, MARKS, UNKNOWN, Mark, kind_of
from agent_tui.replay.logfile import Entry, FileCursor, LogFile, decode_line
from agent_tui.replay.merge import START_KEY, Key, Merger

CHECKPOINT_EVERY = 1_000
"""Events between checkpoints: a seek folds at most this many."""
CHECKPOINT_EVERY_MANY_LOGS = 4_000
"""The same over more than `MANY_LOGS` logs: a checkpoint keeps a small record per session, and
its restore rebuilds each running turn, so many sessions make checkpoints dearer."""
MANY_LOGS = 16
INDEX_BATCH = 1_024
"""Events folded per hold of the lock while indexing or following: the screen waits at most
that long (a few milliseconds) to read the timeline."""
_KIND_CODE = {name: code for code, name in enumerate(KIND_NAMES)}
_REFINED_TYPES = frozenset(name.split(":")[0] for name in KIND_NAMES if ":" in name)
LATE_SLACK_MS = 1_000
"""In follow mode, an event less late than this keeps its arrival order (see the docstring)."""


@dataclass
class PollResult:
    """What one look at the logs found."""

    added: int = 0  # events now in the timeline that were not before
    rewound_to: int | None = None  # the timeline was rebuilt from this position on
    notices: list[str] = field(default_factory=list)  # files that were truncated, replaced, …
    new_files: int = 0

    def __bool__(self) -> bool:
        return bool(self.added or self.rewound_to is not None or self.notices or self.new_files)


class Timeline:
    """Many session logs as one indexed, checkpointed sequence of events.

    Args:
        paths: the log files (in session-id order: that order breaks timestamp ties).
        watch_dir: a directory whose new `*.jsonl` files join when following.
        every: events between checkpoints (default: by the number of logs so far, see above).
    """

    def __init__(
        self, paths: Iterable[Path], *, watch_dir: Path | None = None, every: int | None = None
    ) -> None:
        self.lock = threading.RLock()
        self._every = every
        self.watch_dir = watch_dir
        self.files: list[LogFile] = []
        self._by_path: dict[Path, LogFile] = {}
        self._names: set[str] = set()  # of the files in `watch_dir` that are in the timeline
        self.file_of = array("I")
        self.kinds = bytearray()
        self._positions: list[array[int]] = []
        self.marks: dict[Mark, array[int]] = {mark: array("I") for mark in MARKS}
        self._corrupt: list[set[int]] = []
        self.errors: list[tuple[int, str]] = []  # (event index, `FILE:LINE: reason`), in order
        self.irregular_at: dict[str, int] = {}  # session → the event that made it irregular
        self.checkpoints: list[Checkpoint] = [Checkpoint(0, START_KEY, (), DashboardState(), {})]
        self._checkpoint_positions = [0]
        self._working = DashboardState()
        self._tracks: dict[str, SessionTrack] = {}
        self._last_entry: list[Entry | None] = []
        self._last_event: list[Event | None] = []
        self._base: list[FileCursor] = []
        self.total = 0
        self.end_key: Key = START_KEY
        self.generation = 0  # bumped whenever positions already handed out may have changed
        self._merger = Merger(self.files)
        self.hydrator = Hydrator(self.files, self.corrupt_lines)
        for path in paths:
            self._add_file(path)

    # -- files ---------------------------------------------------------------------------------
    def _add_file(self, path: Path) -> LogFile:
        file = LogFile(path, len(self.files))
        self.files.append(file)
        self._by_path[path] = file
        if path.parent == self.watch_dir:
            self._names.add(path.name)
        self._positions.append(array("I"))
        self._corrupt.append(set())
        self._last_entry.append(None)
        self._last_event.append(None)
        self._base.append(FileCursor())
        return file

    def corrupt_lines(self, file_id: int) -> set[int]:
        return self._corrupt[file_id]

    def file_of_session(self, session_id: str) -> LogFile | None:
        """The log whose first event belongs to `session_id`."""
        return next((file for file in self.files if file.session_id == session_id), None)

    def close(self) -> None:
        """Close the descriptors the files keep for reading."""
        for file in self.files:
            file.close()

    def unreadable(self) -> list[str]:
        """`FILE: reason` for each file that cannot be read now."""
        return [file.error for file in self.files if file.error is not None]

    @property
    def every(self) -> int:
        """Events between checkpoints from here on (more logs, sparser checkpoints)."""
        if self._every is not None:
            return self._every
        return CHECKPOINT_EVERY if len(self.files) <= MANY_LOGS else CHECKPOINT_EVERY_MANY_LOGS

    def checkpoint_before(self, position: int) -> int:
        """The number of the last checkpoint at or before `position`."""
        return max(0, bisect_right(self._checkpoint_positions, position) - 1)

    def count_lines(self) -> None:
        """Count every file's lines (its sparse line index: newline counting), for progress."""
        for file in list(self.files):
            file.refresh()

    @property
    def expected_total(self) -> int:
        """Events the files hold as far as their line indexes know (for progress)."""
        return max(self.total, sum(file.line_count for file in self.files))

    def lines_of(self, file_id: int, end: int) -> int:
        """How many lines of file `file_id` the first `end` events hold."""
        return bisect_left(self._positions[file_id], end)

    def positions_of(self, file_id: int, end: int) -> array[int]:
        """The event indices of the lines of file `file_id` among the first `end` events."""
        positions = self._positions[file_id]
        return positions[: bisect_left(positions, end)]

    def position_of(self, file_id: int, line: int) -> int | None:
        """The event index of line `line` of file `file_id` (None if not in the timeline)."""
        positions = self._positions[file_id]
        return positions[line] if 0 <= line < len(positions) else None

    def event_at(self, index: int) -> Event | None:
        """Event `index` (0-based) read from disk; None for a corrupt line or out of range."""
        with self.lock:
            if not 0 <= index < self.total or self.kinds[index] == CORRUPT:
                return None
            file_id = self.file_of[index]
            line = self.lines_of(file_id, index)
            file = self.files[file_id]
        decoded = decode_line(file.read_line(line))
        return None if type(decoded) is str else decoded  # type: ignore[return-value]

    def error_at(self, index: int) -> str | None:
        """`FILE:LINE: reason` if event `index` is a corrupt line."""
        k = bisect_left(self.errors, (index, ""))
        return self.errors[k][1] if k < len(self.errors) and self.errors[k][0] == index else None

    # -- indexing ------------------------------------------------------------------------------
    def index_some(self, limit: int = INDEX_BATCH, *, look_again: bool = True) -> int:
        """Fold up to `limit` more lines into the timeline; returns how many (0: all read).
        Without `look_again`, only lines the files held at the last look (see `Merger.pull`).

        Call it from one thread (the indexer/follower): reading and decoding happen outside the
        lock (only that thread touches the files' read state and the merger), folding under it.
        """
        runs = self._merger.pull(limit, look_again=look_again)
        with self.lock:
            before = self.total
            self._ingest(runs)
            return self.total - before

    def _ingest(self, runs: list[tuple[LogFile, list[Entry]]]) -> None:
        """Append runs of consecutive lines of one file to the timeline and fold them (the hot
        loop of indexing: a regular session's event for its running turn takes the short way)."""
        working = self._working
        tracks = self._tracks
        kinds = self.kinds
        marks = self.marks
        codes = _KIND_CODE
        refined = _REFINED_TYPES
        mark_of = MARK_OF_KIND
        every = self.every
        file_of = self.file_of
        index = self.total
        next_checkpoint = self._checkpoint_positions[-1] + every
        track: SessionTrack | None = None
        track_id: str | None = None
        pending: list[Event] = []  # folded into `working` together, before anything reads it
        hold = pending.append
        for file, run in runs:
            file_id = file.file_id
            positions = self._positions[file_id]
            if len(run) == 1:
                file_of.append(file_id)
            else:
                file_of.extend(array("I", [file_id]) * len(run))
            last_event: Event | None = None
            for entry in run:
                positions.append(index)
                event = entry[4]
                if event is None:
                    self._corrupt_line(file_id, index, entry)
                else:
                    last_event = event
                    kind = event.type
                    code = kind_of(event) if kind in refined else codes.get(kind, UNKNOWN)
                    kinds.append(code)
                    mark = mark_of.get(code)
                    if mark is not None:
                        marks[mark].append(index)
                    session_id = event.session_id
                    if session_id != track_id:
                        track_id = session_id
                        track = tracks.get(session_id)
                        if track is None:
                            track = tracks[session_id] = SessionTrack(file_id)
                    assert track is not None
                    if not track.regular:
                        hold(event)
                    elif (
                        event.turn_id == track.turn_id
                        and track.turn_id is not None
                        and not track.finished
                        and track.file_id == file_id
                    ):
                        hold(event)  # the running turn goes on: no new turn
                        if kind == "turn.completed":
                            track.finished = True
                    else:
                        if pending:
                            fold_into(working, pending)
                            pending.clear()
                        self._fold_off_turn(track, event, file_id, index, entry)
                index += 1
                if index >= next_checkpoint:
                    if pending:
                        fold_into(working, pending)
                        pending.clear()
                    self._checkpoint_at(index, file, entry, last_event)
                    next_checkpoint = index + every
            self._last_entry[file_id] = run[-1]
            if last_event is not None:
                self._last_event[file_id] = last_event
        fold_into(working, pending)
        self.total = index
        if runs:
            file, run = runs[-1]
            self.end_key = self._merger.key(file, run[-1])

    def _corrupt_line(self, file_id: int, index: int, entry: Entry) -> None:
        self.kinds.append(CORRUPT)
        self.marks["failure"].append(index)
        self._corrupt[file_id].add(entry[0])
        self.errors.append((index, entry[5] or "corrupt line"))

    def _fold_off_turn(
        self, track: SessionTrack, event: Event, file_id: int, index: int, entry: Entry
    ) -> None:
        """Fold an event of a regular session that is not of its running turn: a new turn is
        archived; one the track does not accept makes the session irregular (rebuilt whole)."""
        session_id = event.session_id
        if not track.accepts(event, file_id):
            self._make_irregular(session_id, track, index)
        sessions = self._working.sessions
        session = sessions.get(session_id)
        before = len(session.turns) if session is not None else 0
        apply_event(self._working, event)
        if track.regular:
            track.folded(sessions[session_id].turns, before, entry[0], entry[1])

    def _checkpoint_at(self, index: int, file: LogFile, entry: Entry, event: Event | None) -> None:
        """A checkpoint after the first `index` events, the last of them `entry` of `file`."""
        self._last_entry[file.file_id] = entry
        if event is not None:
            self._last_event[file.file_id] = event
        self.total = index
        self.end_key = self._merger.key(file, entry)
        self._checkpoint()

    def _cursor(self, file_id: int) -> FileCursor:
        entry = self._last_entry[file_id]
        if entry is None:
            return self._base[file_id]
        event = self._last_event[file_id]
        base = self._base[file_id]
        return FileCursor(
            entry[0] + 1,
            entry[2],
            event.sequence if event is not None else base.last_sequence,
            entry[4] is None,
            event.ts if event is not None else base.last_ts,
        )

    def _checkpoint(self) -> None:
        files = tuple(self._cursor(file_id) for file_id in range(len(self.files)))
        self.checkpoints.append(make_checkpoint(self.total, self.end_key, files, self._working, self._tracks))
        self._checkpoint_positions.append(self.total)

    def _make_irregular(self, session_id: str, track: SessionTrack, index: int) -> None:
        """Rebuild the session's turns whole from its lines so far; stop archiving them."""
        track.regular = False
        self.irregular_at[session_id] = index
        session = self._working.sessions.get(session_id)
        if session is not None:
            session.turns = self.full_turns(session_id, index)

    def full_turns(self, session_id: str, end: int) -> list[TurnView]:
        """Every turn of `session_id` after the first `end` events, folded from disk (slow: for
        the rare sessions that stop being regular)."""
        files = {self.file_of[i] for i in range(end)} if end < 65_536 else set(range(len(self.files)))
        sources = [
            (self.files[i], self._positions[i], self._corrupt[i], self.lines_of(i, end))
            for i in sorted(files)
        ]
        return fold_session(sources, session_id)

    # -- the end, for the screen ---------------------------------------------------------------
    def end_parts(
        self,
    ) -> tuple[DashboardState, dict[str, SessionMark], dict[int, tuple[int, int]], Event | None]:
        """At the end, for a snapshot (call under `lock`): a copy of the fold (regular sessions'
        archived turns left out), each session's track, each file's (lines, byte offset) in the
        timeline, and the last event (None when the timeline is empty or ends in a corrupt line)."""
        marks = {session_id: track.mark() for session_id, track in self._tracks.items()}
        cursors = {}
        for file_id in range(len(self.files)):
            cursor = self._cursor(file_id)
            cursors[file_id] = (cursor.lines, cursor.offset)
        last = None
        if self.total and self.kinds[self.total - 1] != CORRUPT:
            last = self._last_event[self.file_of[self.total - 1]]
        return self._working.copy(), marks, cursors, last

    # -- rewinding -----------------------------------------------------------------------------
    def _rewind(self, number: int) -> int:
        """Forget everything after checkpoint `number`; the files are read on from its cursors.
        Returns its position."""
        checkpoint = self.checkpoints[number]
        del self.checkpoints[number + 1 :]
        del self._checkpoint_positions[number + 1 :]
        position = checkpoint.position
        del self.file_of[position:]
        del self.kinds[position:]
        for mark in self.marks.values():
            del mark[bisect_left(mark, position) :]
        del self.errors[bisect_left(self.errors, (position, "")) :]
        for session_id, index in list(self.irregular_at.items()):
            if index >= position:
                del self.irregular_at[session_id]
        for file in self.files:
            file_id = file.file_id
            cursor = checkpoint.files[file_id] if file_id < len(checkpoint.files) else FileCursor()
            del self._positions[file_id][cursor.lines :]
            self._corrupt[file_id] = {n for n in self._corrupt[file_id] if n < cursor.lines}
            self._base[file_id] = cursor
            self._last_entry[file_id] = None
            self._last_event[file_id] = None
            file.seek(cursor)
        self._working = restore(checkpoint, self.files, self.corrupt_lines, expand=False)
        self._tracks = {sid: SessionTrack.from_mark(mark) for sid, mark in checkpoint.sessions.items()}
        self.total = position
        self.end_key = checkpoint.key
        self.generation += 1
        self._merger.reset()
        self.hydrator.clear()
        return position

    def _checkpoint_before(self, file_id: int) -> int:
        """The last checkpoint that had read nothing of file `file_id`."""
        number = len(self.checkpoints) - 1
        while number > 0:
            files = self.checkpoints[number].files
            if file_id >= len(files) or files[file_id].lines == 0:
                break
            number -= 1
        return number

    def _checkpoint_at_or_before(self, key: Key) -> int:
        keys = [checkpoint.key for checkpoint in self.checkpoints]
        return max(0, bisect_right(keys, key) - 1)

    # -- following -----------------------------------------------------------------------------
    def poll(self, on_progress: Callable[[], None] | None = None) -> PollResult:
        """Look for new logs and lines, fold them in; see the module docstring for the order.

        From the indexing thread only: files are stat'ed, read and decoded outside the lock. What
        is merged is what the logs held when they were stat'ed (`LogFile.horizon`).
        """
        try:
            return self._poll(on_progress)
        finally:
            for file in self.files:
                file.horizon = None

    def _poll(self, on_progress: Callable[[], None] | None) -> PollResult:
        result = PollResult()
        before = self.total
        found = self._new_logs()
        if found:
            with self.lock:
                for path in found:
                    self._add_file(path)
            result.new_files = len(found)
        rewind: int | None = None
        changed: list[LogFile] = []
        for file in list(self.files):
            reason = file.changed()
            if reason is not None:
                result.notices.append(f"{file.path}: {reason}; indexed again from its start")
                changed.append(file)
        if changed:
            rewind = min(self._checkpoint_before(file.file_id) for file in changed)
        else:
            first = self._merger.peek()  # looks at every file once: this poll folds what it saw
            if first is not None and _late(first[0], self.end_key[0]):
                rewind = self._checkpoint_at_or_before((first[0], 0, -1))
        if rewind is not None:
            with self.lock:
                result.rewound_to = self._rewind(rewind)
                for file in changed:
                    file.reset()
                self._merger.reset()
            self._merger.peek()
        while self.index_some(look_again=False):
            if on_progress is not None:
                on_progress()
        result.added = max(0, self.total - before)
        return result

    def _new_logs(self) -> list[Path]:
        """`*.jsonl` files of the watched directory that are not in the timeline yet (by name: a
        follower looks at every poll, so no `Path` is made for a log it has already)."""
        directory = self.watch_dir
        if directory is None:
            return []
        try:
            names = os.listdir(directory)
        except OSError:
            return []
        known = self._names  # every log of the timeline in `directory` (`_add_file`)
        new = [name for name in names if name.endswith(".jsonl") and name not in known]
        return sorted((path for name in new if (path := directory / name).is_file()), key=lambda p: p.stem)


def _late(ts: str, newest: str) -> bool:
    """Whether an event at `ts` is more than `LATE_SLACK_MS` older than one at `newest`."""
    if not newest or ts >= newest:
        return False
    try:
        gap = datetime.fromisoformat(newest.replace("Z", "+00:00")) - datetime.fromisoformat(
            ts.replace("Z", "+00:00")
        )
    except ValueError:
        return True
    return gap.total_seconds() * 1000 > LATE_SLACK_MS
