"""Reducer checkpoints light enough to keep hundreds of them for millions of events.

Turns are most of what a dashboard state weighs (text, messages, tool calls and their output),
and a finished turn never changes again. So:
- the indexer's fold keeps full views only of running turns: at each checkpoint, a finished turn
  is *archived* as a header copy (`header_copy`: id, phase, stop reason, steps, tokens, usage,
  what the detail's one-line summary of an older turn shows) into a per-session list that only
  grows and that every checkpoint shares, with the line and byte offset where the turn began;
- a `Checkpoint` holds that small state (each session's turns cut off: its `SessionMark` says how
  many archived header copies come first, and where a running turn began) and each file's read
  cursor;
- `restore` copies the small state, puts the archived header copies back in front, and rebuilds
  each running turn by folding its own lines from disk again (`fold_lines`);
- the scrubber shows whole content only for turns on screen, rebuilt the same way
  (`Hydrator`), so what it shows equals the reducer's state for the whole prefix.

This rests on one property of the reducer: a turn's view depends only on its own session's events
from the turn's start on. That holds while every event of a session belongs to the turn the
session is running (a *regular* session: what every engine writes). A session that breaks it (an
event for a turn that ended, one without a turn, a session spread over two files) becomes
irregular: its turns are rebuilt whole from its lines once, are never archived again, and
checkpoints keep them whole (correct, only heavier).
"""

from __future__ import annotations

import dataclasses
import heapq
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from agent_tui.events import Event
from agent_tui.reducer import DashboardState, TurnView, fold_into
from agent_tui.replay.logfile import FileCursor, LogFile, decode_trusted

_HEADER_FIELDS = tuple(
    f.name for f in dataclasses.fields(TurnView) if not f.name.startswith("_") and f.name != "tool_calls"
)


def header_copy(turn: TurnView) -> TurnView:
    """`turn` without its content (text, messages, tool calls): what an archived turn keeps."""
    return TurnView(**{name: getattr(turn, name) for name in _HEADER_FIELDS})


@dataclass(frozen=True, slots=True)
class SessionMark:
    """One session at a checkpoint: the first `count` turns are `archive[:count]`; a running
    turn (if `running_at` is set) began at that (line, offset) of file `file_id`."""

    archive: list[TurnView]
    lines: array[int]
    offsets: array[int]
    count: int
    regular: bool
    file_id: int
    turn_id: str | None
    finished: bool
    running_at: tuple[int, int] | None


@dataclass(slots=True)
class SessionTrack:
    """The indexer's record of one session's turns (see the module docstring)."""

    file_id: int
    archive: list[TurnView] = field(default_factory=list)
    lines: array[int] = field(default_factory=lambda: array("I"))
    offsets: array[int] = field(default_factory=lambda: array("Q"))
    regular: bool = True
    turn_id: str | None = None
    finished: bool = False
    starts: list[tuple[int, int]] = field(default_factory=list)  # of the fold state's turns

    def accepts(self, event: Event, file_id: int) -> bool:
        """Whether `event` keeps the session regular (checked before it is folded)."""
        kind = event.type
        if kind == "session.created":
            return file_id == self.file_id
        turn_id = event.turn_id
        if turn_id is None or file_id != self.file_id:
            return False
        if self.turn_id is None:
            return True
        if turn_id != self.turn_id:
            return kind == "turn.started"
        return not self.finished

    def folded(self, turns: list[TurnView], before: int, line: int, offset: int) -> None:
        """Note what folding one event did to the session's `turns` (`before`: their count)."""
        if len(turns) > before:
            self.starts.append((line, offset))
        if turns:
            last = turns[-1]
            self.turn_id = last.turn_id
            self.finished = last.stop_reason is not None

    def archive_finished(self, turns: list[TurnView]) -> list[TurnView]:
        """Move every turn but a running last one into the archive; returns what stays."""
        keep = 1 if turns and turns[-1].stop_reason is None else 0
        moved = len(turns) - keep
        for turn, (line, offset) in zip(turns[:moved], self.starts[:moved], strict=True):
            self.archive.append(header_copy(turn))
            self.lines.append(line)
            self.offsets.append(offset)
        del self.starts[:moved]
        return turns[moved:]

    def mark(self) -> SessionMark:
        running = self.starts[-1] if self.regular and self.starts else None
        return SessionMark(
            self.archive,
            self.lines,
            self.offsets,
            len(self.archive),
            self.regular,
            self.file_id,
            self.turn_id,
            self.finished,
            running,
        )

    @classmethod
    def from_mark(cls, mark: SessionMark) -> SessionTrack:
        """The track as it was at `mark` (for indexing on from a checkpoint: the archive is cut
        back to it, which no checkpoint before it can notice)."""
        del mark.archive[mark.count :]
        del mark.lines[mark.count :]
        del mark.offsets[mark.count :]
        track = cls(mark.file_id, mark.archive, mark.lines, mark.offsets, mark.regular)
        track.turn_id = mark.turn_id
        track.finished = mark.finished
        track.starts = [mark.running_at] if mark.running_at is not None else []
        return track


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The fold after the first `position` events of the timeline.

    `key` is the merge key of the last of them; `files[i]` the cursor of file i (files added
    later start at 0); `state` the state with each regular session's turns cut off.
    """

    position: int
    key: tuple[str, int, int]
    files: tuple[FileCursor, ...]
    state: DashboardState
    sessions: dict[str, SessionMark]


Corrupt = Callable[[int], "set[int]"]
"""`corrupt(file_id)`: the line numbers of that file the timeline skipped as corrupt."""


def fold_lines(
    file: LogFile, start: int, offset: int, end: int, corrupt: set[int], state: DashboardState | None = None
) -> DashboardState:
    """Fold lines `[start, end)` of `file` (from byte `offset`), skipping `corrupt` lines."""
    state = DashboardState() if state is None else state
    lines = enumerate(file.iter_lines_at(offset, end - start), start)
    fold_into(
        state,
        (
            event
            for number, line in lines
            if number not in corrupt and (event := decode_trusted(line)) is not None
        ),
    )
    return state


def fold_session(
    sources: Sequence[tuple[LogFile, Sequence[int], set[int], int]], session_id: str
) -> list[TurnView]:
    """The turns of `session_id` folded from the first lines of some files, in timeline order.

    Each source is (file, event index of each of its lines, its corrupt lines, how many of its
    lines to read); the lines are streamed and merged by event index, so memory stays flat.
    """

    def lines(
        file: LogFile, positions: Sequence[int], corrupt: set[int], count: int
    ) -> Iterator[tuple[int, bytes]]:
        for number, line in enumerate(file.iter_lines_at(0, count)):
            if number not in corrupt:
                yield positions[number], line

    scratch = DashboardState()
    merged = heapq.merge(*(lines(*source) for source in sources))
    fold_into(
        scratch,
        (
            event
            for _, line in merged
            if (event := decode_trusted(line)) is not None and event.session_id == session_id
        ),
    )
    session = scratch.sessions.get(session_id)
    return session.turns if session is not None else []


def make_checkpoint(
    position: int,
    key: tuple[str, int, int],
    files: tuple[FileCursor, ...],
    working: DashboardState,
    tracks: dict[str, SessionTrack],
) -> Checkpoint:
    """Archive what finished, then copy the cut-down working state."""
    cut: list[tuple[str, list[TurnView]]] = []
    sessions = working.sessions
    for session_id, track in tracks.items():
        if track.regular and session_id in sessions:
            session = sessions[session_id]
            session.turns = track.archive_finished(session.turns)
            cut.append((session_id, session.turns))
            session.turns = []  # the running turn is rebuilt from disk on restore
    try:
        state = working.copy()
    finally:
        for session_id, turns in cut:
            sessions[session_id].turns = turns
    return Checkpoint(position, key, files, state, {sid: track.mark() for sid, track in tracks.items()})


def restore(
    checkpoint: Checkpoint, files: Sequence[LogFile], corrupt: Corrupt, *, expand: bool
) -> DashboardState:
    """The state at `checkpoint`: running turns rebuilt from disk; with `expand`, every turn in
    place (archived ones as header copies), else only the turns an indexer keeps."""
    state = checkpoint.state.copy()
    sessions = state.sessions
    for session_id, mark in checkpoint.sessions.items():
        session = sessions.get(session_id)
        if session is None or not mark.regular:
            continue
        if mark.running_at is not None:
            line, offset = mark.running_at
            file = files[mark.file_id]
            end = checkpoint.files[mark.file_id].lines
            scratch = fold_lines(file, line, offset, end, corrupt(mark.file_id)).sessions.get(session_id)
            if scratch is not None and scratch.turns:
                session.turns = [scratch.turns[-1]]
        if expand:
            session.turns = mark.archive[: mark.count] + session.turns
    return state


class Hydrator:
    """Full views of archived turns, rebuilt from disk for the turns on screen (and cached).

    Args:
        files: the timeline's files.
        corrupt: the corrupt lines of a file.
        size: how many rebuilt turns to keep.
    """

    def __init__(self, files: Sequence[LogFile], corrupt: Corrupt, size: int = 256) -> None:
        self._files = files
        self._corrupt = corrupt
        self._cache: OrderedDict[tuple[int, int], TurnView] = OrderedDict()
        self._size = size

    def clear(self) -> None:
        self._cache.clear()

    def hydrate(self, state: DashboardState, session_id: str, mark: SessionMark, last: int, end: int) -> None:
        """Replace the header copies among the session's last `last` turns by full views.

        `end` is how many lines of the session's file the state has folded.
        """
        session = state.sessions.get(session_id)
        if session is None or not mark.regular:
            return
        turns = session.turns
        first = max(0, len(turns) - last)
        archived = min(mark.count, len(turns))
        missing = [i for i in range(first, archived) if turns[i] is mark.archive[i]]
        if not missing:
            return
        cache = self._cache
        wanted = [i for i in missing if (mark.file_id, mark.lines[i]) not in cache]
        rebuilt = self._rebuild(session_id, mark, wanted[0], end) if wanted else {}
        for i in missing:
            key = (mark.file_id, mark.lines[i])
            full = rebuilt[i] if i in rebuilt else cache.get(key)
            if full is not None and full.turn_id == turns[i].turn_id:
                cache[key] = full
                cache.move_to_end(key)
                turns[i] = full
        while len(cache) > self._size:  # the least recently shown go first
            cache.popitem(last=False)

    def _rebuild(self, session_id: str, mark: SessionMark, index: int, end: int) -> dict[int, TurnView]:
        """The archived turns from `index` on, whole, by their index: folded from the first
        one's start to the end of the archived turns (or the state's end)."""
        stop = mark.lines[mark.count] if mark.count < len(mark.lines) else end
        if mark.running_at is not None:
            stop = min(stop, mark.running_at[0])
        stop = min(stop, end)
        file = self._files[mark.file_id]
        scratch = fold_lines(file, mark.lines[index], mark.offsets[index], stop, self._corrupt(mark.file_id))
        session = scratch.sessions.get(session_id)
        if session is None:
            return {}
        return {index + n: turn for n, turn in enumerate(session.turns[: mark.count - index])}
